#!/usr/bin/env bash
# Moving a pod that is not a VM. The simulator's scenario plain-pods: a Deployment of two busy
# pods (the real kube-controller-manager's ReplicaSet) on worker-0 of three workers (~56 %
# CPU pressure), whose use the simulator exports as cAdvisor's container_* series and lists in
# each node's kubelet Summary, with the nodes' CPU use as node_cpu_seconds_total. The operator
# reads pressure and use from the metrics source given (Kubelet, the default: the Summaries
# through the API server's node proxy; Prometheus: the bed's, which scrapes the simulator).
# - eviction.method Migrate leaves pods that are not VMs alone: the Rebalancing condition says
#   so, nothing is evicted;
# - method Auto (the default) or Evict, as given, evicts one: status.moves shows it (kind
#   ReplicaSet, phase Evicted, the pod named), an Evicted Event says which,
#   psi_rebalancer_evictions_total{result="evicted"} counts it, the ReplicaSet replaces the pod
#   on another node, and worker-0's pressure falls below the untaint level.
# usage: non_vm.sh [SOURCE [METHOD]]: SOURCE Kubelet (default) or Prometheus, METHOD Auto
# (default) or Evict
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

source_kind=${1:-Kubelet}
case $source_kind in
  Kubelet) metrics="{source: Kubelet, interval: 5s, window: 15s}" ;;
  Prometheus) metrics=$bed_metrics ;;
  *) echo "usage: non_vm.sh [Kubelet|Prometheus [Auto|Evict]]" >&2; exit 2 ;;
esac
method=${2:-Auto}
case $method in Auto | Evict) ;; *) echo "usage: non_vm.sh [Kubelet|Prometheus [Auto|Evict]]" >&2; exit 2 ;; esac
name=non-vm-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/plain-pods.yaml"
busy_on() { # busy_on NODE: the running busy pods on NODE
  kubectl get pods -n "$sim_ns" -l app=busy -o json |
    jq -r --arg n "$1" '[.items[] | select(.spec.nodeName == $n and .status.phase == "Running" and .metadata.deletionTimestamp == null)] | length'
}
check "both busy pods run on worker-0" test "$(busy_on worker-0)" = 2
check "they are the pods of a ReplicaSet of the Deployment busy" test "$(kubectl get pods -n "$sim_ns" -l app=busy -o json |
  jq -r '[.items[].metadata.ownerReferences[]? | select(.controller) | .kind] | unique | join(",")')" = ReplicaSet
prom_pods() { # the busy pods with a CPU series on worker-0 in the bed's Prometheus
  curl -sf "$PSI_PROMETHEUS_URL/api/v1/query" --data-urlencode \
    "query=container_cpu_usage_seconds_total{namespace=\"$sim_ns\",node=\"worker-0\",container=\"app\"}" |
    jq -r '.data.result | length'
}
eventually 60 "Prometheus scrapes a container_cpu_usage_seconds_total series for each busy pod" \
  bash -c "$(declare -f prom_pods); sim_ns=$sim_ns PSI_PROMETHEUS_URL=$PSI_PROMETHEUS_URL; [ \"\$(prom_pods)\" = 2 ]"
summary_pods() { kubectl get --raw /api/v1/nodes/worker-0/proxy/stats/summary | jq -r '[.pods[] | select(.cpu.usageNanoCores > 1e9)] | length'; }
check "worker-0's kubelet Summary lists both pods, each using over a core" test "$(summary_pods)" = 2

if [ "$source_kind" = Kubelet ]; then operator_kubelet_rbac=1; fi # config/kubelet-source: nodes/proxy
start_operator
psir() { # psir METHOD
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics: $metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 10s}
  eviction:
    mode: Automatic
    method: $1
    evictAbovePercent: 30
    podSelector: {matchLabels: {app: busy}}
    cooldown: $cooldown
YAML
}
rebalancing_msg() { psir_field "$name" '.status.conditions[]? | select(.type=="Rebalancing") | "\(.reason) \(.message)"'; }

# --- Migrate: pods that are not VMs stay ------------------------------------------------------
psir Migrate
eventually 90 "method Migrate: Rebalancing says the pods on worker-0 are not VMs" bash -c \
  "$(declare -f rebalancing_msg psir_field); name=$name; m=\$(rebalancing_msg); [[ \$m == NoCandidate* && \$m == *'not a VM (eviction.method Migrate)'* ]]"
