#!/usr/bin/env bash
# The operator core against the real test bed and Prometheus, pressure set by the test:
# the taint comes after the sustain window and not before; pressure between the two
# thresholds moves nothing; the taint goes after cooling; a Prometheus outage holds every
# taint and sets MetricsAvailable=False, then recovers; deleting the PsiRebalance removes
# its taints and leaves other taints alone; columns, Events, /metrics and /readyz; a key
# recorded in status.taintKeys that no node carries is forgotten.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=taints-$$
sustain=15
trap 'kubectl label node worker-1 node-role.kubernetes.io/worker= --overwrite >/dev/null 2>&1; kubectl delete psirebalance "$name" "$name-newer" --ignore-not-found --wait=false >/dev/null 2>&1; kubectl taint node worker-0 other-team/keep- >/dev/null 2>&1; rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json; operator_cleanup' EXIT

start_exporter worker-0 worker-1 worker-2
start_operator
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: ${sustain}s}
YAML

eventually 60 "Ready=True once every node is sampled" bash -c "[ \"\$(kubectl get psirebalance $name -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]"
check "the finalizer is on the PsiRebalance" bash -c "kubectl get psirebalance $name -o jsonpath='{.metadata.finalizers}' | grep -q rebalance.psi.dev/taint-cleanup"
check "no node tainted at rest" bash -c "! kubectl get nodes -o json | jq -e '[.items[].spec.taints[]? | select(.key==\"rebalance.psi.dev/pressure\")] | length > 0' >/dev/null"

# Crossing: worker-0 goes to 60 %. Poll: the taint must not come before the node was
# Pressured for the sustain window. The times compared are the operator's own (status
# .nodes[].since: when the node entered its state), not when this loop happened to look.
set_pressure worker-0 cpu 60
pressured_since= tainted=0
deadline=$((SECONDS + 90))
while ((SECONDS < deadline)); do
  read -r state since < <(psir_field "$name" '.status.nodes[]? | select(.name=="worker-0") | "\(.state) \(.since)"') || true
  if [ "${state:-}" = Pressured ]; then pressured_since=$since; fi
  if node_tainted worker-0 "$name"; then tainted=1; break; fi
  sleep 0.5
done
check "worker-0 was reported Pressured before it was tainted" test -n "$pressured_since"
eventually 30 "status shows worker-0 Tainted" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '.status.nodes[]? | select(.name==\"worker-0\") | .state')\" = Tainted ]"
tainted_since=$(psir_field "$name" '.status.nodes[]? | select(.name=="worker-0") | .since')
held=$(($(date -d "$tainted_since" +%s) - $(date -d "${pressured_since:-$tainted_since}" +%s)))
check "worker-0 tainted after the pressure held for the sustain window ($held s from Pressured to Tainted)" \
  test "$tainted" -eq 1 -a "$held" -ge "$sustain"
check "the taint is PreferNoSchedule with the PsiRebalance as value" bash -c \
  "kubectl get node worker-0 -o json | jq -e '.spec.taints[] | select(.key==\"rebalance.psi.dev/pressure\") | .effect==\"PreferNoSchedule\" and .value==\"$name\"' >/dev/null"
eventually 30 "status shows worker-0 Tainted and tainted=1" bash -c \
  "[ \"\$(kubectl get psirebalance $name -o jsonpath='{.status.summary.tainted}')\" = 1 ]"
check "kubectl get psir fills the columns" bash -c \
  "kubectl get psir $name --no-headers | awk '{exit !(\$2==3 && \$3==1 && \$4==1 && \$7==\"True\")}'"
check "a Tainted Event was recorded for worker-0" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e '[.items[] | select(.reason==\"Tainted\" and .regarding.name==\"worker-0\")] | length >= 1' >/dev/null"
# status.taintKeys: a recorded key that no node ever carried (as a crash between recording a
# key and its first taint leaves one) is forgotten.
check "a key no node carries can be recorded by hand" kubectl patch psirebalance "$name" --subresource=status \
  --type=json -p '[{"op":"add","path":"/status/taintKeys/-","value":"example.com/never-written"}]'
eventually 30 "a recorded key no node carries is forgotten" bash -c \
  "[ \"\$(kubectl get psirebalance $name -o json | jq -r '.status.taintKeys | join(\",\")')\" = rebalance.psi.dev/pressure ]"

# Oscillation inside the band: worker-0 (tainted) and worker-1 (not) between 17 and 23 %.
set_pressure worker-1 cpu 20
flapped=0
for i in $(seq 1 8); do
  if ((i % 2)); then p=17; else p=23; fi
  set_pressure worker-0 cpu "$p"; set_pressure worker-1 cpu $((40 - p))
  for _ in 1 2 3 4 5; do
    node_tainted worker-0 "$name" || flapped=1
    node_tainted worker-1 "$name" && flapped=1
    sleep 1
  done
done
check "pressure between the thresholds for 40 s moved no taint" test "$flapped" -eq 0

# The only other node that may take a taint is capped: 3 nodes at 50 % -> 1. worker-1 goes
# hot too, but worker-0 keeps the one place while it is not cooler by the margin.
set_pressure worker-0 cpu 0
set_pressure worker-1 cpu 0
eventually 90 "worker-0 untainted after cooling below 15 % for the sustain window" bash -c "$(declare -f node_tainted); ! node_tainted worker-0 $name"

