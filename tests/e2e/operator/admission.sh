#!/usr/bin/env bash
# The ValidatingAdmissionPolicies of config/admission on the bed's real API server. As the
# operator's ServiceAccount (its token, its RBAC from config/rbac): a patch that adds,
# changes or removes a foreign taint, or touches a node's labels or cordon, is refused; a
# MachineConfig with another kernel argument, with Ignition content, or under another name
# is refused, and so is deleting one that is not ours. Its own writes pass: a taint under
# rebalance.psi.dev/, and the running operator's MachineConfig (psi=1, schedstats=enable)
# and pressure taint. The admin is not restricted.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/mco.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=vap-$$
mc=99-worker-psi-rebalancer
restore() {
  kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete machineconfig "$mc" 99-worker-psi-rebalancer-evil 50-other 99-infra-psi-rebalancer --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete machineconfigpool worker --ignore-not-found >/dev/null 2>&1 || true
  kubectl taint node worker-1 other-team/keep- >/dev/null 2>&1 || true
  kubectl taint node worker-1 rebalance.psi.dev/test- >/dev/null 2>&1 || true
  kubectl delete -k "$PSI_SOURCE_DIR/config/admission" --ignore-not-found >/dev/null 2>&1 || true
  rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json
  operator_cleanup
}
trap restore EXIT

kubectl apply -k "$PSI_SOURCE_DIR/config/admission" >/dev/null
install_operator_rbac
operator_kubeconfig "$work/sa.kubeconfig"
sa() { kubectl --kubeconfig "$work/sa.kubeconfig" "$@"; }
# refused WHAT MESSAGE CMD...: CMD fails and its error names the policy's message
refused() {
  local what=$1 msg=$2 out; shift 2
  if out=$("$@" 2>&1); then fail "$what (it was allowed)"; return; fi
  if [[ $out == *"$msg"* ]]; then pass "$what"; else fail "$what (got: $out)"; fi
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
refused "cordoning a node is refused" "may not cordon or uncordon a node" \
  sa patch node worker-1 --type merge -p '{"spec":{"unschedulable":true}}'
check "and it is not cordoned" test -z "$(kubectl get node worker-1 -o jsonpath='{.spec.unschedulable}')"
check "a taint under rebalance.psi.dev/ may be added" sa taint node worker-1 rebalance.psi.dev/test=x:PreferNoSchedule
check "and removed" sa taint node worker-1 rebalance.psi.dev/test-
check "the foreign taint is still there" bash -c \
  "kubectl get node worker-1 -o json | jq -e '[.spec.taints[]? | select(.key == \"other-team/keep\")] | length == 1' >/dev/null"
check "the admin is not restricted" kubectl label node worker-1 vap-test=yes --overwrite
kubectl label node worker-1 vap-test- >/dev/null

# --- MachineConfigs ---
mcyaml() { # mcyaml NAME KARGS [SPEC-EXTRA]
  printf 'apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata: {name: %s, labels: {machineconfiguration.openshift.io/role: worker}}\nspec: {kernelArguments: %s%s}\n' "$1" "$2" "${3:-}"
}
refused "a MachineConfig with another kernel argument is refused" "no kernel argument but psi=1 and schedstats=enable" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1, nosmt]')
refused "a MachineConfig with Ignition files is refused" "may write no Ignition content" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' ', config: {ignition: {version: 3.2.0}, storage: {files: [{path: /etc/evil}]}}')
refused "a MachineConfig under another name is refused" "only MachineConfigs named 99-<role>-psi-rebalancer" \
  sa apply -f <(mcyaml 50-other '[psi=1]')
refused "an osImageURL is refused" "may not set osImageURL" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1]' ', osImageURL: quay.invalid/evil@sha256:0')
kubectl apply -f <(mcyaml 50-other '[]') >/dev/null
refused "deleting a MachineConfig that is not ours is refused" "only MachineConfigs named 99-<role>-psi-rebalancer" \
  sa delete machineconfig 50-other
check "its own shape passes (psi=1, schedstats=enable, Ignition version only)" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1, schedstats=enable]' ', config: {ignition: {version: 3.2.0}}')
refused "changing it to add a kernel argument is refused" "no kernel argument but psi=1 and schedstats=enable" \
  sa apply -f <(mcyaml 99-infra-psi-rebalancer '[psi=1, schedstats=enable, mitigations=off]' ', config: {ignition: {version: 3.2.0}}')
check "deleting its own passes" sa delete machineconfig 99-infra-psi-rebalancer

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
set_pressure worker-0 cpu 60
eventually 90 "the operator taints a pressured node under the policies" node_tainted worker-0 "$name"
check "its log has no admission refusal" bash -c "! grep -q 'ValidatingAdmissionPolicy' $work/operator.log"
finish
