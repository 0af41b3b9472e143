#!/usr/bin/env bash
# MachineConfigs: the operator creates one per role with psi=1 (and schedstats=enable), and
# PSIEnabled follows the MachineConfigPool status the test writes (the MachineConfig
# operator's part): not found, progressing, enabled, degraded. Deleting the PsiRebalance
# keeps the MachineConfig (deleting it would reboot the pool) unless deletionPolicy is
# Delete, and even then not while another PsiRebalance asks for the role. Where the
# MachineConfig API does not exist, PSIEnabled is Unknown with MachineConfigAPIUnavailable and all else works.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=mc-$$
mc=99-worker-psi-rebalancer
mc_infra=99-infra-psi-rebalancer
crds="$PSI_SOURCE_DIR/hack/cluster/crds"
restore() {
  kubectl delete psirebalance "$name" "$name-absent" "$name-del" "$name-keep" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete machineconfig "$mc" "$mc_infra" --ignore-not-found >/dev/null 2>&1
  kubectl delete machineconfigpool worker --ignore-not-found >/dev/null 2>&1
  kubectl apply --server-side -f "$crds" >/dev/null 2>&1
  rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json
  operator_cleanup
}
trap restore EXIT

psir() { # psir NAME [ROLES [POLICY]]: a PsiRebalance that manages MachineConfigs (default: for the workers)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $1}
spec:
  machineConfig: {enabled: true, roles: ${2:-[worker]}, schedstats: true, deletionPolicy: ${3:-Retain}}
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

eventually 60 "MachineConfig $mc created" kubectl get machineconfig "$mc"
check "it carries kernelArguments psi=1 and schedstats=enable" bash -c \
  "kubectl get machineconfig $mc -o json | jq -e '.spec.kernelArguments == [\"psi=1\",\"schedstats=enable\"]' >/dev/null"
check "it is labelled for the worker role" bash -c \
  "[ \"\$(kubectl get machineconfig $mc -o jsonpath='{.metadata.labels.machineconfiguration\.openshift\.io/role}')\" = worker ]"
check "it has no ownerReference (deleting the PsiRebalance must not delete it)" bash -c \
  "kubectl get machineconfig $mc -o json | jq -e '.metadata.ownerReferences == null' >/dev/null"
eventually 30 "PSIEnabled=False PoolNotFound without a pool" bash -c "$(declare -f psir_field reason); [ \"\$(reason $name PSIEnabled)\" = PoolNotFound ]"
check "a MachineConfigCreated Event was recorded" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e '[.items[] | select(.reason==\"MachineConfigCreated\" and .regarding.name==\"$name\")] | length == 1' >/dev/null"

kubectl apply -f - >/dev/null <<YAML
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata: {name: worker}
spec:
  machineConfigSelector: {matchLabels: {machineconfiguration.openshift.io/role: worker}}
  nodeSelector: {matchLabels: {node-role.kubernetes.io/worker: ""}}
YAML
pool_status "{\"configuration\":{\"name\":\"rendered-worker-new\",\"source\":[{\"name\":\"00-worker\"},{\"name\":\"$mc\"}]},\"machineCount\":3,\"updatedMachineCount\":1,\"readyMachineCount\":1,\"degradedMachineCount\":0,\"conditions\":[$(cond Updated False),$(cond Updating True),$(cond Degraded False)]}"
eventually 30 "PSIEnabled=False Progressing while machines update" bash -c "$(declare -f psir_field reason); [ \"\$(reason $name PSIEnabled)\" = Progressing ]"
check "status.machineConfigs reports 1 of 3 machines updated" bash -c \
  "kubectl get psirebalance $name -o json | jq -e '.status.machineConfigs[0] | .role==\"worker\" and .name==\"$mc\" and .pool==\"worker\" and .updatedMachines==1 and .machines==3 and .updated==false' >/dev/null"

pool_status "{\"machineCount\":3,\"updatedMachineCount\":3,\"readyMachineCount\":3,\"conditions\":[$(cond Updated True),$(cond Updating False),$(cond Degraded False)]}"
eventually 30 "PSIEnabled=True once the pool is Updated with our MachineConfig" bash -c "$(declare -f psir_field condition); [ \"\$(condition $name PSIEnabled)\" = True ]"

pool_status "{\"degradedMachineCount\":1,\"conditions\":[$(cond Updated False),$(cond Updating False),$(cond Degraded True 'node worker-1 failed to drain')]}"
eventually 30 "PSIEnabled=False PoolDegraded when the pool degrades" bash -c "$(declare -f psir_field reason); [ \"\$(reason $name PSIEnabled)\" = PoolDegraded ]"
check "the PsiRebalance is Degraded" test "$(condition "$name" Degraded)" = True

kubectl delete psirebalance "$name" --wait=true --timeout=60s >/dev/null
check "deleting the PsiRebalance keeps the MachineConfig" kubectl get machineconfig "$mc" -o name

# deletionPolicy Delete: a role dropped, the PsiRebalance deleted -> its MachineConfigs go,
# but not while another PsiRebalance asks for the same role.
kubectl delete machineconfig "$mc" >/dev/null
psir "$name-del" "[worker, infra]" Delete
eventually 60 "both MachineConfigs created for the Delete PsiRebalance" kubectl get machineconfig "$mc" "$mc_infra"
psir "$name-keep" "[infra]"
psir "$name-del" "[worker]" Delete
sleep 12
check "infra dropped from roles, but kept: $name-keep asks for it" kubectl get machineconfig "$mc_infra" -o name
kubectl delete psirebalance "$name-keep" --wait=true --timeout=60s >/dev/null
eventually 60 "then deleted once no PsiRebalance asks for infra" bash -c "! kubectl get machineconfig $mc_infra >/dev/null 2>&1"
check "a MachineConfigDeleted Event was recorded" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e '[.items[] | select(.reason==\"MachineConfigDeleted\" and .regarding.name==\"$name-del\")] | length == 1' >/dev/null"
check "the worker MachineConfig is still there" kubectl get machineconfig "$mc" -o name
kubectl delete psirebalance "$name-del" --wait=true --timeout=60s >/dev/null
check "deleting the Delete PsiRebalance deleted its worker MachineConfig" bash -c "! kubectl get machineconfig $mc >/dev/null 2>&1"

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
