#!/usr/bin/env bash
# What the docs promise, held against the real test bed (issue 22):
# - nodes the source does not measure are named: with series for worker-0 and worker-1 only,
#   MetricsAvailable is False with PartiallyMeasured naming worker-2 (NoSeries) and Ready
#   stays True saying so; with series for none of the selected nodes (an empty reply),
#   MetricsAvailable and Ready are False with NoNodeMeasured;
# - a MachineConfig that cannot be written (an admission policy refuses it) does not stop
#   sampling and tainting: the cycle reports MachineConfigWriteFailed and the pressured node
#   is tainted all the same.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=promises-$$
vap=psi-e2e-deny-machineconfigs-$$
restore() {
  kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete validatingadmissionpolicybinding "$vap" --ignore-not-found >/dev/null 2>&1
  kubectl delete validatingadmissionpolicy "$vap" --ignore-not-found >/dev/null 2>&1
  kubectl delete machineconfig 99-worker-psi-rebalancer --ignore-not-found >/dev/null 2>&1
  rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json
  operator_cleanup
}
trap restore EXIT

psir() { # psir SELECTOR [MACHINECONFIG]: the PsiRebalance over the nodes SELECTOR selects
  local mc=${2:-"{enabled: false}"}
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  nodeSelector: $1
  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 5s}
  machineConfig: $mc
YAML
}
cond_of() { psir_field "$name" ".status.conditions[]? | select(.type == \"$1\") | \"\(.status) \(.reason) \(.message)\""; }

start_exporter worker-0 worker-1 # no series for worker-2
start_operator

# --- unmeasured nodes ----------------------------------------------------------------------
psir '{matchLabels: {node-role.kubernetes.io/worker: ""}}'
eventually 60 "MetricsAvailable=False, PartiallyMeasured, 2 of 3 measured, naming worker-2 (NoSeries)" bash -c \
  "$(declare -f psir_field cond_of); name=$name; m=\$(cond_of MetricsAvailable)
   [[ \$m == 'False PartiallyMeasured '* && \$m == *'2 of 3 nodes measured'* && \$m == *'worker-2 (NoSeries)'* ]]"
check "Ready stays True and says PartiallyMeasured" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of Ready) == 'True PartiallyMeasured '*'worker-2'* ]]"
check "Degraded=True says some nodes are not measured" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of Degraded) == 'True PartiallyMeasured '*'not measured'* ]]"
check "status shows worker-2 Unknown" test \
  "$(psir_field "$name" '[.status.nodes[]? | select(.state == "Unknown") | .name] | join(" ")')" = worker-2

psir '{matchLabels: {kubernetes.io/hostname: worker-2}}'
eventually 60 "no selected node measured: MetricsAvailable=False, NoNodeMeasured" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of MetricsAvailable) == 'False NoNodeMeasured '*'0 of 1 nodes measured'*'worker-2 (NoSeries)'* ]]"
check "Ready=False, NoNodeMeasured" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of Ready) == 'False NoNodeMeasured '* ]]"

# --- a MachineConfig that cannot be written ----------------------------------------------
kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: $vap}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [machineconfiguration.openshift.io], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [machineconfigs]}
  validations:
  - {expression: "false", message: "refused by the e2e test", reason: Forbidden}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: $vap}
spec: {policyName: $vap, validationActions: [Deny]}
YAML
# the policy takes a moment to be enforced: wait until it refuses a write
eventually 30 "the admission policy refuses MachineConfig writes" bash -c \
  "! printf '%s' '{\"apiVersion\":\"machineconfiguration.openshift.io/v1\",\"kind\":\"MachineConfig\",\"metadata\":{\"name\":\"psi-e2e-probe-$$\"},\"spec\":{}}' | kubectl create --dry-run=server -f - >/dev/null 2>&1"
set_pressure worker-0 cpu 60
psir '{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [worker-0, worker-1]}]}' '{enabled: true, roles: [worker]}'
eventually 60 "Ready=False, MachineConfigWriteFailed" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of Ready) == 'False MachineConfigWriteFailed '* ]]"
eventually 60 "worker-0 is tainted all the same" node_tainted worker-0 "$name"
check "the MachineConfig was not written" bash -c "! kubectl get machineconfig 99-worker-psi-rebalancer >/dev/null 2>&1"
check "MetricsAvailable=True meanwhile" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of MetricsAvailable) == 'True SampleSucceeded '* ]]"
kubectl delete psirebalance "$name" --wait=true --timeout=60s >/dev/null
check "deleting the PsiRebalance removed the taint" bash -c "$(declare -f node_tainted); ! node_tainted worker-0 $name"

finish
