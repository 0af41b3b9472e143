#!/usr/bin/env bash
# NodeTaintedLong's clock, on the real test bed: status.nodes[].taintedSince and the
# psi_rebalancer_node_tainted_since_timestamp_seconds the alert ages stay at the time the taint
# was put on
# - across a Tainted -> Cooling -> Tainted dip (pressure below the untaint level for less than
#   sustain, the taint held),
# - across a gap in the readings (the node's series gone: Unknown, the taint held),
# - and across a restart of the operator (the new process adopts the stored time),
# while the state's own `since` moves at each of them.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=tainted-long-$$
trap 'kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1; rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json; operator_cleanup' EXIT

start_exporter worker-0 worker-1 worker-2
start_operator
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 60s}
YAML
entry() { psir_field "$name" ".status.nodes[]? | select(.name == \"worker-0\") | $1"; }
metrics_port() { sed -n 's/.*serving paths=\/metrics port=\([0-9]*\) scheme=http.*/\1/p' "$work/operator.log" | tail -1; }
gauge() {
  curl -sf "http://127.0.0.1:$(metrics_port)/metrics" |
    awk -v l="psi_rebalancer_node_tainted_since_timestamp_seconds{psirebalance=\"$name\",node=\"worker-0\"}" '$1 == l {printf "%d\n", $2}'
}
set_pressure worker-0 cpu 80
eventually 150 "worker-0 tainted" bash -c "$(declare -f node_tainted); node_tainted worker-0 $name"
eventually 30 "its entry has taintedSince" bash -c "$(declare -f psir_field entry); name=$name; [ -n \"\$(entry .taintedSince)\" ] && [ \"\$(entry .taintedSince)\" != null ]"
first=$(entry .taintedSince)
first_s=$(date -u -d "$first" +%s)
eventually 30 "the metric is at taintedSince ($first)" bash -c "$(declare -f metrics_port gauge); work=$work name=$name; [ \"\$(gauge)\" = $first_s ]"

# A dip: below the untaint level for less than sustain (60 s), then hot again.
set_pressure worker-0 cpu 5
eventually 60 "worker-0 dips into Cooling" bash -c "$(declare -f psir_field entry); name=$name; [ \"\$(entry .state)\" = Cooling ]"
set_pressure worker-0 cpu 80
eventually 60 "and is Tainted again" bash -c "$(declare -f psir_field entry); name=$name; [ \"\$(entry .state)\" = Tainted ]"
check "its state's since moved" test "$(entry .since)" != "$first"
check "taintedSince did not" test "$(entry .taintedSince)" = "$first"
eventually 30 "nor did the metric" bash -c "$(declare -f metrics_port gauge); work=$work name=$name; [ \"\$(gauge)\" = $first_s ]"

# A gap: worker-0's series stop (the exporter no longer serves it), then return.
stop_exporter
rm -f "$work/exporter.port"
start_exporter worker-1 worker-2
eventually 90 "without readings worker-0 is Unknown, the taint held" bash -c \
  "$(declare -f psir_field entry node_tainted); name=$name; [ \"\$(entry .state)\" = Unknown ] && node_tainted worker-0 $name"
check "taintedSince kept through the gap" test "$(entry .taintedSince)" = "$first"
stop_exporter
rm -f "$work/exporter.port"
start_exporter worker-0 worker-1 worker-2
set_pressure worker-0 cpu 80
eventually 120 "readings back: Tainted again" bash -c "$(declare -f psir_field entry); name=$name; [ \"\$(entry .state)\" = Tainted ]"
check "taintedSince still the first" test "$(entry .taintedSince)" = "$first"

# A restart: the new process has no record and adopts the stored time.
stop_operator
start_operator
sleep 15
eventually 60 "after a restart the metric is at the stored taintedSince" bash -c \
  "$(declare -f metrics_port gauge); work=$work name=$name; [ \"\$(gauge)\" = $first_s ]"
check "and the status too" test "$(entry .taintedSince)" = "$first"
finish
