#!/usr/bin/env bash
# psi-rebalancer in one command: from a fresh machine, install what is missing, build,
# start the test bed (a real kube-apiserver, scheduler, controller-manager, kwok nodes and
# Prometheus on 127.0.0.1) and the simulator with the seed scenario (three workers; six
# 2-vCPU VMs, three of them burning every vCPU, all started on worker-0), install the CRD
# and a PsiRebalance in Automatic mode, and watch the operator move the busy VMs apart by
# live migration until the cluster is balanced, drawn live by `kubectl psi top -w` (the
# plugin users install with the operator). Then a summary: migrations, time to balance,
# pressure before and after, and `kubectl get psirebalance`.
#
#   hack/demo.sh [--dir DIR] [--build-dir DIR] [--timeout SECONDS] [--keep]
#
#   --dir DIR         where the test bed lives (default: build/demo-bed)
#   --build-dir DIR   the CMake build directory (default: build)
#   --timeout S       give up waiting for balance after S seconds (default 600)
#   --keep            leave the test bed, the simulator and the operator running at the end
#
# Everything it starts is stopped when it ends or is interrupted (Ctrl-C), unless --keep.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bed=$repo/build/demo-bed
build=$repo/build
timeout=600
keep=0
while (($#)); do
  case $1 in
    --dir) bed=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $timeout =~ ^[0-9]+$ ]] || { echo "demo: --timeout needs a number of seconds" >&2; exit 2; }

ns=psi-sim-seed
cr=demo
taint_key=rebalance.psi.dev/pressure
taint_above=25 untaint_below=15 evict_above=30
work=$bed/demo
sim_pid= operator_pid= top_pid= bed_started=0 tty=0
[ -t 1 ] && tty=1

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

