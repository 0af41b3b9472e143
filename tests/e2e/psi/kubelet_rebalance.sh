#!/usr/bin/env bash
# e2e: rebalancing with no Prometheus at all. The bed's Prometheus is stopped; the
# simulator serves every node's kubelet Summary API behind the API server's egress socket
# (scenario kubelet-seed: the seed's VMs on worker-0 of five workers, worker-3's kubelet
# without PSI, worker-4's answering after 30 s), and the operator, with metrics.source
# Kubelet, reads pressure and per-VM usage through the real API server's node proxy.
# Checks: the source itself (kubelet_probe) reads the three good nodes and names why the
# other two are Unknown; the operator converges to one busy VM per node with live
# migrations; status says which nodes are Unknown and why; the slow kubelet never made a
# sample wait for it (every sample is in the histogram's 10 s bucket, while the slow
# kubelet takes 30 s); each move records the VM's own pressure, read from the Summary's
# pods[].cpu.psi.
# usage: kubelet_rebalance.sh PATH/TO/kubelet_probe
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../rebalance/lib.sh"
probe=$1
name=kubelet-seed-$$
extra_nodes=(worker-3 worker-4)

cleanup() {
  local rc=$?
  kubectl delete psirebalance "$name" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  stop_sim
  stop_operator
  kubectl delete node "${extra_nodes[@]}" --ignore-not-found >/dev/null 2>&1 || true
  "$PSI_SOURCE_DIR/hack/cluster/ctl" --dir "$PSI_TESTBED" start prometheus >/dev/null 2>&1 || true
  rebalance_cleanup "$name" "$rc"
}
trap cleanup EXIT

