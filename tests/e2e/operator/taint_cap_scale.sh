#!/usr/bin/env bash
# PsiRebalancerTaintCapReached past 200 tainted nodes, on the real test bed with its Prometheus
# evaluating config/prometheus/rules.yaml: 260 kwok nodes of their own, every one pressured; a
# PsiRebalance with maxTaintedPercent 90 taints as many as the cap allows (more than the 200
# entries status.nodes keeps) and holds the others back. The held-back count the operator
# serves is that of status.summary.nodeStates, not of status.nodes, and the shipped alert fires.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

name=capscale-$$
count=260
prom=$PSI_PROMETHEUS_URL
rules_file=$PSI_TESTBED/prometheus/rules/psi-rebalancer-$$.yaml
target_file=$PSI_TESTBED/prometheus/targets-operator/operator-$$.json
nodes=()
for i in $(seq 0 $((count - 1))); do nodes+=("capscale-$$-$i"); done
cleanup() {
  kubectl delete psirebalance "$name" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete node -l "psi-e2e-capscale=$$" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete clusterrolebinding "psi-capscale-$$" --ignore-not-found >/dev/null 2>&1
  kubectl delete serviceaccount -n psi-rebalancer "capscale-$$" --ignore-not-found >/dev/null 2>&1
  rm -f "$rules_file" "$target_file" "$PSI_PROMETHEUS_TARGETS/exporter-$$.json"
  curl -s -X POST "$prom/-/reload" >/dev/null 2>&1
  operator_cleanup
}
trap cleanup EXIT

for i in "${!nodes[@]}"; do
  cat <<YAML
apiVersion: v1
kind: Node
metadata:
  name: ${nodes[$i]}
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: ${nodes[$i]}, kubernetes.io/os: linux, type: kwok, psi-e2e-capscale: "$$"}
spec: {}
status:
  addresses: [{type: InternalIP, address: "127.0.$((4 + i / 250)).$((i % 250 + 2))"}, {type: Hostname, address: "${nodes[$i]}"}]
  capacity: &res {cpu: "16", memory: 64Gi, pods: "110"}
  allocatable: *res
---
YAML
done | kubectl apply -f - >/dev/null
start_exporter "${nodes[@]}"
for n in "${nodes[@]}"; do set_pressure "$n" cpu 60; done

openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/tls.key" -out "$work/tls.csr" \
  -subj "/CN=psi-rebalancer-metrics" 2>/dev/null
openssl x509 -req -in "$work/tls.csr" -CA "$PSI_TESTBED/pki/ca.crt" -CAkey "$PSI_TESTBED/pki/ca.key" -CAcreateserial \
  -out "$work/tls.crt" -days 1 \
  -extfile <(printf 'subjectAltName=DNS:psi-rebalancer-metrics.psi-rebalancer.svc,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') 2>/dev/null
mkdir -p "$work/cert" && mv "$work/tls.crt" "$work/tls.key" "$work/cert/"
install_operator_rbac
kubectl create serviceaccount -n psi-rebalancer "capscale-$$" >/dev/null
kubectl create clusterrolebinding "psi-capscale-$$" --clusterrole=psi-rebalancer-metrics-reader \
  --serviceaccount="psi-rebalancer:capscale-$$" >/dev/null
token=$(kubectl create token -n psi-rebalancer "capscale-$$" --duration=1h)
start_operator --metrics-secure=true --metrics-cert-dir "$work/cert"
eventually 30 "the operator serves /metrics over HTTPS" grep -q 'serving paths=/metrics port=[0-9]* scheme=https' "$work/operator.log"
port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\) scheme=https.*/\1/p' "$work/operator.log" | tail -1)

kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  nodeSelector: {matchLabels: {psi-e2e-capscale: "$$"}}
  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 5s, maxTaintedPercent: 90}
YAML
summary() { psir_field "$name" '"\(.status.summary.nodeStates.tainted // 0) \(.status.summary.nodeStates.pressured // 0) \(.status.nodes // [] | length)"'; }
served() { # served METRIC: its value for the PsiRebalance on the operator's /metrics
  curl -sf --cacert "$PSI_TESTBED/pki/ca.crt" -H "Authorization: Bearer $token" "https://127.0.0.1:$port/metrics" |
    awk -v l="$1{psirebalance=\"$name\"}" '$1 == l {printf "%d\n", $2}'
}
# Settled: as many tainted as the cap the operator serves (more than 200), every other node held
# back; the summary that showed it is kept in $work/settled and checked below (a later cycle
# may read some node Unknown, under load, and count it so).
settled() {
  local cap t p l
  cap=$(served psi_rebalancer_psirebalance_taint_cap_nodes)
  read -r t p l <<<"$(summary)"
  [ -n "$cap" ] && [ "$cap" -gt 200 ] && [ "$t" = "$cap" ] && [ $((t + p)) -eq "$count" ] && echo "$t $p $l" >"$work/settled"
}
eventually 300 "the cap's worth of nodes tainted (more than 200), every other one held back" bash -c \
  "$(declare -f psir_field summary served settled); name=$name token=$token port=$port count=$count work=$work; settled"
read -r tainted held listed <"$work/settled"
echo "tainted $tainted (the cap: $(served psi_rebalancer_psirebalance_taint_cap_nodes)), held back $held, status.nodes entries $listed"
check "status.nodes lists fewer entries than there are tainted nodes" test "$listed" -lt "$tainted"
eventually 30 "the operator serves the held-back count of the summary ($held)" bash -c \
  "$(declare -f served); token=$token port=$port name=$name; [ \"\$(served psi_rebalancer_psirebalance_pressured_untainted_nodes)\" = $held ]"

python3 -c 'import sys, yaml; yaml.safe_dump(yaml.safe_load(open(sys.argv[1]))["spec"], open(sys.argv[2], "w"))' \
  "$PSI_SOURCE_DIR/config/prometheus/rules.yaml" "$rules_file"
printf '%s' "$token" > "$PSI_TESTBED/prometheus/operator-scrape.token"
printf '[{"targets": ["127.0.0.1:%s"]}]\n' "$port" > "$target_file"
curl -sf -X POST "$prom/-/reload" >/dev/null
promq() { curl -sf --get "$prom/api/v1/query" --data-urlencode "query=$1"; }
alert_state() { promq "ALERTS{alertname=\"PsiRebalancerTaintCapReached\",psirebalance=\"$name\"}" | jq -r '[.data.result[].metric.alertstate] | join(",")'; }
eventually 180 "PsiRebalancerTaintCapReached fires (its own for: 1m)" bash -c \
  "$(declare -f promq alert_state); prom=$prom; name=$name; [ \"\$(alert_state)\" = firing ]"
finish
