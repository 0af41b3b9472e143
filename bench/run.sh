#!/usr/bin/env bash
# psi-rebalancer benchmarks (issue #9). Not part of the test command: run by hand.
#
#   bench/run.sh [--sizes 100,1000,5000] [--pods-per-node 10] [--window 60]
#                [--scenarios rebalance-small-emptiest,...] [--minutes rebalance-fifty=5,...]
#                [--contenders psi,req,prom,cm] [--desched-interval 30s] [--build-dir DIR]
#                [--out FILE] [--keep]
#                [--raw DIR] [--scale-bed DIR] [--sides-bed PREFIX] [--no-scale] [--no-sides]
#                [--no-desched]
#
# Scale (per size, on one test bed grown from size to size, audit log on):
#   kwok nodes with ~10 pods each and a PSI series per node (psi-pressure-exporter), the
#   operator started fresh under its ServiceAccount, a PsiRebalance (interval 5s, window
#   15s, sustain 10s, taint 25 %, eviction Disabled); then a steady window and a storm
#   window (a fifth of the nodes stepped to 60 % at once): RSS, CPU s/min, reconcile p50/p99
#   (from the operator's histogram), API requests by verb (audit log, operator's user),
#   LIST calls after start-up, status writes and PromQL queries per cycle, the status's size
#   (bytes, entries in status.nodes) after each window, and the reaction
#   (taint PATCH in the audit log minus the crossing in Prometheus, minus the sustain).
#   At 1,000 nodes the descheduler (LowNodeUtilization on requests) runs for the same window
#   for its RSS and CPU (--no-desched: not; with --no-sides it is then not built either).
# Side by side (scenarios of hack/sim/scenarios, one test bed per contender, in parallel; a
#   bed grows to the scenario's nodes.count and never shrinks, so list scenarios by node count):
#   psi-rebalancer (Automatic, cpu and memory; psi-defaults: every field at the CRD's default
#   but the bed's Prometheus and mode Automatic), descheduler LowNodeUtilization on requests
#   (req), on Prometheus rate(node_pressure_cpu_waiting_seconds_total[1m]) (prom), and on the
#   CPU + memory utilisation and PSI score of OpenShift's KubeVirtRelieveAndMigrate profile
#   (cm): migrations against the scenario's optimum, repeated moves, time to balance, maximum
#   and final pressure per resource.
#
# Prints a table and writes the figures as JSON (default bench/results/<date>.json).
# Needs: a build of the project (psi-rebalancer, psi-sim, psi-pressure-exporter), jq,
# python3, and the descheduler (hack/tools/build.sh descheduler, built on first use).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

sizes=100,1000,5000
ppn=10
window=60
scenarios=rebalance-small-emptiest,rebalance-memory-hot,rebalance-flipping,rebalance-heterogeneous,rebalance-fifty
minutes=seed=5,load-shift=14,rebalance-small-emptiest=3,rebalance-memory-hot=3,rebalance-flipping=6,rebalance-heterogeneous=3,rebalance-fifty=5
contenders=psi,req,prom,cm
desched_interval=30s
build_dir=$repo/build
out=$here/results/$(date -u +%Y-%m-%d).json
keep=0 do_scale=1 do_sides=1 do_desched=1 raw= scale_bed=/tmp/bed-b-scale sides_bed=/tmp/bed-b-sim
while (($#)); do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --pods-per-node) ppn=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --scenarios) scenarios=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --contenders) contenders=$2; shift 2 ;;
    --desched-interval) desched_interval=$2; shift 2 ;;
    --build-dir) build_dir=$(cd "$2" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --raw) raw=$2; keep=1; shift 2 ;;
    --scale-bed) scale_bed=$2; shift 2 ;;
    --sides-bed) sides_bed=$2; shift 2 ;;
    --no-scale) do_scale=0; shift ;;
    --no-sides) do_sides=0; shift ;;
    --no-desched) do_desched=0; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done

