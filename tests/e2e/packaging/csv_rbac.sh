#!/usr/bin/env bash
# The OLM bundle's ClusterServiceVersion runs the operator: its RBAC and its command line,
# applied to the test bed as OLM would apply them, carry the operator through a full
# reconcile with no permission denied.
#
# From bundle/manifests (the committed bundle, as OLM gets it):
# - the CRD installs;
# - a namespace of its own (not the suggested one: the CSV must not depend on it) gets the
#   CSV's ServiceAccount, its `permissions` as a Role and its `clusterPermissions` as a
#   ClusterRole, bound to that ServiceAccount, as OLM does;
# - the operator runs as a host process with that ServiceAccount's token (TokenRequest API)
#   and the CSV Deployment's command and args, $(VAR) references expanded from the container's
#   env as the kubelet does; only the two listen addresses are overridden (127.0.0.1:0) so
#   that the test does not take fixed ports on a shared machine;
# then: it takes the leader Lease in its namespace, puts its finalizer on a PsiRebalance,
# creates the MachineConfig that enables PSI (config/admission's policy for it applied),
# reports Ready, taints a node whose pressure the test raises, records Events, and on deletion
# removes its taint and finalizer; and its log has no "forbidden" or 403 anywhere.
#
#   csv_rbac.sh    (run by ctest)
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/mco.sh"
source "$(dirname "$0")/../lib/operator.sh"

src=${PSI_SOURCE_DIR:?}
csv_file=$src/bundle/manifests/psi-rebalancer.clusterserviceversion.yaml
ns=psi-csv-e2e-$$
name=csv-e2e-$$
role=psi-csv-e2e-$$
mc=99-worker-psi-rebalancer

# stop_bounded: SIGTERM, then SIGKILL when the operator has not exited within 20 s; a hung
# shutdown fails the test instead of hanging it.
stop_bounded() {
  [ -n "${operator_pid:-}" ] || return 0
  kill -TERM "$operator_pid" 2>/dev/null || true
  local i
  for i in $(seq 1 40); do kill -0 "$operator_pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$operator_pid" 2>/dev/null; then
    fail "the operator exits within 20 s of SIGTERM"
    kill -KILL "$operator_pid" 2>/dev/null || true
  fi
  wait "$operator_pid" 2>/dev/null || true
  operator_pid=
}

