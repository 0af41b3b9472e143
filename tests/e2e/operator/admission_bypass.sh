#!/usr/bin/env bash
# The ValidatingAdmissionPolicies of config/admission on the bed's real API server, tried as
# the operator's ServiceAccount (its token, its RBAC from config/rbac) with every bypass of
# issue #30; each is refused with a message that names the policy:
# - nodes: a foreign taint added, changed or removed; a NoExecute taint, even under
#   rebalance.psi.dev/; labels, annotations, cordon; an ownerReference (the real
#   kube-controller-manager's garbage collector would delete the node: the node is shown to
#   survive), finalizers, spec.providerID, spec.podCIDR; nodes/status; deleting a node;
# - MachineConfigs: another kernel argument, Ignition content, another name, osImageURL,
#   baseOSExtensionsContainerImage, a role label that does not match the name, a foreign
#   label, an ownerReference; taking a kernel argument out, changing the Ignition config, and
#   deleting any MachineConfig (refused by its role, and by the policy once delete is
#   granted): so the token can change each pool's MachineConfig at most twice;
# - moves: an eviction in kube-system and in openshift-*; a VirtualMachineInstanceMigration
#   without the operator's mark (created, or deleted when someone else made it).
# Its own writes pass: a taint under rebalance.psi.dev/, and the running operator's
# MachineConfig (psi=1, schedstats=enable) and pressure taint, an eviction elsewhere (dry
# run), and a migration with its mark (created, deleted). The admin is not restricted.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/mco.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=vap-$$
mc=99-worker-psi-rebalancer
restore() {
  kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete clusterrolebinding,clusterrole vap-psirebalance-edit vap-psirebalance-steer vap-mc-delete --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete node vap-gc-probe --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete machineconfig "$mc" 99-worker-psi-rebalancer-evil 50-other 99-infra-psi-rebalancer --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete machineconfigpool worker --ignore-not-found >/dev/null 2>&1 || true
  kubectl taint node worker-1 other-team/keep- >/dev/null 2>&1 || true
  kubectl taint node worker-1 rebalance.psi.dev/test- >/dev/null 2>&1 || true
  kubectl delete pod -n kube-system vap-evict --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete pod -n openshift-vap vap-evict --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete pod -n default vap-evict --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete namespace openshift-vap --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete virtualmachineinstancemigration -n default vap-foreign psi-rebalancer-vap-own --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete validatingadmissionpolicybinding,validatingadmissionpolicy vap-refuse-taints --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete -k "$PSI_SOURCE_DIR/config/admission" --ignore-not-found >/dev/null 2>&1 || true
  rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json
  operator_cleanup
}
trap restore EXIT

kubectl apply -k "$PSI_SOURCE_DIR/config/admission" >/dev/null
install_operator_rbac
operator_kubeconfig "$work/sa.kubeconfig"
sa() { kubectl --kubeconfig "$work/sa.kubeconfig" "$@"; }
# refused WHAT MESSAGE CMD...: CMD fails and its error names the policy and its message
# (the node policy for a node write, $POLICY if set, the MachineConfig policy otherwise)
refused() {
  local what=$1 msg=$2 out policy=${POLICY:-psi-rebalancer-machineconfigs}; shift 2
  [[ $* == *node* ]] && policy=psi-rebalancer-node-taints
  if out=$("$@" 2>&1); then fail "$what (it was allowed)"; return; fi
  if [[ $out == *"ValidatingAdmissionPolicy '$policy'"*"$msg"* ]]; then pass "$what"; else fail "$what (got: $out)"; fi
}
eventually 30 "the API server enforces the policies (a foreign taint from the operator's account is refused)" bash -c \
  "$(declare -f sa); work=$work; ! sa taint node worker-1 other-team/probe=x:NoSchedule >/dev/null 2>&1"
