#!/usr/bin/env bash
# A PsiRebalance whose bearerTokenFile or caFile names the operator's own pipe
# (/proc/self/fd/N: the wake-up pipe of its HTTP servers, which a read would wait on forever)
# or a path out of the allowed directories:
# - gets MetricsAvailable=False, SourceConfigError, with the one fixed sentence (the same for
#   every path: nothing about what the path is);
# - while the event loop keeps cycling: a PsiRebalance reading the bed's Prometheus keeps
#   being reconciled (psi_rebalancer_reconciles_total goes on rising) and /healthz stays ok
#   past the loop's stall limit (ELECTION_LOOP_STALL_MS, 60 s).
# Before the rule of controller/psi/specfile.h the first such read blocked the loop for good.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=paths-$$
roots="/var/run/secrets/, /run/secrets/ or /etc/psi-rebalancer/"
cleanup() {
  kubectl delete psirebalance "$name-good" "$name-token" "$name-ca" "$name-out" --ignore-not-found --wait=false >/dev/null 2>&1
  operator_cleanup
}
trap cleanup EXIT

psir() { # psir NAME PROMETHEUS_BLOCK
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $1}
spec:
  metrics: {source: Prometheus, prometheus: $2, interval: 5s, window: 15s}
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15}
  eviction: {mode: Disabled}
YAML
}
metrics_message() { psir_field "$1" '.status.conditions[]? | select(.type == "MetricsAvailable") | "\(.status) \(.reason) \(.message)"'; }

# Every worker at 0 % pressure, so that the good PsiRebalance reads a value and taints nothing.
mapfile -t workers < <(kubectl get nodes -l node-role.kubernetes.io/worker -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
start_exporter "${workers[@]}"
start_operator
eventually 30 "the operator serves /healthz and /metrics" bash -c \
  "grep -q 'serving paths=/healthz,/readyz port=' '$work/operator.log' && grep -q 'serving paths=/metrics port=' '$work/operator.log'"
health_port=$(sed -n 's/.*serving paths=\/healthz,\/readyz port=\([0-9]*\) .*/\1/p' "$work/operator.log" | tail -1)
metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\) .*/\1/p' "$work/operator.log" | tail -1)
reconciles() { curl -sf "http://127.0.0.1:$metrics_port/metrics" | awk '$1 ~ /^psi_rebalancer_reconciles_total/ {s += $2} END {printf "%d\n", s}'; }
healthz() { curl -sf "http://127.0.0.1:$health_port/healthz" >/dev/null; }

# The operator's pipes, as /proc/self/fd/N in its own view.
mapfile -t pipes < <(for f in /proc/"$operator_pid"/fd/*; do
  [[ $(readlink "$f") == pipe:* ]] && echo "/proc/self/fd/${f##*/}"; done)
echo "the operator's pipes: ${pipes[*]}"
check "the operator has a pipe to name (its servers' wake-up pipes)" test "${#pipes[@]}" -ge 1

psir "$name-good" "{url: \"$PSI_PROMETHEUS_URL\", bearerTokenFile: \"\"}"
eventually 60 "a PsiRebalance on the bed's Prometheus reads it (MetricsAvailable=True)" bash -c \
  "$(declare -f psir_field condition); [ \"\$(condition $name-good MetricsAvailable)\" = True ]"

# A token goes over plain http only when asked; asked here, so the file is read.
psir "$name-token" "{url: \"$PSI_PROMETHEUS_URL\", bearerTokenFile: \"${pipes[0]}\", sendTokenOverPlainHTTP: true}"
psir "$name-ca" "{url: \"https://127.0.0.1:1\", bearerTokenFile: \"\", caFile: \"${pipes[-1]}\"}"
psir "$name-out" "{url: \"$PSI_PROMETHEUS_URL\", bearerTokenFile: \"/etc/hostname\", sendTokenOverPlainHTTP: true}"
want_token="bearerTokenFile must be a regular file of at most 64 KiB under $roots"
want_ca="caFile must be a regular file of at most 4 MiB under $roots"
# refused NAME SENTENCE: MetricsAvailable is False, SourceConfigError, with SENTENCE.
refused() { local m; m=$(metrics_message "$1"); [[ $m == "False SourceConfigError "*"$2"* ]]; }
defs="$(declare -f psir_field metrics_message refused)"
eventually 60 "bearerTokenFile ${pipes[0]}: the fixed refusal in MetricsAvailable" bash -c "$defs; refused $name-token '$want_token'"
eventually 60 "caFile ${pipes[-1]}: the fixed refusal in MetricsAvailable" bash -c "$defs; refused $name-ca '$want_ca'"
eventually 60 "bearerTokenFile /etc/hostname (a regular file outside the roots): the same refusal" bash -c \
  "$defs; refused $name-out '$want_token'"
for n in token ca out; do echo "$name-$n: MetricsAvailable $(metrics_message "$name-$n")"; done

# The loop goes on: reconciles keep counting and /healthz stays ok beyond the stall limit.
first=$(reconciles)
check "/healthz is ok with the hostile paths in place" healthz
sleep 65
second=$(reconciles)
echo "psi_rebalancer_reconciles_total: $first, 65 s later $second"
check "reconciles went on (${first} -> ${second})" test "$second" -gt "$first"
check "/healthz is still ok after more than the 60 s stall limit" healthz
check "the good PsiRebalance still reads its Prometheus" test "$(condition "$name-good" MetricsAvailable)" = True
check "the operator still runs" kill -0 "$operator_pid"
finish
