#!/usr/bin/env bash
# A hostile Prometheus (hostile_prom on 127.0.0.1): after a good reply has tainted worker-0,
# replies that are huge, endless, slow, garbage, cut short, too deeply nested, or a
# million tiny series each set MetricsAvailable=False with a reason naming what was wrong,
# change no taint, and leave the operator running with its peak RSS (VmHWM) bounded: the
# series and bytes it refuses are never all held at once (before the caps and the reader
# without a JSON tree, a 63 MiB reply of tiny series peaked at 1.38 GB).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

hostile_bin=${1:?usage: hostile_prometheus.sh HOSTILE_PROM_BINARY}
name=hostile-$$
# The bound checked: half the Deployment's memory limit (config/manager: 512Mi).
hwm_limit_kib=$((256 * 1024))
trap 'kubectl delete psirebalance "$name" "$name-other" --ignore-not-found --wait=false >/dev/null 2>&1; [ -n "${hostile_pid:-}" ] && kill "$hostile_pid" 2>/dev/null; operator_cleanup' EXIT

mapfile -t nodes < <(kubectl get nodes -l node-role.kubernetes.io/worker -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
node_args=()
for n in "${nodes[@]}"; do node_args+=(--node "$n"); done
"$hostile_bin" --port-file "$work/hostile.port" "${node_args[@]}" >>"$work/hostile.log" 2>&1 &
hostile_pid=$!
for _ in $(seq 1 300); do [ -s "$work/hostile.port" ] && break; sleep 0.1; done
base=http://127.0.0.1:$(cat "$work/hostile.port")

# psir MODE: the PsiRebalance reading the hostile Prometheus's MODE answers every 5 s.
psir() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics: {source: Prometheus, prometheus: {url: "$base/$1", bearerTokenFile: ""}, interval: 5s, window: 15s}
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 5s}
YAML
}
taints() { kubectl get nodes -o json | jq -c '[.items[] | {name: .metadata.name, taints: [.spec.taints[]? | select(.key == "rebalance.psi.dev/pressure")]}]'; }
metrics_message() { psir_field "$name" '.status.conditions[]? | select(.type == "MetricsAvailable") | "\(.status) \(.reason) \(.message)"'; }

# A read of Prometheus runs on the event loop, which goes on meanwhile: while a slow reply is
# being read (asked, not yet served), another PsiRebalance (of no node, reading the kubelets)
# gets its status before that read ends. A read that blocked the loop would hold it back until
# the client gave up on the slow reply (15 s), every time; on a loaded machine a loop that is
# not blocked may still be slower than what is left of one read, so up to three reads are
# tried, and one status written during its read passes.
count() { grep -c "^$1 slow" "$work/hostile.log" || true; }
reconciled_while_slow() {
  local other=$name-other asked served_before served_after try
  for try in 1 2 3; do
    asked=$(count asked)
    eventually 60 "a new slow read is asked for" bash -c "[ \$(grep -c '^asked slow' '$work/hostile.log') -gt $asked ]"
    served_before=$(count served)
    [ "$(count asked)" -gt "$served_before" ] || continue
    kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $other}
spec:
  nodeSelector: {matchLabels: {psi-test: nothing}}
  metrics: {source: Kubelet}
YAML
    eventually 30 "the other PsiRebalance gets its status (read $try)" bash -c \
      "$(declare -f psir_field condition); [ -n \"\$(condition $other Ready)\" ]"
    served_after=$(count served)
    kubectl delete psirebalance "$other" --wait=true --timeout=30s >/dev/null
    if [ "$served_after" = "$served_before" ]; then
      pass "the other PsiRebalance got its status while slow read $try was in flight"
      return
    fi
    echo "slow read $try ended first ($served_before replies served before, $served_after after): again"
  done
  fail "no other PsiRebalance got its status while a slow read was in flight, in 3 reads"
}

# Under AddressSanitizer freed memory waits in a quarantine (256 MB by default) that VmHWM
# would count: this test's operator runs without it, so that VmHWM is what it holds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
start_operator
psir good
eventually 90 "a good reply taints ${nodes[0]} (80 % CPU pressure)" node_tainted "${nodes[0]}" "$name"
eventually 30 "MetricsAvailable=True on good replies" bash -c "$(declare -f psir_field condition); [ \"\$(condition $name MetricsAvailable)\" = True ]"
before=$(taints)

# mode, then what the MetricsAvailable=False message must name
modes=(
  "huge|larger than 33554432 bytes"
  "many|more than 250000 series"
  "garbage|not JSON"
  "truncated|remaining"
  "deep|nested deeper than 64 levels"
  "slow|did not answer in time"
)
for m in "${modes[@]}"; do
  mode=${m%%|*} want=${m#*|}
  psir "$mode"
  eventually 60 "$mode: MetricsAvailable=False naming \"$want\"" bash -c \
    "$(declare -f psir_field metrics_message); name=$name; metrics_message | grep -q '^False .*$want'"
  check "$mode: the operator still runs" kill -0 "$operator_pid"
  [ "$mode" = slow ] && reconciled_while_slow

  check "$mode: no taint changed" test "$(taints)" = "$before"
done
huge_bytes=$(sed -n 's/^served huge bytes=//p' "$work/hostile.log" | head -1)
echo "the endless reply: the operator hung up after ${huge_bytes:-?} bytes"
check "the operator hung up on the endless reply soon after the 32 MiB cap, not at its 4 GiB end" \
  test "${huge_bytes:-0}" -ge 33554432 -a "${huge_bytes:-0}" -lt $((64 << 20))

hwm_kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$operator_pid/status")
echo "operator VmHWM after the hostile replies: $((hwm_kib / 1024)) MiB ($(grep -c '^served' "$work/hostile.log") replies served)"
check "the operator's peak RSS (${hwm_kib} KiB) stayed below $((hwm_limit_kib / 1024)) MiB" test "$hwm_kib" -lt "$hwm_limit_kib"

# Good replies again: the operator recovers and reads them.
psir good
eventually 60 "MetricsAvailable=True again on good replies" bash -c "$(declare -f psir_field condition); [ \"\$(condition $name MetricsAvailable)\" = True ]"
check "${nodes[0]} is still tainted, no other node" test "$(taints)" = "$before"
echo "operator VmRSS on good replies again: $(($(awk '/^VmRSS:/ {print $2}' "/proc/$operator_pid/status") / 1024)) MiB"
finish
