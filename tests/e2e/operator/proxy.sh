#!/usr/bin/env bash
# A cluster-wide proxy, as OLM injects it (HTTPS_PROXY, http_proxy, NO_PROXY with CIDR
# entries), in front of the operator; the proxy (counting_proxy.py) records every request
# and forwards none:
# - with no NO_PROXY entry for the bed's addresses, the operator still reaches the API
#   server directly (the proxy never sees a CONNECT to it) while its Prometheus queries go
#   to the proxy, as configured: MetricsAvailable=False, the proxy saw them;
# - with NO_PROXY naming the loopback network as a CIDR block (127.0.0.0/8, which libcurl
#   before 7.86 does not understand), Prometheus is reached directly too: the PsiRebalance
#   is Ready, a pressured node is tainted, and the proxy saw nothing at all.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=proxy-$$
proxy_log=$work/proxy.log
: > "$proxy_log"
restore() {
  kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  [ -z "${proxy_pid:-}" ] || kill "$proxy_pid" 2>/dev/null || true
  rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json
  operator_cleanup
}
trap restore EXIT
python3 "$(dirname "$0")/counting_proxy.py" "$proxy_log" "$work/proxy.port" &
proxy_pid=$!
for _ in $(seq 1 300); do [ -s "$work/proxy.port" ] && break; sleep 0.1; done
proxy=http://127.0.0.1:$(cat "$work/proxy.port")
api=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
api_hostport=${api#https://}
prom_hostport=${PSI_PROMETHEUS_URL#http://}
check "the counting proxy answers (and records) a request" bash -c \
  "curl -s -o /dev/null -x $proxy http://probe.invalid/ ; grep -q 'probe.invalid' $proxy_log"
: > "$proxy_log"

start_exporter worker-0 worker-1 worker-2
# start_operator_behind NO_PROXY: the operator with the proxy in its environment
start_operator_behind() {
  HTTPS_PROXY=$proxy https_proxy=$proxy HTTP_PROXY=$proxy http_proxy=$proxy NO_PROXY=$1 no_proxy=$1 start_operator
}

# --- nothing of the bed in NO_PROXY ---
start_operator_behind ".cluster.local,.svc,10.128.0.0/14,172.30.0.0/16"
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 5s}
YAML
eventually 60 "Prometheus queries go to the configured proxy (it saw GET http://$prom_hostport/...)" \
  grep -q "^GET http://$prom_hostport/api/v1/query" "$proxy_log"
eventually 30 "MetricsAvailable=False: the proxy answered 502" bash -c \
  "[ \"\$(kubectl get psirebalance $name -o jsonpath='{.status.conditions[?(@.type==\"MetricsAvailable\")].status}')\" = False ]"
check "the operator reached the API server directly: it wrote the status, and the proxy saw no CONNECT $api_hostport" \
  bash -c "! grep -q 'CONNECT $api_hostport' $proxy_log && ! grep -qv '^GET http://$prom_hostport/' $proxy_log"
stop_operator

# --- NO_PROXY names the loopback network as a CIDR block ---
: > "$proxy_log"
start_operator_behind ".cluster.local,.svc,127.0.0.0/8,172.30.0.0/16"
eventually 60 "Ready=True: Prometheus read directly" bash -c \
  "[ \"\$(kubectl get psirebalance $name -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]"
set_pressure worker-0 cpu 60
eventually 90 "a pressured node is tainted" node_tainted worker-0 "$name"
check "the proxy saw nothing ($(wc -l < "$proxy_log") requests)" test ! -s "$proxy_log"
finish