cleanup() {
  kubectl delete psirebalance "$name" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json
  stop_bounded
  operator_cleanup
  kubectl delete machineconfig "$mc" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete machineconfigpool worker --ignore-not-found >/dev/null 2>&1 || true
  [ -n "${mc_policy_before-x}" ] || kubectl delete -f "$src/config/admission/machineconfigs.yaml" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete clusterrolebinding "$role" "$role-scraper" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete clusterrole "$role" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete clusterrolebinding "$role-reader" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete clusterrole "$role-reader" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

[ -x "$operator_bin" ] || { echo "FAIL - the operator binary $operator_bin is not built"; exit 1; }
python3 -c 'import yaml, json, sys; json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
  "$csv_file" "$work/csv.json"

# --- what OLM creates from the CSV ------------------------------------------------------------
apply_quiet() { kubectl apply "$@" >/dev/null; }
sa=$(jq -r '.spec.install.spec.deployments[0].spec.template.spec.serviceAccountName' "$work/csv.json")
check "the CSV's CRD installs" apply_quiet --server-side --force-conflicts --field-manager=psi-e2e-csv \
  -f "$src/bundle/manifests/rebalance.psi.dev_psirebalances.yaml"
# (a CRD just created has no status.conditions yet, which `kubectl wait` takes for an error)
eventually 60 "the CRD is Established" kubectl wait --for=condition=Established crd/psirebalances.rebalance.psi.dev --timeout=10s
kubectl create namespace "$ns" >/dev/null
kubectl create serviceaccount "$sa" -n "$ns" >/dev/null
# The admission policy without which the operator refuses machineConfig mode, as README has
# every install apply it (config/admission).
mc_policy_before=$(kubectl get validatingadmissionpolicybinding psi-rebalancer-machineconfigs -o name 2>/dev/null || true)
check "config/admission's MachineConfig policy applies" apply_quiet -f "$src/config/admission/machineconfigs.yaml"
jq --arg n "$role" --arg ns "$ns" --arg sa "$sa" '
  [{apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: {name: $n},
    rules: [.spec.install.spec.clusterPermissions[] | select(.serviceAccountName == $sa) | .rules[]]},
   {apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: {name: $n},
    roleRef: {apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: $n},
    subjects: [{kind: "ServiceAccount", name: $sa, namespace: $ns}]},
   {apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: {name: $n, namespace: $ns},
    rules: [.spec.install.spec.permissions[] | select(.serviceAccountName == $sa) | .rules[]]},
   {apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: {name: $n, namespace: $ns},
    roleRef: {apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: $n},
    subjects: [{kind: "ServiceAccount", name: $sa, namespace: $ns}]}]
  | {apiVersion: "v1", kind: "List", items: .}' "$work/csv.json" > "$work/rbac.json"
check "the CSV's permissions and clusterPermissions apply as a Role and a ClusterRole" \
  apply_quiet -f "$work/rbac.json" -o name

# The pressure-reading ServiceAccount, which OLM creates for its clusterPermissions entry: the
# operator may mint its tokens (and no one else's), and it may read monitoring data as the
# Thanos querier asks (get prometheuses/api k8s in openshift-monitoring) and nothing more.
reader=psi-rebalancer-pressure-reader
kubectl create serviceaccount "$reader" -n "$ns" >/dev/null
jq --arg n "$role-reader" --arg ns "$ns" --arg sa "$reader" '
  [{apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: {name: $n},
    rules: [.spec.install.spec.clusterPermissions[] | select(.serviceAccountName == $sa) | .rules[]]},
   {apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: {name: $n},
    roleRef: {apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: $n},
    subjects: [{kind: "ServiceAccount", name: $sa, namespace: $ns}]}]
  | {apiVersion: "v1", kind: "List", items: .}' "$work/csv.json" > "$work/reader-rbac.json"
check "the pressure reader's clusterPermissions apply" apply_quiet -f "$work/reader-rbac.json" -o name
# reads_monitoring USER: a SubjectAccessReview says USER may do what the Thanos querier asks
# (get prometheuses/api k8s in openshift-monitoring; kubectl auth can-i cannot name a group
# the API server does not serve).
reads_monitoring() {
  kubectl create -o jsonpath='{.status.allowed}' -f - <<JSON | grep -qx true
{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
 "spec": {"user": "$1", "resourceAttributes": {"verb": "get", "group": "monitoring.coreos.com",
  "resource": "prometheuses", "subresource": "api", "namespace": "openshift-monitoring", "name": "k8s"}}}
JSON
}
can() { [ "$(kubectl auth can-i "$@" 2>/dev/null)" = yes ]; }
cannot() { ! can "$@"; }
# (the API server's authorizer follows new roles and bindings through its caches: the grants
# are waited for, the refusals then checked)
eventually 30 "the operator may mint the pressure reader's tokens" \
  can create "serviceaccounts/$reader" --subresource=token -n "$ns" --as "system:serviceaccount:$ns:$sa"
check "... and not its own or another's" cannot create "serviceaccounts/$sa" --subresource=token -n "$ns" \
  --as "system:serviceaccount:$ns:$sa"
eventually 30 "the pressure reader may read monitoring data as the Thanos querier asks" \
  reads_monitoring "system:serviceaccount:$ns:$reader"
operator_cannot_read() { ! reads_monitoring "system:serviceaccount:$ns:$sa"; }
check "... the operator may not" operator_cannot_read
check "... and may not patch nodes" cannot patch nodes --as "system:serviceaccount:$ns:$reader"

# --- the Deployment's command line --------------------------------------------------------------
# The container's env, resolved as the kubelet would for this pod (fieldRef metadata.namespace
# is the install namespace; only the kinds of env the CSV uses are handled, anything else fails).
jq -r '.spec.install.spec.deployments[0].spec.template.spec.containers[0].env // [] | .[] |
  if .value != null then "\(.name)\t\(.value)"
  elif .valueFrom.fieldRef.fieldPath == "metadata.namespace" then "\(.name)\t@NAMESPACE@"
  elif .valueFrom.fieldRef.fieldPath == "status.podIP" then "\(.name)\t127.0.0.1"
  else error("env \(.name): not resolvable by the test") end' "$work/csv.json" > "$work/env.tsv"
declare -A env
while IFS=$'\t' read -r k v; do env[$k]=${v//@NAMESPACE@/$ns}; done < "$work/env.tsv"
expand() { # $(VAR) -> value, as Kubernetes expands command and args
  local s=$1 k
  for k in "${!env[@]}"; do s=${s//\$($k)/${env[$k]}}; done
  printf '%s' "$s"
}
mapfile -t cmdline < <(jq -r '.spec.install.spec.deployments[0].spec.template.spec.containers[0] | (.command // []) + (.args // []) | .[]' "$work/csv.json")
check "the CSV's container has a command" test "${#cmdline[@]}" -gt 0
# The serving certificate the kubelet would mount from the Secret OpenShift's service CA
# writes: here a pair from the bed's CA in a directory of the test.
mkdir -p "$work/metrics-cert"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=psi-rebalancer-metrics \
  -CA "$PSI_TESTBED/pki/ca.crt" -CAkey "$PSI_TESTBED/pki/ca.key" -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$work/metrics-cert/tls.key" -out "$work/metrics-cert/tls.crt" 2>/dev/null
argv=()
for a in "${cmdline[@]:1}"; do
  case $a in
    --metrics-cert-dir=*) argv+=("--metrics-cert-dir=$work/metrics-cert") ;;
    *) argv+=("$(expand "$a")") ;;
  esac
done
check "the CSV's args run leader election in the install namespace" \
  bash -c 'printf "%s\n" "$@" | grep -qx -- "--leader-election-namespace=$0"' "$ns" "${argv[@]}"
check "the CSV's args hold no unexpanded \$(VAR)" bash -c '! printf "%s\n" "$@" | grep -q "\$("' _ "${argv[@]}"

token=$(kubectl create token "$sa" -n "$ns" --duration=1h)
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
cat > "$work/sa.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: bed, cluster: {server: "$server", certificate-authority: "$PSI_TESTBED/pki/ca.crt"}}]
users: [{name: $sa, user: {token: "$token"}}]
contexts: [{name: bed, context: {cluster: bed, user: $sa, namespace: $ns}}]
current-context: bed
YAML
check "the token is the ServiceAccount's (TokenRequest API)" bash -c \
  "kubectl --kubeconfig '$work/sa.kubeconfig' auth whoami -o jsonpath='{.status.userInfo.username}' | grep -qx 'system:serviceaccount:$ns:$sa'"

start_exporter worker-0 worker-1 worker-2
echo "operator: $operator_bin ${argv[*]} (with --kubeconfig and 127.0.0.1:0 listen addresses)"
"$operator_bin" "${argv[@]}" --kubeconfig "$work/sa.kubeconfig" \
  --metrics-bind-address=127.0.0.1:0 --health-probe-bind-address=127.0.0.1:0 >>"$work/operator.log" 2>&1 &
operator_pid=$!

lease=$(printf '%s\n' "${argv[@]}" | sed -n 's/^--leader-election-id=//p')
lease=${lease:-psi-rebalancer-leader}
eventually 60 "the operator holds the leader Lease $lease in $ns" bash -c \
  "[ -n \"\$(kubectl get lease -n $ns $lease -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)\" ]"

# the workers' pool, which the operator's MachineConfig is for
mco_worker_pool
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  machineConfig: {enabled: true, roles: [worker], schedstats: true}
  metrics: $bed_metrics
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: 10s}
  eviction: {mode: DryRun}
