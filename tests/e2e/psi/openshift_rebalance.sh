#!/usr/bin/env bash
# Rebalancing reads through the OpenShift monitoring path too: the operator run as in a pod
# (tests/e2e/lib/inpod.sh), a PsiRebalance in DryRun whose metrics name nothing but the Thanos
# querier stand-in's URL, and the simulator's seed story (three busy VMs on worker-0). Node
# pressure and the VMs' CPU usage both come through the querier with the pressure reader's
# token and the default trust: worker-0 is tainted and two moves off it are reported.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../lib/inpod.sh"
source "$(dirname "$0")/../rebalance/lib.sh"

name=ocp-rebalance-$$
binding=psi-e2e-rebalance-view-$$
cleanup() {
  local rc=$?
  kubectl delete clusterrolebinding "$binding" --ignore-not-found >/dev/null 2>&1 || true
  "$PSI_SOURCE_DIR/hack/cluster/monitoring" --dir "$PSI_TESTBED" down >/dev/null 2>&1 || true
  rebalance_cleanup "$name" "$rc"
}
trap cleanup EXIT

monitoring_up
install_operator_rbac
kubectl create clusterrolebinding "$binding" --clusterrole cluster-monitoring-view \
  --serviceaccount psi-rebalancer:psi-rebalancer-pressure-reader >/dev/null
start_sim "$scenarios/seed.yaml"
operator_sa_dir "$work/serviceaccount" "$(kubectl create token psi-rebalancer -n psi-rebalancer --duration=1h)"
start_operator_in_pod "$work/serviceaccount"
querier_psirebalance "$name" 10s "  eviction:
    mode: DryRun
    evictAbovePercent: 30
    cooldown: {initial: 10m, max: 20m, history: 1h}"

would() { psir_field "$name" '[.status.moves[]? | select(.phase=="WouldMove")] | length'; }
two_moves() { [ "$(would)" = 2 ]; }
eventually 240 "through the querier: two moves reported (pressure and VM usage read)" two_moves
# the taint and the condition are written by their own steps of a cycle, not with the moves
eventually 60 "worker-0 is tainted" node_tainted worker-0 "$name"
eventually 60 "MetricsAvailable=True from the querier" bash -c \
  "$(declare -f psir_field condition); [ \"\$(condition $name MetricsAvailable)\" = True ]"
check "both moves are off worker-0, to another node" test \
  "$(psir_field "$name" '[.status.moves[] | select(.phase=="WouldMove" and .sourceNode=="worker-0" and .destinationNode != null and .destinationNode != "worker-0")] | length')" = 2
check "nothing moved (DryRun; record)" test "$(our_evictions | wc -l)" -eq 0
finish
