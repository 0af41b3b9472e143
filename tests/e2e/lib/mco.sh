# shellcheck shell=bash
# MachineConfig pools are cluster-wide: a test that makes some leaves the bed as the others
# expect it (no pool). Source after testlib.sh.

# mco_forget_pools "POOL..." [MACHINECONFIG...]: delete the MachineConfigPools POOL..., the
# MachineConfigs named, each pool's 00-POOL and rendered-POOL-* ones, and the MachineConfig
# operator's annotations on the worker nodes.
mco_forget_pools() {
  local pools=$1 p n
  shift
  # shellcheck disable=SC2086 # the pools are a list
  kubectl delete machineconfigpool $pools --ignore-not-found --wait=false >/dev/null 2>&1 || true
  for p in $pools; do set -- "$@" "00-$p"; done
  kubectl delete machineconfig "$@" --ignore-not-found >/dev/null 2>&1 || true
  for p in $pools; do
    kubectl get machineconfig -o name 2>/dev/null | grep "/rendered-$p-" | xargs -r kubectl delete >/dev/null 2>&1 || true
  done
  for n in $(kubectl get nodes -l node-role.kubernetes.io/worker -o name); do
    kubectl annotate "$n" machineconfiguration.openshift.io/currentConfig- machineconfiguration.openshift.io/desiredConfig- \
      machineconfiguration.openshift.io/state- machineconfiguration.openshift.io/reason- >/dev/null 2>&1 || true
  done
}

# mco_worker_pool: the workers' MachineConfigPool as OpenShift has it (role worker), which the
# operator's MachineConfig for the worker nodes is for.
mco_worker_pool() {
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata: {name: worker}
spec:
  machineConfigSelector: {matchLabels: {machineconfiguration.openshift.io/role: worker}}
  nodeSelector: {matchLabels: {node-role.kubernetes.io/worker: ""}}
YAML
}