# Outage: worker-2 tainted, then Prometheus goes away.
set_pressure worker-2 cpu 70
eventually 90 "worker-2 tainted" bash -c "$(declare -f node_tainted); node_tainted worker-2 $name"
hack_ctl="$PSI_SOURCE_DIR/hack/cluster/ctl --dir $PSI_TESTBED"
$hack_ctl stop prometheus
set_pressure worker-2 cpu 0
eventually 60 "MetricsAvailable=False while Prometheus is down" bash -c "$(declare -f psir_field condition); [ \"\$(condition $name MetricsAvailable)\" = False ]"
check "Ready=False while Prometheus is down" test "$(condition "$name" Ready)" = False
# (one more may be from the start, before Prometheus had scraped a node: "0 of 3 nodes measured")
check "a MetricsUnavailable Event was recorded" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e '[.items[] | select(.reason==\"MetricsUnavailable\" and .regarding.name==\"$name\" and (.note | contains(\"nodes measured\") | not))] | length == 1' >/dev/null"
check "the reason names the unreachable source" test "$(psir_field "$name" '.status.conditions[] | select(.type=="MetricsAvailable") | .reason')" = SourceUnreachable
sleep 20
check "worker-2 keeps its taint through the outage (held, not removed)" node_tainted worker-2 "$name"
$hack_ctl start prometheus
eventually 60 "MetricsAvailable=True again after Prometheus returns" bash -c "$(declare -f psir_field condition); [ \"\$(condition $name MetricsAvailable)\" = True ]"
eventually 90 "worker-2 untainted once the readings show it cool" bash -c "$(declare -f node_tainted); ! node_tainted worker-2 $name"

health_port=$(sed -n 's/.*serving paths=\/healthz,\/readyz port=\([0-9]*\).*/\1/p' "$work/operator.log")
metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log")
check "/readyz answers 200 once the caches are synced" curl -sf "http://127.0.0.1:$health_port/readyz" -o /dev/null
check "/metrics exports each node's pressure" bash -c \
  "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q 'psi_rebalancer_node_pressure_percent{psirebalance=\"$name\",node=\"worker-0\",stall=\"some\",resource=\"cpu\"}'"
check "/metrics counts the operator's API requests by method and code" bash -c \
  "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -Eq '^psi_rebalancer_api_requests_total\\{method=\"PATCH\",code=\"200\"\\} [1-9]'"
check "/metrics times the pressure samples apart from the whole cycle" bash -c \
  "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -Eq '^psi_rebalancer_pressure_sample_duration_seconds_count [1-9]'"
check "/metrics counts taint transitions" bash -c \
  "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -Eq '^psi_rebalancer_taint_transitions_total\\{op=\"add\"\\} [1-9]'"

# A node that leaves the selector loses its taint at once (no sustain: it is no longer ours).
set_pressure worker-1 cpu 70
eventually 90 "worker-1 tainted" bash -c "$(declare -f node_tainted); node_tainted worker-1 $name"
kubectl label node worker-1 node-role.kubernetes.io/worker- >/dev/null
eventually 30 "worker-1 untainted once it left the node selector" bash -c "$(declare -f node_tainted); ! node_tainted worker-1 $name"
kubectl label node worker-1 node-role.kubernetes.io/worker= >/dev/null
set_pressure worker-1 cpu 0

# A second, newer PsiRebalance over the same nodes: the older one keeps them.
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name-newer}
spec:
  metrics: $bed_metrics
YAML
eventually 30 "the newer PsiRebalance reports NodeConflict naming the owner" bash -c \
  "kubectl get psirebalance $name-newer -o json | jq -e '.status.conditions[] | select(.type==\"NodeConflict\") | .status==\"True\" and (.message | contains(\"$name\"))' >/dev/null"
check "the older one has no NodeConflict" test -z "$(condition "$name" NodeConflict)"
kubectl delete psirebalance "$name-newer" --wait=true --timeout=60s >/dev/null

# Deletion: worker-0 hot again and tainted, with a foreign taint beside ours.
set_pressure worker-0 cpu 80
eventually 90 "worker-0 tainted again" bash -c "$(declare -f node_tainted); node_tainted worker-0 $name"
# Someone takes our taint off by hand: it comes back (once the cache shows the change, at
# most 30 s after our own last write to the node). Before this, no taint was ever
# "restored": a cache lagging behind our own write is no reason to write again.
check "no taint was restored before (no write repeated for a lagging cache)" bash -c "! grep -q 'why=Restore' $work/operator.log"
kubectl taint node worker-0 rebalance.psi.dev/pressure- >/dev/null
eventually 60 "a taint removed by hand is restored" bash -c "$(declare -f node_tainted); node_tainted worker-0 $name"
# (the operator logs a cycle's taint changes once all its taint writes are done)
eventually 10 "and logged as restored, once" bash -c "[ \"\$(grep -c 'why=Restore' $work/operator.log)\" -eq 1 ]"
kubectl taint node worker-0 other-team/keep=yes:PreferNoSchedule >/dev/null
kubectl delete psirebalance "$name" --wait=true --timeout=60s >/dev/null
check "deleting the PsiRebalance removed its taint" bash -c "$(declare -f node_tainted); ! node_tainted worker-0 $name"
check "the other taint is intact" bash -c "kubectl get node worker-0 -o json | jq -e '[.spec.taints[]? | select(.key==\"other-team/keep\")] | length == 1' >/dev/null"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"
stop_operator
check "SIGTERM released the Lease for a successor" bash -c \
  "grep -q 'lease released' $work/operator.log && [ -z \"\$(kubectl get lease psi-rebalancer-leader -n psi-rebalancer -o jsonpath='{.spec.holderIdentity}')\" ]"

finish