"$PSI_SOURCE_DIR/hack/cluster/up" --dir "$PSI_TESTBED" --nodes 5 >/dev/null 2>&1
"$PSI_SOURCE_DIR/hack/cluster/ctl" --dir "$PSI_TESTBED" stop prometheus
check "the bed's Prometheus is stopped" bash -c "! curl -sf --max-time 2 $PSI_PROMETHEUS_URL/-/ready"
check "every node has an InternalIP in 198.18.0.0/15 and a kubelet port" bash -c "kubectl get nodes -o json | jq -e '
  [.items[] | select(.metadata.labels[\"type\"]==\"kwok\")] | length >= 5 and all(
    (.status.addresses[] | select(.type==\"InternalIP\") | .address | test(\"^198[.]1[89][.]\")) and
    .status.daemonEndpoints.kubeletEndpoint.Port == 10250)' >/dev/null"

start_sim "$scenarios/kubelet-seed.yaml"
check "the simulator serves a kubelet for each of the five nodes" \
  test "$(grep -c 'kubelet serving' "$work/sim.log")" -eq 5

# The kubelet socket as the API server meets it: CONNECT to a node's address and port, then
# TLS with a client certificate of the bed's CA; without one, or to no node, it refuses.
tunnel() { # ADDRESS:PORT: what a client without a certificate gets
  python3 - "$PSI_KUBELET_SOCKET" "$PSI_TESTBED/pki/ca.crt" "$1" <<'PY'
import socket, ssl, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % sys.argv[3].encode())
head = s.recv(200).decode()
print(head.split("\r\n")[0])
if " 200 " in head:
    ctx = ssl.create_default_context(cafile=sys.argv[2])
    ctx.check_hostname = False
    try:
        t = ctx.wrap_socket(s)
        t.sendall(b"GET /stats/summary HTTP/1.1\r\nHost: x\r\n\r\n")
        print("served:", t.recv(40))
    except (ssl.SSLError, OSError) as e:
        print("refused:", e)
PY
}
out=$(tunnel "$(kubectl get node worker-0 -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}'):10250")
echo "$out" | sed 's/^/# /'
check "a CONNECT to worker-0's kubelet is accepted" grep -q '^HTTP/1.1 200' <<<"$out"
check "its kubelet refuses a client without a certificate of the bed's CA" grep -q '^refused:' <<<"$out"
check "a CONNECT to an address no node has gets 502" bash -c "$(declare -f tunnel); tunnel 198.19.255.254:10250 | grep -q '^HTTP/1.1 502'"

# The source on its own: good nodes read, the others Unknown with their reasons.
probe_all() { "$probe" worker-0 worker-1 worker-2 worker-3 worker-4; }
worker0_pressured() { probe_all | awk '$1=="NODE" && $2=="worker-0" && $3 > 5 && $3 <= 90 {ok=1} END {exit !ok}'; }
eventually 60 "worker-0 (every VM) shows CPU pressure through its kubelet (~83 % once settled)" worker0_pressured
out=$(probe_all)
echo "$out" | sed 's/^/# /'
check "the sample is ok" grep -q '^STATUS ok' <<<"$out"
check "worker-1 and worker-2 are read (idle: ~0 %)" \
  test "$(grep -cE '^NODE worker-[12] [0-9.]+ [0-9.]+ [0-9.]+ -$' <<<"$out")" -eq 2
check "worker-3 is Unknown: PSIUnavailable" grep -q '^NODE worker-3 Unknown Unknown Unknown PSIUnavailable$' <<<"$out"
check "worker-4 is Unknown: Timeout" grep -q '^NODE worker-4 Unknown Unknown Unknown Timeout$' <<<"$out"
check "two node errors, the first naming the node and why" \
  grep -qE '^NODE_ERRORS 2 node worker-(3: PSIUnavailable|4: Timeout)' <<<"$out"

before=$(vmis)
operator_kubelet_rbac=1 # the optional ClusterRole of config/kubelet-source (nodes/proxy)
start_operator
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics: {source: Kubelet, interval: 5s, window: 15s}
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 10s}
  eviction:
    mode: Automatic
    evictAbovePercent: 30
    cooldown: $cooldown
YAML

metrics_msg() { psir_field "$name" '.status.conditions[]? | select(.type=="MetricsAvailable") | "\(.status) \(.message)"'; }
eventually 60 "MetricsAvailable names the unread nodes and why" bash -c "$(declare -f metrics_msg psir_field)
  name=$name; m=\$(metrics_msg); [[ \$m == False* && \$m == *'3 of 5 nodes measured'* && \$m == *'worker-3 (PSIUnavailable)'* && \$m == *'worker-4 (Timeout)'* ]]"
check "status lists worker-3 and worker-4 as Unknown" test \
  "$(psir_field "$name" '[.status.nodes[] | select(.state=="Unknown") | .name] | sort | join(" ")')" = "worker-3 worker-4"

eventually 240 "one busy VM per node, worker-0 keeps one" bash -c "$(declare -f vmis per_node); sim_ns=$sim_ns
  p=\$(per_node hot-); [ \"\$(echo \"\$p\" | awk '\$2 > 1' | wc -l)\" -eq 0 ] && echo \"\$p\" | grep -qx 'worker-0 1'"
eventually 90 "the two moves are reported Succeeded in status" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 2 ]"
eventually 60 "Rebalancing says nothing is pressured" bash -c "$(declare -f rebalancing psir_field)
  [ \"\$(rebalancing $name)\" = NoPressuredNode ]"
after=$(vmis)
check "exactly 2 live migrations succeeded (record)" test "$(migrations_ended Succeeded | wc -l)" -eq 2
check "only busy VMs were moved, all off worker-0" test \
  "$(our_evictions | jq -r '"\(.node) \(.vmi)"' | grep -vc '^worker-0 hot-')" -eq 0
check "every VMI kept its UID (live-migrated, not restarted)" test \
  "$(echo "$before" | awk '{print $1, $3}')" = "$(echo "$after" | awk '{print $1, $3}')"
check "the predictions read worker-0's CPU use from its kubelet (its demand is known)" \
  grep -qE 'rebalance node .*node=worker-0 pressure=[0-9.]+ demand=[0-9]' "$work/operator.log"
check "each move kept the VM's own pressure read from its kubelet's Summary (pods[].cpu.psi)" test \
  "$(psir_field "$name" '[.status.moves[]? | select(.workloadPressure.demandFrom == "OwnPressure" and .workloadPressure.cpu != null)] | length')" = 2
check "no usage reading failed" bash -c "! grep -E 'usage query failed|no kubelet summary could be read' $work/operator.log"

metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log" | head -1)
metrics=$(curl -sf "http://127.0.0.1:$metrics_port/metrics")
count=$(awk '$1=="psi_rebalancer_pressure_sample_duration_seconds_count" {print $2}' <<<"$metrics")
within10=$(awk '$1=="psi_rebalancer_pressure_sample_duration_seconds_bucket{le=\"10\"}" {print $2}' <<<"$metrics")
echo "# samples: $count, within 10 s: $within10 (worker-4's kubelet answers after 30 s)"
check "samples were taken" test "${count:-0}" -gt 5
check "no sample waited for the slow kubelet: every one within 10 s" test "${within10:-x}" = "$count"
grep '^psi_rebalancer_node_pressure_percent{.*resource="cpu"' <<<"$metrics" | sed 's/^/# /' || true
gauge() { grep -q "^psi_rebalancer_node_pressure_percent{.*node=\"$1\".*resource=\"cpu\"} [0-9]" <<<"$metrics"; }
read_gauges() { gauge worker-0 && gauge worker-1 && gauge worker-2; }
no_unread_gauges() { ! gauge worker-3 && ! gauge worker-4; }
check "a CPU pressure gauge for each node read" read_gauges
check "no CPU pressure value for the unread nodes" no_unread_gauges
check "Prometheus stayed down throughout" bash -c "! curl -sf --max-time 2 $PSI_PROMETHEUS_URL/-/ready"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
