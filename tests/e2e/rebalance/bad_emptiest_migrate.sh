#!/usr/bin/env bash
# Where the emptiest node is a bad destination (hack/sim/scenarios/rebalance-bad-emptiest.yaml:
# worker-1 has the fewest requests but sits at ~20 % pressure), eviction.method Migrate sends
# the busy VM to the node the plan chose (worker-2) and reaches balance in one move; Evict
# lets the scheduler put it on worker-1 and needs more (bad_emptiest_evict.sh). DryRun shows
# the destination first, creating nothing.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=bad-emptiest-migrate-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/rebalance-bad-emptiest.yaml"
check "the scenario starts with hot-0, hot-1 on worker-0, warm on worker-1" test \
  "$(vmis | awk '$1 ~ /^(hot|warm)/ {print $1, $2}' | tr '\n' ' ')" = "hot-0 worker-0 hot-1 worker-0 warm worker-1 "
start_operator
# DryRun first: it reports the destination it would send the VM to, and creates nothing
apply_psir "$name" DryRun "    method: Migrate"
eventually 200 "DryRun reports the move it would make" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"WouldMove\")] | length')\" -ge 1 ]"
check "... off worker-0 to worker-2, the destination it chose" test \
  "$(psir_field "$name" '[.status.moves[] | select(.phase=="WouldMove")][0] | "\(.sourceNode) \(.destinationNode)"')" = "worker-0 worker-2"
check "... and says so in the condition" bash -c "$(declare -f psir_field)
  psir_field $name '.status.conditions[] | select(.type==\"Rebalancing\") | .message' | grep -q 'worker-0 -> worker-2'"
check "DryRun created no migration (record, cluster)" test -z "$(our_migrations)" -a "$(our_vmims "$name")" = "[]"
kubectl delete psirebalance "$name" --timeout=60s >/dev/null
t0=$SECONDS
apply_psir "$name" Automatic "    method: Migrate"

eventually 200 "a busy VM moved to worker-2 and its move Succeeded" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" -ge 1 ]"
echo "# balance reached after $((SECONDS - t0)) s"
sleep 45 # a settle period and more: nothing else moves
echo "# moves: $(moves_summary "$name" | tr '\n' ';')"
echo "# placement: $(vmis | awk '{print $1 "@" $2}' | tr '\n' ' ')"
check "exactly one move, one targeted migration (record): fewer than Evict's 2 or more" \
  test "$(psir_field "$name" '.status.moves | length')" = 1 -a "$(our_migrations | jq -r .name | sort -u | wc -l)" -eq 1
check "it went off worker-0 to the node chosen, worker-2 (targetNode == destinationNode)" test \
  "$(psir_field "$name" '.status.moves[0] | "\(.sourceNode) \(.destinationNode) \(.targetNode) \(.phase)"')" = \
  "worker-0 worker-2 worker-2 Succeeded"
check "the VM is on worker-2 now, worker-1 holds only warm" bash -c "$(declare -f vmis); sim_ns=$sim_ns
  vmis | grep -Eq '^hot-[01] worker-2 ' && [ \"\$(vmis | awk '\$2 == \"worker-1\" {print \$1}')\" = warm ]"
check "no eviction asked, no evacuation (record)" test "$(our_evictions all | wc -l)" -eq 0 -a -z "$(evacuations)"
check "Rebalancing says nothing is pressured now" test "$(rebalancing "$name")" = NoPressuredNode
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
