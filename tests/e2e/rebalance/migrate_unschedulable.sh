#!/usr/bin/env bash
# A targeted live migration whose target pod cannot be scheduled
# (hack/sim/scenarios/rebalance-unschedulable.yaml: the seed; a migration whose target pod is
# Unschedulable 40 s after its creation fails). The scheduler is stopped before the operator's
# first move, so the target pod of its VirtualMachineInstanceMigration waits unplaced (phase
# Scheduling); the test cordons the destination the migration names (addedNodeSelector allows
# no other node) and starts the scheduler again: the pod turns Unschedulable, the simulator
# fails the migration ("Migration target pod was unschedulable for too long."), and the
# operator must clean up after itself: delete that migration, record the move Failed with a
# cooldown, count it (status, /metrics), emit a MigrationFailed Event that says why, and not
# move that VM again within its cooldown. The scheduler and the cordon are restored on exit.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=migrate-unschedulable-$$
ctl=$PSI_SOURCE_DIR/hack/cluster/ctl
cordoned=
cleanup() {
  local rc=$?
  [ -z "$cordoned" ] || kubectl uncordon "$cordoned" >/dev/null 2>&1 || true
  "$ctl" --dir "$PSI_TESTBED" start scheduler >/dev/null 2>&1 || true
  rebalance_cleanup "$name" "$rc"
}
trap cleanup EXIT
cooldown="{initial: 10m, max: 20m, history: 1h}" # a failed VM is not asked again during the test

start_sim "$scenarios/rebalance-unschedulable.yaml"
"$ctl" --dir "$PSI_TESTBED" stop scheduler
check "the scheduler is stopped" bash -c "'$ctl' --dir '$PSI_TESTBED' status | grep -qx 'scheduler stopped'"
start_operator
apply_psir "$name" Automatic "    method: Migrate"

# the first move: a migration of ours whose target pod exists but is not placed
eventually 150 "a targeted migration of ours waits in phase Scheduling" bash -c \
  "$(declare -f our_vmims); sim_ns=$sim_ns; our_vmims $name | jq -e 'any(.[]; .status.phase == \"Scheduling\")' >/dev/null"
vmim=$(our_vmims "$name" | jq -c '[.[] | select(.status.phase == "Scheduling")][0]')
mig=$(jq -r .metadata.name <<<"$vmim")
vmi=$(jq -r .spec.vmiName <<<"$vmim")
dest=$(jq -r '.metadata.annotations["rebalance.psi.dev/destination-node"]' <<<"$vmim")
echo "# migration $mig of $vmi to $dest"
check "the migration names its destination in addedNodeSelector and the annotation ($dest)" bash -c \
  "[[ '$dest' == worker-[12] ]] && jq -e --arg d '$dest' '.spec.addedNodeSelector[\"kubernetes.io/hostname\"] == \$d' <<<'$vmim'"
target_pod() {
  kubectl get pods -n "$sim_ns" -o json |
    jq -r --arg m "$1" '.items[] | select(.metadata.annotations["kubevirt.io/migrationJobName"] == $m) | .metadata.name'
}
tpod=$(target_pod "$mig")
check "its target pod ($tpod) exists, not placed" bash -c \
  "[ -n '$tpod' ] && [ -z \"\$(kubectl get pod -n $sim_ns '$tpod' -o jsonpath='{.spec.nodeName}')\" ]"

# while it waits, worker-0 and $dest settle: no other move off worker-0 or onto $dest
sleep 15 # three cycles
check "no other migration of ours while the first waits for its target pod" test \
  "$(our_vmims "$name" | jq 'length')" -eq 1

