#!/usr/bin/env bash
# PsiRebalancerReconcileStalled, the dead-man switch, after a failover with every cycle
# failing, on the real test bed with its Prometheus evaluating config/prometheus/rules.yaml:
# - a PsiRebalance whose stored status says a previous leader last succeeded 30 minutes ago,
#   and whose pressure source no longer answers, is reconciled by a newly started operator:
#   psi_rebalancer_last_successful_reconcile_timestamp_seconds has its series from the first
#   publish on, at the stored lastSuccessfulCycleTime (a failed pressure read is no success),
#   and the shipped alert fires for it;
# - one that never succeeded has the series at its creation time (it ages from there);
# - once its source answers, the series moves to now and the alert resolves;
# - the second one names the legacy bearerTokenFile (the operator's own token): the operator
#   logs the decoder's warning about it, once for the generation, though it reconciles it
#   every cycle.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=stalled-$$
prom=$PSI_PROMETHEUS_URL
rules_file=$PSI_TESTBED/prometheus/rules/psi-rebalancer-$$.yaml
target_file=$PSI_TESTBED/prometheus/targets-operator/operator-$$.json
cleanup() {
  kubectl delete psirebalance "$name" "$name-new" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete clusterrolebinding "psi-scraper-$$" --ignore-not-found >/dev/null 2>&1
  kubectl delete serviceaccount -n psi-rebalancer "scraper-$$" --ignore-not-found >/dev/null 2>&1
  rm -f "$rules_file" "$target_file" "$PSI_PROMETHEUS_TARGETS/exporter-$$.json"
  curl -s -X POST "$prom/-/reload" >/dev/null 2>&1
  operator_cleanup
}
trap cleanup EXIT

# A serving certificate for the metrics Service's name, from the bed's CA, as the bed's
# Prometheus job verifies it.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/tls.key" -out "$work/tls.csr" \
  -subj "/CN=psi-rebalancer-metrics" 2>/dev/null
openssl x509 -req -in "$work/tls.csr" -CA "$PSI_TESTBED/pki/ca.crt" -CAkey "$PSI_TESTBED/pki/ca.key" -CAcreateserial \
  -out "$work/tls.crt" -days 1 \
  -extfile <(printf 'subjectAltName=DNS:psi-rebalancer-metrics.psi-rebalancer.svc,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') 2>/dev/null
mkdir -p "$work/cert" && mv "$work/tls.crt" "$work/tls.key" "$work/cert/"

install_operator_rbac
kubectl create serviceaccount -n psi-rebalancer "scraper-$$" >/dev/null
kubectl create clusterrolebinding "psi-scraper-$$" --clusterrole=psi-rebalancer-metrics-reader \
  --serviceaccount="psi-rebalancer:scraper-$$" >/dev/null
token=$(kubectl create token -n psi-rebalancer "scraper-$$" --duration=1h)

# A source that does not answer: a port nothing listens on (bound, then closed).
dead_port=$(free_port)
psir() { # psir NAME URL [TOKEN_FILE]
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $1}
spec:
  metrics: {source: Prometheus, prometheus: {url: "$2", bearerTokenFile: "${3:-}"}, interval: 5s, window: 15s}
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15}
YAML
}
psir "$name" "http://127.0.0.1:$dead_port"
psir "$name-new" "http://127.0.0.1:$dead_port" /var/run/secrets/kubernetes.io/serviceaccount/token
# What the previous leader wrote before it died: its last success, 30 minutes ago.
before=$(( $(date +%s) - 1800 ))
kubectl patch psirebalance "$name" --subresource=status --type=merge \
  -p "{\"status\":{\"lastSuccessfulCycleTime\":\"$(date -u -d "@$before" +%Y-%m-%dT%H:%M:%SZ)\"}}" >/dev/null
created=$(date -u -d "$(psir_field "$name-new" .metadata.creationTimestamp)" +%s)

start_operator --metrics-secure=true --metrics-cert-dir "$work/cert"
eventually 30 "the operator serves /metrics over HTTPS" grep -q 'serving paths=/metrics port=[0-9]* scheme=https' "$work/operator.log"
port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\) scheme=https.*/\1/p' "$work/operator.log" | tail -1)
gauge() { # gauge PSIREBALANCE: the dead-man gauge's value as the operator serves it
  curl -sf --cacert "$PSI_TESTBED/pki/ca.crt" -H "Authorization: Bearer $token" "https://127.0.0.1:$port/metrics" |
    awk -v l="psi_rebalancer_last_successful_reconcile_timestamp_seconds{psirebalance=\"$1\"}" '$1 == l {printf "%d\n", $2}'
}
eventually 60 "the source's failure is reported (MetricsAvailable=False)" bash -c \
  "$(declare -f psir_field condition); [ \"\$(condition $name MetricsAvailable)\" = False ]"
eventually 30 "the dead-man series exists while every cycle fails" bash -c "$(declare -f gauge); token=$token port=$port; [ -n \"\$(gauge $name)\" ]"
check "at the stored lastSuccessfulCycleTime ($before): a failed read is no success" test "$(gauge "$name")" = "$before"
check "one that never succeeded: at its creation time ($created)" test "$(gauge "$name-new")" = "$created"
warned() { grep 'psirebalance spec warning' "$work/operator.log" | grep -c "psirebalance=$name-new .*bearerTokenFile" || true; }
check "the legacy bearerTokenFile's warning is logged" test "$(warned)" -ge 1
check "once for its generation, over $(grep -c "psirebalance=$name-new" "$work/operator.log") lines of its cycles" test "$(warned)" -eq 1

python3 -c 'import sys, yaml; yaml.safe_dump(yaml.safe_load(open(sys.argv[1]))["spec"], open(sys.argv[2], "w"))' \
  "$PSI_SOURCE_DIR/config/prometheus/rules.yaml" "$rules_file"
printf '%s' "$token" > "$PSI_TESTBED/prometheus/operator-scrape.token"
printf '[{"targets": ["127.0.0.1:%s"]}]\n' "$port" > "$target_file"
curl -sf -X POST "$prom/-/reload" >/dev/null
promq() { curl -sf --get "$prom/api/v1/query" --data-urlencode "query=$1"; }
alert_state() { promq "ALERTS{alertname=\"PsiRebalancerReconcileStalled\",psirebalance=\"$name\"}" | jq -r '[.data.result[].metric.alertstate] | join(",")'; }
eventually 90 "PsiRebalancerReconcileStalled fires for it" bash -c "$(declare -f promq alert_state); prom=$prom; name=$name; [ \"\$(alert_state)\" = firing ]"

# The source answers again: the next cycle succeeds, the series moves to now, the alert resolves.
start_exporter worker-0 worker-1 worker-2
kubectl patch psirebalance "$name" --type=merge -p "{\"spec\":{\"metrics\":{\"prometheus\":{\"url\":\"$prom\"}}}}" >/dev/null
eventually 90 "a successful cycle moves the series to now" bash -c \
  "$(declare -f gauge); token=$token port=$port; [ \"\$(gauge $name)\" -gt $(( $(date +%s) - 5 )) ]"
eventually 90 "and the alert resolves" bash -c "$(declare -f promq alert_state); prom=$prom; name=$name; [ -z \"\$(alert_state)\" ]"
finish