# each policy is loaded on its own: wait for the MachineConfig one too (a server-side dry run)
eventually 30 "... and so is a MachineConfig with another kernel argument (dry run)" bash -c \
  "$(declare -f sa); work=$work; printf '%s' '{\"apiVersion\":\"machineconfiguration.openshift.io/v1\",\"kind\":\"MachineConfig\",
   \"metadata\":{\"name\":\"99-infra-psi-rebalancer\",\"labels\":{\"machineconfiguration.openshift.io/role\":\"infra\"}},
   \"spec\":{\"kernelArguments\":[\"psi=1\",\"nosmt\"]}}' | sa create --dry-run=server -f - 2>&1 |
   grep -q 'no kernel argument but psi=1 and schedstats=enable'"
kubectl taint node worker-1 other-team/probe- >/dev/null 2>&1 || true

# --- nodes ---
kubectl taint node worker-1 other-team/keep=yes:NoSchedule --overwrite >/dev/null
refused "adding a foreign taint is refused" "may add, change or remove only taints whose key is under rebalance.psi.dev/" \
  sa taint node worker-1 other-team/new=x:PreferNoSchedule
refused "removing a foreign taint is refused" "only taints whose key is under rebalance.psi.dev/" \
  sa taint node worker-1 other-team/keep-
refused "labelling a node is refused" "may not change a node's labels or annotations" \
  sa label node worker-1 evil=yes
refused "annotating a node is refused" "may not change a node's labels or annotations" \
  sa annotate node worker-1 evil=yes
fixed="may not change a node's providerID, externalID, podCIDR(s), configSource"
refused "cordoning a node is refused" "$fixed" \
  sa patch node worker-1 --type merge -p '{"spec":{"unschedulable":true}}'
check "and it is not cordoned" test -z "$(kubectl get node worker-1 -o jsonpath='{.spec.unschedulable}')"
refused "a NoExecute taint under another key is refused" "may add, change or remove only taints whose key is under rebalance.psi.dev/" \
  sa taint node worker-1 other-team/x=:NoExecute
refused "a NoExecute taint even under rebalance.psi.dev/ is refused" "only the effects PreferNoSchedule and NoSchedule" \
  sa taint node worker-1 rebalance.psi.dev/x=:NoExecute
owner='{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Namespace","name":"default","uid":"00000000-0000-0000-0000-000000000002"}]}}'
refused "an ownerReference on a node is refused" "may not change a node's ownerReferences or finalizers" \
  sa patch node worker-1 --type merge -p "$owner"
refused "a finalizer on a node is refused" "may not change a node's ownerReferences or finalizers" \
  sa patch node worker-1 --type merge -p '{"metadata":{"finalizers":["evil.example/hold"]}}'
refused "a changed spec.providerID is refused" "$fixed" \
  sa patch node worker-1 --type merge -p '{"spec":{"providerID":"evil://worker-1"}}'
refused "a changed spec.podCIDR is refused" "$fixed" \
  sa patch node worker-1 --type merge -p '{"spec":{"podCIDR":"127.0.0.0/24","podCIDRs":["127.0.0.0/24"]}}'
# The garbage collector of the bed's kube-controller-manager deletes a node whose owner does
# not exist within a second or two: the same ownerReference set by the admin, on a node made
# for it, shows the GC runs; the operator's attempt above left worker-1 standing.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: vap-gc-probe, labels: {type: vap-gc-probe}}
YAML
kubectl patch node vap-gc-probe --type merge -p "$owner" >/dev/null
eventually 60 "the real garbage collector deletes a node with that ownerReference (set by the admin)" bash -c \
  "! kubectl get node vap-gc-probe >/dev/null 2>&1"
