#!/usr/bin/env bash
# The seed story with the simulator: six 2-vCPU VMs on worker-0 of three 6-CPU workers,
# three of them busy (worker-0 at ~83 % CPU pressure). With eviction.mode Automatic the
# operator converges to one busy VM per worker with the fewest migrations (2), moves no VM
# twice, keeps every VMI (same UID: live migrations, not restarts), stays within its limits
# and leaves no taint behind; status, Events and /metrics tell what happened.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=seed-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/seed.yaml"
before=$(vmis)
check "the scenario starts with every VM on worker-0" test "$(echo "$before" | awk '{print $2}' | sort -u)" = worker-0
start_operator
apply_psir "$name" Automatic

eventually 240 "one busy VM per worker" bash -c "$(declare -f vmis per_node); sim_ns=$sim_ns
  [ \"\$(per_node hot- | awk '{print \$2}' | tr '\n' ' ')\" = '1 1 1 ' ]"
eventually 90 "the moves are reported Succeeded in status" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 2 ]"
# the picture holds: nothing more moves once the load is even (two settle periods and more)
sleep 60
after=$(vmis)
check "exactly 2 live migrations succeeded (record)" test "$(migrations_ended Succeeded | wc -l)" -eq 2
check "no migration failed (record)" test "$(migrations_ended Failed | wc -l)" -eq 0
check "exactly 2 evictions asked by the operator (record)" test "$(our_evictions | wc -l)" -eq 2
check "no VM moved twice" test "$(our_evictions | jq -r .vmi | sort -u | wc -l)" -eq 2
check "only busy VMs were moved" test -z "$(our_evictions | jq -r .vmi | grep -v '^hot-')"
check "every eviction came off worker-0" test "$(our_evictions | jq -r .node | sort -u)" = worker-0
check "every VMI kept its UID (live-migrated, not restarted)" test \
  "$(echo "$before" | awk '{print $1, $3}')" = "$(echo "$after" | awk '{print $1, $3}')"
check "no VM restarted (record)" test "$(jq -c 'select(.type=="vm-restart")' "$record" | wc -l)" -eq 0
check_limits 2 1 2
eventually 60 "no taint left" no_taint
check "summary: no pod evicted (KubeVirt live-migrated both), 2 migrations succeeded, none in flight" test \
  "$(psir_field "$name" '.status.summary | "\(.evictions) \(.migrationsSucceeded) \(.migrationsFailed) \(.migrationsInFlight)"')" = "0 2 0 0"
check "worker-0's entry counts no eviction and 2 migrations" test \
  "$(psir_field "$name" '.status.nodes[] | select(.name=="worker-0") | "\(.evictions) \(.migrations.succeeded)"')" = "0 2"
check "status.moves names both VMs, off worker-0, with their migrations and targets" test \
  "$(psir_field "$name" '[.status.moves[] | select(.sourceNode=="worker-0" and .migration != null and .targetNode != null and .kind=="VirtualMachineInstance") | .name] | sort | join(" ")')" \
  = "$(our_evictions | jq -r .vmi | sort | tr '\n' ' ' | sed 's/ $//')"
check "Rebalancing says nothing is pressured now" test "$(rebalancing "$name")" = NoPressuredNode
check "Events: MigrationRequested and MigrationSucceeded for each move" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n)] as \$e
     | ([\$e[] | select(.reason==\"MigrationRequested\")] | length) == 2
       and ([\$e[] | select(.reason==\"MigrationSucceeded\")] | length) == 2' >/dev/null"
metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log")
check "/metrics counts the evictions answered by a migration and the migrations" bash -c \
  "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q '^psi_rebalancer_evictions_total{result=\"migration\"} 2' &&
   curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q '^psi_rebalancer_migrations_total{result=\"succeeded\"} 2'"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
