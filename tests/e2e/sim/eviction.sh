#!/usr/bin/env bash
# KubeVirt's evacuation flow as the simulator plays it, seen from a client of the real API
# server: evicting a LiveMigrate VM's launcher pod answers 429 "Eviction triggered
# evacuation" and starts a live migration (kubevirt-evacuation-*) that ends with the VMI
# on another node under the same UID; a repeat while it runs answers "Evacuation in
# progress"; a VM with strategy None, or LiveMigrateIfPossible that cannot migrate, is
# evicted and restarts on another node; a LiveMigrate VM that cannot migrate is refused;
# KubeVirt's migration create admitter answers 400 for a VMI that cannot migrate and for a
# second migration while one is in flight; an injected failure leaves the VM where it was
# and the evacuation is retried.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/simlib.sh"
trap sim_cleanup EXIT

ns=sim-evict-$$
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-evict.yaml" "$ns" || { finish; exit 1; }

# --- LiveMigrate ---
check "live-0 runs on worker-0 (the start node)" test "$(vmi_field live-0 .status.nodeName)" = worker-0
uid=$(vmi_field live-0 .metadata.uid)
pod=$(launcher live-0)
check "live-0 has a launcher pod with KubeVirt's labels and annotations" bash -c \
  "kubectl get pod $pod -n $ns -o json | jq -e --arg uid $uid '.metadata.labels[\"kubevirt.io\"] == \"virt-launcher\" and
     .metadata.labels[\"kubevirt.io/created-by\"] == \$uid and .metadata.labels[\"vm.kubevirt.io/name\"] == \"live-0\" and
     (.metadata.annotations | has(\"descheduler.alpha.kubernetes.io/request-evict-only\"))' >/dev/null"
first=$(evict "$ns" "$pod")
second=$(evict "$ns" "$pod")
check "evicting it answers 429 (got: $first)" test "${first%% *}" = 429
check "with KubeVirt's message" test "${first#* }" = \
  "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: Eviction triggered evacuation of VMI \"$ns/live-0\""
check "a repeat while it is under way answers 429 Evacuation in progress (got: $second)" bash -c \
  "[ '${second%% *}' = 429 ] && [[ '${second#* }' == *'Evacuation in progress: Eviction triggered evacuation of VMI \"$ns/live-0\"' ]]"
check "the VMI is marked for evacuation from worker-0" bash -c \
  "kubectl get vmi live-0 -n $ns -o json | jq -e '.status.evacuationNodeName == \"worker-0\" or .status.nodeName != \"worker-0\"' >/dev/null"
mig() { kubectl get vmim -n "$ns" -o json | jq -r --arg v "$1" '[.items[] | select(.spec.vmiName == $v)] | sort_by(.metadata.creationTimestamp)'; }
eventually 30 "a migration kubevirt-evacuation-* annotated with the source node exists" bash -c \
  "$(declare -f mig); ns=$ns; mig live-0 | jq -e '.[0].metadata.name | startswith(\"kubevirt-evacuation-\")' >/dev/null &&
   mig live-0 | jq -e '.[0].metadata.annotations[\"kubevirt.io/evacuationMigration\"] == \"worker-0\"' >/dev/null"
eventually 30 "the source pod is annotated eviction-in-progress while it migrates" bash -c \
  "kubectl get pod $pod -n $ns -o json | jq -e '.metadata.annotations[\"descheduler.alpha.kubernetes.io/eviction-in-progress\"] == \"true\"' >/dev/null"
eventually 120 "the migration succeeds" bash -c "$(declare -f mig); ns=$ns; mig live-0 | jq -e '.[0].status.phase == \"Succeeded\"' >/dev/null"
phases=$(mig live-0 | jq -r '[.[0].status.phaseTransitionTimestamps[].phase] | join(",")')
check "it went through Pending, Scheduling, Scheduled, Running, Succeeded ($phases)" bash -c \
  "[[ '$phases' == Pending,Scheduling,Scheduled,*Running,Succeeded ]]"
target=$(mig live-0 | jq -r '.[0].status.migrationState.targetNode')
check "the VMI runs on the migration's target node ($target), not worker-0" bash -c \
  "[ '$(vmi_field live-0 .status.nodeName)' = '$target' ] && [ '$target' != worker-0 ] && [ -n '$target' ]"
check "the VMI kept its UID" test "$(vmi_field live-0 .metadata.uid)" = "$uid"
check "the evacuation mark is cleared" test -z "$(vmi_field live-0 .status.evacuationNodeName)"
eventually 30 "the source pod is gone" bash -c "! kubectl get pod $pod -n $ns >/dev/null 2>&1"
check "the new launcher pod runs on the target node" bash -c \
  "[ \"\$(kubectl get pods -n $ns -l vm.kubevirt.io/name=live-0 -o jsonpath='{.items[0].spec.nodeName}')\" = '$target' ]"
check "the VM is Running" test "$(kubectl get vm live-0 -n "$ns" -o jsonpath='{.status.printableStatus}')" = Running

# --- None ---
uid=$(vmi_field plain .metadata.uid)
pod=$(launcher plain)
res=$(evict "$ns" "$pod")
check "evicting a None VM's pod is allowed (got: $res)" test "${res%% *}" = 201
eventually 60 "the VM restarts: a new VMI (new UID) runs" bash -c \
  "$(declare -f vmi_field); sim_ns=$ns; u=\$(vmi_field plain .metadata.uid); [ -n \"\$u\" ] && [ \"\$u\" != $uid ] &&
   [ \"\$(vmi_field plain .status.phase)\" = Running ]"
node=$(vmi_field plain .status.nodeName)
check "on another node than worker-0 ($node)" bash -c "[ -n '$node' ] && [ '$node' != worker-0 ]"
check "no migration was made for it" bash -c "$(declare -f mig); ns=$ns; mig plain | jq -e 'length == 0' >/dev/null"

# --- not migratable ---
pod=$(launcher pinned)
res=$(evict "$ns" "$pod")
check "evicting a LiveMigrate VM that cannot migrate answers 429 (got: $res)" bash -c \
  "[ '${res%% *}' = 429 ] && [[ '${res#* }' == *'VMI pinned is configured with an eviction strategy but is not live-migratable' ]]"
check "and its pod stays" kubectl get pod "$pod" -n "$ns"

# --- LiveMigrateIfPossible, not migratable: the eviction goes through, the VM restarts ---
uid=$(vmi_field maybe .metadata.uid)
res=$(evict "$ns" "$(launcher maybe)")
check "evicting a LiveMigrateIfPossible VM that cannot migrate is allowed (got: $res)" test "${res%% *}" = 201
eventually 60 "the VM restarts: a new VMI (new UID) runs" bash -c \
  "$(declare -f vmi_field); sim_ns=$ns; u=\$(vmi_field maybe .metadata.uid); [ -n \"\$u\" ] && [ \"\$u\" != $uid ] &&
   [ \"\$(vmi_field maybe .status.phase)\" = Running ]"
check "no migration was made for it" bash -c "$(declare -f mig); ns=$ns; mig maybe | jq -e 'length == 0' >/dev/null"

# --- the migration create admitter ---
res=$(create_vmim "$ns" pin-move pinned)
check "a migration of a VMI that cannot migrate is refused with 400 (got: $res)" bash -c \
  "[ '${res%% *}' = 400 ] && [[ '${res#* }' == 'admission webhook \"migration-create-validator.kubevirt.io\" denied the request: Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: '* ]]"
res=$(create_vmim "$ns" ghost-move no-such-vmi)
check "a migration of a VMI that does not exist is refused with 400 (got: $res)" bash -c \
  "[ '${res%% *}' = 400 ] && [[ '${res#* }' == *'the VMI \"$ns/no-such-vmi\" does not exist' ]]"

# --- dry run ---
pod=$(launcher live-1)
res=$(evict "$ns" "$pod" ',"deleteOptions":{"dryRun":["All"]}')
check "a dry-run eviction answers as a real one would (got: $res)" bash -c \
  "[ '${res%% *}' = 429 ] && [[ '${res#* }' == *'Eviction triggered evacuation of VMI \"$ns/live-1\"' ]]"
sleep 2
check "and marks nothing" test -z "$(vmi_field live-1 .status.evacuationNodeName)"
check "and starts no migration" bash -c "$(declare -f mig); ns=$ns; mig live-1 | jq -e 'length == 0' >/dev/null"

# --- a migration someone else asks for, with a target node (addedNodeSelector) ---
want=$(kubectl get nodes -l node-role.kubernetes.io/worker -o name | sed 's|node/||' | grep -v '^worker-0$' | sort | tail -1)
vmim() { # vmim NAME VMI NODE
  kubectl apply -f - >/dev/null <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceMigration
metadata: {name: $1, namespace: $ns}
spec:
  vmiName: $2
  addedNodeSelector: {kubernetes.io/hostname: $3}
YAML
}
uid=$(vmi_field live-1 .metadata.uid)
vmim to-chosen live-1 "$want"
res=$(create_vmim "$ns" second live-1)
check "a second migration while one is in flight is refused with 400 (got: $res)" bash -c \
  "[ '${res%% *}' = 400 ] && [[ '${res#* }' == *'in-flight migration detected. Active migration job ('*') is currently already in progress for VMI live-1.' ]]"
eventually 120 "a migration with addedNodeSelector succeeds" bash -c \
  "[ \"\$(kubectl get vmim to-chosen -n $ns -o jsonpath='{.status.phase}')\" = Succeeded ]"
check "and puts the VMI on the node it names ($want), same UID" bash -c \
  "[ '$(vmi_field live-1 .status.nodeName)' = '$want' ] && [ '$(vmi_field live-1 .metadata.uid)' = '$uid' ]"
check "it was not marked as an evacuation" bash -c \
  "kubectl get vmim to-chosen -n $ns -o json | jq -e '.metadata.annotations[\"kubevirt.io/evacuationMigration\"] == null' >/dev/null"
node=$(vmi_field live-1 .status.nodeName)
vmim to-nowhere live-1 no-such-node
eventually 60 "a migration whose target pod cannot be scheduled fails after the scenario's timeout" bash -c \
  "[ \"\$(kubectl get vmim to-nowhere -n $ns -o jsonpath='{.status.phase}')\" = Failed ]"
check "its target pod is removed and the VMI stays on $node" bash -c \
  "[ \"\$(kubectl get pods -n $ns -l vm.kubevirt.io/name=live-1 -o json | jq '[.items[] | select(.metadata.deletionTimestamp == null)] | length')\" = 1 ] &&
   [ '$(vmi_field live-1 .status.nodeName)' = '$node' ]"

# --- injected failure ---
uid=$(vmi_field flaky .metadata.uid)
pod=$(launcher flaky)
res=$(evict "$ns" "$pod")
check "evicting the VM whose migrations fail answers 429 evacuation (got: $res)" test "${res%% *}" = 429
eventually 60 "its migration fails" bash -c "$(declare -f mig); ns=$ns; mig flaky | jq -e '.[0].status.phase == \"Failed\"' >/dev/null"
# (the scenario's backoff, 10 s, keeps the retry away while the state after the failure is read)
failed_uid=$(mig flaky | jq -r '.[0].metadata.uid')
check "the VMI stays on worker-0 with its UID" bash -c \
  "[ '$(vmi_field flaky .status.nodeName)' = worker-0 ] && [ '$(vmi_field flaky .metadata.uid)' = '$uid' ]"
check "the VMI's migrationState says failed" test "$(vmi_field flaky .status.migrationState.failed)" = true
check "the failed migration's target pod is gone, the source pod stays" bash -c \
  "kubectl get pods -n $ns -l kubevirt.io/migrationJobUID=$failed_uid -o json | jq -e '[.items[] | select(.metadata.deletionTimestamp == null)] | length == 0' >/dev/null &&
   kubectl get pod $pod -n $ns -o json | jq -e '.metadata.deletionTimestamp == null' >/dev/null"
eventually 60 "the evacuation is retried after the backoff: a second migration" bash -c \
  "$(declare -f mig); ns=$ns; mig flaky | jq -e 'length >= 2' >/dev/null"

# --- the record ---
check "the record has the evictions with their verdicts" bash -c \
  "jq -s -e '[.[] | select(.type == \"eviction\") | .verdict] as \$v | (\$v | index(\"evacuation\")) != null and
     (\$v | index(\"in-progress\")) != null and (\$v | index(\"allowed\")) != null and (\$v | index(\"denied\")) != null' $sim_record >/dev/null"
check "and the migration phases" bash -c \
  "jq -s -e '[.[] | select(.type == \"migration\" and .vmi == \"live-0\") | .phase] | index(\"Succeeded\") != null' $sim_record >/dev/null"

sim_stop
check "stopping the simulator deregisters its webhook" bash -c "! kubectl get validatingwebhookconfiguration psi-sim.$ns >/dev/null 2>&1"
finish