sleep 5
check "worker-1, which the operator's account tried to give it, still stands" kubectl get node worker-1
check "and has no ownerReference" test -z "$(kubectl get node worker-1 -o jsonpath='{.metadata.ownerReferences}')"
# (The account has no delete on nodes; the policy refuses a DELETE too, should RBAC grow one.)
check "deleting a node is refused" bash -c "$(declare -f sa); work=$work; ! sa delete node worker-2 --dry-run=server"
check "worker-2 still stands" kubectl get node worker-2
check "a taint under rebalance.psi.dev/ may be added" sa taint node worker-1 rebalance.psi.dev/test=x:PreferNoSchedule
check "and removed" sa taint node worker-1 rebalance.psi.dev/test-
check "the foreign taint is still there" bash -c \
  "kubectl get node worker-1 -o json | jq -e '[.spec.taints[]? | select(.key == \"other-team/keep\")] | length == 1' >/dev/null"
check "the admin is not restricted" kubectl label node worker-1 vap-test=yes --overwrite
kubectl label node worker-1 vap-test- >/dev/null

# --- MachineConfigs ---
mcyaml() { # mcyaml NAME KARGS [SPEC-EXTRA] [ROLE] (ROLE: the one in the name by default)
  local role=${4:-${1#99-}}; role=${role%-psi-rebalancer}
  printf 'apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata: {name: %s, labels: {machineconfiguration.openshift.io/role: %s}}\nspec: {kernelArguments: %s%s}\n' "$1" "$role" "$2" "${3:-}"
}
refused "a MachineConfig with another kernel argument is refused" "no kernel argument but psi=1 and schedstats=enable" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1, nosmt]')
refused "a MachineConfig with Ignition files is refused" "may write no Ignition content" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' ', config: {ignition: {version: 3.2.0}, storage: {files: [{path: /etc/evil}]}}')
refused "a MachineConfig under another name is refused" "only MachineConfigs named 99-<role>-psi-rebalancer" \
  sa apply -f <(mcyaml 50-other '[psi=1]' '' worker)
refused "an osImageURL is refused" "may not set osImageURL" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' ', osImageURL: quay.invalid/evil@sha256:0')
refused "a baseOSExtensionsContainerImage is refused" "may not set osImageURL, baseOSExtensionsContainerImage" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' ', baseOSExtensionsContainerImage: quay.invalid/evil@sha256:0')
refused "99-worker-psi-rebalancer labelled role master is refused" "must be labelled" \
  sa apply -f <(mcyaml 99-worker-psi-rebalancer '[psi=1]' '' master)
refused "a kernel argument given twice is refused" "each once" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1, psi=1]')
refused "an ownerReference on our MachineConfig is refused" "no ownerReferences or finalizers" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' | sed 's|^metadata: {|metadata: {ownerReferences: [{apiVersion: v1, kind: Namespace, name: default, uid: 00000000-0000-0000-0000-000000000002}], |')
refused "a foreign label on our MachineConfig is refused" "no other label" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' | sed 's|labels: {|labels: {evil: "yes", |')
check "its own shape passes (psi=1, Ignition version only)" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' ', config: {ignition: {version: 3.2.0}}')
refused "changing it to add a kernel argument is refused" "no kernel argument but psi=1 and schedstats=enable" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1, mitigations=off]' ', config: {ignition: {version: 3.2.0}}')
check "adding schedstats=enable passes" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1, schedstats=enable]' ', config: {ignition: {version: 3.2.0}}')
# What bounds how often the token can reboot a pool: no argument taken out again, the
# Ignition config as written, and no delete.
refused "taking schedstats=enable out again is refused" "may not take a kernel argument out" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' ', config: {ignition: {version: 3.2.0}}')
refused "taking psi=1 out is refused" "may not take a kernel argument out" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[schedstats=enable]' ', config: {ignition: {version: 3.2.0}}')
refused "changing its Ignition version is refused" "may not change a MachineConfig's Ignition config" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1, schedstats=enable]' ', config: {ignition: {version: 3.4.0}}')
check "the account cannot delete its own MachineConfig (its role has no delete)" bash -c \
  "$(declare -f sa); work=$work; out=\$(sa delete machineconfig 99-infra-psi-rebalancer 2>&1); [[ \$out == *forbidden*'cannot delete'* ]]"
# Should its role ever grow a delete, the policy refuses it still.
kubectl create clusterrole vap-mc-delete --verb=delete --resource=machineconfigs.machineconfiguration.openshift.io >/dev/null
kubectl create clusterrolebinding vap-mc-delete --clusterrole=vap-mc-delete --serviceaccount=psi-rebalancer:psi-rebalancer >/dev/null
eventually 30 "with delete granted, the policy refuses deleting its own MachineConfig" bash -c \
  "$(declare -f sa); work=$work; out=\$(sa delete machineconfig 99-infra-psi-rebalancer 2>&1); [[ \$out == *\"ValidatingAdmissionPolicy 'psi-rebalancer-machineconfigs'\"*'may not delete a MachineConfig'* ]]"
kubectl apply -f <(mcyaml 50-other '[]' '' worker) >/dev/null
refused "and deleting one not its own" "may not delete a MachineConfig" sa delete machineconfig 50-other
kubectl delete clusterrolebinding,clusterrole vap-mc-delete >/dev/null
check "its MachineConfig is still there" kubectl get machineconfig 99-infra-psi-rebalancer

# --- moves: evictions and live migrations ---
kubectl create namespace openshift-vap --dry-run=client -o yaml | kubectl apply -f - >/dev/null
for ns in kube-system openshift-vap default; do
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: vap-evict, namespace: $ns}
spec: {automountServiceAccountToken: false, containers: [{name: c, image: registry.invalid/pause:1}]}
YAML
done
evict() { # evict NAMESPACE: the operator's account evicts pod vap-evict there (a dry run)
  printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"vap-evict","namespace":"%s"},"deleteOptions":{"dryRun":["All"]}}' "$1" |
    sa create --raw "/api/v1/namespaces/$1/pods/vap-evict/eviction" -f -
}
eventually 30 "the moves policy is enforced too (an eviction in kube-system, dry run)" bash -c \
  "$(declare -f sa evict); work=$work; ! evict kube-system >/dev/null 2>&1"
