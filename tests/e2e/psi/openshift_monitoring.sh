#!/usr/bin/env bash
# The OpenShift monitoring path for real: the operator run as in a pod reads pressure through
# the bed's Thanos querier stand-in (hack/cluster/monitoring: kube-rbac-proxy on HTTPS with a
# certificate of the bed's service CA, TokenReview and SubjectAccessReview as OpenShift's
# querier does them), with a PsiRebalance that sets nothing in metrics.prometheus but the URL.
#
# The operator gets no kubeconfig: KUBERNETES_SERVICE_HOST/_PORT and a ServiceAccount
# directory laid out as OpenShift mounts it (token, ca.crt, service-ca.crt, namespace),
# found through PSI_SERVICEACCOUNT_DIR. Then:
# - the operator may mint tokens for the pressure-reading ServiceAccount and no other; without
#   that Role binding, MetricsAvailable=False (CredentialUnavailable) names the Role;
# - without cluster-monitoring-view for the pressure-reading ServiceAccount: 403, and
#   MetricsAvailable=False says which role to bind to which ServiceAccount;
# - with it: the default trust (the service CA beside the token) verifies the querier, the
#   queries pass and a pressured node is tainted;
# - the API server's audit log shows every SubjectAccessReview of the proxy was for the
#   pressure-reading ServiceAccount and none for the operator's own, whose token never went
#   to the proxy (the operator minted the reader's token with a TokenRequest);
# - the service CA rotated: the querier's new certificate fails with TLSError naming
#   service-ca.crt until the new service-ca.crt lands in the directory, then passes, without
#   a restart;
# - the ServiceAccount token replaced in the directory (as the kubelet does) and the old one
#   invalidated: the operator keeps working with the new one.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../lib/inpod.sh"

name=ocp-monitoring-$$
binding=psi-e2e-monitoring-view-$$
ns=psi-rebalancer
sa_dir=$work/serviceaccount
audit_log=$PSI_TESTBED/logs/audit.log
reader=system:serviceaccount:$ns:psi-rebalancer-pressure-reader
operator_user=system:serviceaccount:$ns:psi-rebalancer

cleanup() {
  kubectl delete psirebalance "$name" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  rm -f "$PSI_PROMETHEUS_TARGETS"/exporter-$$.json
  operator_cleanup
  kubectl delete clusterrolebinding "$binding" --ignore-not-found >/dev/null 2>&1 || true
  kubectl apply -k "$PSI_SOURCE_DIR/config/rbac" >/dev/null 2>&1 || true
  kubectl delete secret -n "$ns" psi-e2e-token-a-$$ psi-e2e-token-b-$$ --ignore-not-found >/dev/null 2>&1 || true
  "$PSI_SOURCE_DIR/hack/cluster/monitoring" --dir "$PSI_TESTBED" down >/dev/null 2>&1 || true
  # the bed's API server as it was: without the audit log
  "$PSI_SOURCE_DIR/hack/cluster/ctl" --dir "$PSI_TESTBED" restart apiserver >/dev/null 2>&1 || true
}
trap cleanup EXIT

# bound_token SECRET: a token of the operator's ServiceAccount that dies with SECRET.
bound_token() {
  kubectl create secret generic "$1" -n "$ns" >/dev/null
  kubectl create token psi-rebalancer -n "$ns" --duration=1h --bound-object-kind Secret --bound-object-name "$1"
}

show_message() { # print MetricsAvailable's message, for whoever reads the test's output
  echo "     MetricsAvailable: $(kubectl get psirebalance "$name" -o json |
    jq -r '.status.conditions[]? | select(.type == "MetricsAvailable") | "\(.reason): \(.message)"')"
}
metrics_condition() { # REASON GREP: MetricsAvailable has REASON and its message matches GREP
  local c
  c=$(kubectl get psirebalance "$name" -o json | jq -c '.status.conditions[]? | select(.type == "MetricsAvailable")')
  [ "$(jq -r .reason <<<"$c")" = "$1" ] && jq -r .message <<<"$c" | grep -qE -- "$2"
}

# --- the bed: the querier stand-in, and the API server with its audit log --------------------
monitoring_up
: > "$audit_log" 2>/dev/null || true
PSI_TESTBED_AUDIT=1 "$PSI_SOURCE_DIR/hack/cluster/ctl" --dir "$PSI_TESTBED" restart apiserver
install_operator_rbac
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
cannot_read_monitoring() { ! reads_monitoring "$1"; }
check "the operator's own ServiceAccount may not read monitoring data" cannot_read_monitoring "$operator_user"
may_mint() { # SA: the operator may create tokens for ServiceAccount SA of its namespace
  [ "$(kubectl auth can-i create serviceaccounts/"$1" --subresource=token -n "$ns" --as "$operator_user" 2>/dev/null)" = yes ]
}
# (the restarted API server's authorizer follows config/rbac through its caches: waited for)
eventually 30 "the operator may mint tokens for the pressure reader" may_mint psi-rebalancer-pressure-reader
mints_no_other() { ! may_mint psi-rebalancer && ! may_mint default; }
check "... and for no other ServiceAccount (its own included)" mints_no_other
# First without its right to mint the reader's tokens, to see what that looks like.
kubectl delete rolebinding psi-rebalancer-pressure-token -n "$ns" >/dev/null

