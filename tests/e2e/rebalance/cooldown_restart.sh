#!/usr/bin/env bash
# A cooldown survives a restart of the operator (read back from status.moves): "big" is moved
# off worker-0 (eviction.mode Automatic, the only pod the podSelector allows), the operator
# is restarted, and then "big" makes its new node hot (rebalance-cooldown scenario, at 2m30s).
# Within its cooldown (10m) it is not moved again, and the restarted operator keeps the move
# and its cooldownUntil in status.moves (cycles after the restart rewrite status.moves from
# what was read back: a move not read back would drop out of it).
# The Rebalancing message names the cooldown as what holds it: its launcher pod keeps
# KubeVirt's kubevirt.io/migrationJobUID label after the migration, which does not make it a
# migration under way.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=cooldown-$$
trap 'rebalance_cleanup "$name"' EXIT
cooldown="{initial: 10m, max: 20m, history: 1h}"

start_sim "$scenarios/rebalance-cooldown.yaml"
t0=$(date +%s) # the scenario's clock: "big" gets busy at t0 + 150 s
start_operator
apply_psir "$name" Automatic "    podSelector: {matchLabels: {kubevirt.io: virt-launcher, move: \"yes\"}}"

eventually 120 "the move of big is reported Succeeded in status" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 1 ]"
vm=$(psir_field "$name" '.status.moves[0].name')
node=$(vmis | awk -v v="$vm" '$1 == v {print $2}')
check "the moved VM is big, off worker-0" test "$vm $(psir_field "$name" '.status.moves[0].sourceNode')" = "big worker-0"
check "it runs on another worker now" bash -c "[ -n '$node' ] && [ '$node' != worker-0 ]"
until_=$(psir_field "$name" '.status.moves[0].cooldownUntil')
check "status shows its cooldown, about 10 minutes from now" bash -c \
  "u=\$(date -d '$until_' +%s) && n=\$(date +%s) && [ \$((u - n)) -gt 420 ] && [ \$((u - n)) -le 600 ]"

# restart the operator: all it knows of the move now comes from the status
stop_operator
start_operator
check "the operator was restarted before big gets busy" test $(($(date +%s) - t0)) -lt 150

eventually 240 "big's node is hot and big is held by its cooldown (Rebalancing NoCandidate, cooling down)" bash -c \
  "$(declare -f psir_field); psir_field $name '.status.conditions[] | select(.type==\"Rebalancing\") | \"\(.reason) \(.message)\"' |
   grep -E '^NoCandidate $node is to be relieved.*cooling down'"
check "the restarted operator read the move back (one move in status, cooldown unchanged)" test \
  "$(psir_field "$name" '[.status.moves[] | "\(.name) \(.cooldownUntil)"] | join(",")')" = "big $until_"
check "big still runs on $node" test "$(vmis | awk -v v="$vm" '$1 == v {print $2}')" = "$node"
check "the operator asked for one eviction only (record)" test "$(our_evictions | wc -l)" -eq 1
check "$node is hot: tainted by the PsiRebalance" node_tainted "$node" "$name"

finish