POLICY=psi-rebalancer-moves refused "an eviction in kube-system is refused" "may not evict pods in namespace kube-system" \
  evict kube-system
POLICY=psi-rebalancer-moves refused "an eviction in an openshift-* namespace is refused" "may not evict pods in namespace openshift-vap" \
  evict openshift-vap
check "an eviction in another namespace passes (dry run)" evict default
check "the pod in kube-system is still there" kubectl get pod -n kube-system vap-evict
vmim() { # vmim NAME [LABELS]: a VirtualMachineInstanceMigration in default
  printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigration\nmetadata: {name: %s, namespace: default, labels: {%s}}\nspec: {vmiName: vm-1}\n' "$1" "${2:-}"
}
mark="app.kubernetes.io/managed-by: psi-rebalancer, rebalance.psi.dev/psirebalance: $name"
own="psi-rebalancer-move"
POLICY=psi-rebalancer-moves refused "a migration without the operator's labels is refused" "only its own VirtualMachineInstanceMigrations" \
  sa create --dry-run=server -f <(vmim psi-rebalancer-vap-x)
POLICY=psi-rebalancer-moves refused "a migration with its labels under another name is refused" "only its own VirtualMachineInstanceMigrations" \
  sa create --dry-run=server -f <(vmim vap-x "$mark")
POLICY=psi-rebalancer-moves refused "a migration labelled managed-by someone else is refused" "only its own VirtualMachineInstanceMigrations" \
  sa create --dry-run=server -f <(vmim psi-rebalancer-vap-x "app.kubernetes.io/managed-by: other, rebalance.psi.dev/psirebalance: $name")
check "a migration with its mark passes (generateName, as the operator writes it)" bash -c \
  "$(declare -f sa vmim); work=$work; vmim x '$mark' | sed 's|{name: x,|{generateName: $own-,|' | sa create --dry-run=server -f - >/dev/null"
kubectl apply -f <(vmim vap-foreign) -f <(vmim psi-rebalancer-vap-own "$mark") >/dev/null
POLICY=psi-rebalancer-moves refused "deleting a migration someone else made is refused" "only its own VirtualMachineInstanceMigrations" \
  sa delete virtualmachineinstancemigration -n default vap-foreign