echo "# $(rebalancing_msg)"
check "nothing was evicted (record)" test "$(our_evictions all | wc -l)" -eq 0
check "status.moves is empty" test "$(psir_field "$name" '.status.moves // [] | length')" = 0
check "both busy pods still run on worker-0" test "$(busy_on worker-0)" = 2

# --- Auto or Evict: one is evicted ----------------------------------------------------------------
t0=$SECONDS
psir "$method"
eventually 90 "method $method: a move of a busy pod is in status.moves" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '.status.moves // [] | length')\" -ge 1 ]"
echo "# after $((SECONDS - t0)) s: $(psir_field "$name" '.status.moves[0] | tojson')"
move() { psir_field "$name" ".status.moves[0].$1"; }
rs=$(kubectl get replicasets -n "$sim_ns" -l app=busy -o jsonpath='{.items[0].metadata.name}')
evicted=$(move pod)
check "the move is of ReplicaSet $sim_ns/$rs, off worker-0" test \
  "$(move kind) $(move namespace)/$(move name) $(move sourceNode)" = "ReplicaSet $sim_ns/$rs worker-0"
check "its phase is Evicted, with an end time" test "$(move phase) $(move endTime | cut -c1-2)" = "Evicted 20"
check "it names the busy pod that was evicted" bash -c "[[ '$evicted' == $rs-* ]]"
check "exactly one eviction, of that pod on worker-0, let through (record)" test \
  "$(our_evictions | jq -r '"\(.pod) \(.node) \(.verdict) \(.vmi)"')" = "$evicted worker-0 allowed "
evicted_event() { # the Evicted Event about the PsiRebalance that names the pod
  kubectl get events.events.k8s.io -n default -o json | jq -e --arg n "$name" --arg p "$evicted" --arg w "$sim_ns/$rs" '
    [.items[] | select(.reason == "Evicted" and .type == "Normal" and .action == "Evict"
      and .regarding.kind == "PsiRebalance" and .regarding.name == $n
      and (.note | startswith("evicted ReplicaSet " + $w + " (pod " + $p + "): worker-0 -> ")))] | length == 1' >/dev/null
}
eventually 30 "an Evicted Event about the PsiRebalance names the ReplicaSet, the pod and worker-0" bash -c \
  "$(declare -f evicted_event); name=$name evicted=$evicted sim_ns=$sim_ns rs=$rs; evicted_event"
eventually 60 "the ReplicaSet replaced the pod: one busy pod on worker-0, one on another worker" bash -c \
  "$(declare -f busy_on); sim_ns=$sim_ns; [ \"\$(busy_on worker-0)\" = 1 ] && [ \$((\$(busy_on worker-1) + \$(busy_on worker-2))) = 1 ]"
eventually 60 "the evicted pod is gone (its deletion may still be under way)" bash -c "! kubectl get pod -n $sim_ns $evicted >/dev/null 2>&1"
eventually 90 "worker-0 relieved: its pressure below 15 % in status, Rebalancing NoPressuredNode" bash -c \
  "$(declare -f psir_field rebalancing); name=$name
   [ \"\$(rebalancing $name)\" = NoPressuredNode ] &&
   psir_field $name '.status.nodes[]? | select(.name==\"worker-0\") | .pressure.cpu' | awk '{exit !(\$1 < 15)}'"
check "still exactly one eviction (record)" test "$(our_evictions | wc -l)" -eq 1

metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log" | head -1)
metrics=$(curl -sf "http://127.0.0.1:$metrics_port/metrics")
grep '^psi_rebalancer_evictions_total' <<<"$metrics" | sed 's/^/# /' || true
check "psi_rebalancer_evictions_total{result=\"evicted\"} is 1" \
  test "$(awk '$1 == "psi_rebalancer_evictions_total{result=\"evicted\"}" {print $2}' <<<"$metrics")" = 1
check "no eviction was counted as a migration" \
  test "$(awk '$1 == "psi_rebalancer_evictions_total{result=\"migration\"}" {print $2}' <<<"$metrics")" = 0
check "the predictions read worker-0's CPU use from the $source_kind source (its demand is known)" \
  grep -qE 'rebalance node .*node=worker-0 pressure=[0-9.]+ demand=[0-9]' "$work/operator.log"
check "no usage reading failed" bash -c "! grep -E 'usage query failed|no kubelet summary could be read|usage not readable' $work/operator.log"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
