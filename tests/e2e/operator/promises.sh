#!/usr/bin/env bash
# What the docs promise, held against the real test bed (issue 22):
# - nodes the source does not measure are named: with series for worker-0 and worker-1 only,
#   MetricsAvailable is False with PartiallyMeasured naming worker-2 (NoSeries) and Ready
#   stays True saying so; with series for none of the selected nodes (an empty reply),
#   MetricsAvailable and Ready are False with NoNodeMeasured;
# - a MachineConfig that cannot be written (an admission policy refuses it) does not stop
#   sampling and tainting: the cycle reports MachineConfigWriteFailed and the pressured node
#   is tainted all the same;
# - every taint key written is recorded in status.taintKeys: after spec.taint.key changes the
#   taint under the old key comes off (an Untainted Event says why), the new one goes on, and
#   deleting the PsiRebalance leaves neither, each removal told by an Untainted Event about the
#   node whose note says the PsiRebalance was deleted;
# - PSIEnabled: with machineConfig disabled it is True (PressureReported) once every selected
#   node reports PSI; a MachineConfig of the operator's name that someone else made is left
#   alone and makes it False (MachineConfigNotOwned), though the pool says it is rolled out;
# - MachineConfigs: a changed spec updates ours in place (MachineConfigUpdated Event); neither
#   schedstats: false nor enabled: false (with the deprecated deletionPolicy Delete) takes an
#   argument out or deletes it: each would reboot the pool again.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../lib/mco.sh"

name=promises-$$
vap=psi-e2e-deny-machineconfigs-$$
restore() {
  kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete validatingadmissionpolicybinding "$vap" --ignore-not-found >/dev/null 2>&1
  kubectl delete validatingadmissionpolicy "$vap" --ignore-not-found >/dev/null 2>&1
  kubectl delete machineconfig 99-worker-psi-rebalancer --ignore-not-found >/dev/null 2>&1
  kubectl delete machineconfigpool worker --ignore-not-found >/dev/null 2>&1
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

# --- PSIEnabled --------------------------------------------------------------------------------
both='{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [worker-0, worker-1]}]}'
psir "$both"
eventually 60 "machineConfig disabled, every selected node reports PSI: PSIEnabled=True, PressureReported" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of PSIEnabled) == 'True PressureReported '* ]]"
# a MachineConfig of the operator's name made by someone else, rendered into an updated pool
kubectl apply -f - >/dev/null <<YAML
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata: {name: 99-worker-psi-rebalancer, labels: {machineconfiguration.openshift.io/role: worker}}
spec: {kernelArguments: [psi=1]}
YAML
mco_worker_pool
kubectl patch machineconfigpool worker --type=merge -p '{"spec": {
  "configuration": {"name": "rendered-worker-1", "source": [{"kind": "MachineConfig", "name": "99-worker-psi-rebalancer"}]}}}' >/dev/null
kubectl patch machineconfigpool worker --subresource=status --type=merge -p '{"status": {
  "configuration": {"name": "rendered-worker-1", "source": [{"kind": "MachineConfig", "name": "99-worker-psi-rebalancer"}]},
  "machineCount": 3, "updatedMachineCount": 3, "readyMachineCount": 3, "degradedMachineCount": 0,
  "conditions": [{"type": "Updated", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "", "message": ""},
                 {"type": "Degraded", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "", "message": ""}]}}' >/dev/null
psir "$both" '{enabled: true, roles: [worker]}'
eventually 60 "a same-named MachineConfig someone else made: PSIEnabled=False, MachineConfigNotOwned" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of PSIEnabled) == 'False MachineConfigNotOwned '*'not made by psi-rebalancer'* ]]"
check "that MachineConfig was left alone" test \
  "$(kubectl get machineconfig 99-worker-psi-rebalancer -o json | jq -c '[.metadata.labels["app.kubernetes.io/managed-by"], .spec.kernelArguments]')" = '[null,["psi=1"]]'
psir "$both"
kubectl delete machineconfig 99-worker-psi-rebalancer >/dev/null

# --- MachineConfig Events; nothing taken back ------------------------------------------------
event_count() { # event_count REASON: Events of that reason about the PsiRebalance
  kubectl get events.events.k8s.io -n default -o json |
    jq --arg r "$1" --arg n "$name" '[.items[] | select(.reason == $r and .regarding.name == $n)] | length'
}
psir "$both" '{enabled: true, roles: [worker], deletionPolicy: Delete}'
eventually 60 "our MachineConfig created (psi=1 only)" bash -c \
  "kubectl get machineconfig 99-worker-psi-rebalancer -o json | jq -e '.spec.kernelArguments == [\"psi=1\"]' >/dev/null"