# A bed already up under this run's names is another run's: this one purges its beds when it
# ends, so two runs on one bed see each other's VMs and operators, and the first to end takes
# the bed down under the other. Refuse rather than share.
bed_up() {
  local p
  p=$(cat "$1/pids/apiserver.pid" 2>/dev/null) && [ -r "/proc/$p/cmdline" ] &&
    tr '\0' ' ' < "/proc/$p/cmdline" | grep -qF "$1"
}
in_use=()
if ((do_scale)) && bed_up "$scale_bed"; then in_use+=("$scale_bed"); fi
if ((do_sides)); then
  for who in ${contenders//,/ }; do if bed_up "$sides_bed-$who"; then in_use+=("$sides_bed-$who"); fi; done
fi
if ((${#in_use[@]})); then
  echo "run.sh: test bed already up (another run's?): ${in_use[*]}; give --sides-bed PREFIX or --scale-bed DIR" \
    "a path of your own, or take a stale one down (hack/cluster/down --dir DIR --purge)" >&2
  exit 2
fi

export PSI_SOURCE_DIR=$repo PSI_BINARY_DIR=$build_dir
for b in controller/psi-rebalancer hack/sim/psi-sim hack/sim/psi-pressure-exporter; do
  [ -x "$build_dir/$b" ] || { echo "run.sh: $build_dir/$b missing: build the project first (--build-dir)" >&2; exit 2; }
done
command -v jq >/dev/null && command -v python3 >/dev/null || { echo "run.sh: needs jq and python3" >&2; exit 2; }
if ((do_desched || do_sides)); then
  eval "$("$repo/hack/tools/build.sh" descheduler)"
  desched=$PSI_DESCHEDULER_BIN/descheduler
fi

# raw figures of this run, kept with --keep; --raw DIR adds to DIR, so that runs of parts
# (--no-sides, --no-scale, other --sizes) make one report
if [ -n "$raw" ]; then mkdir -p "$raw"; res=$(cd "$raw" && pwd); else res=$(mktemp -d /tmp/bench-b-run.XXXXXX); fi
log() { printf '%s bench: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
now() { date +%s.%N; }
beds=()
cleanup() {
  set +e
  for b in "${beds[@]}"; do "$repo/hack/cluster/down" --dir "$b" --purge >/dev/null 2>&1; done
  if ((keep)); then log "raw figures kept in $res"; else rm -rf "$res"; fi
}
trap cleanup EXIT

# ---- process figures ----
proc_cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }                      # clock ticks
# KiB: RSS, its anonymous and file-backed parts, and of the anonymous part the pages of mapped
# files made private by writing (the libraries' relocations and data, not heap or stacks)
proc_mem() {
  awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s ", $2}' "/proc/$1/status"
  awk '/^[0-9a-f]+-[0-9a-f]+ / {file = ($6 ~ /^\//)} file && /^Anonymous:/ {kib += $2} END {printf "%d", kib}' \
    "/proc/$1/smaps"
}
# sample_proc PID SECONDS FILE: RSS (and its parts, proc_mem) every 2 s, the peak RSS of the
# window (VmHWM, reset at its start) and the CPU ticks at start and end, as JSON; the
# mappings at the end (smaps) beside it.
sample_proc() {
  local pid=$1 secs=$2 f=$3 c0 c1 t0 t1 mem=()
  echo 5 > "/proc/$pid/clear_refs" 2>/dev/null || true   # VmHWM from now on (else since start)
  t0=$(now); c0=$(proc_cpu "$pid")
  local end=$((SECONDS + secs))
  while ((SECONDS < end)); do mem+=("$(proc_mem "$pid")"); sleep 2; done
  t1=$(now); c1=$(proc_cpu "$pid")
  cat "/proc/$pid/smaps" > "${f%.proc}.smaps" 2>/dev/null || true   # the mappings at the end, per file
  jq -n --argjson t0 "$t0" --argjson t1 "$t1" --argjson c0 "$c0" --argjson c1 "$c1" \
    --argjson hz "$(getconf CLK_TCK)" --argjson hwm "$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")" \
    '($ARGS.positional | map(split(" ") | map(select(. != "") | tonumber))) as $m
     | {t0: $t0, t1: $t1, cpu_s: (($c1 - $c0) / $hz), rss_kib: $m | map(.[0]),
        rss_anon_kib: $m | map(.[1]), rss_file_kib: $m | map(.[2]), lib_anon_kib: $m | map(.[3]),
        hwm_kib: $hwm}' \
    --args "${mem[@]}" > "$f"
}

# ---- the scale part ----
# node_manifests FROM TO: kwok worker nodes worker-FROM..worker-(TO-1), as hack/cluster/up
# makes them (InternalIP in 198.18.0.0/15, never dialed: see hack/cluster/lib.sh), with the beta os/arch labels the controller-manager would add (a few nodes a
# second: at 1,000 new nodes minutes of label updates, each a real change the operator
# reconciles, which would leak into the steady-state window).
node_manifests() {
  local i
  for ((i = $1; i < $2; i++)); do
    cat <<YAML
apiVersion: v1
kind: Node
metadata:
  name: worker-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: worker-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, beta.kubernetes.io/os: linux, beta.kubernetes.io/arch: amd64, node-role.kubernetes.io/worker: "", type: kwok}
spec: {}
status:
  addresses: [{type: InternalIP, address: "198.18.$((i / 250)).$((i % 250 + 2))"}, {type: Hostname, address: "worker-$i"}]
  capacity: &res {cpu: "16", memory: 64Gi, pods: "110", ephemeral-storage: 200Gi, devices.kubevirt.io/kvm: 1k}
  allocatable: *res
---
YAML
  done
}
pod_manifests() { # FROM TO PPN: PPN pods bound to each node worker-FROM..worker-(TO-1)
  local i k
  for ((i = $1; i < $2; i++)); do
    for ((k = 0; k < $3; k++)); do
      printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p-%d-%d, namespace: bench-pods, labels: {app: bench}}\nspec: {nodeName: worker-%d, containers: [{name: c, image: bench, resources: {requests: {cpu: 100m, memory: 128Mi}}}]}\n---\n' "$i" "$k" "$i"
    done
  done
}
# grow_bed N: the bed has N kwok nodes with PPN pods each, all Ready/Running.
grow_bed() {
  local n=$1 have from
  have=$(kubectl get nodes -l type=kwok -o name | wc -l)
  if ((have < n)); then
    log "adding nodes $have..$((n - 1))"
    for ((from = have; from < n; from += 500)); do
      node_manifests "$from" $((from + 500 < n ? from + 500 : n)) | kubectl apply -f - >/dev/null
    done
  fi
  # count Ready nodes in one list: `kubectl wait` on thousands of nodes takes one by one (minutes)
  local t=$((SECONDS + 900))
  until (($(kubectl get nodes -l type=kwok --no-headers | awk '$2 == "Ready"' | wc -l) >= n)); do
    ((SECONDS < t)) || { log "nodes not all Ready after 900 s"; break; }
    sleep 5
  done
  kubectl create namespace bench-pods --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  have=$(cat "$bed/bench-pods-nodes" 2>/dev/null || echo 0)
  if ((have < n && ppn > 0)); then
    log "creating $(((n - have) * ppn)) pods"
    for ((from = have; from < n; from += 100)); do
      pod_manifests "$from" $((from + 100 < n ? from + 100 : n)) "$ppn" | kubectl create -f - >/dev/null
    done
    echo "$n" > "$bed/bench-pods-nodes"
  fi
  t=$((SECONDS + 900))
  while (($(kubectl get pods -n bench-pods --field-selector=status.phase=Running -o name | wc -l) < n * ppn)); do
    ((SECONDS < t)) || { log "pods not all Running after 900 s"; break; }
    sleep 5
  done
}
prom_query() { curl -sfG "$PSI_PROMETHEUS_URL/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // "0"'; }
prom_queries_total() { curl -sf "$PSI_PROMETHEUS_URL/metrics" | awk '/^prometheus_http_requests_total\{.*handler="\/api\/v1\/query"/ {s += $2} END {print s + 0}'; }
op_metrics() { curl -sf "http://127.0.0.1:$metrics_port/metrics"; }
# snap NAME: the operator's /metrics and Prometheus's query count, at a time.
snap() { op_metrics > "$sdir/$1.metrics"; jq -n --argjson t "$(now)" --argjson q "$(prom_queries_total)" '{t: $t, prom_queries: $q}' > "$sdir/$1.json"; }
set_many() { # PERCENT NODE...: one curl for every node
  local p=$1 urls=() n; shift
  echo "$p $*" >> "$sdir/pressure.state"
  for n in "$@"; do urls+=("$exporter_url/pressure/$n/cpu"); done
  curl -sf -X PUT --data "$p" "${urls[@]}" >/dev/null
}
# The pressure exporter under a watchdog, a guard since it died under load once (a crash of
# the HTTP server, fixed; see bench/README.md): keep it on one port, start it again when it
# dies, put back the pressures set so far, and count the deaths ($sdir/exporter-deaths) so
# the report can say so.
bench_exporter_start() {
  local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  exporter_url=http://127.0.0.1:$port
  : > "$sdir/pressure.state"; rm -f "$sdir/exporter.stop"
  local args=() n
  for n in "$@"; do args+=(--node "$n"); done
  (
    while :; do
      "$exporter_bin" --listen "127.0.0.1:$port" "${args[@]}" --targets "$PSI_PROMETHEUS_TARGETS/bench-exporter.json" \
        >>"$sdir/exporter.log" 2>&1 &
      local pid=$!
      echo "$pid" > "$sdir/exporter.pid"
      local i; for i in $(seq 1 50); do curl -sf "$exporter_url/healthz" >/dev/null && break; sleep 0.1; done
      while read -r p nodes; do
        local urls=(); for n in $nodes; do urls+=("$exporter_url/pressure/$n/cpu"); done
        curl -sf -X PUT --data "$p" "${urls[@]}" >/dev/null || true
      done < "$sdir/pressure.state"
      wait "$pid"; local rc=$?
      [ -f "$sdir/exporter.stop" ] && break
      echo "$(now) rc=$rc" >> "$sdir/exporter-deaths"
      sleep 0.5
    done
  ) &
  exporter_watchdog=$!
  local i; for i in $(seq 1 100); do curl -sf "$exporter_url/healthz" >/dev/null && break; sleep 0.1; done
}
bench_exporter_stop() {
  touch "$sdir/exporter.stop"
  kill -TERM "$(cat "$sdir/exporter.pid")" 2>/dev/null || true
  wait "$exporter_watchdog" 2>/dev/null || true
  rm -f "$PSI_PROMETHEUS_TARGETS/bench-exporter.json"
}

# status_size NAME: the size of the PsiRebalance's status as stored (bytes of its JSON) and
# its entries in status.nodes, into $sdir/status-NAME.json.
status_size() {
  kubectl get psirebalance bench -o json |
    jq -c '{bytes: (.status | tojson | length), node_entries: (.status.nodes // [] | length)}' > "$sdir/status-$1.json" ||
    log "status size not read"
}
tainted_count() { kubectl get nodes -o json | jq '[.items[] | select(any(.spec.taints[]?; .key == "rebalance.psi.dev/pressure"))] | length'; }

# apply_psir SPEC: the PsiRebalance "bench" with the given spec (YAML lines indented by two).
apply_psir() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: bench}
spec:
$1
YAML
}

