#!/usr/bin/env bash
# Monitoring the platform's way, against the real test bed and its Prometheus:
# - /metrics over HTTPS: no token 401, a token the API server rejects 401, a ServiceAccount
#   without the psi-rebalancer-metrics-reader ClusterRole 403, one with it 200; plain HTTP
#   gets no answer; TLS 1.1 is refused; repeated scrapes cost no API call (cached reviews);
# - the bed's Prometheus loads config/prometheus/rules.yaml and scrapes the operator over
#   HTTPS with a ServiceAccount token, verifying the certificate for the Service's name;
# - PsiRebalancerTaintCapReached fires when the cap holds a hot node back and resolves when
#   that node cools (the shipped rule, its own `for`);
# - every query of the dashboard runs without error and returns series;
# - a rotated serving certificate is served without a restart.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=monitoring-$$
prom=$PSI_PROMETHEUS_URL
rules_file=$PSI_TESTBED/prometheus/rules/psi-rebalancer-$$.yaml
target_file=$PSI_TESTBED/prometheus/targets-operator/operator-$$.json
cleanup() {
  kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete clusterrolebinding "psi-scraper-$$" --ignore-not-found >/dev/null 2>&1
  kubectl delete serviceaccount -n psi-rebalancer "scraper-$$" "nobody-$$" --ignore-not-found >/dev/null 2>&1
  rm -f "$rules_file" "$target_file" "$PSI_PROMETHEUS_TARGETS/exporter-$$.json"
  curl -s -X POST "$prom/-/reload" >/dev/null 2>&1
  operator_cleanup
}
trap cleanup EXIT

# A serving certificate for the metrics Service's name and 127.0.0.1, from the bed's CA.
issue_cert() { # issue_cert DIR CN: tls.crt and tls.key written next to DIR, then renamed in
  local d=$1 cn=$2
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/.tls.key" -out "$d/.csr" \
    -subj "/CN=$cn" 2>/dev/null
  openssl x509 -req -in "$d/.csr" -CA "$PSI_TESTBED/pki/ca.crt" -CAkey "$PSI_TESTBED/pki/ca.key" -CAcreateserial \
    -out "$d/.tls.crt" -days 1 -extfile <(printf 'subjectAltName=DNS:psi-rebalancer-metrics.psi-rebalancer.svc,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') 2>/dev/null
  mv "$d/.tls.crt" "$d/tls.crt"
  mv "$d/.tls.key" "$d/tls.key"
  rm -f "$d/.csr"
}
mkdir -p "$work/cert"
issue_cert "$work/cert" first-cert

install_operator_rbac
kubectl create serviceaccount -n psi-rebalancer "scraper-$$" >/dev/null
kubectl create serviceaccount -n psi-rebalancer "nobody-$$" >/dev/null
kubectl create clusterrolebinding "psi-scraper-$$" --clusterrole=psi-rebalancer-metrics-reader \
  --serviceaccount="psi-rebalancer:scraper-$$" >/dev/null
reader_token=$(kubectl create token -n psi-rebalancer "scraper-$$" --duration=1h)
nobody_token=$(kubectl create token -n psi-rebalancer "nobody-$$" --duration=1h)

start_exporter worker-0 worker-1 worker-2
start_operator --metrics-secure=true --metrics-cert-dir "$work/cert"
eventually 30 "the operator serves /metrics over HTTPS" grep -q 'serving paths=/metrics port=[0-9]* scheme=https' "$work/operator.log"
port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\) scheme=https.*/\1/p' "$work/operator.log" | tail -1)
url=https://127.0.0.1:$port/metrics
operator_started=$operator_pid

# status CODE [TOKEN]: the HTTP status of GET /metrics, verifying the certificate with the bed's CA.
status() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$PSI_TESTBED/pki/ca.crt" \
    ${1:+-H "Authorization: Bearer $1"} "$url"
}
check "no token: 401" test "$(status)" = 401
check "the 401 asks for a bearer token" bash -c "curl -s -o /dev/null -D - --cacert '$PSI_TESTBED/pki/ca.crt' '$url' | grep -qi '^WWW-Authenticate: Bearer'"
check "a token the API server rejects: 401" test "$(status not-a-token)" = 401
check "a ServiceAccount without the metrics-reader role: 403" test "$(status "$nobody_token")" = 403
check "a ServiceAccount bound to psi-rebalancer-metrics-reader: 200" test "$(status "$reader_token")" = 200
check "the reply is the metrics" bash -c "curl -sf --cacert '$PSI_TESTBED/pki/ca.crt' -H 'Authorization: Bearer $reader_token' '$url' | grep -q '^psi_rebalancer_api_requests_total'"
check "plain HTTP on the metrics port gets no HTTP answer" bash -c "! curl -s --max-time 5 http://127.0.0.1:$port/metrics | grep -q psi_rebalancer"
check "TLS 1.1 is refused (the server's protocol_version alert)" bash -c \
  "echo | openssl s_client -connect 127.0.0.1:$port -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' 2>&1 | grep -q 'alert protocol version'"
check "TLS 1.2 is served" bash -c "echo | openssl s_client -connect 127.0.0.1:$port -tls1_2 -CAfile '$PSI_TESTBED/pki/ca.crt' 2>&1 | grep -q 'Verify return code: 0'"

