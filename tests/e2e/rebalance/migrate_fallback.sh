#!/usr/bin/env bash
# KubeVirt without addedNodeSelector: with the VirtualMachineInstanceMigration CRD's schema
# lacking spec.addedNodeSelector (an older KubeVirt), eviction.method Migrate falls back
# to the Eviction API, and the Rebalancing condition and a Warning Event say why. The CRD is
# restored at the end.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=migrate-fallback-$$
crd=virtualmachineinstancemigrations.kubevirt.io
restore_crd() {
  kubectl apply --server-side --force-conflicts -f "$PSI_SOURCE_DIR/hack/cluster/crds/kubevirt.io_virtualmachineinstancemigrations.yaml" >/dev/null
}
trap 'rc=$?; restore_crd; rebalance_cleanup "$name" $rc' EXIT

kubectl patch crd "$crd" --type json -p \
  '[{"op":"remove","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/addedNodeSelector"}]' >/dev/null
check "the CRD no longer declares spec.addedNodeSelector" bash -c \
  "kubectl get crd $crd -o json | jq -e '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties | has(\"addedNodeSelector\") | not' >/dev/null"
start_sim "$scenarios/seed.yaml"
start_operator
apply_psir "$name" Automatic "    method: Migrate"

eventually 200 "a busy VM was evicted instead (record)" bash -c \
  "$(declare -f our_evictions); record=$record requested_by=$requested_by; [ \"\$(our_evictions | wc -l)\" -ge 1 ]"
msg=$(psir_field "$name" '.status.conditions[] | select(.type=="Rebalancing") | .message')
echo "# Rebalancing: $msg"
check "the Rebalancing condition says Migrate fell back to eviction, and why" bash -c \
  "[[ '$msg' == *'Migrate falls back to eviction'*addedNodeSelector* ]]"
check "a Warning Event MigrateUnsupported names the CRD" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and .reason==\"MigrateUnsupported\" and .type==\"Warning\"
       and (.note | contains(\"$crd\")))] | length == 1' >/dev/null"
check "no targeted migration was created (record)" test -z "$(our_migrations)"
eventually 60 "the eviction became KubeVirt's evacuation migration (record)" bash -c \
  "$(declare -f evacuations); record=$record; [ -n \"\$(evacuations)\" ]"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
