#!/usr/bin/env bash
# Upgrade awareness: a MachineConfigPool rollout under mode Automatic and targeted live
# migrations (e2e-rollout.yaml). The MachineConfig operator stand-in drains the workers one at
# a time (cordon, live migrations, reboot, uncordon), and the VMs it moves make a worker hot for
# a while. While the pool rolls out and until it has settled, the operator moves nothing: no
# VM is moved by us and then again by the rollout, and none onto a worker that is drained
# later; Rebalancing says MaintenanceInProgress meanwhile. Once the pool has settled, the
# operator relieves what the rollout left behind, moving each VM at most once.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../lib/mco.sh"
source "$(dirname "$0")/lib.sh"

name=rollout-$$
mc=99-worker-e2e-rollout
settle_s=25 # window 15 s + two 5 s intervals (apply_psir)
cleanup() {
  local rc=$?
  [ -n "${poller:-}" ] && kill "$poller" 2>/dev/null
  kubectl delete psirebalance "$name" --ignore-not-found --timeout=60s >/dev/null 2>&1
  stop_sim
  mco_forget_pools worker 99-worker-e2e-psi "$mc"
  rebalance_cleanup "$name" "$rc"
}
trap cleanup EXIT
mco_forget_pools worker 99-worker-e2e-psi "$mc"

pool() { kubectl get machineconfigpool worker -o json; }
# updated [CONFIG_SOURCE]: the pool is Updated, on a configuration built from that MachineConfig
updated() {
  pool | jq -e --arg mc "$1" '(.status.conditions[]? | select(.type == "Updated") | .status == "True")
    and (.status.configuration.source // [] | map(.name) | index($mc) != null)' >/dev/null
}

start_sim "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-rollout.yaml"
eventually 300 "the first rollout (psi=1) is done: every worker runs it" bash -c \
  "$(declare -f pool updated); updated 99-worker-e2e-psi"
start_operator
apply_psir "$name" Automatic "    method: Migrate"
eventually 120 "the operator reads every worker's pressure" bash -c \
  "$(declare -f psir_field condition); [ \"\$(condition $name MetricsAvailable)\" = True ]"
# relieved: no worker tainted and at most four VMs on one
relieved() { no_taint && [ "$(per_node web- | awk '{print $2}' | sort -n | tail -1)" -le 4 ]; }
# what the first rollout left (the last worker back empty) is relieved before the second
eventually 300 "what the first rollout left is relieved" bash -c \
  "$(declare -f vmis per_node no_taint relieved); sim_ns=$sim_ns; relieved"
before_moves=$(our_migrations | jq -r .name | sort -u | wc -l)
echo "# before the second rollout: $(per_node web- | tr '\n' ';') after $before_moves moves of ours"

# The second rollout, and what Rebalancing says while it runs.
kubectl apply -f - >/dev/null <<YAML
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: $mc
  labels: {machineconfiguration.openshift.io/role: worker}
spec:
  kernelArguments: [e2e-rollout=1]
YAML
(while sleep 1; do echo "$(date +%s) $(rebalancing "$name")"; done >"$work/reasons" 2>/dev/null) &
poller=$!
eventually 60 "the pool rolls out the new configuration (Updating)" bash -c \
  "$(declare -f pool); pool | jq -e '.status.conditions[]? | select(.type == \"Updating\") | .status == \"True\"' >/dev/null"
eventually 420 "the second rollout is done: every worker runs it" bash -c "$(declare -f pool updated); updated $mc"
sleep $((settle_s + 10))
kill "$poller" 2>/dev/null
poller=

# record times: the second rollout from its rendering to its end
rendered_t=$(jq -s -r '[.[] | select(.type == "mco-pool" and .phase == "Rendered")] | .[-1].t' "$record")
updated_t=$(jq -s -r '[.[] | select(.type == "mco-pool" and .phase == "Updated")] | .[-1].t' "$record")
echo "# second rollout: rendered at ${rendered_t} s, Updated at ${updated_t} s (record time)"
during=$(jq -s -r --argjson a "$rendered_t" --argjson b "$updated_t" --argjson s "$settle_s" '
  [.[] | select(.type == "migration" and (.name | startswith("psi-rebalancer-")))] | group_by(.name)
  | map(select((map(.t) | min) as $t | $t >= $a and $t < $b + $s - 5)) | length' "$record")
check "no migration of ours started while the pool rolled out or settled ($during)" test "$during" = 0
drained=$(jq -s -r --argjson a "$rendered_t" '[.[] | select(.type == "evacuation" and .t >= $a)] | length' "$record")
echo "# the rollout's drains moved $drained VMs"
check "the rollout drained VMs (live migrations at drain priority)" test "$drained" -gt 0
echo "# Rebalancing while it ran: $(awk '{print $2}' "$work/reasons" | uniq -c | tr '\n' ';')"
check "Rebalancing said MaintenanceInProgress while the pool rolled out" grep -q ' MaintenanceInProgress$' "$work/reasons"

# After: the operator relieves what the rollout left, each VM moved by us at most once.
eventually 300 "what the second rollout left is relieved" bash -c \
  "$(declare -f vmis per_node no_taint relieved); sim_ns=$sim_ns; relieved"
after=$(our_migrations | jq -r --argjson a "$rendered_t" 'select(.t >= $a) | "\(.name) \(.vmi)"' | sort -u)
echo "# after: $(per_node web- | tr '\n' ';') $(echo "$after" | grep -c . || true) moves of ours since the second rollout began"
check "no VM was moved twice by the operator since" test -z "$(echo "$after" | awk 'NF {print $2}' | sort | uniq -d)"
finish
