# shellcheck shell=bash
# Run the operator in e2e tests as production runs it: under the ServiceAccount and
# ClusterRole of config/rbac, with a token from the TokenRequest API, so that a missing
# permission fails the test. Source after testlib.sh.

operator_bin=${PSI_BINARY_DIR:?}/controller/psi-rebalancer
exporter_bin=${PSI_BINARY_DIR}/hack/sim/psi-pressure-exporter
work=$(mktemp -d)

# The metrics block of a PsiRebalance reading the bed's Prometheus every 5 s over 15 s
# windows (a YAML flow mapping: "  metrics: $bed_metrics").
bed_metrics="{source: Prometheus, prometheus: {url: \"$PSI_PROMETHEUS_URL\", bearerTokenFile: \"\"}, interval: 5s, window: 15s}"

# install_operator_rbac: the CRD, the namespace, the ServiceAccount and its roles (with
# operator_kubelet_rbac=1 also config/kubelet-source, what the Kubelet source needs), and the
# admission policy without which the operator refuses machineConfig mode
# (psi-rebalancer-machineconfigs of config/admission; the others are left to the tests of them).
install_operator_rbac() {
  kubectl apply --server-side -f "$PSI_SOURCE_DIR/crds/" >/dev/null
  # a CRD just created has no status.conditions yet, which `kubectl wait` takes for an error
  local i
  for i in $(seq 1 20); do
    kubectl wait --for=condition=Established crd/psirebalances.rebalance.psi.dev --timeout=60s >/dev/null 2>&1 && break
    sleep 0.5
  done
  kubectl wait --for=condition=Established crd/psirebalances.rebalance.psi.dev --timeout=60s >/dev/null
  kubectl create namespace psi-rebalancer --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -k "$PSI_SOURCE_DIR/config/rbac" >/dev/null
  kubectl apply -f "$PSI_SOURCE_DIR/config/admission/machineconfigs.yaml" >/dev/null
  if [ "${operator_kubelet_rbac:-0}" = 1 ]; then
    kubectl apply -k "$PSI_SOURCE_DIR/config/kubelet-source" >/dev/null
  else
    kubectl delete -k "$PSI_SOURCE_DIR/config/kubelet-source" --ignore-not-found >/dev/null
  fi
  # The API server's authorizer follows new roles and bindings through its caches: wait until
  # it grants what each binding gives, so that the operator's first requests are not refused.
  for i in $(seq 1 120); do operator_rbac_effective && return 0; sleep 0.25; done
  fail "the API server grants the operator's ServiceAccount what config/rbac binds, within 30 s"
}

# operator_rbac_effective: the operator's ServiceAccount may patch nodes, review tokens, hold
# its Lease, mint the pressure reader's tokens (config/rbac) and, with operator_kubelet_rbac=1,
# get nodes/proxy (config/kubelet-source), as the API server's authorizer sees it now.
operator_rbac_effective() {
  local rules
  rules=$(kubectl auth can-i --list -n psi-rebalancer --as system:serviceaccount:psi-rebalancer:psi-rebalancer 2>/dev/null) ||
    return 1
  grep -Eq '^nodes +.*patch' <<<"$rules" && grep -Eq '^tokenreviews.authentication.k8s.io ' <<<"$rules" &&
    grep -Eq '^leases.coordination.k8s.io +.*update' <<<"$rules" &&
    grep -Eq '^serviceaccounts/token +.*psi-rebalancer-pressure-reader' <<<"$rules" &&
    { [ "${operator_kubelet_rbac:-0}" != 1 ] || grep -Eq '^nodes/proxy ' <<<"$rules"; }
}

# operator_kubeconfig FILE: a kubeconfig for the operator's ServiceAccount.
operator_kubeconfig() {
  local token server
  token=$(kubectl create token psi-rebalancer -n psi-rebalancer --duration=2h)
  server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  cat > "$1" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: bed, cluster: {server: "$server", certificate-authority: "$PSI_TESTBED/pki/ca.crt"}}]
users: [{name: psi-rebalancer, user: {token: "$token"}}]
contexts: [{name: bed, context: {cluster: bed, user: psi-rebalancer, namespace: psi-rebalancer}}]
current-context: bed
YAML
}

# start_operator [ARGS...]: start it in the background; its log is $work/operator.log.
# Metrics are plain HTTP here, asked for explicitly, so that tests read them with curl;
# ARGS may turn that back (--metrics-secure=true: the last flag wins).
start_operator() {
  install_operator_rbac
  operator_kubeconfig "$work/operator.kubeconfig"
  "$operator_bin" --kubeconfig "$work/operator.kubeconfig" --metrics-bind-address 127.0.0.1:0 --metrics-secure=false \
    --health-probe-bind-address 127.0.0.1:0 --log-level debug "$@" >>"$work/operator.log" 2>&1 &
  operator_pid=$!
}

stop_operator() {
  [ -n "${operator_pid:-}" ] || return 0
  kill -TERM "$operator_pid" 2>/dev/null || true
  wait "$operator_pid" 2>/dev/null || true
  operator_pid=
}

# start_exporter NODE...: the pressure exporter, every node at 0, scraped by Prometheus.
start_exporter() {
  local args=() n
  for n in "$@"; do args+=(--node "$n"); done
  "$exporter_bin" "${args[@]}" --targets "$PSI_PROMETHEUS_TARGETS/exporter-$$.json" \
    --port-file "$work/exporter.port" >>"$work/exporter.log" 2>&1 &
  exporter_pid=$!
  local i
  for i in $(seq 1 300); do [ -s "$work/exporter.port" ] && break; sleep 0.1; done
  [ -s "$work/exporter.port" ] || { fail "the pressure exporter wrote its port within 30 s (log: $work/exporter.log)"; return 1; }
  exporter_url=http://127.0.0.1:$(cat "$work/exporter.port")
}

# set_pressure NODE RESOURCE PERCENT
set_pressure() { curl -sf -X PUT --data "$3" "$exporter_url/pressure/$1/$2" >/dev/null; }

stop_exporter() {
  [ -n "${exporter_pid:-}" ] || return 0
  kill -TERM "$exporter_pid" 2>/dev/null || true
  wait "$exporter_pid" 2>/dev/null || true
  exporter_pid=
}

# operator_cleanup: stop what this file started; print the operator log when a check failed.
operator_cleanup() {
  stop_operator
  stop_exporter
  if ((failures)) && [ -f "$work/operator.log" ]; then
    echo "---- operator log (last 60 lines) ----"; tail -60 "$work/operator.log"
  fi
  rm -rf "$work"
}

# node_tainted NODE OWNER: our pressure taint, owned by OWNER, is on NODE.
node_tainted() {
  kubectl get node "$1" -o json | jq -e --arg o "$2" \
    '[.spec.taints[]? | select(.key == "rebalance.psi.dev/pressure" and .value == $o)] | length == 1' >/dev/null
}

# psir_field NAME JQ: a field of a PsiRebalance.
psir_field() { kubectl get psirebalance "$1" -o json | jq -r "$2"; }

# condition NAME TYPE: the status of a condition of a PsiRebalance.
condition() { psir_field "$1" ".status.conditions[]? | select(.type == \"$2\") | .status"; }