# apply_bench_psir EVICTION: the PsiRebalance "bench" on the bed's Prometheus (interval 5 s,
# window 15 s, sustain 10 s, taint 25 %, untaint 15 %, at most half the nodes tainted) with
# the given eviction block.
apply_bench_psir() {
  apply_psir "  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 10s, maxTaintedPercent: 50}
  eviction: $1"
}

# apply_defaults_psir: the PsiRebalance "bench" at the CRD's defaults (interval 30 s, window
# 1 m, sustain 1 m, taint 25 %, untaint 15 %, evictAbovePercent 40, cooldown 10m / 2h / 24h,
# the default move limits) but for what the bed needs: its Prometheus (no token) and eviction
# mode Automatic (the default is DryRun).
apply_defaults_psir() {
  apply_psir "  metrics: {prometheus: {url: \"$PSI_PROMETHEUS_URL\", bearerTokenFile: \"\"}}
  eviction: {mode: Automatic}"
}

scale_size() {
  local n=$1 i
  sdir=$res/scale-$n; mkdir -p "$sdir"
  grow_bed "$n"
  local nodes=(); for ((i = 0; i < n; i++)); do nodes+=("worker-$i"); done
  bench_exporter_start "${nodes[@]}"
  log "$n nodes: waiting for Prometheus to scrape every node"
  local t=$((SECONDS + 300))
  until [ "$(prom_query 'count(node_pressure_cpu_waiting_seconds_total)')" -ge "$n" ] 2>/dev/null; do
    ((SECONDS < t)) || { log "Prometheus has only $(prom_query 'count(node_pressure_cpu_waiting_seconds_total)') series"; break; }
    sleep 3
  done
  jq -n --argjson t "$(now)" '{t: $t}' > "$sdir/start.json"
  start_operator --log-level info
  local t_wait=$((SECONDS + 60)); until grep -q 'paths=/metrics' "$work/operator.log"; do ((SECONDS < t_wait)) || break; sleep 0.2; done
  metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log" | tail -1)
  apply_bench_psir "{mode: Disabled}"
  t=$((SECONDS + 600))
  until [ "$(kubectl get psirebalance bench -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; do
    ((SECONDS < t)) || { log "PsiRebalance not Ready after 600 s"; break; }
    sleep 2
  done
  log "$n nodes: Ready; settling 20 s, then steady state for ${window} s"
  sleep 20
  snap steady0; sample_proc "$operator_pid" "$window" "$sdir/steady.proc"; snap steady1
  status_size steady
  local storm=(); for ((i = 0; i < n; i += 5)); do storm+=("worker-$i"); done
  log "$n nodes: storm, ${#storm[@]} nodes to 60 %"
  # the step's time is taken before it is sent: at 5,000 nodes the one curl setting 1,000
  # pressures takes tens of seconds on a busy machine, and nodes stepped early cross (and are
  # tainted) before it returns
  snap storm0; local t_step; t_step=$(now); set_many 60 "${storm[@]}"
  jq -n --argjson t "$t_step" --argjson sent "$(now)" '{t: $t, sent: $sent, nodes: $ARGS.positional}' --args "${storm[@]}" > "$sdir/storm.json"
  sample_proc "$operator_pid" "$window" "$sdir/storm.proc"; snap storm1
  t=$((SECONDS + 120)); while (($(tainted_count) < ${#storm[@]})) && ((SECONDS < t)); do sleep 2; done
  jq -n --argjson t "$(now)" --argjson k "$(tainted_count)" '{t: $t, tainted: $k}' > "$sdir/storm-end.json"
  status_size storm
  # the crossing of each stormed node in Prometheus, as the operator's query sees it (window 15 s)
  curl -sfG "$PSI_PROMETHEUS_URL/api/v1/query_range" \
    --data-urlencode 'query=rate(node_pressure_cpu_waiting_seconds_total[15s]) * 100 > 25' \
    --data-urlencode "start=$(jq .t "$sdir/storm.json")" --data-urlencode "end=$(jq '.t + 90' "$sdir/storm.json")" \
    --data-urlencode step=0.5 > "$sdir/crossings.json" || log "crossing query failed"
  set_many 0 "${storm[@]}"
  if ((n == 1000 && do_desched)); then desched_footprint; fi
  kubectl delete psirebalance bench --timeout=120s >/dev/null || true
  stop_operator; bench_exporter_stop
  cp "$work/operator.log" "$sdir/operator.log"; : > "$work/operator.log"
  python3 "$here/analyze.py" scale --dir "$sdir" --nodes "$n" --audit "$bed/logs/audit.log" \
    --interval 5 --sustain 10 > "$sdir/result.json"
}

# requests_policy: the descheduler's policy for LowNodeUtilization on requests, on stdout.
requests_policy() {
  cat <<'YAML'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: bench
  pluginConfig:
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 10, memory: 10, pods: 10}
      targetThresholds: {cpu: 30, memory: 30, pods: 30}
  plugins:
    balance: {enabled: [LowNodeUtilization]}
YAML
}

# metric_policy QUERY ARGS: a descheduler policy of LowNodeUtilization on the bed's Prometheus
# QUERY (escaped here for YAML's double quotes); ARGS, lines indented by 6, go under args.
metric_policy() {
  local q=$1
  q=${q//\\/\\\\}; q=${q//\"/\\\"}
  cat <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
metricsProviders:
- source: Prometheus
  prometheus: {url: "$PSI_PROMETHEUS_URL"}
profiles:
- name: bench
  pluginConfig:
  - name: LowNodeUtilization
    args:
$2
      metricsUtilization:
        source: Prometheus
        prometheus: {query: "$q"}
  plugins:
    balance: {enabled: [LowNodeUtilization]}
YAML
}

# combined_policy: the descheduler's policy as OpenShift's KubeVirtRelieveAndMigrate profile
# makes it by default (cluster-kube-descheduler-operator): LowNodeUtilization on the
# PrometheusCPUMemoryCombinedProfile score, deviation thresholds AsymmetricLow (0 % below and
# 10 % above the average), at most 2 evictions per node and cycle (KubeVirt's outbound
# migrations per node). The score is the operator's recording rule
# descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m written as one
# query: 3 times the Euclidean norm of each node's positive deviation from the average of
# its CPU and memory utilisation and CPU and memory PSI (pressure counted only above 70 %
# utilisation), capped at 1. On the bed MemTotal stands in for kube-state-metrics'
# allocatable memory (equal here) and every node is a worker (no kube_node_role).
combined_policy() {
  local uc="(1 - avg by (instance) (rate(node_cpu_seconds_total{mode=\"idle\"}[1m])))"
  local um="(1 - avg by (instance) (avg_over_time(node_memory_MemAvailable_bytes[1m])) / avg by (instance) (node_memory_MemTotal_bytes))"
  local pc="(avg by (instance) (rate(node_pressure_cpu_waiting_seconds_total[1m])) and $uc > 0.7 or avg by (instance) (rate(node_pressure_cpu_waiting_seconds_total[1m])) * 0)"
  local pm="(avg by (instance) (rate(node_pressure_memory_waiting_seconds_total[1m])) and $um > 0.7 or avg by (instance) (rate(node_pressure_memory_waiting_seconds_total[1m])) * 0)"
  local x dev=()
  for x in "$uc" "$um" "$pc" "$pm"; do dev+=("clamp_min($x - scalar(avg($x)), 0) ^ 2"); done
  metric_policy "clamp_max(3 * sqrt(${dev[0]} + ${dev[1]} + ${dev[2]} + ${dev[3]}), 1)" \
    "      useDeviationThresholds: true
      thresholds: {MetricResource: 0}
      targetThresholds: {MetricResource: 10}
      evictionLimits: {node: 2}"
}

# desched_footprint: the descheduler (LowNodeUtilization on requests) against the same bed for
# the same window, every 5 s like our cycle: its RSS and CPU beside ours.
desched_footprint() {
  requests_policy > "$sdir/desched-policy.yaml"
  log "1000 nodes: the descheduler for ${window} s"
  "$desched" --policy-config-file "$sdir/desched-policy.yaml" --kubeconfig "$KUBECONFIG" \
    --descheduling-interval 5s --secure-port 0 --disable-metrics --v 1 > "$sdir/descheduler.log" 2>&1 &
  local dpid=$!
  sleep 15
  if kill -0 "$dpid" 2>/dev/null; then sample_proc "$dpid" "$window" "$sdir/desched.proc"; fi
  kill -TERM "$dpid" 2>/dev/null || true; wait "$dpid" 2>/dev/null || true
}

scale_part() {
  bed=$scale_bed; beds+=("$bed")
  log "scale: bringing up $bed (audit on)"
  PSI_TESTBED_AUDIT=1 "$repo/hack/cluster/up" --dir "$bed" --nodes 3 >/dev/null
  (
    export PSI_TESTBED=$bed
    eval "$("$repo/hack/cluster/env" --dir "$bed")"
    # shellcheck source=../tests/e2e/lib/operator.sh
    source "$repo/tests/e2e/lib/operator.sh"
    failures=0
    trap 'stop_operator; [ -z "${sdir:-}" ] || bench_exporter_stop; rm -rf "$work"' EXIT
    for n in ${sizes//,/ }; do
      if ! scale_size "$n"; then log "size $n failed"; stop_operator; bench_exporter_stop; fi
    done
  )
  "$repo/hack/cluster/down" --dir "$bed" --purge >/dev/null 2>&1 || true
}

# ---- the side-by-side part ----
minutes_of() { tr ',' '\n' <<<"$minutes" | awk -F= -v s="$1" '$1 == s {print $2}'; }

# side CONTENDER SCENARIO: one contender on its own bed for the scenario's minutes.
side() {
  local who=$1 scen=$2 mins d
  mins=$(minutes_of "$scen"); mins=${mins:-5}
  d=$res/side-$scen-$who; mkdir -p "$d"
  export PSI_TESTBED=$sides_bed-$who
  eval "$("$repo/hack/cluster/env" --dir "$PSI_TESTBED")"
  source "$repo/tests/e2e/lib/operator.sh"
  failures=0
  local i
  for i in $(seq 1 360); do
    kubectl get namespaces -o json | jq -e 'any(.items[]; .status.phase == "Terminating")' >/dev/null || break
    sleep 1
  done
  local file=$repo/hack/sim/scenarios/$scen.yaml want have
  want=$(python3 -c 'import sys, yaml; print((yaml.safe_load(open(sys.argv[1])).get("nodes") or {}).get("count", 0))' "$file")
  have=$(kubectl get nodes -l type=kwok -o name | wc -l)
  if ((want > have)); then
    node_manifests "$have" "$want" | kubectl apply -f - >/dev/null
    kubectl wait --for=condition=Ready node -l type=kwok --timeout=300s >/dev/null || log "$who: nodes not Ready"
  fi
  "$build_dir/hack/sim/psi-sim" --scenario "$file" --record "$d/record.jsonl" \
    --ready-file "$d/sim.ready" --cleanup --log-level info > "$d/sim.log" 2>&1 &
  local sim_pid=$!
  # 90 VMs on four beds at once take minutes to start on 2 cores
  for i in $(seq 1 1200); do [ -s "$d/sim.ready" ] && break; kill -0 $sim_pid || break; sleep 0.5; done
  [ -s "$d/sim.ready" ] || { echo "simulator not ready" > "$d/error"; kill $sim_pid; return 1; }
  local t0; t0=$(now)
  local cpid=
  case $who in
    psi)
      start_operator --log-level info
      apply_bench_psir "{mode: Automatic, evictAbovePercent: 30, resources: [cpu, memory], cooldown: {initial: 1m, max: 10m, history: 1h}}"
      ;;
    psi-defaults)
      start_operator --log-level info
      apply_defaults_psir
      ;;
    req|prom|cm)
      if [ "$who" = req ]; then
        requests_policy > "$d/policy.yaml"
      elif [ "$who" = cm ]; then
        combined_policy > "$d/policy.yaml"
      else
        metric_policy "rate(node_pressure_cpu_waiting_seconds_total[1m])" \
          "      thresholds: {MetricResource: 15}
      targetThresholds: {MetricResource: 25}" > "$d/policy.yaml"
      fi
      # KubeVirtRelieveAndMigrate turns on the descheduler's EvictionsInBackground (an eviction
      # KubeVirt answers with an evacuation counts as under way, not failed)
      if [ "$who" = cm ]; then desched_start "$d" --feature-gates=EvictionsInBackground=true; else desched_start "$d"; fi
      cpid=$!
      ;;
  esac
  sleep $((mins * 60))
  local t1; t1=$(now)
  if [ -n "$cpid" ]; then kill -TERM "$cpid" 2>/dev/null || true; wait "$cpid" 2>/dev/null || true; fi
  if [ "$who" = psi ] || [ "$who" = psi-defaults ]; then
    metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log" | tail -1)
    op_metrics > "$d/operator.metrics" || true
    kubectl get psirebalance bench -o json > "$d/psirebalance.json" || true
    kubectl delete psirebalance bench --timeout=60s >/dev/null 2>&1 || true
    stop_operator; cp "$work/operator.log" "$d/operator.log"
  fi
  curl -sfG "$PSI_PROMETHEUS_URL/api/v1/query_range" \
    --data-urlencode 'query=rate(node_pressure_cpu_waiting_seconds_total[1m]) * 100' \
    --data-urlencode "start=$t0" --data-urlencode "end=$t1" --data-urlencode step=5 > "$d/pressure.json" || true
  curl -sfG "$PSI_PROMETHEUS_URL/api/v1/query_range" \
    --data-urlencode 'query=rate(node_pressure_memory_waiting_seconds_total[1m]) * 100' \
    --data-urlencode "start=$t0" --data-urlencode "end=$t1" --data-urlencode step=5 > "$d/pressure-memory.json" || true
  kill -TERM $sim_pid 2>/dev/null || true; wait $sim_pid 2>/dev/null || true
  local optimum; optimum=$(sed -n 's/^# optimum: \([0-9]*\) migrations.*/\1/p' "$file" | head -1)
  jq -n --argjson t0 "$t0" --argjson t1 "$t1" --arg who "$who" --arg scen "$scen" --arg optimum "$optimum" \
    '{t0: $t0, t1: $t1, contender: $who, scenario: $scen, optimum: ($optimum | tonumber? // null)}' > "$d/run.json"
  rm -rf "$work"
}

# desched_start DIR [ARGS...]: the descheduler in the background ($! is its pid), with ARGS. For the Prometheus
# source, out of a pod, it wants the pod's service-account files: give it a private mount
# namespace with a tmpfs on /var/run holding a token of its own ServiceAccount and the bed's
# CA, and the in-cluster environment pointing at the bed (nothing changes outside).
desched_start() {
  local d=$1; shift
  kubectl create serviceaccount descheduler-bench -n kube-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl create clusterrolebinding descheduler-bench --clusterrole cluster-admin \
    --serviceaccount kube-system:descheduler-bench --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  mkdir -p "$d/sa"
  kubectl create token descheduler-bench -n kube-system --duration=2h > "$d/sa/token"
  cp "$PSI_TESTBED/pki/ca.crt" "$d/sa/ca.crt"; echo kube-system > "$d/sa/namespace"
  local port=${PSI_APISERVER_URL##*:}
  KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$port \
    unshare -m --propagation private sh -c '
      mount -t tmpfs tmpfs /var/run && mkdir -p /var/run/secrets/kubernetes.io/serviceaccount &&
      cp "$1"/sa/* /var/run/secrets/kubernetes.io/serviceaccount/ && shift && exec "$@"' sh "$d" \
    "$desched" --policy-config-file "$d/policy.yaml" --descheduling-interval "$desched_interval" \
    --secure-port 0 --disable-metrics --v 2 "$@" > "$d/descheduler.log" 2>&1 &
}

sides_part() {
  local who
  for who in ${contenders//,/ }; do
    beds+=("$sides_bed-$who")
    "$repo/hack/cluster/up" --dir "$sides_bed-$who" >/dev/null &
  done
  wait
  local scen
  for scen in ${scenarios//,/ }; do
    log "side by side: $scen, contenders $contenders in parallel for $(minutes_of "$scen") min"
    for who in ${contenders//,/ }; do (side "$who" "$scen") & done
    wait
  done
  for who in ${contenders//,/ }; do "$repo/hack/cluster/down" --dir "$sides_bed-$who" --purge >/dev/null 2>&1 || true; done
}

((do_scale)) && scale_part
((do_sides)) && sides_part
mkdir -p "$(dirname "$out")"
python3 "$here/analyze.py" report --dir "$res" --out "$out" --meta "sizes=$sizes" "pods_per_node=$ppn" \
  "window_s=$window" "desched_interval=$desched_interval" "minutes=$minutes" \
  "load_avg=$(cut -d' ' -f1-3 /proc/loadavg)" "cpus=$(nproc)" "descheduler=$(basename "${PSI_DESCHEDULER_BIN:-}")"
log "figures written to $out"