# --- the operator, as in a pod ---------------------------------------------------------------
operator_sa_dir "$sa_dir" "$(bound_token psi-e2e-token-a-$$)"
start_exporter worker-0 worker-1 worker-2
start_operator_in_pod "$sa_dir"
querier_psirebalance "$name" 0s

# --- without the right to mint the reader's token: CredentialUnavailable ----------------------
eventually 60 "without the token Role: MetricsAvailable=False, CredentialUnavailable naming the Role" \
  metrics_condition CredentialUnavailable "HTTP 403.*psi-rebalancer-pressure-token"
show_message
kubectl apply -k "$PSI_SOURCE_DIR/config/rbac" >/dev/null

# --- without the monitoring role: 403, and the reason says what to bind -----------------------
eventually 90 "without the role: MetricsAvailable=False, Forbidden, naming cluster-monitoring-view and the reader" \
  metrics_condition Forbidden "cluster-monitoring-view.*psi-rebalancer-pressure-reader|psi-rebalancer-pressure-reader.*cluster-monitoring-view"
check "the 403 came from the querier for the pressure reader (its user in the proxy's answer)" \
  metrics_condition Forbidden "user=$reader"
show_message
check "the operator minted the reader's token with a TokenRequest (audit log)" bash -c \
  "jq -e -s --arg u $operator_user '[.[] | select(.user.username == \$u and .objectRef.resource == \"serviceaccounts\" and .objectRef.subresource == \"token\" and .objectRef.name == \"psi-rebalancer-pressure-reader\" and .responseStatus.code == 201)] | length >= 1' $audit_log"

# --- with it: the default trust and the reader's token carry the queries ----------------------
kubectl create clusterrolebinding "$binding" --clusterrole cluster-monitoring-view \
  --serviceaccount "$ns:psi-rebalancer-pressure-reader" >/dev/null
eventually 60 "... the bound pressure reader may (the check itself works)" reads_monitoring "$reader"
eventually 90 "with the role: MetricsAvailable=True through the querier (service CA trusted by default)" \
  metrics_condition SampleSucceeded .
set_pressure worker-0 cpu 60
eventually 60 "a pressured node is tainted through the querier" node_tainted worker-0 "$name"
sars() { # USER: how many of the proxy's SubjectAccessReviews were for USER
  jq -s --arg u "$1" '[.[] | select(.objectRef.resource == "subjectaccessreviews" and
     .user.username == "system:serviceaccount:openshift-monitoring:thanos-querier" and .requestObject.spec.user == $u)] | length' "$audit_log"
}
check "the querier checked the pressure reader's identity (audit log: its SubjectAccessReviews)" test "$(sars "$reader")" -ge 1
check "the querier allowed the pressure reader once bound (audit log)" bash -c \
  "jq -e -s --arg u $reader '[.[] | select(.objectRef.resource == \"subjectaccessreviews\" and .requestObject.spec.user == \$u and .responseObject.status.allowed == true)] | length >= 1' $audit_log"
check "the querier never saw the operator's own token (no SubjectAccessReview for it)" test "$(sars "$operator_user")" -eq 0

# --- the service CA rotated -------------------------------------------------------------------
"$PSI_SOURCE_DIR/hack/cluster/monitoring" --dir "$PSI_TESTBED" rotate-ca >/dev/null
eventually 60 "a querier certificate of a new service CA: MetricsAvailable=False, TLSError naming service-ca.crt" \
  metrics_condition TLSError "$sa_dir/service-ca.crt"
show_message
check "the taint is held while the metrics are unavailable" node_tainted worker-0 "$name"
put "$sa_dir/service-ca.crt" < "$PSI_SERVICE_CA"
eventually 60 "the new service-ca.crt is picked up without a restart: MetricsAvailable=True" \
  metrics_condition SampleSucceeded .
check "the operator ran on (same process)" kill -0 "$operator_pid"

# --- the ServiceAccount token replaced ----------------------------------------------------------
old_token=$(cat "$sa_dir/token")
bound_token psi-e2e-token-b-$$ | put "$sa_dir/token"
kubectl delete secret -n "$ns" psi-e2e-token-a-$$ >/dev/null
token_refused() { ! kubectl --token "$old_token" --kubeconfig /dev/null --server "$PSI_APISERVER_URL" \
  --certificate-authority "$PSI_TESTBED/pki/ca.crt" get --raw /api >/dev/null 2>&1; }
eventually 60 "the replaced token is invalid (its Secret is gone)" token_refused
set_pressure worker-0 cpu 0
untainted() { ! node_tainted worker-0 "$name"; }
eventually 60 "with the new token from the directory the operator untaints the node" untainted
check "the operator ran on (same process)" kill -0 "$operator_pid"
finish
