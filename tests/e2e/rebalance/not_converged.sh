#!/usr/bin/env bash
# A VM whose last live migration did not converge is not moved until cooldown.initial has
# passed since then (tests/testdata/sim/e2e-not-converged.yaml). A migration of churn asked for
# by someone else (here the test, as an admin or a drain would) runs to KubeVirt's completion
# timeout and is aborted: the VMI's migrationState says failed, abortStatus Succeeded, and no
# abort was requested. The operator, started then with worker-0 hot and churn the only VM that
# can relieve it, starts no migration of churn while the hold lasts and says why (Rebalancing's message
# counts churn as a VM whose last live migration did not converge). Once the hold is over one
# of two things is right, by what the operator knows then (cost.h): with no timed move in its
# status it has no copy rate to weigh churn's dirty rate against, and migrates churn (which
# KubeVirt aborts again, and its own cooldown then holds it); once one of its moves was timed
# (an idle VM moved meanwhile), churn's 2 GiB/s dirty rate (kubevirt_vmi_dirty_rate_bytes_per_second)
# is at or above the copy rate it shows, and Rebalancing says churn would not converge.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=not-converged-$$
trap 'rebalance_cleanup "$name"' EXIT
hold_s=60 # the shortest cooldown.initial the CRD allows
cooldown="{initial: 1m, max: 2m, history: 1h}"

start_sim "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-not-converged.yaml"
kubectl create -f - >/dev/null <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceMigration
metadata: {name: admin-churn, namespace: $sim_ns}
spec: {vmiName: churn}
YAML
migration_state() { kubectl get vmi churn -n "$sim_ns" -o json | jq -c '.status.migrationState // {}'; }
aborted() {
  migration_state | jq -e '.failed == true and .abortStatus == "Succeeded" and (.abortRequested | not)
    and .failureReason == "Live migration has been aborted"' >/dev/null
}
eventually 60 "KubeVirt (the simulator) aborts churn's migration: it did not converge" aborted
migration_state
end=$(date -d "$(migration_state | jq -r .endTimestamp)" +%s)

start_operator
apply_psir "$name" Automatic "    method: Migrate"
message() { psir_field "$name" '.status.conditions[]? | select(.type == "Rebalancing") | .message'; }
held() { message | grep -q "1 VM whose last live migration did not converge (KubeVirt aborted it)"; }
eventually "$hold_s" "while the hold lasts, Rebalancing says why churn stays" held
echo "# Rebalancing: $(rebalancing "$name"): $(message)"
ours_of_churn() { our_migrations | jq -r 'select(.vmi == "churn") | .time' | head -1; }
check "no migration of churn by us started during the hold" test -z "$(ours_of_churn)"
after_hold() {
  [ -n "$(ours_of_churn)" ] || message | grep -q "dirtied faster than live migrations copy it here"
}
eventually 90 "once cooldown.initial (${hold_s}s) has passed since the abort, churn is migrated or held by its dirty rate" \
  bash -c "$(declare -f our_migrations ours_of_churn after_hold message psir_field); record=$record name=$name; after_hold"
first=$(ours_of_churn)
at=$(if [ -n "$first" ]; then date -d "$first" +%s; else date +%s; fi)
# the moves of ours timed by then (ended two cycles before `at`: the operator knew of them)
timed=$(psir_field "$name" "[.status.moves[]? | select(.cost.durationSeconds != null and
  (.endTime | fromdateiso8601) <= $at - 10)] | length")
echo "# moves timed by then: $timed; Rebalancing: $(message)"
if [ -n "$first" ]; then
  check "with no timed move to weigh its dirty rate against, churn was migrated" test "$timed" -eq 0
  check "and not before: its first migration of churn ($first) came ${hold_s}s or more after the abort" \
    test "$(date -d "$first" +%s)" -ge $((end + hold_s))
else
  check "held by its dirty rate only once a move of ours was timed" test "$timed" -gt 0
  check "the convergence hold is over: Rebalancing no longer gives it as the reason" \
    bash -c "! grep -q 'did not converge (KubeVirt aborted it)' <<<\"\$1\"" _ "$(message)"
fi
finish
