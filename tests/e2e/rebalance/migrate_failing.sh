#!/usr/bin/env bash
# Targeted live migrations that fail (hack/sim/scenarios/rebalance-failing.yaml: every
# migration of a busy VM fails): the operator counts each failure (status, Events, counters),
# deletes its failed VirtualMachineInstanceMigration (KubeVirt does not retry one it was asked
# for; none is left behind), and the VM's cooldown holds it back: no retry storm, no eviction.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=migrate-failing-$$
trap 'rebalance_cleanup "$name"' EXIT
cooldown="{initial: 10m, max: 20m, history: 1h}" # a failed VM is not asked again during the test

start_sim "$scenarios/rebalance-failing.yaml"
start_operator
apply_psir "$name" Automatic "    method: Migrate"

eventually 200 "a targeted migration failed and status counts it" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Failed\" and .failures >= 1)] | length')\" -ge 1 ]"
mig=$(psir_field "$name" '[.status.moves[] | select(.phase=="Failed")][0].migration')
vmi=$(psir_field "$name" '[.status.moves[] | select(.phase=="Failed")][0].name')
check "the failed move names its migration ($mig), ours" bash -c "[[ '$mig' == psi-rebalancer-* ]]"
check "the simulator failed it (record)" bash -c "$(declare -f our_migrations); record=$record; our_migrations Failed | grep -qx '$mig'"
eventually 30 "the failed migration was deleted" bash -c \
  "! kubectl get virtualmachineinstancemigrations -n $sim_ns '$mig' >/dev/null 2>&1"
check "the move keeps its Failed phase, with a cooldown in the future" bash -c "$(declare -f psir_field)
  u=\$(psir_field $name '.status.moves[] | select(.migration==\"$mig\") | \"\(.phase) \(.cooldownUntil)\"')
  [ \"\${u%% *}\" = Failed ] && [ \"\$(date -d \"\${u#* }\" +%s)\" -gt \$(date +%s) ]"
check "summary and worker-0's entry count the failure" test \
  "$(psir_field "$name" '"\(.status.summary.migrationsFailed) \(.status.nodes[] | select(.name=="worker-0") | .migrations.failed)"')" \
  != "0 0"
check "a Warning Event MigrationFailed says source -> destination and that it was deleted" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and .reason==\"MigrationFailed\" and .type==\"Warning\"
       and (.note | test(\"worker-0 -> worker-[12] failed.*deleted\")))] | length >= 1' >/dev/null"
sleep 40 # more cycles: the failed VM is held back by its cooldown
check "the failed VM was not asked again (record)" test \
  "$(our_migrations | jq -r --arg v "$vmi" 'select(.vmi==$v) | .name' | sort -u | wc -l)" -eq 1
check "no VM got more than one targeted migration (record)" test \
  "$(our_migrations | jq -r '"\(.vmi) \(.name)"' | sort -u | awk '{print $1}' | uniq -d | wc -l)" -eq 0
eventually 30 "none of ours is left: failed ones deleted, none pending" bash -c \
  "$(declare -f our_vmims); sim_ns=$sim_ns; our_vmims $name | jq -e 'all(.[]; .status.phase != \"Failed\")' >/dev/null"
eventually 20 "each failure counted once: summary.migrationsFailed == failed migrations (record)" bash -c \
  "$(declare -f psir_field our_migrations); record=$record
   [ \"\$(psir_field $name .status.summary.migrationsFailed)\" -eq \"\$(our_migrations Failed | wc -l)\" ]"
check "no eviction asked, no evacuation (record)" test "$(our_evictions all | wc -l)" -eq 0 -a -z "$(evacuations)"
check "no VM restarted (record)" test "$(jq -c 'select(.type=="vm-restart")' "$record" | wc -l)" -eq 0
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
