#!/usr/bin/env bash
# The kubelet pressure source at scale, beside the Prometheus source (issue #18). Not part
# of the test command: run by hand.
#
#   bench/kubelet.sh [--sizes 100,1000] [--window 60] [--build-dir DIR] [--out FILE] [--bed DIR]
#
# Per size, on one test bed grown from size to size: kwok workers on their loopback
# addresses, psi-sim serving every node's kubelet Summary API and its node_exporter series
# (a scenario of ten idle VMs over the nodes, written here), then for each source
# (Prometheus, then Kubelet) the operator started fresh under its ServiceAccount with a
# PsiRebalance (interval 5s, window 15s, eviction Disabled), 20 s to settle and a window of
# --window seconds, over which:
#   cycles               psi_rebalancer_pressure_sample_duration_seconds_count (delta)
#   sample_ms            mean time to read every node's pressure (that histogram's sum/count)
#   reconcile_ms         mean reconcile cycle (psi_rebalancer_reconcile_duration_seconds)
#   api_gets_per_cycle   the operator's GETs (psi_rebalancer_api_requests_total) per cycle:
#                        with the kubelet source, one node proxy request per node
#   prom_queries_per_cycle  Prometheus's /api/v1/query requests per cycle
#   *_cpu_s_per_min      CPU of the API server, Prometheus, the operator, psi-sim
#   operator_rss_kib     the operator's RSS at the end
#   operator_apiserver_connections  its TCP connections to the API server, mid-window
# Writes JSON (default bench/results/<date>-kubelet.json) and prints it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
sizes=100,1000
window=60
build_dir=$repo/build
out=$here/results/$(date -u +%Y-%m-%d)-kubelet.json
bed=/tmp/bed-kubelet-bench
while (($#)); do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --build-dir) build_dir=$(cd "$2" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bed) bed=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "kubelet.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
export PSI_SOURCE_DIR=$repo PSI_BINARY_DIR=$build_dir
for b in controller/psi-rebalancer hack/sim/psi-sim; do
  [ -x "$build_dir/$b" ] || { echo "kubelet.sh: $build_dir/$b missing: build the project first (--build-dir)" >&2; exit 2; }
done
log() { printf '%s bench: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
res=$(mktemp -d /tmp/bench-kubelet.XXXXXX)
sim_pid=
cleanup() {
  set +e
  [ -n "${operator_pid:-}" ] && stop_operator
  [ -n "$sim_pid" ] && kill -TERM "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  "$repo/hack/cluster/down" --dir "$bed" --purge >/dev/null 2>&1
  rm -rf "$res"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "bringing up $bed"
"$repo/hack/cluster/up" --dir "$bed" --nodes 3 >/dev/null
export PSI_TESTBED=$bed
eval "$("$repo/hack/cluster/env" --dir "$bed")"
# shellcheck source=../tests/e2e/lib/operator.sh
source "$repo/tests/e2e/lib/operator.sh"
failures=0

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pid_of() { cat "$bed/pids/$1.pid"; }
metric_sum() { # NAME [LABEL-MATCH]: the sum of a metric's samples in the operator's /metrics
  curl -sf "http://127.0.0.1:$metrics_port/metrics" | awk -v m="$1" -v l="${2:-}" \
    '{ split($1, a, "{") } a[1] == m && index($1, l) { s += $2 } END { printf "%.6f\n", s + 0 }'
}
prom_queries() { curl -sf "$PSI_PROMETHEUS_URL/metrics" | awk '/^prometheus_http_requests_total\{.*handler="\/api\/v1\/query"/ {s += $2} END {print s + 0}'; }

# snapshot FILE: the counters at a time.
snapshot() {
  jq -n --argjson t "$(date +%s.%N)" \
    --argjson api "$(cpu_ticks "$(pid_of apiserver)")" --argjson prom "$(cpu_ticks "$(pid_of prometheus)")" \
    --argjson op "$(cpu_ticks "$operator_pid")" --argjson sim "$(cpu_ticks "$sim_pid")" \
    --argjson cycles "$(metric_sum psi_rebalancer_pressure_sample_duration_seconds_count)" \
    --argjson sample_s "$(metric_sum psi_rebalancer_pressure_sample_duration_seconds_sum)" \
    --argjson rec_n "$(metric_sum psi_rebalancer_reconcile_duration_seconds_count)" \
    --argjson rec_s "$(metric_sum psi_rebalancer_reconcile_duration_seconds_sum)" \
    --argjson gets "$(metric_sum psi_rebalancer_api_requests_total 'method="GET"')" \
    --argjson queries "$(prom_queries)" \
    '{t: $t, api: $api, prom: $prom, op: $op, sim: $sim, cycles: $cycles, sample_s: $sample_s,
      rec_n: $rec_n, rec_s: $rec_s, gets: $gets, queries: $queries}' > "$1"
}

# measure SIZE SOURCE: one source on the bed as it is; the figures to $res/SIZE-SOURCE.json.
measure() {
  local n=$1 src=$2 metrics
  if [ "$src" = Prometheus ]; then
    metrics="{source: Prometheus, prometheus: {url: \"$PSI_PROMETHEUS_URL\", bearerTokenFile: \"\"}, interval: 5s, window: 15s}"
  else
    metrics="{source: Kubelet, interval: 5s, window: 15s}"
  fi
  : > "$work/operator.log"
  start_operator --log-level info
  local t=$((SECONDS + 60))
  until grep -q 'paths=/metrics' "$work/operator.log"; do ((SECONDS < t)) || break; sleep 0.2; done
  metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log" | tail -1)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: bench-kubelet}
spec:
  metrics: $metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 10s}
  eviction: {mode: Disabled}
YAML
  t=$((SECONDS + 300))
  until [ "$(kubectl get psirebalance bench-kubelet -o jsonpath='{.status.conditions[?(@.type=="MetricsAvailable")].status}')" = True ]; do
    ((SECONDS < t)) || { log "$n $src: MetricsAvailable not True after 300 s"; break; }
    sleep 2
  done
  sleep 20
  snapshot "$res/a.json"
  # the operator's connections to the API server, half-way through (HTTP/2: one)
  sleep $((window / 2))
  local conns
  conns=$(ss -Htnp state established "( dport = :${PSI_APISERVER_URL##*:} )" | grep -c "pid=$operator_pid," || true)
  sleep $((window - window / 2))
  snapshot "$res/b.json"
  local msg rss
  msg=$(kubectl get psirebalance bench-kubelet -o jsonpath='{.status.conditions[?(@.type=="MetricsAvailable")].message}')
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$operator_pid/status")
  jq -n --slurpfile a "$res/a.json" --slurpfile b "$res/b.json" --argjson hz "$(getconf CLK_TCK)" \
    --argjson n "$n" --arg src "$src" --arg msg "$msg" --argjson rss "$rss" --argjson conns "$conns" '
    $a[0] as $a | $b[0] as $b | ($b.t - $a.t) as $dt | ($b.cycles - $a.cycles) as $c
    | {nodes: $n, source: $src, window_s: $dt, cycles: $c,
       sample_ms: (if $c > 0 then ($b.sample_s - $a.sample_s) / $c * 1000 else null end),
       reconcile_ms: (if $b.rec_n > $a.rec_n then ($b.rec_s - $a.rec_s) / ($b.rec_n - $a.rec_n) * 1000 else null end),
       api_gets_per_cycle: (if $c > 0 then ($b.gets - $a.gets) / $c else null end),
       prom_queries_per_cycle: (if $c > 0 then ($b.queries - $a.queries) / $c else null end),
       apiserver_cpu_s_per_min: (($b.api - $a.api) / $hz / $dt * 60),
       prometheus_cpu_s_per_min: (($b.prom - $a.prom) / $hz / $dt * 60),
       operator_cpu_s_per_min: (($b.op - $a.op) / $hz / $dt * 60),
       sim_cpu_s_per_min: (($b.sim - $a.sim) / $hz / $dt * 60),
       operator_rss_kib: $rss, operator_apiserver_connections: $conns, metrics_available: $msg}' > "$res/$n-$src.json"
  cat "$res/$n-$src.json" >&2
  kubectl delete psirebalance bench-kubelet --timeout=60s >/dev/null || true
  stop_operator
}

for n in ${sizes//,/ }; do
  log "$n nodes"
  # up waits 60 s + 0.1 s a node for them to be Ready; a loaded machine may need longer
  "$repo/hack/cluster/up" --dir "$bed" --nodes "$n" >/dev/null 2>&1 || log "$n nodes: not all Ready yet"
  t=$((SECONDS + 900))
  until (($(kubectl get nodes -l type=kwok --no-headers | awk '$2 == "Ready"' | wc -l) >= n)); do
    ((SECONDS < t)) || { log "$n nodes: not all Ready after 900 s"; exit 1; }
    sleep 5
  done
  cat > "$res/scenario.yaml" <<YAML
name: kubelet-bench
namespace: psi-sim-kubelet-bench
nodes: {selector: node-role.kubernetes.io/worker, count: $n}
vms: [{name: vm, count: 10, vcpus: 2, memory: 4Gi, cpu: 0.5}]
YAML
  "$build_dir/hack/sim/psi-sim" --scenario "$res/scenario.yaml" --ready-file "$res/sim.ready" --cleanup \
    --log-level warn > "$res/sim-$n.log" 2>&1 &
  sim_pid=$!
  for i in $(seq 1 600); do [ -s "$res/sim.ready" ] && break; kill -0 "$sim_pid" || break; sleep 0.5; done
  [ -s "$res/sim.ready" ] || { log "simulator not ready at $n nodes"; tail "$res/sim-$n.log" >&2; exit 1; }
  t=$((SECONDS + 300))
  until [ "$(curl -sfG "$PSI_PROMETHEUS_URL/api/v1/query" --data-urlencode 'query=count(node_pressure_cpu_waiting_seconds_total)' | jq -r '.data.result[0].value[1] // 0')" -ge "$n" ]; do
    ((SECONDS < t)) || { log "Prometheus does not scrape every node"; break; }
    sleep 3
  done
  measure "$n" Prometheus
  measure "$n" Kubelet
  kill -TERM "$sim_pid"; wait "$sim_pid" 2>/dev/null || true; sim_pid=
  rm -f "$res/sim.ready"
done
mkdir -p "$(dirname "$out")"
jq -s --arg cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --arg rev "$(git -C "$repo" rev-parse --short HEAD)" \
  '{meta: {cpus: $cpus, load_avg_at_end: $load, commit: $rev}, runs: .}' "$res"/*-Prometheus.json "$res"/*-Kubelet.json > "$out"
log "figures written to $out"
cat "$out"
