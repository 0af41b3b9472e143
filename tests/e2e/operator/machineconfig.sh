#!/usr/bin/env bash
# MachineConfigs: the operator creates one with psi=1 (and schedstats=enable) for the pool of
# the selected nodes, none while they are in no pool, and PSIEnabled follows the
# MachineConfigPool status the test writes (the MachineConfig operator's part): not found,
# progressing, enabled, degraded. Deleting the PsiRebalance keeps the MachineConfig (deleting
# it would reboot the pool), whatever the deprecated deletionPolicy says: a custom pool "infra"
# (inheriting the worker MachineConfigs) gets its own MachineConfig while only its node is
# selected, shares the worker one once the workers are selected too, and its own stays when no
# PsiRebalance needs it any more. Without the admission
# policy psi-rebalancer-machineconfigs in force (its binding deleted, or only auditing),
# machineConfig mode is refused: PSIEnabled False AdmissionPolicyMissing, no MachineConfig
# written, until config/admission is applied again. Where the
# MachineConfig API does not exist, PSIEnabled is Unknown with MachineConfigAPIUnavailable and
# all else works.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/mco.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=mc-$$
mc=99-worker-psi-rebalancer
mc_infra=99-infra-psi-rebalancer
crds="$PSI_SOURCE_DIR/hack/cluster/crds"
restore() {
  kubectl delete psirebalance "$name" "$name-absent" "$name-del" "$name-keep" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete machineconfig "$mc" "$mc_infra" --ignore-not-found >/dev/null 2>&1
  kubectl delete machineconfigpool worker infra --ignore-not-found >/dev/null 2>&1
  kubectl label node worker-2 node-role.kubernetes.io/infra- >/dev/null 2>&1
  kubectl apply --server-side -f "$crds" >/dev/null 2>&1
  rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json
  operator_cleanup
}
trap restore EXIT

psir() { # psir NAME [NODE_ROLE [POLICY]]: a PsiRebalance that manages MachineConfigs for the nodes of a role (default: worker)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $1}
spec:
  nodeSelector: {matchLabels: {node-role.kubernetes.io/${2:-worker}: ""}}
  machineConfig: {enabled: true, schedstats: true, deletionPolicy: ${3:-Retain}}
  metrics: $bed_metrics
YAML
}
reason() { psir_field "$1" ".status.conditions[]? | select(.type == \"$2\") | .reason"; }
# pool_status JSON: write the pool's status as the MachineConfig operator would.
pool_status() { kubectl patch machineconfigpool worker --subresource=status --type=merge -p "{\"status\": $1}" >/dev/null; }
cond() { printf '{"type":"%s","status":"%s","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"","message":"%s"}' "$1" "$2" "${3:-}"; }

start_exporter worker-0 worker-1 worker-2
start_operator
psir "$name"

eventually 30 "PSIEnabled=False PoolNotFound while the selected nodes are in no pool, naming them" bash -c \
  "$(declare -f psir_field reason); [ \"\$(reason $name PSIEnabled)\" = PoolNotFound ] &&
   kubectl get psirebalance $name -o json | jq -e '.status.conditions[] | select(.type==\"PSIEnabled\") | .message | test(\"3 selected nodes are in no MachineConfigPool.*worker-0, worker-1, worker-2\")' >/dev/null"
check "no MachineConfig without a pool to pick it up" bash -c "! kubectl get machineconfig $mc >/dev/null 2>&1"
mco_worker_pool
eventually 60 "MachineConfig $mc created for the worker pool" kubectl get machineconfig "$mc"
check "it carries kernelArguments psi=1 and schedstats=enable" bash -c \
  "kubectl get machineconfig $mc -o json | jq -e '.spec.kernelArguments == [\"psi=1\",\"schedstats=enable\"]' >/dev/null"
check "it is labelled for the worker role" bash -c \
  "[ \"\$(kubectl get machineconfig $mc -o jsonpath='{.metadata.labels.machineconfiguration\.openshift\.io/role}')\" = worker ]"