# Scrape cost: the reviews of a token are cached, so ten more scrapes ask the API nothing.
api_calls() {
  curl -sf --cacert "$PSI_TESTBED/pki/ca.crt" -H "Authorization: Bearer $reader_token" "$url" |
    awk '$1 == "psi_rebalancer_metrics_auth_api_calls_total" {print $2}'
}
before=$(api_calls)
for _ in $(seq 1 10); do status "$reader_token" >/dev/null; done
after=$(api_calls)
echo "token and access reviews: $before before ten scrapes, $after after"
check "ten scrapes with a known token cost no API call" test "$before" = "$after"
check "the reviews of three tokens and a rejected one took at most six API calls" test "${after:-99}" -le 6

# The bed's Prometheus: the rules, and the operator as a target over HTTPS with a token.
python3 -c 'import sys, yaml; yaml.safe_dump(yaml.safe_load(open(sys.argv[1]))["spec"], open(sys.argv[2], "w"))' \
  "$PSI_SOURCE_DIR/config/prometheus/rules.yaml" "$rules_file"
printf '%s' "$reader_token" > "$PSI_TESTBED/prometheus/operator-scrape.token"
printf '[{"targets": ["127.0.0.1:%s"]}]\n' "$port" > "$target_file"
curl -sf -X POST "$prom/-/reload" >/dev/null
promq() { curl -sf --get "$prom/api/v1/query" --data-urlencode "query=$1"; }
eventually 30 "Prometheus loaded the alerting rules" bash -c \
  "curl -sf '$prom/api/v1/rules' | jq -e '[.data.groups[].name] | index(\"psi-rebalancer.alerts\") != null'"
eventually 60 "Prometheus scrapes the operator over HTTPS with the token (up == 1)" bash -c \
  "$(declare -f promq); prom=$prom; promq 'up{job=\"psi-rebalancer-metrics\"} == 1' | jq -e '.data.result | length == 1'"

# Taint cap: 3 nodes at maxTaintedPercent 34 -> one taint. Two hot nodes: one tainted, the
# other held back by the cap.
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 5s, maxTaintedPercent: 34}
  eviction: {mode: Automatic, podSelector: {matchLabels: {psi-test: none}}}
YAML
eventually 60 "Ready=True" bash -c "[ \"\$(kubectl get psirebalance $name -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]"
set_pressure worker-0 cpu 80
set_pressure worker-1 cpu 70
alert_state() { promq "ALERTS{alertname=\"PsiRebalancerTaintCapReached\",psirebalance=\"$name\"}" | jq -r '[.data.result[].metric.alertstate] | join(",")'; }
eventually 90 "one node tainted, one held back by the cap" bash -c \
  "kubectl get psirebalance $name -o json | jq -e '.status.summary.tainted == 1 and ([.status.nodes[] | select(.state == \"Pressured\")] | length == 1)'"
eventually 150 "PsiRebalancerTaintCapReached fires" bash -c "$(declare -f promq alert_state); prom=$prom; name=$name; [ \"\$(alert_state)\" = firing ]"

# Every dashboard query, while a node is tainted and the alert fires.
dash_fail=0 dash_n=0
while IFS= read -r q; do
  dash_n=$((dash_n + 1))
  out=$(promq "$q" || echo '{"status":"error"}')
  if ! jq -e '.status == "success" and (.data.result | length > 0)' <<<"$out" >/dev/null; then
    echo "dashboard query without series: $q"
    dash_fail=$((dash_fail + 1))
  fi
done < <(jq -r '.panels[].targets[]?.expr | gsub("\\$psirebalance"; ".*")' "$PSI_SOURCE_DIR/config/dashboards/psi-rebalancer.json")
echo "dashboard: $dash_n queries, $dash_fail without series"
check "every dashboard query runs and returns series" test "$dash_n" -gt 10 -a "$dash_fail" -eq 0
check "the alert carries its runbook" bash -c \
  "curl -sf '$prom/api/v1/alerts' | jq -e '.data.alerts[] | select(.labels.alertname == \"PsiRebalancerTaintCapReached\") | .annotations.runbook_url == \"docs/runbooks/PsiRebalancerTaintCapReached.md\"'"

set_pressure worker-1 cpu 0
eventually 90 "PsiRebalancerTaintCapReached resolves once the held node cools" bash -c \
  "$(declare -f promq alert_state); prom=$prom; name=$name; [ -z \"\$(alert_state)\" ]"

# Rotation: a new pair written over the old one is served to new connections, no restart.
issue_cert "$work/cert" rotated-cert
eventually 30 "the rotated certificate is served" bash -c \
  "echo | openssl s_client -connect 127.0.0.1:$port -CAfile '$PSI_TESTBED/pki/ca.crt' 2>/dev/null | openssl x509 -noout -subject | grep -q rotated-cert"
check "scrapes verify against the rotated certificate" test "$(status "$reader_token")" = 200
check "the operator was not restarted" bash -c "kill -0 $operator_started && [ '$operator_pid' = '$operator_started' ]"
check "the operator logged the reload" grep -q 'serving certificate reloaded' "$work/operator.log"
eventually 30 "Prometheus still scrapes it" bash -c \
  "$(declare -f promq); prom=$prom; promq 'up{job=\"psi-rebalancer-metrics\"} == 1' | jq -e '.data.result | length == 1'"
finish