check "it is still there" kubectl get virtualmachineinstancemigration -n default vap-foreign
check "deleting its own passes" sa delete virtualmachineinstancemigration -n default psi-rebalancer-vap-own

# --- who may write a PsiRebalance ---
# OLM's aggregated -edit role grants create/update/patch/delete on psirebalances; a user who
# has just that (here through a ClusterRole of the same verbs) is refused by
# psi-rebalancer-writers, and passes once granted the verb steer; the admin passes.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: vap-psirebalance-edit}
rules:
- {apiGroups: [rebalance.psi.dev], resources: [psirebalances], verbs: [get, list, watch, create, update, patch, delete]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vap-psirebalance-edit}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vap-psirebalance-edit}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: vap-editor}]
YAML
prb() { printf 'apiVersion: rebalance.psi.dev/v1alpha1\nkind: PsiRebalance\nmetadata: {name: vap-writer-%s}\nspec: {}\n' "$$"; }
out=$(prb | kubectl create --as vap-editor --dry-run=server -f - 2>&1) && fail "an edit-role user may not create a PsiRebalance (it was allowed)" ||
  { [[ $out == *"ValidatingAdmissionPolicy 'psi-rebalancer-writers'"*"needs the verb steer"* ]] &&
    pass "an edit-role user may not create a PsiRebalance" || fail "an edit-role user may not create a PsiRebalance (got: $out)"; }
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: vap-psirebalance-steer}
rules:
- {apiGroups: [rebalance.psi.dev], resources: [psirebalances], verbs: [steer]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vap-psirebalance-steer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vap-psirebalance-steer}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: vap-editor}]
YAML
eventually 30 "granted steer, it may" bash -c "$(declare -f prb); prb | kubectl create --as vap-editor --dry-run=server -f - >/dev/null"
check "the admin may" bash -c "$(declare -f prb); prb | kubectl create --dry-run=server -f - >/dev/null"

# --- the operator itself, under the policies ---
start_exporter worker-0 worker-1 worker-2
start_operator
mco_worker_pool
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  machineConfig: {enabled: true, roles: [worker], schedstats: true}
  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 5s}
YAML
eventually 60 "the operator creates its MachineConfig under the policies" bash -c \
  "kubectl get machineconfig $mc -o json | jq -e '.spec.kernelArguments == [\"psi=1\",\"schedstats=enable\"]' >/dev/null"
# A refusal of its taint patch reaches its log with the API server's message: a policy made
# for the test refuses it as Invalid (HTTP 422, which the operator retries from a fresh read
# before it gives up), then goes.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: vap-refuse-taints}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["*"], operations: [UPDATE], resources: [nodes]}]
  matchConditions:
  - {name: operator, expression: "request.userInfo.username.endsWith(':psi-rebalancer')"}
  validations: [{expression: "false", message: "the test refuses every node write", reason: Invalid}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: vap-refuse-taints}
spec: {policyName: vap-refuse-taints, validationActions: [Deny]}
YAML
eventually 30 "the test's refusing policy is enforced" bash -c \
  "$(declare -f sa); work=$work; ! sa taint node worker-2 rebalance.psi.dev/probe=x:PreferNoSchedule --dry-run=server >/dev/null 2>&1"
set_pressure worker-0 cpu 60
eventually 60 "the refused taint is logged with the API server's message" bash -c \
  "grep 'taint not added' $work/operator.log | grep -q 'the test refuses every node write'"
kubectl delete validatingadmissionpolicybinding,validatingadmissionpolicy vap-refuse-taints >/dev/null
eventually 90 "the operator taints a pressured node under the policies" node_tainted worker-0 "$name"
check "its log has no refusal by the project's policies" bash -c "! grep -q \"ValidatingAdmissionPolicy 'psi-rebalancer-\" $work/operator.log"
finish