check "it has no ownerReference (deleting the PsiRebalance must not delete it)" bash -c \
  "kubectl get machineconfig $mc -o json | jq -e '.metadata.ownerReferences == null' >/dev/null"
eventually 30 "a MachineConfigCreated Event was recorded (the operator records it after the write)" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e '[.items[] | select(.reason==\"MachineConfigCreated\" and .regarding.name==\"$name\")] | length == 1' >/dev/null"
pool_status "{\"configuration\":{\"name\":\"rendered-worker-new\",\"source\":[{\"name\":\"00-worker\"},{\"name\":\"$mc\"}]},\"machineCount\":3,\"updatedMachineCount\":1,\"readyMachineCount\":1,\"degradedMachineCount\":0,\"conditions\":[$(cond Updated False),$(cond Updating True),$(cond Degraded False)]}"
eventually 30 "PSIEnabled=False Progressing while machines update" bash -c "$(declare -f psir_field reason); [ \"\$(reason $name PSIEnabled)\" = Progressing ]"
eventually 30 "status.machineConfigs reports 1 of 3 machines updated" bash -c \
  "kubectl get psirebalance $name -o json | jq -e '.status.machineConfigs[0] | .role==\"worker\" and .name==\"$mc\" and .pool==\"worker\" and .updatedMachines==1 and .machines==3 and .updated==false' >/dev/null"

pool_status "{\"machineCount\":3,\"updatedMachineCount\":3,\"readyMachineCount\":3,\"conditions\":[$(cond Updated True),$(cond Updating False),$(cond Degraded False)]}"
eventually 30 "PSIEnabled=True once the pool is Updated with our MachineConfig" bash -c "$(declare -f psir_field condition); [ \"\$(condition $name PSIEnabled)\" = True ]"

pool_status "{\"degradedMachineCount\":1,\"conditions\":[$(cond Updated False),$(cond Updating False),$(cond Degraded True 'node worker-1 failed to drain')]}"
eventually 30 "PSIEnabled=False PoolDegraded when the pool degrades" bash -c "$(declare -f psir_field reason); [ \"\$(reason $name PSIEnabled)\" = PoolDegraded ]"
check "the PsiRebalance is Degraded" test "$(condition "$name" Degraded)" = True

# Without the admission policy that confines MachineConfig writes in force, machineConfig mode
# is refused: nothing written, PSIEnabled False saying what is missing and how to apply it.
vap=psi-rebalancer-machineconfigs
psi_is() { # REASON TEXT...: PSIEnabled False with REASON, its message containing each TEXT
  local r=$1; shift
  kubectl get psirebalance "$name" -o json | jq -e --arg r "$r" --args '.status.conditions[] | select(.type == "PSIEnabled")
    | .status == "False" and .reason == $r and ([$ARGS.positional[] as $t | .message | contains($t)] | all)' "$@" >/dev/null
}
kubectl delete validatingadmissionpolicybinding "$vap" >/dev/null
kubectl delete machineconfig "$mc" >/dev/null
eventually 30 "binding deleted: PSIEnabled=False AdmissionPolicyMissing, naming it and the command that applies it" \
  bash -c "$(declare -f psi_is); name=$name; psi_is AdmissionPolicyMissing 'ValidatingAdmissionPolicyBinding $vap is missing' 'kubectl apply -k config/admission'"
degraded_by_refusal() { # Degraded True, the refusal among its problems (the first one names the reason)
  psir_field "$name" '.status.conditions[] | select(.type == "Degraded")' |
    jq -e '.status == "True" and (.message | contains("MachineConfig mode refused"))' >/dev/null
}
check "Degraded, the refusal among its problems" degraded_by_refusal
sleep 12
check "no MachineConfig written while refused (two cycles)" bash -c "! kubectl get machineconfig $mc >/dev/null 2>&1"
kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: $vap}
spec: {policyName: $vap, validationActions: [Audit]}
YAML
eventually 30 "a binding that only audits is not in force: still refused" \
  bash -c "$(declare -f psi_is); name=$name; psi_is AdmissionPolicyMissing 'ValidatingAdmissionPolicyBinding $vap does not deny'"
