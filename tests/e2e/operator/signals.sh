#!/usr/bin/env bash
# Which signal counts: with pressure.stall full the operator reads the "full" series
# (node_pressure_<resource>_stalled_seconds_total) and ignores "some"; with
# pressure.utilizationFloorPercent a CPU pressure counts only on a node whose CPU
# utilisation is above the floor (throttling on an idle node is no contention), and a
# node without a utilisation series is Unknown, its taint held.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=signals-$$
trap 'kubectl delete psirebalance "$name-full" "$name-floor" --ignore-not-found --wait=false >/dev/null 2>&1; rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json; operator_cleanup' EXIT

# psir NAME PRESSURE: a PsiRebalance sampling every 5 s with the given pressure block.
psir() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $1}
spec:
  metrics: $bed_metrics
  pressure: $2
YAML
}
node_state() { psir_field "$1" ".status.nodes[]? | select(.name == \"$2\") | .state"; }

start_exporter worker-0 worker-1 worker-2
start_operator

# --- stall: full, on memory ---
psir "$name-full" "{resource: memory, stall: full, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 5s}"
eventually 60 "Ready=True" bash -c "$(declare -f psir_field condition); [ \"\$(condition $name-full Ready)\" = True ]"
# worker-0: high "some", no "full"; worker-1: high "full". Only worker-1 may be tainted.
set_pressure worker-0 memory/some 80
set_pressure worker-1 memory/some 80
set_pressure worker-1 memory/full 60
eventually 90 "worker-1 tainted on its memory full pressure" bash -c "$(declare -f node_tainted); node_tainted worker-1 $name-full"
# The taint may come while Prometheus' rate still ramps up; the reading settles at 60.
eventually 60 "status shows worker-1's memory pressure as the full reading (60 %)" bash -c \
  "kubectl get psirebalance $name-full -o json | jq -e '.status.nodes[] | select(.name==\"worker-1\") | (.pressure.memory | tonumber) as \$m | \$m > 55 and \$m < 65' >/dev/null"
sleep 15
check "worker-0, high on memory some only, is not tainted" bash -c "$(declare -f node_tainted); ! node_tainted worker-0 $name-full"
check "and reported Normal" test "$(node_state "$name-full" worker-0)" = Normal
kubectl delete psirebalance "$name-full" --wait=true --timeout=60s >/dev/null
check "deleting it removed the taint" bash -c "$(declare -f node_tainted); ! node_tainted worker-1 $name-full"
for n in worker-0 worker-1; do set_pressure $n memory/some 0; set_pressure $n memory/full 0; done

# --- utilizationFloorPercent ---
psir "$name-floor" "{resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 5s, utilizationFloorPercent: 50}"
# worker-0: pressure with little utilisation (throttling); worker-1: pressure on a busy node;
# worker-2: pressure without any utilisation series.
set_pressure worker-0 utilization 20
set_pressure worker-1 utilization 90
set_pressure worker-0 cpu 60
set_pressure worker-1 cpu 60
set_pressure worker-2 cpu 60
eventually 90 "worker-1 (busy, pressured) tainted" bash -c "$(declare -f node_tainted); node_tainted worker-1 $name-floor"
eventually 60 "status reports worker-1's utilisation (90 %)" bash -c \
  "kubectl get psirebalance $name-floor -o json | jq -e '.status.nodes[] | select(.name==\"worker-1\") | (.utilization | tonumber) as \$u | \$u > 85 and \$u < 95' >/dev/null"
sleep 15
check "worker-0 (pressure below the utilisation floor) is not tainted" bash -c "$(declare -f node_tainted); ! node_tainted worker-0 $name-floor"
check "and reported Normal" test "$(node_state "$name-floor" worker-0)" = Normal
check "worker-2 (no utilisation series) is Unknown, not tainted" bash -c \
  "$(declare -f psir_field node_state node_tainted); [ \"\$(node_state $name-floor worker-2)\" = Unknown ] && ! node_tainted worker-2 $name-floor"
# The floor is crossed: worker-0 now counts, but the cap (3 nodes at 50 % -> 1) keeps the
# one place for worker-1 while both are equally hot; cool worker-1 to hand it over.
set_pressure worker-0 utilization 95
set_pressure worker-1 cpu 0
eventually 90 "worker-0 tainted once its utilisation rose above the floor" bash -c "$(declare -f node_tainted); node_tainted worker-0 $name-floor"
check "no permission was denied to the operator" bash -c "! grep -Ei 'forbidden' $work/operator.log"

finish
