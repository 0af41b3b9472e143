#!/usr/bin/env bash
# Every worker hot (two busy VMs on each, ~40 % CPU pressure): there is nowhere to go, so
# nothing is evicted. No set of moves can bring any worker below the taint level (no node could
# take a workload), and the status says so clearly: Rebalancing False, NoPlacement, with the
# capacity each node lacks, a NoPlacement Warning Event, and the unplaceable nodes counted.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=allhot-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/rebalance-all-hot.yaml"
check "the scheduler put two busy VMs on each worker" test "$(per_node busy- | awk '{print $2}' | tr '\n' ' ')" = "2 2 2 "
before=$(vmis)
start_operator
apply_psir "$name" Automatic "    maxTotal: 3
    maxPerNode: 1
    maxPerNamespace: 3"

eventually 120 "every worker above evictAbovePercent in status" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.nodes[]? | select((.pressure.cpu // \"0\" | tonumber) > 30)] | length')\" = 3 ]"
# status, reason and message of one read of the condition (they change together, cycle by cycle)
rebalancing_cond() { psir_field "$name" '.status.conditions[]? | select(.type=="Rebalancing") | "\(.status) \(.reason) \(.message)"'; }
eventually 90 "Rebalancing False, NoPlacement: no set of moves brings them below the taint level, so nothing is evicted" bash -c \
  "$(declare -f psir_field rebalancing_cond); name=$name
   [[ \$(rebalancing_cond) == 'False NoPlacement '*'no set of moves brings '*' below taintAbovePercent '*', so nothing is evicted' ]]"
check "... naming the capacity a node lacks" bash -c \
  "$(declare -f psir_field rebalancing_cond); name=$name
   rebalancing_cond | grep -Eq 'worker[^ ]* needs about [0-9]+ more CPUs? free (on some node|across the nodes that could take its workloads)'"
check "a Warning Event NoPlacement says it" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and .reason==\"NoPlacement\" and .type==\"Warning\")] | length >= 1' >/dev/null"
sleep 45 # several more cycles
check "it still says NoPlacement, with one Event for it (not one per cycle)" bash -c \
  "$(declare -f psir_field rebalancing_cond); name=$name
   [[ \$(rebalancing_cond) == 'False NoPlacement '* ]] &&
   kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and .reason==\"NoPlacement\")] | map(.deprecatedCount // .series.count // 1) | add <= 2' >/dev/null"
check "no eviction was asked (record)" test "$(our_evictions all | wc -l)" -eq 0
check "no migration (record)" test "$(jq -c 'select(.type=="migration")' "$record" | wc -l)" -eq 0
check "every VMI where it was" test "$(vmis)" = "$before"
check "summary: no eviction" test "$(psir_field "$name" .status.summary.evictions)" = 0
check "Ready stays True (nothing is wrong with the operator)" test "$(condition "$name" Ready)" = True
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
