# shellcheck shell=bash
# Rebalancing e2e helpers: the simulator (hack/sim/psi-sim) playing KubeVirt and the nodes'
# load on the test bed, the operator under its own RBAC (lib/operator.sh), a PsiRebalance,
# and checks against the simulator's record (JSON lines of evictions and migrations).
# Source after testlib.sh and operator.sh.

sim_bin=${PSI_BINARY_DIR:?}/hack/sim/psi-sim
scenarios=${PSI_SOURCE_DIR:?}/hack/sim/scenarios
record=$work/record.jsonl
# the requested-by annotation of the operator's Evictions (MOVER_REQUESTED_BY, controller/reconcile/mover.h)
requested_by=sigs.k8s.io/descheduler
sim_ns=

# start_sim SCENARIO_FILE [ARGS...]: the simulator in the background; returns once every VM
# runs (its ready file), with $sim_ns set.
start_sim() {
  local scenario=$1; shift
  # the namespaces of earlier runs may still be terminating: the simulator needs its own
  # gone, and their pods would still count on the nodes for the scheduler
  local i
  for i in $(seq 1 360); do
    kubectl get namespaces -o json | jq -e 'any(.items[]; .status.phase == "Terminating")' >/dev/null || break
    sleep 0.5
  done
  rm -f "$work/sim.ready"
  "$sim_bin" --scenario "$scenario" --record "$record" --ready-file "$work/sim.ready" --cleanup \
    --log-level info "$@" >>"$work/sim.log" 2>&1 &
  sim_pid=$!
  local i
  for i in $(seq 1 360); do
    [ -s "$work/sim.ready" ] && break
    kill -0 "$sim_pid" 2>/dev/null || { echo "the simulator exited:"; tail -20 "$work/sim.log"; return 1; }
    sleep 0.5
  done
  [ -s "$work/sim.ready" ] || { echo "the simulator did not get ready:"; tail -20 "$work/sim.log"; return 1; }
  sim_ns=$(jq -r .namespace "$work/sim.ready")
}

stop_sim() {
  [ -n "${sim_pid:-}" ] || return 0
  kill -TERM "$sim_pid" 2>/dev/null || true
  wait "$sim_pid" 2>/dev/null || true
  sim_pid=
}

# apply_psir NAME MODE [EVICTION_YAML_LINES [RESOURCE]]: a PsiRebalance for the simulated
# workers with short windows: interval 5s, window 15s (settle 25 s), sustain 10s, taint 25 %,
# untaint 15 %, evict above 30 % (the seed scenario's numbers), cooldown $cooldown (default
# 1m doubling up to 10m), method Evict unless the extra lines name one, on pressure RESOURCE
# (default cpu). Extra lines (indented by 4) go under spec.eviction.
cooldown="{initial: 1m, max: 10m, history: 1h}"
apply_psir() {
  local name=$1 mode=$2 extra=${3:-} resource=${4:-cpu} method="    method: Evict"
  case "$extra" in *"method:"*) method= ;; esac
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics:
    source: Prometheus
    prometheus: {url: "$PSI_PROMETHEUS_URL", bearerTokenFile: ""}
    interval: 5s
    window: 15s
  pressure: {resource: $resource, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 10s}
  eviction:
    mode: $mode
    evictAbovePercent: 30
    cooldown: $cooldown
$method
$extra
YAML
}

# The evictions the operator asked for (dry runs too when $1 is "all").
our_evictions() {
  if [ "${1:-}" = all ]; then
    jq -c --arg by "$requested_by" 'select(.type=="eviction" and .requestedBy==$by)' "$record"
  else
    jq -c --arg by "$requested_by" 'select(.type=="eviction" and .requestedBy==$by and .dryRun=="false")' "$record"
  fi
}

# Migrations that ended in phase $1 (Succeeded, Failed), one line per migration.
migrations_ended() { jq -r --arg p "$1" 'select(.type=="migration" and .phase==$p) | .name' "$record" | sort -u; }

# "name node uid" of every VMI of the scenario, sorted.
vmis() {
  kubectl get vmi -n "$sim_ns" -o json |
    jq -r '.items[]? | "\(.metadata.name) \(.status.nodeName) \(.metadata.uid)"' | sort
}

# Busy VMs (name prefix $1) per node: "node count" lines.
per_node() { vmis | awk -v p="$1" 'index($1, p) == 1 {n[$2]++} END {for (k in n) print k, n[k]}' | sort; }

# no_taint: no node carries the pressure taint.
no_taint() {
  ! kubectl get nodes -o json | jq -e '[.items[].spec.taints[]? | select(.key=="rebalance.psi.dev/pressure")] | length > 0' >/dev/null
}

