#!/usr/bin/env bash
# The ServiceMonitor works in the namespace the bundle suggests and in any other, on the real
# test bed with the Prometheus Operator's own ServiceMonitor CRD (hack/tools/monitoring-crds.sh):
# the bundle's ServiceMonitor, applied as it ships into each namespace, with the Role of
# config/prometheus/monitor_role.yaml; the operator, started for that namespace, points its
# tlsConfig.serverName at the metrics Service there (in the suggested namespace it already does:
# no write). A serving certificate issued as the service CA issues it (tests/e2e/lib/service_ca.sh:
# DNS names <service>.<namespace>.svc and .svc.cluster.local only) then verifies for the
# ServiceMonitor's serverName, with a token allowed to read /metrics, and not for the name the
# bundle shipped in the other namespace.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../lib/service_ca.sh"

src=$PSI_SOURCE_DIR
suggested=$(python3 -c 'import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))["metadata"]["annotations"]["operatorframework.io/suggested-namespace"])' \
  "$src/bundle/manifests/psi-rebalancer.clusterserviceversion.yaml")
other=psi-sm-$$
sm_file=$src/bundle/manifests/psi-rebalancer_monitoring.coreos.com_v1_servicemonitor.yaml
shipped=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["spec"]["endpoints"][0]["tlsConfig"]["serverName"])' "$sm_file")
cleanup() {
  kubectl delete namespace "$other" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete servicemonitor -n "$suggested" psi-rebalancer --ignore-not-found >/dev/null 2>&1
  kubectl delete -n "$suggested" role,rolebinding psi-rebalancer-servicemonitor --ignore-not-found >/dev/null 2>&1
  kubectl delete clusterrolebinding "psi-sm-scraper-$$" --ignore-not-found >/dev/null 2>&1
  kubectl delete serviceaccount -n psi-rebalancer "sm-scraper-$$" --ignore-not-found >/dev/null 2>&1
  # The bed as found: the other tests' operators have no ServiceMonitor API to look at.
  [ -n "$crd_before" ] || kubectl delete crd servicemonitors.monitoring.coreos.com --ignore-not-found >/dev/null 2>&1
  operator_cleanup
}
crd_before=x # set below, once known; until then cleanup leaves the CRD alone
trap cleanup EXIT

crd_before=$(kubectl get crd servicemonitors.monitoring.coreos.com -o name 2>/dev/null || true)
crds=$("$src/hack/tools/monitoring-crds.sh")
kubectl apply --server-side -f "$crds/monitoring.coreos.com_servicemonitors.yaml" >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd/servicemonitors.monitoring.coreos.com >/dev/null
install_operator_rbac
kubectl create serviceaccount -n psi-rebalancer "sm-scraper-$$" >/dev/null
kubectl create clusterrolebinding "psi-sm-scraper-$$" --clusterrole=psi-rebalancer-metrics-reader \
  --serviceaccount="psi-rebalancer:sm-scraper-$$" >/dev/null
token=$(kubectl create token -n psi-rebalancer "sm-scraper-$$" --duration=1h)

server_name() { kubectl get servicemonitor -n "$1" psi-rebalancer -o jsonpath='{.spec.endpoints[0].tlsConfig.serverName}'; }
# scrape NAME PORT: GET /metrics verifying the certificate for NAME (reached on 127.0.0.1).
scrape() {
  curl -sf -o /dev/null --max-time 10 --cacert "$PSI_TESTBED/pki/ca.crt" -H "Authorization: Bearer $token" \
    --connect-to "$1:$2:127.0.0.1:$2" "https://$1:$2/metrics"
}

for ns in "$suggested" "$other"; do
  kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -n "$ns" -f "$sm_file" >/dev/null
  sed "s/namespace: psi-rebalancer\$/namespace: $ns/" "$src/config/prometheus/monitor_role.yaml" |
    python3 -c 'import sys, yaml
docs = list(yaml.safe_load_all(sys.stdin))
for d in docs:
    for s in d.get("subjects", []): s["namespace"] = "psi-rebalancer"  # the bed runs the operator as that ServiceAccount
yaml.safe_dump_all(docs, sys.stdout)' | kubectl apply -f - >/dev/null
  rv_before=$(kubectl get servicemonitor -n "$ns" psi-rebalancer -o jsonpath='{.metadata.resourceVersion}')
  : > "$work/operator.log"
  start_operator --leader-elect=false --leader-election-namespace "$ns" --metrics-secure=true --metrics-cert-dir "$(service_ca_cert "$ns" psi-rebalancer-metrics)"
  eventually 30 "$ns: the operator serves /metrics over HTTPS" grep -q 'serving paths=/metrics port=[0-9]* scheme=https' "$work/operator.log"
  port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\) scheme=https.*/\1/p' "$work/operator.log" | tail -1)
  eventually 30 "$ns: the operator started reconciling" grep -q 'started reconciling' "$work/operator.log"
  eventually 30 "$ns: the ServiceMonitor's serverName names the metrics Service in $ns" \
    bash -c "$(declare -f server_name); [ \"\$(server_name $ns)\" = psi-rebalancer-metrics.$ns.svc ]"
  check "$ns: a scrape verifying the certificate for that serverName succeeds" scrape "$(server_name "$ns")" "$port"
  if [ "$ns" = "$suggested" ]; then
    check "$ns: the bundle already named it: the ServiceMonitor was not written" \
      test "$(kubectl get servicemonitor -n "$ns" psi-rebalancer -o jsonpath='{.metadata.resourceVersion}')" = "$rv_before"
  else
    check "$ns: the name the bundle shipped ($shipped) does not verify there" bash -c "$(declare -f scrape); token=$token; ! scrape $shipped $port"
    check "$ns: the operator logged the change" grep -q 'servicemonitor serverName follows the namespace' "$work/operator.log"
  fi
  check "$ns: no permission was denied" bash -c "! grep -Ei 'forbidden|servicemonitor not followed' '$work/operator.log'"
  stop_operator
done
finish
