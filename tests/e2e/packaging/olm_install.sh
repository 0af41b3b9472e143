#!/usr/bin/env bash
# OLM installs the operator from its catalog, as README's "Installing" tells users to, and
# upgrades and removes it.
#
# Real: OLM v0's olm-operator and catalog-operator (hack/cluster/olm) on the bed's API server,
# the committed catalog/ served by `opm serve` and reached by a CatalogSource's spec.address,
# the Namespace, OperatorGroup and Subscription of README, kwok playing the kubelet of the
# Deployment's pods. Simulated, because the bed runs no container runtime: the bundle-unpack
# pod (hack/sim/olm-unpack runs its extract container's `opm alpha bundle extract` against the
# bundle directory its image is built from, with the pod's ServiceAccount token), and the
# operator's pod, whose container is the operator binary run here with a token of the
# ServiceAccount OLM created and the command line of the CSV OLM installed.
#
# - Subscription -> InstallPlan Complete -> CSV Succeeded; OLM made the CRD, the
#   ServiceAccount, the ClusterRoles and bindings from the bundle; the Deployment's pods are
#   Ready on kwok nodes;
# - the operator reconciles the first of alm-examples (its metrics pointed at the bed's
#   Prometheus) to Ready, and its log has no "forbidden" or 403;
# - OpenShift's platform monitoring (tests/e2e/lib/platform_monitoring.sh: the real Prometheus
#   Operator and config reloader, a Prometheus `k8s` set up as the cluster-monitoring-operator
#   sets it up, its pod played on the host) consumes the ServiceMonitor and PrometheusRule
#   OLM created from the bundle: with the service CA stand-in's serving certificate
#   (tests/e2e/lib/service_ca.sh) both replicas are scraped over TLS verified for the
#   ServiceMonitor's serverName, with prometheus-k8s's own token and role, and every rule
#   of the PrometheusRule is loaded;
# - OLM installs no admission policy (no bundle can carry one): a PsiRebalance with
#   machineConfig enabled is refused (PSIEnabled False, AdmissionPolicyMissing, the message
#   naming the policy and its binding and `kubectl apply -k config/admission`), nothing is
#   written; once that command is run the operator writes the MachineConfig;
# - a second version, built by hack/bundle.sh into a temporary directory and served as the
#   next catalog, is offered on the channel: OLM upgrades to it by its skipRange;
# - every ClusterRole and ClusterRoleBinding of ours the install added (named or labelled for
#   psi-rebalancer or its API, OLM's for a CSV or the OperatorGroup of the namespace, or binding
#   its ServiceAccounts) is OLM's own and goes with an object: the CSV's (its
#   clusterPermissions), the OperatorGroup's, or the CRD's (the roles aggregating access to
#   PsiRebalances, owned by the CRD); none is shipped as a bundle manifest (OLM never deletes
#   those);
# - deleting the Subscription and the CSV as README says leaves none of the CSV's behind and
#   nothing bound to the namespace's ServiceAccounts; deleting the OperatorGroup, as README
#   goes on, leaves only the CRD's; what OLM keeps is the CRD (its custom resources would go
#   with it); README's last step, deleting the CRD, when this test made it: the cluster-scoped
#   RBAC of ours is what it was before the install.
#
#   olm_install.sh    (run by ctest)
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/mco.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../lib/service_ca.sh"
source "$(dirname "$0")/../lib/platform_monitoring.sh"