cleanup() {
  local rc=$?
  ((tty)) && printf '\033[?25h' # cursor back
  if ((keep)); then
    echo
    echo "Left running (--keep): the test bed in $bed, the simulator (pid ${sim_pid:-none}), the operator (pid ${operator_pid:-none})."
    echo "Use it with: eval \"\$(hack/cluster/env --dir $bed)\"; stop it with: hack/cluster/down --dir $bed"
    exit $rc
  fi
  if [ -n "$top_pid" ]; then kill -TERM "$top_pid" 2>/dev/null || true; wait "$top_pid" 2>/dev/null || true; fi
  if [ -n "$operator_pid" ]; then kill -TERM "$operator_pid" 2>/dev/null || true; wait "$operator_pid" 2>/dev/null || true; fi
  if [ -n "$sim_pid" ]; then kill -TERM "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
  if ((bed_started)); then "$repo/hack/cluster/down" --dir "$bed" --purge >/dev/null 2>&1 || true; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 1. what is missing, and the build ----
say "Installing what is missing (hack/deps.sh)"
"$repo/hack/deps.sh"
say "Building the operator, kubectl-psi and the simulator in $build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  "$repo/hack/configure.sh" "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
else
  "$repo/hack/configure.sh" "$build"
fi
cmake --build "$build" -j2 --target psi-rebalancer psi-sim kubectl-psi >/dev/null
operator_bin=$build/controller/psi-rebalancer
sim_bin=$build/hack/sim/psi-sim
[ -x "$operator_bin" ] && [ -x "$sim_bin" ] && [ -x "$build/cli/kubectl-psi" ] ||
  die "the build did not produce $operator_bin, $sim_bin and $build/cli/kubectl-psi"
export PATH=$build/cli:$PATH # `kubectl psi` finds it there

# ---- 2. the test bed ----
say "Starting the test bed in $bed (first time: builds the pinned Kubernetes components, a few minutes)"
"$repo/hack/cluster/up" --dir "$bed" --nodes 3
bed_started=1
eval "$("$repo/hack/cluster/env" --dir "$bed")"
mkdir -p "$work"

# ---- 3. the simulator with the seed scenario ----
say "Starting the simulator: seed scenario (six VMs on worker-0, three of them busy)"
rm -f "$work/ready.json" "$work/record.jsonl"
kubectl delete namespace "$ns" --ignore-not-found --wait=true --timeout=120s >/dev/null 2>&1 || true
"$sim_bin" --scenario "$repo/hack/sim/scenarios/seed.yaml" --namespace "$ns" --record "$work/record.jsonl" \
  --ready-file "$work/ready.json" --cleanup >"$work/sim.log" 2>&1 &
sim_pid=$!
deadline=$((SECONDS + 120))
until [ -s "$work/ready.json" ]; do
  kill -0 "$sim_pid" 2>/dev/null || { tail -20 "$work/sim.log"; die "the simulator stopped (log: $work/sim.log)"; }
  ((SECONDS < deadline)) || die "the VMs did not all start within 2 minutes (log: $work/sim.log)"
  sleep 0.5
done

# ---- 4. the CRD ----
say "Installing the PsiRebalance CRD"
kubectl apply --server-side -f "$repo/crds/" >/dev/null
kubectl wait --for=condition=Established crd/psirebalances.rebalance.psi.dev --timeout=60s >/dev/null

# ---- the live view ----
pressures() { # node<TAB>percent lines, from the bed's Prometheus
  curl -sS --max-time 5 "$PSI_PROMETHEUS_URL/api/v1/query" \
    --data-urlencode 'query=100 * rate(node_pressure_cpu_waiting_seconds_total{job="psi-sim"}[30s])' 2>/dev/null |
    jq -r '.data.result[]? | "\(.metric.instance)\t\(.value[1] | tonumber | . * 10 | round / 10)"' 2>/dev/null || true
}
declare -A pressure
read_pressures() {
  pressure=()
  local n v
  while IFS=$'\t' read -r n v; do [ -n "$n" ] && pressure[$n]=$v; done < <(pressures)
}
max_pressure() {
  local m=0 n
  for n in "${!pressure[@]}"; do m=$(jq -n --argjson a "$m" --argjson b "${pressure[$n]}" '[$a, $b] | max'); done
  echo "$m"
}
# observe: the nodes' taints and the migrations, for the end condition and the summary
observe() {
  local nodes vms
  nodes=$(kubectl get nodes -l node-role.kubernetes.io/worker -o json)
  vms=$(kubectl get vmim -n "$ns" -o json)
  jq -n --argjson nodes "$nodes" --argjson migs "$vms" --arg key "$taint_key" '
    {nodes: [$nodes.items[] | {name: .metadata.name,
       taint: ([.spec.taints[]? | select(.key == $key) | .effect] | first // "")}],
     succeeded: [$migs.items[] | select(.status.phase == "Succeeded")] | length,
     failed: [$migs.items[] | select(.status.phase == "Failed")] | length,
     inflight: [$migs.items[] | select(.status.phase != "Succeeded" and .status.phase != "Failed")] | length}' \
    >"$work/state.json"
}

# ---- 5. the imbalance, as Prometheus sees it ----
say "Waiting for Prometheus to see worker-0 suffer"
deadline=$((SECONDS + 180))
prev=0
while :; do
  read_pressures
  p0=${pressure[worker-0]:-0}
  echo "  worker-0: ${p0} % CPU pressure"
  # above the eviction threshold and settled (the rate window is full)
  jq -en --argjson p "$p0" --argjson q "$prev" "\$p > $evict_above and (\$p - \$q | fabs) < 1" >/dev/null && break
  prev=$p0
  ((SECONDS < deadline)) || die "worker-0's pressure did not show in Prometheus ($PSI_PROMETHEUS_URL)"
  sleep 3
done
declare -A before
for n in "${!pressure[@]}"; do before[$n]=${pressure[$n]}; done

# ---- 6. the operator and a PsiRebalance in Automatic mode ----
"$operator_bin" --kubeconfig "$KUBECONFIG" --leader-elect=false --metrics-bind-address 127.0.0.1:0 \
  --health-probe-bind-address 127.0.0.1:0 >"$work/operator.log" 2>&1 &
operator_pid=$!
# a PsiRebalance left by an earlier run would carry its counters: start afresh (the operator
# removes its finalizer)
kubectl delete psirebalance "$cr" --ignore-not-found --timeout=60s >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata:
  name: $cr
spec:
  nodeSelector:
    matchLabels: {node-role.kubernetes.io/worker: ""}
  machineConfig: {enabled: false}
  metrics:
    source: Prometheus
    prometheus: {url: "$PSI_PROMETHEUS_URL", bearerTokenFile: ""}
    interval: 5s
    window: 30s
  pressure:
    resource: cpu
    taintAbovePercent: $taint_above
    untaintBelowPercent: $untaint_below
    sustain: 15s
    maxTaintedPercent: 50
  taint: {key: $taint_key, effect: PreferNoSchedule}
  eviction:
    mode: Automatic
    evictAbovePercent: $evict_above
    podSelector:
      matchLabels: {kubevirt.io: virt-launcher}
    maxPerNode: 1
    maxTotal: 1
    maxInFlightMigrations: 1
YAML
t0=$SECONDS
((tty)) && printf '\033[?25l'
kubectl psi top -w "$cr" &
top_pid=$!

# ---- 7. watch until balanced: every node below the untaint threshold, no taint, nothing in flight ----
calm=0 balanced=0
while ((SECONDS - t0 < timeout)); do
  read_pressures
  observe
  kill -0 "$operator_pid" 2>/dev/null || { tail -20 "$work/operator.log"; die "the operator stopped (log: $work/operator.log)"; }
  m=$(max_pressure)
  if jq -en --argjson m "$m" "\$m < $untaint_below" >/dev/null &&
     jq -e '([.nodes[] | select(.taint != "")] | length == 0) and .inflight == 0 and .succeeded > 0' "$work/state.json" >/dev/null; then
    calm=$((calm + 1))
  else
    calm=0
  fi
  if ((calm >= 3)); then balanced=1; break; fi
  sleep 2
done
elapsed=$((SECONDS - t0))
kill -TERM "$top_pid" 2>/dev/null || true
wait "$top_pid" 2>/dev/null || true
top_pid=
((tty)) && printf '\033[?25h'

# ---- 8. summary ----
echo
if ((balanced)); then
  say "Balanced in about $elapsed s"
else
  say "Not balanced after $elapsed s (see $work/operator.log and $work/sim.log)"
fi
printf '\n%-10s %10s %10s\n' NODE BEFORE AFTER
for n in $(printf '%s\n' "${!pressure[@]}" "${!before[@]}" | sort -u); do
  printf '%-10s %8s %% %8s %%\n' "$n" "${before[$n]:--}" "${pressure[$n]:--}"
done
echo
printf 'migrations: %s succeeded, %s failed; eviction requests: %s; VMs restarted: %s\n' \
  "$(jq .succeeded "$work/state.json")" "$(jq .failed "$work/state.json")" \
  "$(jq -s '[.[] | select(.type == "eviction" and .dryRun != "true")] | length' "$work/record.jsonl")" \
  "$(jq -s '[.[] | select(.type == "vm-restart")] | length' "$work/record.jsonl")"
jq -r -s '.[] | select(.type == "migration" and .phase == "Succeeded") | "  moved \(.vmi) from \(.source) to \(.target)"' "$work/record.jsonl"
echo
kubectl get psirebalance -o wide
((balanced))