YAML

eventually 60 "the finalizer is on the PsiRebalance" bash -c \
  "kubectl get psirebalance $name -o jsonpath='{.metadata.finalizers}' | grep -q rebalance.psi.dev/"
eventually 60 "the MachineConfig $mc that enables PSI is created" kubectl get machineconfig "$mc"
ready() { [ "$(condition "$name" Ready)" = True ]; }
observed() { [ "$(psir_field "$name" .status.observedGeneration)" = "$(psir_field "$name" .metadata.generation)" ]; }
not_tainted() { ! node_tainted "$@"; }
eventually 90 "Ready=True: a full cycle with every node sampled" ready
check "status.observedGeneration is the spec's generation" observed

# The metrics endpoint: HTTPS, and the CSV's clusterPermissions let the operator review a
# scraper's token (a ServiceAccount bound to the metrics-reader ClusterRole, which the bundle
# does not ship: config/metrics-reader, as README has a Prometheus other than OpenShift's apply it).
kubectl apply -k "$src/config/metrics-reader" >/dev/null
kubectl create serviceaccount scraper -n "$ns" >/dev/null
kubectl create clusterrolebinding "$role-scraper" --clusterrole=psi-rebalancer-metrics-reader --serviceaccount="$ns:scraper" >/dev/null
scrape_token=$(kubectl create token scraper -n "$ns" --duration=1h)
metrics_port=$(grep '^{' "$work/operator.log" | jq -r 'select(.msg == "serving" and .paths == "/metrics" and .scheme == "https") | .port' | tail -1)
check "/metrics answers a metrics-reader's token over HTTPS (TokenReview and SubjectAccessReview allowed)" bash -c \
  "curl -sf --cacert '$PSI_TESTBED/pki/ca.crt' -H 'Authorization: Bearer $scrape_token' https://127.0.0.1:$metrics_port/metrics | grep -q '^psi_rebalancer_'"

set_pressure worker-0 cpu 60
eventually 90 "worker-0 under pressure is tainted (nodes patch)" node_tainted worker-0 "$name"
eventually 30 "Events are recorded for it" bash -c \
  "kubectl get events.events.k8s.io -A -o json | jq -e --arg n '$name' '[.items[] | select(.regarding.name == \$n or .related.name? == \$n or (.note // \"\" | contains(\$n)))] | length > 0' >/dev/null"

kubectl delete psirebalance "$name" --wait=false >/dev/null
eventually 60 "deleted: the operator removes its taint and its finalizer" bash -c \
  "! kubectl get psirebalance $name >/dev/null 2>&1"
check "worker-0 is no longer tainted" not_tainted worker-0 "$name"
check "the operator is still running" kill -0 "$operator_pid"
stop_bounded

errors=$(grep -c '"level":"error"' "$work/operator.log" || true)
if ((errors)); then
  echo "note: $errors error-level line(s) in the operator's log (reported, not judged here):"
  grep '"level":"error"' "$work/operator.log" | head -5
fi
if grep -Eiq 'forbidden|\b403\b' "$work/operator.log"; then
  fail "the operator's log reports a permission denied:"
  grep -Ei 'forbidden|\b403\b' "$work/operator.log" | head -20
else
  pass "no permission denied in the operator's log ($(wc -l < "$work/operator.log") lines)"
fi
finish