# rebalancing NAME: "reason" of the Rebalancing condition.
rebalancing() { psir_field "$1" '.status.conditions[]? | select(.type=="Rebalancing") | .reason'; }

# check_limits MAX_TOTAL MAX_PER_NODE MAX_IN_FLIGHT: against the record, the operator's real
# evictions of one cycle (asked within 2 s of each other; cycles are 5 s apart) never exceed
# maxTotal, nor maxPerNode off one node; and the live migrations running at once (from the
# first record of a migration to its end), whoever started them, never exceed maxInFlight.
check_limits() {
  local total=$1 per_node=$2 in_flight=$3
  check "at most $total evictions per cycle (record)" bash -c "$(declare -f our_evictions); record=$record requested_by=$requested_by
    our_evictions | jq -s --argjson max $total '
      [sort_by(.t) | reduce .[] as \$e ([]; if length > 0 and (\$e.t - .[-1][-1].t) < 2 then .[-1] += [\$e] else . + [[\$e]] end)
       | .[] | length] | all(. <= \$max)' | grep -q true"
  check "at most $per_node evictions off one node per cycle (record)" bash -c "$(declare -f our_evictions); record=$record requested_by=$requested_by
    our_evictions | jq -s --argjson max $per_node '
      [sort_by(.t) | reduce .[] as \$e ([]; if length > 0 and (\$e.t - .[-1][-1].t) < 2 then .[-1] += [\$e] else . + [[\$e]] end)
       | .[] | group_by(.node) | .[] | length] | all(. <= \$max)' | grep -q true"
  check "at most $in_flight live migrations at once (record)" bash -c "
    jq -s --argjson max $in_flight '
      [.[] | select(.type==\"migration\")] | group_by(.name)
      | map({start: (map(.t) | min), end: (map(select(.phase==\"Succeeded\" or .phase==\"Failed\") | .t) | max // 1e18)})
      | . as \$m | [\$m[] | .start as \$s | [\$m[] | select(.start <= \$s and .end > \$s)] | length] | all(. <= \$max)
    ' $record | grep -q true"
}

# rebalance_cleanup NAME [RC]: delete the PsiRebalance, stop the simulator (it deletes its
# namespace and lifts what it changed) and the operator; exit with RC (default: the status
# the script ended with), or 1 when a sanitizer build of the operator reported a problem.
rebalance_cleanup() {
  local rc=${2:-$?}
  kubectl delete psirebalance "$1" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  stop_sim
  stop_operator
  # a sanitizer build (PSI_SANITIZE) reports memory errors and leaks in the log, at exit
  if [ -f "$work/operator.log" ] && grep -q 'Sanitizer' "$work/operator.log"; then
    echo "FAIL - the operator's sanitizer found a problem:"; grep -A30 'Sanitizer' "$work/operator.log" | head -60
    rc=1
  fi
  if ((failures)) && [ -f "$work/sim.log" ]; then
    echo "---- simulator log (last 30 lines) ----"; tail -30 "$work/sim.log"
    echo "---- record ----"; grep -E '"(eviction|migration|evacuation)"' "$record" | tail -40 || true
  fi
  operator_cleanup
  exit "$rc"
}

# ---- targeted live migration (eviction.method Migrate) ----

# The migrations the operator created itself (named psi-rebalancer-...), one record line per
# phase; with $1 a phase, the names of those that reached it.
our_migrations() {
  if [ -n "${1:-}" ]; then
    jq -r --arg p "$1" 'select(.type=="migration" and (.name|startswith("psi-rebalancer-")) and .phase==$p) | .name' "$record" | sort -u
  else
    jq -c 'select(.type=="migration" and (.name|startswith("psi-rebalancer-")))' "$record"
  fi
}

# Evacuation migrations (KubeVirt's, after an eviction) in the record.
evacuations() { jq -r 'select(.type=="migration" and .evacuation=="true") | .name' "$record" | sort -u; }

# our_vmims NAME: the VirtualMachineInstanceMigrations of PsiRebalance NAME in the cluster (JSON list).
our_vmims() {
  kubectl get virtualmachineinstancemigrations -n "$sim_ns" \
    -l "app.kubernetes.io/managed-by=psi-rebalancer,rebalance.psi.dev/psirebalance=$1" -o json | jq -c '.items'
}

# moves_summary NAME: one line per move, "name source destination target phase".
moves_summary() {
  psir_field "$1" '.status.moves[]? | "\(.name) \(.sourceNode) \(.destinationNode) \(.targetNode) \(.phase)"'
}
