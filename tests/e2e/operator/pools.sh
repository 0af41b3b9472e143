#!/usr/bin/env bash
# PSIEnabled against the MachineConfig operator stand-in (hack/sim) in layouts of real
# clusters:
# - a compact cluster (the nodes are masters carrying the worker role, the worker pool is
#   empty): with the default role worker, PSIEnabled is False PoolEmpty, never "all 0
#   machines" True; with role master the operator's MachineConfig rolls through the master
#   pool and PSIEnabled turns True;
# - that pool paused, and our MachineConfig changed (schedstats added): PSIEnabled is False
#   PoolPaused, not Progressing.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../sim/simlib.sh"
source "$(dirname "$0")/../lib/mco.sh"

name=pools-$$
forget_pools() { mco_forget_pools "master worker" 99-master-psi-rebalancer 99-worker-psi-rebalancer; }
restore() {
  kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  sim_cleanup
  forget_pools
  operator_cleanup
}
trap restore EXIT
forget_pools
reason() { kubectl get psirebalance "$name" -o jsonpath='{.status.conditions[?(@.type=="PSIEnabled")].reason}'; }
message() { kubectl get psirebalance "$name" -o jsonpath='{.status.conditions[?(@.type=="PSIEnabled")].message}'; }
psir() { # psir ROLES SCHEDSTATS
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  machineConfig: {enabled: true, roles: $1, schedstats: $2}
  metrics: $bed_metrics
YAML
}

sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-compact.yaml" "sim-pools-$$" || { finish; exit 1; }
eventually 30 "the compact layout is up: master pool with 3 machines, worker pool with 0" bash -c \
  "kubectl get machineconfigpool master -o json | jq -e '.status.machineCount == 3' >/dev/null &&
   kubectl get machineconfigpool worker -o json | jq -e '.status.machineCount == 0' >/dev/null"
start_operator
psir "[worker]" false
eventually 60 "default role worker: PSIEnabled is False PoolEmpty" bash -c "$(declare -f reason); name=$name; [ \"\$(reason)\" = PoolEmpty ]"
check "the message says where the nodes are and what to do ($(message))" bash -c \
  "$(declare -f message); name=$name; [[ \"\$(message)\" == *'pool worker has no machines'*'add role master'* ]]"
check "PSIEnabled is not True" test "$(kubectl get psirebalance "$name" -o jsonpath='{.status.conditions[?(@.type=="PSIEnabled")].status}')" = False

psir "[master]" false
eventually 60 "role master: the operator creates 99-master-psi-rebalancer" kubectl get machineconfig 99-master-psi-rebalancer
eventually 120 "the master pool rolls it out and PSIEnabled turns True" bash -c "$(declare -f reason); name=$name; [ \"\$(reason)\" = Enabled ]"

kubectl patch machineconfigpool master --type merge -p '{"spec":{"paused":true}}' >/dev/null
psir "[master]" true
eventually 60 "the pool paused and our MachineConfig changed: PSIEnabled is False PoolPaused" bash -c \
  "$(declare -f reason); name=$name; [ \"\$(reason)\" = PoolPaused ]"
check "its message says so ($(message))" bash -c "$(declare -f message); name=$name; [[ \"\$(message)\" == *'pool master is paused'* ]]"
finish
