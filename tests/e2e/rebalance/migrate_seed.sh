#!/usr/bin/env bash
# Targeted live migration on the seed: with eviction.method Migrate the operator creates a
# VirtualMachineInstanceMigration (addedNodeSelector: the node it chose) for each busy VM
# instead of asking the Eviction API; every VM lands on the chosen node (targetNode ==
# destinationNode), balance comes with no more moves than Evict makes (2, seed.sh), each
# migration is labelled and annotated as ours, and no evacuation or eviction is involved.
# The operator is restarted while the first migration runs: nothing is counted twice or lost.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=migrate-seed-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/seed.yaml"
before=$(vmis)
start_operator
t0=$SECONDS
apply_psir "$name" Automatic "    method: Migrate"

# a restart while the first migration runs: status.moves and the migration's labels carry on
eventually 150 "the first targeted migration was created" bash -c \
  "$(declare -f our_vmims); sim_ns=$sim_ns; our_vmims $name | jq -e 'length >= 1' >/dev/null"
stop_operator
start_operator

eventually 240 "one busy VM per worker" bash -c "$(declare -f vmis per_node); sim_ns=$sim_ns
  [ \"\$(per_node hot- | awk '{print \$2}' | tr '\n' ' ')\" = '1 1 1 ' ]"
echo "# balance reached after $((SECONDS - t0)) s"
eventually 90 "the moves are reported Succeeded in status" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 2 ]"
sleep 40 # more cycles (a settle period and more): nothing else moves
echo "# moves: $(moves_summary "$name" | tr '\n' ';')"
check "exactly 2 targeted migrations, both succeeded (record), no more than Evict's 2" \
  test "$(our_migrations Succeeded | wc -l)" -eq 2 -a "$(our_migrations | jq -r .name | sort -u | wc -l)" -eq 2
check "no eviction asked, no evacuation (record)" test "$(our_evictions all | wc -l)" -eq 0 -a -z "$(evacuations)"
check "every move landed on the node chosen (targetNode == destinationNode)" test \
  "$(psir_field "$name" '[.status.moves[] | select(.targetNode != null and .targetNode == .destinationNode and .sourceNode == "worker-0")] | length')" = 2
check "each move names its migration (ours)" test \
  "$(psir_field "$name" '[.status.moves[] | select(.migration | startswith("psi-rebalancer-"))] | length')" = 2
vmims=$(our_vmims "$name")
check "the migrations are labelled ours and annotated with source, destination and prediction" bash -c "echo '$vmims' | jq -e '
  length == 2 and all(.[]; .metadata.annotations[\"rebalance.psi.dev/source-node\"] == \"worker-0\"
    and (.metadata.annotations[\"rebalance.psi.dev/predicted-load\"] | test(\"worker-0 [0-9]+% -> [0-9]+%\"))
    and .spec.addedNodeSelector[\"kubernetes.io/hostname\"] == .metadata.annotations[\"rebalance.psi.dev/destination-node\"]
    and (.metadata.annotations | has(\"kubevirt.io/evacuationMigration\") | not))' >/dev/null"
check "each migrated VMI runs on the node its addedNodeSelector named" bash -c "
  for m in \$(echo '$vmims' | jq -r '.[] | \"\(.spec.vmiName)=\(.spec.addedNodeSelector[\"kubernetes.io/hostname\"])\"'); do
    [ \"\$(kubectl get vmi -n $sim_ns \"\${m%%=*}\" -o jsonpath='{.status.nodeName}')\" = \"\${m#*=}\" ] || exit 1
  done"
check "every VMI kept its UID (live-migrated)" test \
  "$(echo "$before" | awk '{print $1, $3}')" = "$(vmis | awk '{print $1, $3}')"
check_limits 2 1 2
eventually 60 "no taint left" no_taint
check "summary: no eviction (targeted migrations only), 2 migrations succeeded, none failed or in flight" test \
  "$(psir_field "$name" '.status.summary | "\(.evictions) \(.migrationsSucceeded) \(.migrationsFailed) \(.migrationsInFlight)"')" = "0 2 0 0"
check "Rebalancing says nothing is pressured now" test "$(rebalancing "$name")" = NoPressuredNode
check "Events show source -> destination for each move and its success" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n)] as \$e
     | ([\$e[] | select(.reason==\"MigrationRequested\" and .action==\"Migrate\" and (.note | test(\"worker-0 -> worker-[12]\")))] | length) == 2
       and ([\$e[] | select(.reason==\"MigrationSucceeded\" and .type==\"Normal\")] | length) == 2' >/dev/null"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
