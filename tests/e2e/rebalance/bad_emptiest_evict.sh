#!/usr/bin/env bash
# The same scenario as bad_emptiest_migrate.sh with eviction.method Evict: the plan predicts
# worker-2 can take the busy VM, but the eviction leaves the choice to the scheduler, which
# prefers worker-1 (fewest requests) although it is already at ~20 % pressure. The VM lands
# there, worker-1 becomes a source in turn and a second move is needed: Evict makes more
# moves than Migrate's one (bad_emptiest_migrate.sh) and lands badly.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=bad-emptiest-evict-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/rebalance-bad-emptiest.yaml"
start_operator
t0=$SECONDS
apply_psir "$name" Automatic

eventually 200 "the first move Succeeded" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" -ge 1 ]"
first=$(psir_field "$name" '.status.moves[0] | "\(.sourceNode) \(.destinationNode) \(.targetNode)"')
echo "# first move (source destination target): $first, after $((SECONDS - t0)) s"
check "the plan chose worker-2 but the scheduler put the VM on worker-1" test "$first" = "worker-0 worker-2 worker-1"
eventually 240 "worker-1 became a source in turn: a second eviction was needed" bash -c \
  "$(declare -f our_evictions); record=$record requested_by=$requested_by; [ \"\$(our_evictions | wc -l)\" -ge 2 ]"
echo "# moves after $((SECONDS - t0)) s: $(moves_summary "$name" | tr '\n' ';')"
echo "# evictions: $(our_evictions | wc -l) (Migrate: 1)"
# the simulator records an evacuation migration once its controller has made it, a moment
# after the eviction that asked for it
eventually 60 "every eviction became an evacuation migration, no targeted one (record)" bash -c \
  "$(declare -f our_migrations evacuations); record=$record; [ -z \"\$(our_migrations)\" ] && [ \"\$(evacuations | wc -l)\" -ge 2 ]"
# the Evictions carry requested-by: sigs.k8s.io/descheduler, so KubeVirt's evacuation
# controller queues their migrations at system-maintenance, below a drain's system-critical
check "every evacuation migration of the operator's evictions has priority system-maintenance (API)" bash -c \
  "kubectl get vmim -n $sim_ns -o json | jq -e '[.items[] | select(.metadata.annotations[\"kubevirt.io/evacuationMigration\"])
     | .spec.priority] | length >= 2 and all(. == \"system-maintenance\")' >/dev/null"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