src=${PSI_SOURCE_DIR:?}
csv_file=$src/bundle/manifests/psi-rebalancer.clusterserviceversion.yaml
# README's namespace for OLM, the one the bundle suggests
ns=$(python3 -c 'import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))["metadata"]["annotations"]["operatorframework.io/suggested-namespace"])' "$csv_file")
market=openshift-marketplace
crd=psirebalances.rebalance.psi.dev
sample=$(python3 -c 'import json, sys, yaml
print(json.loads(yaml.safe_load(open(sys.argv[1]))["metadata"]["annotations"]["alm-examples"])[0]["metadata"]["name"])' "$csv_file")
crd_before=$(kubectl get crd "$crd" -o name 2>/dev/null || true)
# our_cluster_rbac: the ClusterRoles and ClusterRoleBindings of ours, one "KIND/NAME OWNER" a
# line: named or labelled for psi-rebalancer or its API (OLM names the roles of a CSV's
# clusterPermissions after the CSV, those of an OperatorGroup after it), OLM's for an owner in
# $ns, or binding a ServiceAccount of $ns. OWNER is what removes it: csv (OLM's labels for a
# CSV of $ns), operatorgroup (the same for the OperatorGroup), crd (an ownerReference to the
# CRD), or "-" (nothing: it would outlive the install). Other tests on this bed may have
# applied config/rbac: what counts is the difference.
our_cluster_rbac() {
  kubectl get clusterroles,clusterrolebindings -o json | jq -r --arg ns "$ns" --arg crd "$crd" '
    .items[] | (.metadata.labels // {}) as $l | select(
      (.metadata.name | test("psi-rebalancer|psirebalances[.]rebalance[.]psi[.]dev"))
      or $l["app.kubernetes.io/name"] == "psi-rebalancer"
      or ($l["olm.owner"] // "" | startswith("psi-rebalancer."))
      or $l["olm.owner.namespace"] == $ns
      or any(.subjects[]?; .kind == "ServiceAccount" and .namespace == $ns)
      or (.roleRef.name // "" | test("psi-rebalancer")))
    | (if $l["olm.owner.namespace"] == $ns and $l["olm.owner.kind"] == "ClusterServiceVersion" then "csv"
       elif $l["olm.owner.namespace"] == $ns and $l["olm.owner.kind"] == "OperatorGroup" then "operatorgroup"
       elif any(.metadata.ownerReferences[]?; (.kind | ascii_downcase) == "customresourcedefinition" and .name == $crd) then "crd"
       else "-" end) as $owner
    | "\(.kind)/\(.metadata.name) \($owner)"' | sort
}
rbac_before=$(our_cluster_rbac)
# The operator processes of the Deployment's other pods (standby replicas), beside operator_pid.
standby_pids=()
stop_standby() {
  local p
  for p in "${standby_pids[@]+"${standby_pids[@]}"}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  standby_pids=()
}

cleanup() {
  kubectl delete psirebalance "$sample" --ignore-not-found --timeout=30s >/dev/null 2>&1 || true
  if [ -n "${mc_name:-}" ]; then
    kubectl delete psirebalance "$mc_name" --ignore-not-found --timeout=30s >/dev/null 2>&1 || true
    mco_forget_pools worker 99-worker-psi-rebalancer
  fi
  [ -n "${admission_before-x}" ] || kubectl delete -k "$src/config/admission" --ignore-not-found >/dev/null 2>&1 || true
  [ -z "${unpack_pid:-}" ] || kill -- "-$unpack_pid" 2>/dev/null || true # its process group: the watch with it
  rm -f "$PSI_PROMETHEUS_TARGETS/exporter-$$.json"
  stop_standby
  if ((failures)); then
    for l in "$work/prometheus-operator.log" "$work"/prometheus-k8s-0/*.log; do
      [ -f "$l" ] && { echo "---- $(basename "$l") (last 20 lines) ----"; tail -20 "$l"; }
    done
    for l in olm-operator catalog-operator; do echo "---- $l log (last 20 lines) ----"; tail -20 "$PSI_TESTBED/logs/$l.log"; done
    echo "---- olm-unpack log ----"; cat "$work/unpack.log"
  fi
  platform_monitoring_cleanup
  operator_cleanup
  kubectl delete namespace "$ns" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  kubectl delete catalogsource psi-rebalancer -n "$market" --ignore-not-found >/dev/null 2>&1 || true
  "$src/hack/cluster/olm" down
  [ -n "$crd_before" ] || kubectl delete crd "$crd" --ignore-not-found >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$src/hack/cluster/olm" up
# The next release, as a release builds it; its catalog, like every release's, carries it alone.
"$src/hack/bundle.sh" --out "$work/next" 0.2.0 registry.invalid/psi-rebalancer/psi-rebalancer:0.2.0 2>"$work/bundle.log" ||
  { fail "hack/bundle.sh builds version 0.2.0:"; cat "$work/bundle.log"; finish; }
bundle_image() { python3 -c 'import sys, yaml
print(next(d["image"] for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("schema") == "olm.bundle"))' "$1/psi-rebalancer/catalog.yaml"; }
setsid "$src/hack/sim/olm-unpack" "$market" "$(bundle_image "$src/catalog")=$src/bundle" \
  "$(bundle_image "$work/next/catalog")=$work/next/bundle" 2>"$work/unpack.log" &
unpack_pid=$!
"$src/hack/cluster/olm" serve psi-rebalancer "$src/catalog"

# --- the install, as README has it ---------------------------------------------------------------
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: $ns
  labels: {openshift.io/cluster-monitoring: "true"}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: psi-rebalancer, namespace: $ns}
spec: {}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: psi-rebalancer, namespace: $ns}
spec:
  channel: stable
  name: psi-rebalancer
  source: psi-rebalancer
  sourceNamespace: $market
  installPlanApproval: Automatic
YAML

csv_phase() { [ "$(kubectl get csv "$1" -n "$ns" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$2" ]; }
plan_complete() {
  local ip
  ip=$(kubectl get subscription psi-rebalancer -n "$ns" -o jsonpath='{.status.installPlanRef.name}')
  [ -n "$ip" ] && [ "$(kubectl get installplan "$ip" -n "$ns" -o jsonpath='{.status.phase}')" = Complete ]
}
eventually 240 "the Subscription's InstallPlan completes (resolved from the catalog, bundle unpacked)" plan_complete
eventually 120 "the CSV psi-rebalancer.v0.1.0 reaches Succeeded" csv_phase psi-rebalancer.v0.1.0 Succeeded
((failures == 0)) || finish # nothing below can pass without the install
check "OLM created the CRD $crd" kubectl wait --for=condition=Established "crd/$crd" --timeout=30s
owned_by_csv() { # KIND NAME: owned by the CSV (ownerReference)
  kubectl get "$1" "$2" -n "$ns" -o json | jq -e '.metadata.ownerReferences[]? | select(.kind == "ClusterServiceVersion")' >/dev/null
}
check "OLM created the ServiceAccount psi-rebalancer, owned by the CSV" owned_by_csv serviceaccount psi-rebalancer
rbac_of_ns() { # the cluster-scoped RBAC OLM made for a CSV of $ns, or bound to its ServiceAccounts
  { kubectl get clusterroles,clusterrolebindings -l "olm.owner.namespace=$ns,olm.owner.kind=ClusterServiceVersion" -o name
    kubectl get clusterrolebindings -o json | jq -r --arg ns "$ns" \
      '.items[] | select(any(.subjects[]?; .kind == "ServiceAccount" and .namespace == $ns)) | "clusterrolebinding.rbac.authorization.k8s.io/\(.metadata.name)"'
  } | sort -u
}
binds_operator() {
  kubectl get clusterrolebindings -l "olm.owner=psi-rebalancer.v0.1.0" -o json | jq -e --arg ns "$ns" \
    '[.items[] | select(any(.subjects[]; .kind == "ServiceAccount" and .name == "psi-rebalancer" and .namespace == $ns))] | length > 0' >/dev/null
}
check "OLM created ClusterRoles and ClusterRoleBindings of the CSV for the ServiceAccount" binds_operator
added_rbac() { comm -13 <(echo "$rbac_before") <(our_cluster_rbac); }
added=$(added_rbac)
echo "cluster-scoped RBAC of ours the install added:"; sed 's/^/  /' <<<"$added"
goes_with() { grep -c " $1\$" <<<"$added" || true; }
check "all of it goes with the CSV ($(goes_with csv)), the OperatorGroup ($(goes_with operatorgroup)) or the CRD ($(goes_with crd)): none shipped as a bundle manifest" \
  bash -c '[ -n "$0" ] && ! grep -v " \(csv\|operatorgroup\|crd\)\$" <<<"$0"' "$added"
check "the CSV's clusterPermissions are among it" bash -c 'grep -q "^ClusterRoleBinding/psi-rebalancer.v0.1.0-.* csv\$" <<<"$0"' "$added"
deployment_ready() {
  kubectl get deployment psi-rebalancer -n "$ns" -o json | jq -e '.status.readyReplicas == .spec.replicas and .spec.replicas > 0' >/dev/null
}
eventually 60 "the Deployment's pods are Ready" deployment_ready
on_kwok() {
  local n nodes
  nodes=$(kubectl get pods -n "$ns" -l app.kubernetes.io/name=psi-rebalancer -o jsonpath='{.items[*].spec.nodeName}')
  [ -n "$nodes" ] || return 1
  for n in $nodes; do
    [ "$(kubectl get node "$n" -o jsonpath='{.metadata.labels.type}')" = kwok ] || return 1
  done
}
check "the pods run on kwok nodes" on_kwok

# --- the operator as OLM made it -----------------------------------------------------------------
kubectl get csv psi-rebalancer.v0.1.0 -n "$ns" -o json > "$work/csv.json"
# The serving certificate: the service CA stand-in makes the Secret the metrics Service's
# annotation names, and the kubelet would mount it where the CSV's volume says.
cert_secret=$(service_ca_serving_secret "$ns" psi-rebalancer-metrics)
check "the CSV mounts the service CA's Secret $cert_secret" jq -e --arg s "$cert_secret" \
  '.spec.install.spec.deployments[0].spec.template.spec.volumes[] | select(.secret.secretName == $s)' "$work/csv.json"
mkdir -p "$work/metrics-cert"
for f in tls.crt tls.key; do
  kubectl get secret "$cert_secret" -n "$ns" -o json | jq -r --arg f "$f" '.data[$f] | @base64d' >"$work/metrics-cert/$f"
done
mapfile -t cmdline < <(jq -r --arg ns "$ns" --arg cert "$work/metrics-cert" '.spec.install.spec.deployments[0].spec.template.spec.containers[0] |
  (.command // []) + (.args // []) | .[] | gsub("\\$\\(POD_NAMESPACE\\)"; $ns) | sub("^--metrics-cert-dir=.*"; "--metrics-cert-dir=" + $cert)' "$work/csv.json")
token=$(kubectl create token psi-rebalancer -n "$ns" --duration=1h)
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
cat > "$work/sa.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: bed, cluster: {server: "$server", certificate-authority: "$PSI_TESTBED/pki/ca.crt"}}]
users: [{name: psi-rebalancer, user: {token: "$token"}}]
contexts: [{name: bed, context: {cluster: bed, user: psi-rebalancer, namespace: $ns}}]
current-context: bed
YAML
mapfile -t nodes < <(kubectl get nodes -l type=kwok -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
start_exporter "${nodes[@]}"
# One process per pod of the Deployment, its metrics on the pod's address in the bed's network
# (platform_monitoring.sh) and the port the CSV names: the first is operator_pid, the others
# (standby replicas) standby_pids.
metrics_port=$(jq -r '.spec.install.spec.deployments[0].spec.template.spec.containers[0].ports[] | select(.name == "https") | .containerPort' "$work/csv.json")
mapfile -t pod_ips < <(kubectl get pods -n "$ns" -l app.kubernetes.io/name=psi-rebalancer -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}')
for ip in "${pod_ips[@]}"; do
  "$operator_bin" "${cmdline[@]:1}" --kubeconfig "$work/sa.kubeconfig" \
    --metrics-bind-address="$(pod_address "$ip"):$metrics_port" --health-probe-bind-address=127.0.0.1:0 >>"$work/operator.log" 2>&1 &
  if [ -z "${operator_pid:-}" ]; then operator_pid=$!; else standby_pids+=($!); fi
done
all_mapped() { local ip; for ip in "${pod_ips[@]}"; do [ -n "$(pod_address "$ip")" ] || return 1; done; }
check "the Deployment's ${#pod_ips[@]} pods have addresses in the bed's network" all_mapped
platform_monitoring_up || fail "OpenShift's platform monitoring comes up on the bed"

python3 - "$src/bundle/manifests/psi-rebalancer.clusterserviceversion.yaml" "$PSI_PROMETHEUS_URL" > "$work/sample.json" <<'PY'
import json, sys, yaml
sample = json.loads(yaml.safe_load(open(sys.argv[1]))["metadata"]["annotations"]["alm-examples"])[0]
# The example reads the OpenShift Thanos querier; the bed's Prometheus stands in for it.
sample["spec"]["metrics"] = {"source": "Prometheus", "prometheus": {"url": sys.argv[2], "bearerTokenFile": ""},
                             "interval": "5s", "window": "15s"}
json.dump(sample, sys.stdout)
PY
kubectl apply -f "$work/sample.json" >/dev/null
ready() { [ "$(condition "$sample" Ready)" = True ]; }
eventually 90 "the operator reconciles the alm-examples PsiRebalance $sample to Ready" ready

# --- the platform Prometheus scrapes it and loads its rules ------------------------------------
job=serviceMonitor/$ns/psi-rebalancer/0
targets() { curl -sf "$platform_prometheus_url/api/v1/targets?state=active" | jq -c --arg job "$job" '[.data.activeTargets[] | select(.scrapePool == $job)]'; }
all_up() { targets | jq -e --argjson n "${#pod_ips[@]}" 'length == $n and all(.health == "up")' >/dev/null; }
eventually 120 "Prometheus k8s scrapes $job: ${#pod_ips[@]} targets, every one up" all_up
targets | jq -r '.[] | "  \(.scrapeUrl) \(.health) \(.lastError)"' || true
scrape_config() { curl -sf "$platform_prometheus_url/api/v1/status/config" | jq -r .data.yaml |
  python3 -c 'import json, sys, yaml
print(json.dumps(next(c for c in yaml.safe_load(sys.stdin)["scrape_configs"] if c["job_name"] == sys.argv[1])))' "$job"; }
verified_tls() {
  scrape_config | jq -e --arg ns "$ns" '.scheme == "https" and (.tls_config.insecure_skip_verify | not)
    and .tls_config.server_name == "psi-rebalancer-metrics.\($ns).svc"
    and .tls_config.ca_file == "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt"
    and (.authorization.credentials_file // .bearer_token_file) == "/var/run/secrets/kubernetes.io/serviceaccount/token"' >/dev/null
}
check "its scrape configuration verifies TLS for psi-rebalancer-metrics.$ns.svc with the service CA, and sends prometheus-k8s's token" verified_tls
query() { curl -sf "$platform_prometheus_url/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result | length'; }
check "the operator's own series are in Prometheus k8s, from every replica" \
  test "$(query "count by (instance) (psi_rebalancer_metrics_auth_requests_total{namespace=\"$ns\"})")" = "${#pod_ips[@]}"
rule_names() { python3 -c 'import sys, yaml
for g in yaml.safe_load(open(sys.argv[1]))["spec"]["groups"]:
    for r in g["rules"]: print(g["name"], r.get("alert") or r.get("record"))' "$1" | sort; }
loaded_rules() { curl -sf "$platform_prometheus_url/api/v1/rules" | jq -r '.data.groups[] | .name as $g | .rules[] |
  select(.health == "ok" or .health == "unknown") | "\($g) \(.name)"' | sort; }
shipped_rules=$(rule_names "$src/bundle/manifests/psi-rebalancer_monitoring.coreos.com_v1_prometheusrule.yaml")
all_loaded() { [ "$(loaded_rules)" = "$shipped_rules" ]; }
eventually 60 "Prometheus k8s loaded every rule of the bundle's PrometheusRule ($(wc -l <<<"$shipped_rules")), none failing" all_loaded
no_private() { ! targets | grep -Eq '//(10\.|172\.(1[6-9]|2[0-9]|3[01])\.|192\.168\.)'; }
check "no scrape of Prometheus k8s went to a private address" no_private
platform_monitoring_cleanup
stop_standby

kubectl delete psirebalance "$sample" --timeout=60s >/dev/null
check "deleted, its finalizer removed by the operator" bash -c "! kubectl get psirebalance $sample 2>/dev/null"

# --- machineConfig mode needs config/admission, which no bundle can carry -----------------------
# Without the admission policy that confines its MachineConfig writes the operator refuses
# machineConfig mode, saying what is missing and how to apply it; once README's
# `kubectl apply -k config/admission` is done, it proceeds.
admission_before=$(kubectl get validatingadmissionpolicybinding psi-rebalancer-machineconfigs -o name 2>/dev/null || true)
kubectl delete -k "$src/config/admission" --ignore-not-found >/dev/null
mco_worker_pool
mc_name=mc-olm-$$
python3 - "$work/sample.json" "$mc_name" > "$work/mc.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
o["metadata"] = {"name": sys.argv[2]}
o["spec"]["nodeSelector"] = {"matchLabels": {"node-role.kubernetes.io/worker": ""}}
o["spec"]["machineConfig"] = {"enabled": True}
json.dump(o, sys.stdout)
PY
kubectl apply -f "$work/mc.json" >/dev/null
psi_enabled() { kubectl get psirebalance "$mc_name" -o json | jq -c '.status.conditions[]? | select(.type == "PSIEnabled") | {status, reason, message}'; }
refused() {
  psi_enabled | jq -e '.status == "False" and .reason == "AdmissionPolicyMissing" and
    (.message | contains("ValidatingAdmissionPolicy psi-rebalancer-machineconfigs is missing") and
     contains("ValidatingAdmissionPolicyBinding psi-rebalancer-machineconfigs is missing") and
     contains("kubectl apply -k config/admission"))' >/dev/null
}
eventually 60 "without config/admission: PSIEnabled=False AdmissionPolicyMissing, naming the policy, its binding and the command" refused
psi_enabled
sleep 12
check "no MachineConfig written while refused (two cycles)" bash -c "! kubectl get machineconfig 99-worker-psi-rebalancer >/dev/null 2>&1"
kubectl apply -k "$src/config/admission" >/dev/null
eventually 60 "config/admission applied: the operator writes the worker MachineConfig" kubectl get machineconfig 99-worker-psi-rebalancer -o name
proceeds() { psi_enabled | jq -e '.reason | startswith("AdmissionPolicy") | not' >/dev/null; }
eventually 30 "and PSIEnabled is no longer refused" proceeds
psi_enabled
kubectl delete psirebalance "$mc_name" --timeout=60s >/dev/null
mco_forget_pools worker 99-worker-psi-rebalancer
[ -n "$admission_before" ] || kubectl delete -k "$src/config/admission" --ignore-not-found >/dev/null
stop_operator
if grep -Eiq 'forbidden|\b403\b' "$work/operator.log"; then
  fail "the operator's log reports a permission denied:"; grep -Ei 'forbidden|\b403\b' "$work/operator.log" | head -10
else
  pass "no permission denied in the operator's log ($(wc -l < "$work/operator.log") lines)"
fi

# --- upgrade: the next release's catalog ---------------------------------------------------------
"$src/hack/cluster/olm" serve psi-rebalancer "$work/next/catalog"
eventually 240 "OLM upgrades to psi-rebalancer.v0.2.0 (Succeeded)" csv_phase psi-rebalancer.v0.2.0 Succeeded
check "the new CSV replaces psi-rebalancer.v0.1.0" bash -c \
  "[ \"\$(kubectl get csv psi-rebalancer.v0.2.0 -n $ns -o jsonpath='{.spec.replaces}')\" = psi-rebalancer.v0.1.0 ]"
eventually 60 "the old CSV is gone" bash -c "! kubectl get csv psi-rebalancer.v0.1.0 -n $ns 2>/dev/null"
new_image() {
  [ "$(kubectl get deployment psi-rebalancer -n "$ns" -o jsonpath='{.spec.template.spec.containers[0].image}')" = \
    registry.invalid/psi-rebalancer/psi-rebalancer:0.2.0 ]
}
check "the Deployment runs the new image" new_image
eventually 60 "the upgraded Deployment's pods are Ready" deployment_ready

# --- removal ---------------------------------------------------------------------------------------
check "OLM's cluster-scoped RBAC for the CSV is found by its owner labels" test -n "$(rbac_of_ns)"
kubectl delete subscription psi-rebalancer -n "$ns" >/dev/null
check "README's selector deletes the CSV" bash -c \
  "kubectl delete csv -n $ns -l operators.coreos.com/psi-rebalancer.$ns -o name | grep -qx clusterserviceversion.operators.coreos.com/psi-rebalancer.v0.2.0"
no_rbac_left() { [ -z "$(rbac_of_ns)" ]; }
# OLM deletes what it sees in its cache; under load a binding of the upgrade can be missed for
# good (seen once in CI): said, not failed, and README's next command deletes what is left
for _ in $(seq 1 60); do no_rbac_left && break; sleep 1; done
no_rbac_left || { echo "note: OLM left, 60 s after the CSV's deletion:"; rbac_of_ns | sed 's/^/  /'; }
kubectl delete clusterroles,clusterrolebindings -l "olm.owner.kind=ClusterServiceVersion,olm.owner.namespace=$ns" >/dev/null
eventually 60 "no ClusterRole or ClusterRoleBinding of the CSV is left, none binds the namespace's ServiceAccounts" no_rbac_left
((failures == 0)) || rbac_of_ns
only_of() { ! added_rbac | grep -qv " \($1\)\$"; }
eventually 60 "nothing of ours is left but what goes with the OperatorGroup and the CRD" only_of 'operatorgroup\|crd'
kubectl delete operatorgroup psi-rebalancer -n "$ns" >/dev/null
eventually 60 "README deletes the OperatorGroup: nothing of ours is left but the CRD's" only_of crd
only_of crd || { echo "left behind:"; added_rbac | sed 's/^/  /'; }
eventually 60 "the Deployment is gone" bash -c "! kubectl get deployment psi-rebalancer -n $ns 2>/dev/null"
check "the CRD stays (OLM never deletes a CRD)" kubectl get crd "$crd"
if [ -z "$crd_before" ]; then
  kubectl delete crd "$crd" --timeout=60s >/dev/null
  as_before() { [ -z "$(added_rbac)" ]; }
  eventually 60 "README deletes the CRD: the cluster-scoped RBAC of ours is as before the install" as_before
  as_before || { echo "left behind:"; added_rbac | sed 's/^/  /'; }
else
  echo "note: the CRD was there before this test; its aggregated roles stay with it (checked above)"
fi
finish