kubectl apply -f "$PSI_SOURCE_DIR/config/admission/machineconfigs.yaml" >/dev/null
eventually 30 "config/admission applied: the MachineConfig is written again" kubectl get machineconfig "$mc" -o name
eventually 30 "PSIEnabled follows the pool again (PoolDegraded)" bash -c "$(declare -f psir_field reason); [ \"\$(reason $name PSIEnabled)\" = PoolDegraded ]"

kubectl delete psirebalance "$name" --wait=true --timeout=60s >/dev/null
check "deleting the PsiRebalance keeps the MachineConfig" kubectl get machineconfig "$mc" -o name

# A custom pool: infra (role In (worker, infra)) holds worker-2.
kubectl delete machineconfig "$mc" >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata: {name: infra}
spec:
  machineConfigSelector:
    matchExpressions: [{key: machineconfiguration.openshift.io/role, operator: In, values: [worker, infra]}]
  nodeSelector: {matchLabels: {node-role.kubernetes.io/infra: ""}}
YAML
kubectl label node worker-2 node-role.kubernetes.io/infra= >/dev/null
psir "$name-del" infra Delete
eventually 60 "only worker-2 selected: the infra pool gets its own MachineConfig" kubectl get machineconfig "$mc_infra"
check "and no worker MachineConfig (the worker pool has no selected node)" bash -c "! kubectl get machineconfig $mc >/dev/null 2>&1"
psir "$name-del" worker Delete
eventually 60 "the workers selected: one worker MachineConfig, which the infra pool inherits" kubectl get machineconfig "$mc"
eventually 30 "status.machineConfigs: both pools pick up the worker MachineConfig" bash -c \
  "kubectl get psirebalance $name-del -o json | jq -e '[.status.machineConfigs[] | .pool + \":\" + .name] | sort == [\"infra:$mc\", \"worker:$mc\"]' >/dev/null"
kubectl delete psirebalance "$name-del" --wait=true --timeout=60s >/dev/null
check "infra's own MachineConfig, needed no more, is kept all the same (deletionPolicy Delete is ignored)" \
  kubectl get machineconfig "$mc_infra" -o name
check "and so is the worker one" kubectl get machineconfig "$mc" -o name
kubectl delete machineconfig "$mc_infra" >/dev/null
kubectl label node worker-2 node-role.kubernetes.io/infra- >/dev/null

# API absent: remove the MachineConfig API, restart the operator.
stop_operator
kubectl delete machineconfig "$mc" --ignore-not-found >/dev/null
kubectl delete -f "$crds/machineconfiguration.openshift.io_machineconfigs.yaml" -f "$crds/machineconfiguration.openshift.io_machineconfigpools.yaml" --wait=true >/dev/null
eventually 30 "the MachineConfig API is gone" bash -c "! kubectl get --raw /apis/machineconfiguration.openshift.io/v1 >/dev/null 2>&1"
start_operator
psir "$name-absent"
eventually 60 "PSIEnabled=Unknown MachineConfigAPIUnavailable without the API" bash -c "$(declare -f psir_field reason); [ \"\$(reason $name-absent PSIEnabled)\" = MachineConfigAPIUnavailable ]"
eventually 60 "and the PsiRebalance is still Ready" bash -c "$(declare -f psir_field condition); [ \"\$(condition $name-absent Ready)\" = True ]"
check "the operator logged the API as absent" grep -q "machineconfigs=\"absent" "$work/operator.log"
check "no permission was denied to the operator" bash -c "! grep -Ei 'forbidden' $work/operator.log"

finish
