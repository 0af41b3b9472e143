#!/usr/bin/env bash
# DryRun on the seed scenario makes the very same choices on the live cluster and changes
# nothing: it reports (status.moves WouldMove, Events WouldMove, summary) the two moves a
# real run makes, asks the Eviction API only with dryRun=All, starts no migration and leaves
# every VMI where it was. Switched to Automatic, the operator then makes those same moves.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=dryrun-$$
trap 'rebalance_cleanup "$name"' EXIT
cooldown="{initial: 10m, max: 20m, history: 1h}" # the reported moves stand for the whole test

start_sim "$scenarios/seed.yaml"
before=$(vmis)
start_operator
apply_psir "$name" DryRun

would() { psir_field "$1" '[.status.moves[]? | select(.phase=="WouldMove")] | length'; }
eventually 240 "two moves reported" bash -c "$(declare -f psir_field would); [ \"\$(would $name)\" = 2 ]"
sleep 40 # more cycles: the report stays as it is
reported=$(psir_field "$name" '[.status.moves[] | select(.phase=="WouldMove") | "\(.name) \(.sourceNode)"] | .[]')
check "still exactly two moves reported" test "$(would "$name")" = 2
check "two different busy VMs, both off worker-0" test "$(echo "$reported" | awk '$1 ~ /^hot-/ && $2 == "worker-0" {print $1}' | sort -u | wc -l)" -eq 2
check "each with a destination that can take it, not worker-0" test \
  "$(psir_field "$name" '[.status.moves[] | select(.phase=="WouldMove" and .destinationNode != null and .destinationNode != "worker-0")] | length')" = 2
check "summary counts the two moves it would have asked" test "$(psir_field "$name" .status.summary.evictions)" = 2
check "Rebalancing False, and nothing moves" test "$(condition "$name" Rebalancing)" = False
check "the Eviction API was asked only with dryRun (record)" test "$(our_evictions | wc -l)" -eq 0
check "... and asked the dry runs (record)" test "$(our_evictions all | wc -l)" -ge 2
check "no migration (record)" test "$(jq -c 'select(.type=="migration" or .type=="evacuation")' "$record" | wc -l)" -eq 0
check "no VMI marked for evacuation" test "$(kubectl get vmi -n "$sim_ns" -o json | jq '[.items[] | select(.status.evacuationNodeName)] | length')" -eq 0
check "every VMI where it was, same UID" test "$(vmis)" = "$before"
check "WouldMove Events name the VMs" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and .reason==\"WouldMove\")] | length == 2' >/dev/null"

# The same moves for real.
kubectl patch psirebalance "$name" --type merge -p '{"spec":{"eviction":{"mode":"Automatic"}}}' >/dev/null
eventually 240 "Automatic: one busy VM per worker" bash -c "$(declare -f vmis per_node); sim_ns=$sim_ns
  [ \"\$(per_node hot- | awk '{print \$2}' | tr '\n' ' ')\" = '1 1 1 ' ]"
eventually 60 "Automatic: both migrations succeeded" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 2 ]"
made=$(our_evictions | jq -r '"\(.vmi) \(.node)"')
check "Automatic made the moves DryRun reported, in the same order" test "$made" = "$reported"
check "no VMI changed its UID" test "$(vmis | awk '{print $1, $3}')" = "$(echo "$before" | awk '{print $1, $3}')"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
