#!/usr/bin/env bash
# VMs that cannot live-migrate. On worker-0, five busy VMs: two that can migrate, and three
# whose VMIs say LiveMigratable=False: "stuck" (eviction strategy LiveMigrate: KubeVirt refuses
# its migration with a 400 and its eviction), "lmip" (LiveMigrateIfPossible) and "bare" (None),
# which an eviction would restart.
# 1. eviction.method Migrate: the two that can migrate are moved; the three others are never
#    asked for, no cycle fails, and the Rebalancing message says why they stay (bare: its
#    strategy None, which a targeted migration would override);
# 2. method Evict, allowVMRestart false (the default): lmip and bare are skipped, the message
#    saying each would restart and why; nothing is evicted;
# 3. allowVMRestart true: lmip (the move that relieves worker-0) is evicted and restarts on
#    another node with a new VMI; its status.moves entry has vmRestart true and its Evicted
#    Event says the VM restarts; stuck is never asked for.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=unmigratable-$$
trap 'rebalance_cleanup "$name"' EXIT
message() { psir_field "$1" '.status.conditions[] | select(.type=="Rebalancing") | .message'; }
asked_for() { # asked_for VM: migrations and evictions of it the simulator saw
  jq -c --arg vm "$1" 'select((.type=="migration" or .type=="eviction") and .vmi==$vm)' "$record" | wc -l
}

start_sim "$scenarios/rebalance-unmigratable.yaml"
check "stuck's, lmip's and bare's VMIs say they cannot live-migrate" test \
  "$(kubectl get vmi -n "$sim_ns" -o json | jq -r '[.items[] | select(.metadata.name | test("^(stuck|lmip|bare)$")) |
     .status.conditions[] | select(.type=="LiveMigratable") | .status] | join(" ")')" = "False False False"
start_operator

# 1. Migrate
apply_psir "$name" Automatic "    method: Migrate"
eventually 240 "both migratable busy VMs moved off worker-0" bash -c "$(declare -f vmis); sim_ns=$sim_ns
  [ \"\$(vmis | awk '\$1 ~ /^hot-/ && \$2 != \"worker-0\"' | wc -l)\" -eq 2 ]"
eventually 90 "Rebalancing: worker-0 still pressured, stuck and lmip not live-migratable, bare's owner chose None" bash -c \
  "$(declare -f psir_field message); m=\$(message $name)
   [[ \$m == *'2 not live-migratable'* && \$m == *'1 eviction strategy None (not migrated without allowVMRestart)'* ]]"
before=$(vmis)
check "stuck, lmip and bare are still on worker-0" test \
  "$(echo "$before" | awk '$1 ~ /^(stuck|lmip|bare)$/ && $2 == "worker-0"' | wc -l)" -eq 3
check "none of them was ever asked for: no migration, no eviction (record)" test \
  "$(asked_for stuck) $(asked_for lmip) $(asked_for bare)" = "0 0 0"
check "no cycle failed (Degraded False, Ready True)" test \
  "$(condition "$name" Degraded) $(condition "$name" Ready)" = "False True"
check "no failed move, and no refusal of stuck (it was never tried)" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and (.reason==\"EvictionFailed\" or .reason==\"MigrationFailed\"
       or (.reason==\"EvictionRefused\" and (.note | test(\"stuck\")))))] | length == 0' >/dev/null"

# 2. Evict, restarts not allowed
kubectl patch psirebalance "$name" --type merge -p '{"spec":{"eviction":{"method":"Evict"}}}' >/dev/null
eventually 90 "Rebalancing names both restarts it will not cause" bash -c \
  "$(declare -f psir_field message); m=\$(message $name)
   [[ \$m == *'VM would restart (LiveMigrateIfPossible, not migratable)'* && \$m == *'VM would restart (eviction strategy None)'* ]]"
sleep 15
check "nothing was evicted: lmip and bare keep their VMIs on worker-0" test \
  "$(vmis | grep -E '^(stuck|lmip|bare) ')" = "$(echo "$before" | grep -E '^(stuck|lmip|bare) ')"
check "no eviction of them asked (record)" test "$(asked_for lmip) $(asked_for bare)" = "0 0"

# 3. restarts allowed
kubectl patch psirebalance "$name" --type merge -p '{"spec":{"eviction":{"allowVMRestart":true}}}' >/dev/null
old_uid=$(echo "$before" | awk '$1 == "lmip" {print $3}')
eventually 150 "lmip was evicted and restarted on another node with a new VMI" bash -c "$(declare -f vmis); sim_ns=$sim_ns
  vmis | awk -v u=$old_uid '\$1 == \"lmip\" && \$2 ~ /^worker-[12]\$/ && \$3 != u' | grep -q ."
check "the simulator recorded lmip's restart" test \
  "$(jq -c 'select(.type=="vm-restart" and .vm=="lmip")' "$record" | wc -l)" -ge 1
eventually 30 "status.moves: lmip evicted, vmRestart true" bash -c "$(declare -f psir_field)
  psir_field $name '.status.moves[]? | select(.name==\"lmip\") | \"\\(.phase) \\(.vmRestart)\"' | grep -q '^Evicted true\$'"
check "every move of a VM that restarted says vmRestart, and only those" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.vmRestart == true) | .name] | unique | join(\" \")')\" = \
    \"\$(jq -r 'select(.type==\"vm-restart\") | .vm' $record | sort -u | xargs)\" ]"
check "its Evicted Event says the VM restarts and why" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and .reason==\"Evicted\" and (.note | test(\"virt-launcher-lmip\"))
       and (.note | contains(\"the VM restarts, it is not migrated (allowVMRestart): VM would restart (LiveMigrateIfPossible, not migratable)\")))] |
     length >= 1' >/dev/null"
check "stuck was never asked for, and is still on worker-0 (record)" bash -c \
  "[ \"\$(jq -c 'select((.type==\"migration\" or .type==\"eviction\") and .vmi==\"stuck\")' $record | wc -l)\" -eq 0 ] &&
   [ \"\$(echo '$before' | grep '^stuck ')\" = \"\$($(declare -f vmis); sim_ns=$sim_ns; vmis | grep '^stuck ')\" ]"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
