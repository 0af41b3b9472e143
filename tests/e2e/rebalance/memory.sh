#!/usr/bin/env bash
# Memory rebalancing (scenario rebalance-memory-hot): worker-0 is cool on CPU but its six VMs'
# working sets (19 GiB each, 114 GiB) overcommit its 64 GiB, ~44 % memory pressure; worker-1 is
# busy on CPU, worker-2 calm. A PsiRebalance on memory pressure (taint 25 %, untaint 15 %,
# evict above 30 %, short windows) moves VMs by their memory in use
# (kubevirt_vmi_memory_resident_bytes) until worker-0 is below the relief target: the optimal
# three moves (two leave it at ~20 %), each VM once, none back to worker-0, no CPU-only VM
# moved, every node below the target and untainted at the end, every VMI live-migrated. Then
# on io pressure nothing is moved and the Rebalancing condition says why (ResourceNotSupported).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=memory-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/rebalance-memory-hot.yaml"
before=$(vmis)
check "the six memory-hungry VMs start on worker-0" test "$(per_node mem- | tr '\n' ' ')" = "worker-0 6 "
start_operator
apply_psir "$name" Automatic "    method: Auto" memory

# memory pressure as the operator reads it (status), per node: "node percent" lines
mem_pressure() { psir_field "$name" '.status.nodes[]? | "\(.name) \(.pressure.memory // "-")"'; }
eventually 90 "worker-0 reads as memory-hot (above evictAbovePercent) and CPU-cool" bash -c "$(declare -f psir_field)
  psir_field $name '.status.nodes[] | select(.name==\"worker-0\") | (.pressure.memory | tonumber) > 30 and ((.pressure.cpu // \"0\") | tonumber) < 5' | grep -q true"
eventually 240 "three VMs moved off worker-0 and every move Succeeded" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 3 ]"
eventually 120 "every worker below the relief target (15 %) on memory, and untainted" bash -c "$(declare -f psir_field no_taint)
  no_taint && psir_field $name '[.status.nodes[] | (.pressure.memory // \"100\" | tonumber) < 15] | all' | grep -q true"
after=$(vmis)
echo "memory pressure at the end: $(mem_pressure | tr '\n' ',')"
check "the optimal number of moves: 3 (status)" test "$(psir_field "$name" '.status.moves | length')" -eq 3
check "3 live migrations succeeded, none failed (record)" test \
  "$(migrations_ended Succeeded | wc -l) $(migrations_ended Failed | wc -l)" = "3 0"
check "each VM moved once" test "$(psir_field "$name" '[.status.moves[].name] | unique | length')" -eq 3
check "only memory-hungry VMs moved, all off worker-0" test \
  "$(psir_field "$name" '[.status.moves[] | select((.name | startswith("mem-")) and .sourceNode=="worker-0")] | length')" -eq 3
check "no VM moved back: none runs on worker-0 again, three still there" test \
  "$(per_node mem- | awk '$1 == "worker-0" {print $2}')" = 3
check "the moved VMs run where their moves say" test \
  "$(psir_field "$name" '.status.moves[] | "\(.name) \(.targetNode // .destinationNode)"' | sort)" = \
  "$(vmis | awk 'index($1, "mem-") == 1 && $2 != "worker-0" {print $1, $2}' | sort)"
check "the CPU-busy and calm VMs stayed" test \
  "$(vmis | awk '$1 == "busy" || $1 == "calm" {print $1, $2}' | tr '\n' ' ')" = "busy worker-1 calm worker-2 "
check "every VMI kept its UID (live-migrated, not restarted)" test \
  "$(echo "$before" | awk '{print $1, $3}')" = "$(echo "$after" | awk '{print $1, $3}')"
eventually 120 "each move settled reports predicted and observed pressure" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[] | select(.prediction.source and .prediction.observedSource and .prediction.observedDestination)] | length')\" = 3 ]"
echo "predictions (source predicted/observed, destination predicted/observed): $(psir_field "$name" \
  '[.status.moves[] | "\(.prediction.source)/\(.prediction.observedSource) \(.prediction.destination)/\(.prediction.observedDestination)"] | join(", ")')"
# io: tainted like the others, never rebalanced (no per-VM io signal), and said so
kubectl patch psirebalance "$name" --type merge -p '{"spec":{"pressure":{"resource":"io"}}}' >/dev/null
eventually 60 "with io pressure, Rebalancing says ResourceNotSupported (no per-VM io signal)" bash -c "$(declare -f psir_field rebalancing)
  [ \"\$(rebalancing $name)\" = ResourceNotSupported ] &&
  psir_field $name '.status.conditions[] | select(.type==\"Rebalancing\") | .message' | grep -q 'no per-workload io'"
check "still 3 moves" test "$(psir_field "$name" '.status.moves | length')" -eq 3
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
