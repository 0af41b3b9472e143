#!/usr/bin/env bash
# Usage: limits.sh [PER_CLUSTER PER_NODE]: with arguments, the KubeVirt CR's
# spec.configuration.migrations is set to them first, and they are the limits checked.
# KubeVirt's default migration limits (or the CR's) hold in the simulator: evicting twelve VMs spread
# over three nodes at once makes twelve evacuations, of which at most 5 run at a time in
# the cluster and at most 2 from one node (counted from the record, where a migration
# runs from Scheduling, when its target pod exists, to Succeeded or Failed). Reaching
# exactly 5 and 2 shows the limits were what held them back. Every VMI keeps its UID.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/simlib.sh"
trap sim_cleanup EXIT

ns=sim-limits-$$
per_cluster=${1:-5} per_node=${2:-2}
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-limits.yaml" "$ns" || { finish; exit 1; }
check "the simulator published a KubeVirt CR with KubeVirt's default limits" bash -c \
  "kubectl get kubevirt kubevirt-kubevirt-hyperconverged -n $ns -o json |
   jq -e '.spec.configuration.migrations == {parallelMigrationsPerCluster: 5, parallelOutboundMigrationsPerNode: 2}' >/dev/null"
if [ $# -gt 0 ]; then
  kubectl patch kubevirt kubevirt-kubevirt-hyperconverged -n "$ns" --type merge -p \
    "{\"spec\":{\"configuration\":{\"migrations\":{\"parallelMigrationsPerCluster\":$per_cluster,\"parallelOutboundMigrationsPerNode\":$per_node}}}}" >/dev/null
  eventually 30 "the simulator's migration controller took the CR's limits ($per_cluster, $per_node)" bash -c \
    "jq -s -e '[.[] | select(.type == \"limits\")] | last | .perCluster == \"$per_cluster\" and .perNode == \"$per_node\"' $sim_record >/dev/null"
fi

vms=$(kubectl get vmi -n "$ns" -o jsonpath='{.items[*].metadata.name}')
check "twelve VMIs" test "$(wc -w <<< "$vms")" = 12
declare -A uid before
for vm in $vms; do
  uid[$vm]=$(vmi_field "$vm" .metadata.uid)
  before[$vm]=$(vmi_field "$vm" .status.nodeName)
done
# What the limits let run at once, given where the scheduler put the VMs: per_node per node, per_cluster in all.
reachable=$(kubectl get vmi -n "$ns" -o json | jq -r --argjson c "$per_cluster" --argjson p "$per_node" \
  '[.items[].status.nodeName] | group_by(.) | map([length, $p] | min) | add as $n | [$n, $c] | min')
most=$(kubectl get vmi -n "$ns" -o json | jq -r '[.items[].status.nodeName] | group_by(.) | map(length) | max')
check "the VMs are spread so that the limits can be reached (up to $reachable at once)" test "$reachable" -ge $((per_cluster < 4 ? per_cluster : 4))

# The launcher pods are looked up first, so that the twelve evictions go out back to back:
# looked up one by one between them, the first migrations could end before the last began.
declare -A pod_of
for vm in $vms; do pod_of[$vm]=$(launcher "$vm"); done
answers=0
for vm in $vms; do
  res=$(evict "$ns" "${pod_of[$vm]}")
  [[ $res == "429 "*"Eviction triggered evacuation"* ]] && answers=$((answers + 1))
done
check "all 12 evictions answered 429 Eviction triggered evacuation ($answers)" test "$answers" = 12
eventually 300 "all 12 migrations succeed" bash -c \
  "kubectl get vmim -n $ns -o json | jq -e '[.items[] | select(.status.phase == \"Succeeded\")] | length == 12' >/dev/null"

read -r max_total max_node < <(jq -s -r '
  [.[] | select(.type == "migration")] as $m
  | ($m | map(select(.phase == "Scheduling") | {key: .uid, value: .source}) | from_entries) as $src
  | [($m[] | select(.phase == "Scheduling") | {t, d: 1, s: .source}),
     ($m[] | select((.phase == "Succeeded" or .phase == "Failed") and $src[.uid] != null) | {t, d: -1, s: $src[.uid]})]
  | sort_by([.t, .d])
  | reduce .[] as $e ({tot: 0, max: 0, per: {}, pmax: 0};
      .tot += $e.d | .max = ([.max, .tot] | max)
      | .per[$e.s] = ((.per[$e.s] // 0) + $e.d) | .pmax = ([.pmax, .per[$e.s]] | max))
  | "\(.max) \(.pmax)"' "$sim_record")
check "at most $per_cluster migrations ran at once in the cluster, and as many as the placement allows did ($max_total of $reachable)" \
  test "$max_total" = "$reachable"
check "at most $per_node ran at once from one node, and $per_node did ($max_node; $most VMs on the busiest node)" test "$max_node" = "$per_node"
late=$(jq -s -r '[.[] | select(.type == "migration")] as $m
  | ([$m[] | select(.phase == "Succeeded" or .phase == "Failed") | .t] | min) as $first_end
  | [$m[] | select(.phase == "Scheduling" and .t >= $first_end)] | length' "$sim_record")
check "the others waited in Pending for a slot: $late started only after a migration ended" test "$late" -ge $((12 - reachable))

moved=0 same=0
for vm in $vms; do
  [ "$(vmi_field "$vm" .metadata.uid)" = "${uid[$vm]}" ] && same=$((same + 1))
  now=$(vmi_field "$vm" .status.nodeName)
  [ -n "$now" ] && [ "$now" != "${before[$vm]}" ] && moved=$((moved + 1))
done
check "every VMI kept its UID ($same of 12)" test "$same" = 12
check "every VMI runs on another node than before ($moved of 12)" test "$moved" = 12
finish