psir "$both" '{enabled: true, roles: [worker], schedstats: true, deletionPolicy: Delete}'
eventually 60 "schedstats asked for: the MachineConfig updated in place" bash -c \
  "kubectl get machineconfig 99-worker-psi-rebalancer -o json | jq -e '.spec.kernelArguments == [\"psi=1\",\"schedstats=enable\"]' >/dev/null"
eventually 30 "a MachineConfigUpdated Event was recorded" bash -c "$(declare -f event_count); name=$name; [ \$(event_count MachineConfigUpdated) -ge 1 ]"
failed_writes() { grep -c 'machineconfig not written' "$work/operator.log" || true; }
before=$(failed_writes)
observed() { [ "$(psir_field "$name" .status.observedGeneration)" = "$(psir_field "$name" .metadata.generation)" ]; }
psir "$both" '{enabled: true, roles: [worker], schedstats: false}'
eventually 30 "schedstats: false observed" observed
psir "$both" '{enabled: false, roles: [worker], schedstats: false, deletionPolicy: Delete}'
eventually 30 "enabled: false observed" observed
sleep 3
check "schedstats: false, then enabled: false with deletionPolicy Delete: the MachineConfig stays as it was" bash -c \
  "kubectl get machineconfig 99-worker-psi-rebalancer -o json | jq -e '.spec.kernelArguments == [\"psi=1\",\"schedstats=enable\"]' >/dev/null"
check "and the operator tried no write the policy refused" test "$(failed_writes)" = "$before"
kubectl delete machineconfig 99-worker-psi-rebalancer >/dev/null

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
psir "$both" '{enabled: true, roles: [worker]}'
eventually 60 "Ready=False, MachineConfigWriteFailed" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of Ready) == 'False MachineConfigWriteFailed '* ]]"
eventually 60 "worker-0 is tainted all the same" node_tainted worker-0 "$name"
check "the MachineConfig was not written" bash -c "! kubectl get machineconfig 99-worker-psi-rebalancer >/dev/null 2>&1"
check "MetricsAvailable=True meanwhile" bash -c \
  "$(declare -f psir_field cond_of); name=$name; [[ \$(cond_of MetricsAvailable) == 'True SampleSucceeded '* ]]"

# --- taints under a key that changed ---------------------------------------------------------
taint_with() { # taint_with NODE KEY: the node carries KEY with our name as value
  kubectl get node "$1" -o json | jq -e --arg k "$2" --arg o "$name" '[.spec.taints[]? | select(.key == $k and .value == $o)] | length == 1' >/dev/null
}
check "status.taintKeys records the key written" test "$(psir_field "$name" '.status.taintKeys | join(",")')" = rebalance.psi.dev/pressure
kubectl patch psirebalance "$name" --type=merge -p '{"spec":{"taint":{"key":"rebalance.psi.dev/hot","effect":"NoSchedule"}}}' >/dev/null
eventually 60 "after the key changed, the taint under the old key is gone from worker-0" bash -c \
  "$(declare -f taint_with); name=$name; ! taint_with worker-0 rebalance.psi.dev/pressure"
eventually 60 "worker-0 is tainted under the new key" taint_with worker-0 rebalance.psi.dev/hot
eventually 30 "status.taintKeys holds only the new key" bash -c \
  "[ \"\$($(declare -f psir_field); psir_field $name '.status.taintKeys | join(\",\")')\" = rebalance.psi.dev/hot ]"
check "an Untainted Event names the key change" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e '[.items[] | select(.reason==\"Untainted\" and .regarding.name==\"worker-0\" and (.note | contains(\"old key\")))] | length >= 1' >/dev/null"
deleted_at=$(date -u +%Y-%m-%dT%H:%M:%S)
kubectl delete psirebalance "$name" --wait=true --timeout=60s >/dev/null
check "deleting the PsiRebalance removed the taint" bash -c \
  "$(declare -f taint_with); name=$name; ! taint_with worker-0 rebalance.psi.dev/hot && ! taint_with worker-0 rebalance.psi.dev/pressure"
# the Untainted Event of the deletion: about Node worker-0, action Untaint, its note saying why,
# observed at or after the delete (the key-change Event above has another note)
untainted_on_delete() {
  kubectl get events.events.k8s.io -n default -o json | jq -e --arg t "$deleted_at" '[.items[]
    | select(.reason == "Untainted" and .type == "Normal" and .action == "Untaint"
             and .regarding.apiVersion == "v1" and .regarding.kind == "Node" and .regarding.name == "worker-0"
             and .note == "PsiRebalance deleted: pressure taint removed"
             and ((.series.lastObservedTime // .eventTime)[0:19] >= $t))] | length >= 1' >/dev/null
}
eventually 30 "an Untainted Event about worker-0 says the PsiRebalance was deleted" bash -c \
  "$(declare -f untainted_on_delete); deleted_at=$deleted_at; untainted_on_delete"

finish