# the destination refuses the pod; the scheduler comes back and finds nowhere to put it
kubectl cordon "$dest" >/dev/null
cordoned=$dest
"$ctl" --dir "$PSI_TESTBED" start scheduler
eventually 60 "the target pod is Unschedulable" bash -c "
  kubectl get pod -n $sim_ns '$tpod' -o json | jq -e '.status.conditions[]? |
    select(.type == \"PodScheduled\" and .status == \"False\" and .reason == \"Unschedulable\")' >/dev/null"
eventually 60 "the simulator failed the migration: unschedulable for too long (record)" bash -c "
  jq -e --arg m '$mig' 'select(.type == \"migration\" and .name == \$m and .phase == \"Failed\"
    and (.reason | test(\"unschedulable for too long\")))' $record >/dev/null"

# what the operator must do about it
eventually 30 "the operator deleted the failed migration" bash -c \
  "! kubectl get virtualmachineinstancemigrations -n $sim_ns '$mig' >/dev/null 2>&1"
eventually 20 "status.moves: the move is Failed (failures 1) with a cooldown in the future" bash -c "$(declare -f psir_field)
  u=\$(psir_field $name '.status.moves[]? | select(.migration == \"$mig\") | \"\(.phase) \(.failures) \(.cooldownUntil)\"')
  read -r p f c <<<\"\$u\"
  [ \"\$p\" = Failed ] && [ \"\$f\" = 1 ] && [ \"\$(date -d \"\$c\" +%s)\" -gt \$(date +%s) ]"
check "the failed move names source worker-0 and destination $dest" test \
  "$(psir_field "$name" ".status.moves[] | select(.migration == \"$mig\") | \"\(.sourceNode) \(.destinationNode)\"")" \
  = "worker-0 $dest"
check "summary and worker-0's entry count the failure" test \
  "$(psir_field "$name" '"\(.status.summary.migrationsFailed) \(.status.nodes[] | select(.name=="worker-0") | .migrations.failed)"')" \
  = "1 1"
metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log" | tail -1)
check "/metrics counts one failed migration" bash -c \
  "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q '^psi_rebalancer_migrations_total{result=\"failed\"} 1\$'"
check "a Warning Event MigrationFailed says worker-0 -> $dest failed, why, and that it was deleted" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name --arg m '$mig' '
     [.items[] | select(.regarding.name == \$n and .reason == \"MigrationFailed\" and .type == \"Warning\"
       and (.note | contains(\$m))
       and (.note | test(\"worker-0 -> $dest failed: Migration target pod was unschedulable for too long; .*deleted\")))]
     | length == 1' >/dev/null"

sleep 30 # more cycles: the VM is held back by its cooldown; the others may move elsewhere
echo "# moves: $(moves_summary "$name" | tr '\n' ';')"
check "$vmi was not asked again (record, cluster)" bash -c "
  [ \"\$(jq -r --arg v '$vmi' 'select(.type == \"migration\" and (.name | startswith(\"psi-rebalancer-\")) and .vmi == \$v) | .name' $record | sort -u | wc -l)\" -eq 1 ] &&
  kubectl get virtualmachineinstancemigrations -n $sim_ns -o json | jq -e --arg v '$vmi' 'all(.items[]; .spec.vmiName != \$v)' >/dev/null"
check "$vmi still runs on worker-0" test "$(kubectl get vmi -n "$sim_ns" "$vmi" -o jsonpath='{.status.nodeName}')" = worker-0
check "no move chose the cordoned $dest after the failure" test \
  "$(psir_field "$name" "[.status.moves[] | select(.migration != \"$mig\" and .destinationNode == \"$dest\")] | length")" = 0
check "the simulator deleted the target pod" bash -c "! kubectl get pod -n $sim_ns '$tpod' >/dev/null 2>&1"
eventually 60 "none of ours is left failed or waiting" bash -c \
  "$(declare -f our_vmims); sim_ns=$sim_ns
   our_vmims $name | jq -e 'all(.[]; (.status.phase // \"\") as \$p | [\"\", \"Failed\", \"Pending\", \"Scheduling\"] | index(\$p) | not)' >/dev/null"
check "each failure counted once: summary.migrationsFailed == failed migrations of ours (record)" test \
  "$(psir_field "$name" .status.summary.migrationsFailed)" -eq "$(our_migrations Failed | wc -l)"
check "no eviction asked, no evacuation (record)" test "$(our_evictions all | wc -l)" -eq 0 -a -z "$(evacuations)"
check "no VM restarted (record)" test "$(jq -c 'select(.type=="vm-restart")' "$record" | wc -l)" -eq 0
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
