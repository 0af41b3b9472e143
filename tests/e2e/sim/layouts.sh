#!/usr/bin/env bash
# MachineConfig pool layouts of real clusters in the MachineConfig operator stand-in:
# - a compact cluster (masters carrying the worker role): the nodes belong to the master
#   pool, whose status counts them, while the worker pool is Updated with 0 machines; a
#   psi=1 MachineConfig for the master role rolls the master pool;
# - a paused pool: a new MachineConfig is rendered into spec.configuration, but no machine
#   moves and the pool says Updated=False, Updating=False, "Pool is paused; will not update
#   to <rendered>", as the real operator writes it.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/simlib.sh"
source "$(dirname "$0")/../lib/mco.sh"

forget_pools() { mco_forget_pools "master worker" 99-master-e2e-psi 99-worker-e2e-psi; }
cleanup() { sim_cleanup; forget_pools; }
trap cleanup EXIT
forget_pools
cond() { # cond POOL TYPE: the condition's status
  kubectl get machineconfigpool "$1" -o json | jq -r --arg t "$2" '.status.conditions[]? | select(.type == $t) | .status'
}

# --- compact ---
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-compact.yaml" "sim-compact-$$" || { finish; exit 1; }
check "the simulated nodes carry the master and the worker role" bash -c \
  "[ \$(kubectl get nodes -l node-role.kubernetes.io/master,node-role.kubernetes.io/worker -o name | wc -l) = 3 ]"
eventually 30 "the master pool has the three machines, Updated" bash -c \
  "kubectl get machineconfigpool master -o json | jq -e '.status.machineCount == 3 and .status.updatedMachineCount == 3' >/dev/null &&
   [ \"\$($(declare -f cond); cond master Updated)\" = True ]"
check "the worker pool is empty and Updated (what the real operator shows there)" bash -c \
  "kubectl get machineconfigpool worker -o json | jq -e '.status.machineCount == 0' >/dev/null &&
   [ \"\$($(declare -f cond); cond worker Updated)\" = True ]"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata: {name: 99-master-e2e-psi, labels: {machineconfiguration.openshift.io/role: master}}
spec: {kernelArguments: [psi=1]}
YAML
eventually 120 "a psi=1 MachineConfig for the master role rolls the master pool to a configuration with it" bash -c \
  "kubectl get machineconfigpool master -o json |
   jq -e '(.status.configuration.source | map(.name) | index(\"99-master-e2e-psi\")) != null and .status.updatedMachineCount == 3' >/dev/null"
sim_stop
check "stopping the simulator removes the master role labels it added" bash -c \
  "[ \$(kubectl get nodes -l node-role.kubernetes.io/master -o name | wc -l) = 0 ]"
forget_pools

# --- paused ---
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-paused.yaml" "sim-paused-$$" || { finish; exit 1; }
eventually 30 "the paused worker pool starts Updated on its base configuration" bash -c \
  "[ \"\$($(declare -f cond); cond worker Updated)\" = True ]"
base=$(kubectl get machineconfigpool worker -o jsonpath='{.status.configuration.name}')
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata: {name: 99-worker-e2e-psi, labels: {machineconfiguration.openshift.io/role: worker}}
spec: {kernelArguments: [psi=1]}
YAML
eventually 30 "the new configuration is rendered into the pool's spec" bash -c \
  "t=\$(kubectl get machineconfigpool worker -o jsonpath='{.spec.configuration.name}'); [ -n \"\$t\" ] && [ \"\$t\" != '$base' ]"
target=$(kubectl get machineconfigpool worker -o jsonpath='{.spec.configuration.name}')
eventually 30 "the pool says Updated=False, Updating=False: paused, will not update to $target" bash -c \
  "kubectl get machineconfigpool worker -o json | jq -e --arg t '$target' '
     (.status.conditions[] | select(.type == \"Updated\") | .status == \"False\") and
     (.status.conditions[] | select(.type == \"Updating\") | .status == \"False\" and .message == \"Pool is paused; will not update to \" + \$t)' >/dev/null"
check "no machine was told to move (every desiredConfig is still $base)" bash -c \
  "kubectl get nodes -l node-role.kubernetes.io/worker -o json | jq -e --arg c '$base' '[.items[].metadata.annotations[\"machineconfiguration.openshift.io/desiredConfig\"]] | all(. == \$c)' >/dev/null"
check "and the status keeps the running configuration ($base)" test \
  "$(kubectl get machineconfigpool worker -o jsonpath='{.status.configuration.name}')" = "$base"
finish
