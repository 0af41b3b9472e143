#!/usr/bin/env bash
# A VM whose last live migration did not converge is not moved until cooldown.initial has
# passed since then (tests/testdata/sim/e2e-not-converged.yaml). A migration of churn asked for
# by someone else (here the test, as an admin or a drain would) runs to KubeVirt's completion
# timeout and is aborted: the VMI's migrationState says failed, abortStatus Succeeded, and no
# abort was requested. The operator, started then with worker-0 hot and churn the only VM that
# can relieve it, starts no migration of churn while the hold lasts and says why (Rebalancing's message
# counts churn as a VM whose last live migration did not converge); once the hold is over it
# migrates churn (which KubeVirt aborts again, and the operator's own cooldown then holds it).
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
eventually 90 "once cooldown.initial (${hold_s}s) has passed since the abort, the operator migrates churn" \
  bash -c "$(declare -f our_migrations ours_of_churn); record=$record; [ -n \"\$(ours_of_churn)\" ]"
first=$(ours_of_churn)
check "and not before: its first migration of churn ($first) came ${hold_s}s or more after the abort" \
  test "$(date -d "$first" +%s)" -ge $((end + hold_s))
finish
