#!/usr/bin/env bash
# The MachineConfigs and PSIEnabled follow the pools of the selected nodes, against the
# MachineConfig operator stand-in (hack/sim) in layouts of real clusters:
# - a compact cluster (the nodes are masters carrying the worker role, the worker pool is
#   empty): with the defaults (the workers selected) the operator's MachineConfig is for the
#   master pool, which rolls it out, and PSIEnabled turns True; no worker MachineConfig;
# - that pool paused, and our MachineConfig changed (schedstats added): PSIEnabled is False
#   PoolPaused, not Progressing;
# - a custom pool worker-cnf (role In (worker, worker-cnf)) holding one node: selecting only
#   that node makes a worker-cnf MachineConfig (the worker pool is not rebooted); selecting
#   every worker makes one worker MachineConfig both pools pick up, and the worker-cnf one,
#   no longer needed, stays (taking it away would reboot that pool again).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../sim/simlib.sh"
source "$(dirname "$0")/../lib/mco.sh"

name=pools-$$
forget_pools() {
  mco_forget_pools "master worker worker-cnf" 99-master-psi-rebalancer 99-worker-psi-rebalancer \
    99-worker-cnf-psi-rebalancer
  kubectl label nodes --all node-role.kubernetes.io/worker-cnf- >/dev/null 2>&1 || true
}
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
psir() { # psir NODE_ROLE SCHEDSTATS: the nodes of that role selected
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  nodeSelector: {matchLabels: {node-role.kubernetes.io/$1: ""}}
  machineConfig: {enabled: true, schedstats: $2, deletionPolicy: Delete}
  metrics: $bed_metrics
YAML
}
entries() { # the status.machineConfigs entries as pool:name, sorted
  kubectl get psirebalance "$name" -o json | jq -c '[.status.machineConfigs[]? | .pool + ":" + (.name // "")] | sort'
}

sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-compact.yaml" "sim-pools-$$" || { finish; exit 1; }
eventually 30 "the compact layout is up: master pool with 3 machines, worker pool with 0" bash -c \
  "kubectl get machineconfigpool master -o json | jq -e '.status.machineCount == 3' >/dev/null &&
   kubectl get machineconfigpool worker -o json | jq -e '.status.machineCount == 0' >/dev/null"
start_operator
psir worker false
eventually 60 "the workers selected: the operator creates 99-master-psi-rebalancer for their pool" \
  kubectl get machineconfig 99-master-psi-rebalancer
eventually 120 "the master pool rolls it out and PSIEnabled turns True" bash -c "$(declare -f reason); name=$name; [ \"\$(reason)\" = Enabled ]"
check "status.machineConfigs lists the master pool only ($(entries))" test "$(entries)" = '["master:99-master-psi-rebalancer"]'
check "no worker MachineConfig (the worker pool holds no selected node)" bash -c \
  "! kubectl get machineconfig 99-worker-psi-rebalancer >/dev/null 2>&1"

kubectl patch machineconfigpool master --type merge -p '{"spec":{"paused":true}}' >/dev/null
psir worker true
eventually 60 "the pool paused and our MachineConfig changed: PSIEnabled is False PoolPaused" bash -c \
  "$(declare -f reason); name=$name; [ \"\$(reason)\" = PoolPaused ]"
check "its message says so ($(message))" bash -c "$(declare -f message); name=$name; [[ \"\$(message)\" == *'pool master is paused'* ]]"

# --- a custom pool ---
kubectl delete psirebalance "$name" --wait=true --timeout=60s >/dev/null
sim_stop
forget_pools
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-cnf.yaml" "sim-cnf-$$" || { finish; exit 1; }
kubectl label node worker-2 node-role.kubernetes.io/worker-cnf= >/dev/null
eventually 60 "worker-2 moves to the worker-cnf pool, which inherits 00-worker" bash -c \
  "kubectl get machineconfigpool worker-cnf -o json | jq -e '.status.machineCount == 1 and .status.updatedMachineCount == 1 and
     (.status.configuration.source | map(.name) | index(\"00-worker\")) != null' >/dev/null &&
   kubectl get machineconfigpool worker -o json | jq -e '.status.machineCount == 2 and .status.updatedMachineCount == 2' >/dev/null"
worker_config=$(kubectl get machineconfigpool worker -o jsonpath='{.status.configuration.name}')
psir worker-cnf false
eventually 60 "only worker-2 selected: a MachineConfig of the worker-cnf role" bash -c \
  "[ \"\$(kubectl get machineconfig 99-worker-cnf-psi-rebalancer -o jsonpath='{.metadata.labels.machineconfiguration\.openshift\.io/role}')\" = worker-cnf ]"
eventually 120 "the worker-cnf pool rolls it out and PSIEnabled turns True" bash -c "$(declare -f reason); name=$name; [ \"\$(reason)\" = Enabled ]"
check "status.machineConfigs lists the worker-cnf pool only ($(entries))" test "$(entries)" = '["worker-cnf:99-worker-cnf-psi-rebalancer"]'
check "no worker MachineConfig, and the worker pool still runs $worker_config (no reboot)" bash -c \
  "! kubectl get machineconfig 99-worker-psi-rebalancer >/dev/null 2>&1 &&
   kubectl get machineconfigpool worker -o json | jq -e --arg c '$worker_config' '.spec.configuration.name == \$c and .status.configuration.name == \$c' >/dev/null"

psir worker false
eventually 60 "every worker selected: one worker MachineConfig" kubectl get machineconfig 99-worker-psi-rebalancer
check "the worker-cnf one, needed no more, stays (deletionPolicy Delete is ignored)" \
  kubectl get machineconfig 99-worker-cnf-psi-rebalancer
eventually 180 "both pools roll the worker MachineConfig out and PSIEnabled turns True" bash -c \
  "$(declare -f reason entries); name=$name; [ \"\$(reason)\" = Enabled ] &&
   [ \"\$(entries)\" = '[\"worker-cnf:99-worker-psi-rebalancer\",\"worker:99-worker-psi-rebalancer\"]' ]"
check "the worker-cnf pool renders it (inherited through role In (worker, worker-cnf))" bash -c \
  "kubectl get machineconfigpool worker-cnf -o json | jq -e '(.status.configuration.source | map(.name) | index(\"99-worker-psi-rebalancer\")) != null' >/dev/null"
finish
