#!/usr/bin/env bash
# e2e: the kubelet Summary source through the real API server's node proxy, with no kubelet
# behind it: the API server reaches kubelets through the bed's egress socket, which nothing
# serves unless the simulator runs (kubelet_rebalance.sh has it). This checks the fetch and
# its failure reasons: an unreachable
# kubelet, a node that does not exist, and RBAC (a service account without get on
# nodes/proxy is Forbidden; with it, the request reaches the proxy).
# usage: kubelet_e2e.sh PATH/TO/kubelet_probe
source "$(dirname "$0")/../lib/testlib.sh"
probe=$1
ns=psi-kubelet-e2e-$$
work=$(mktemp -d)
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
      kubectl delete clusterrole,clusterrolebinding "$ns" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

mapfile -t nodes < <(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
((${#nodes[@]} > 0)) || { echo "no nodes in the test bed"; exit 1; }

out=$("$probe" "${nodes[@]}")
echo "$out" | sed 's/^/# /'
check "every kwok node unreachable: the sample fails with SourceUnreachable" \
  grep -q "^STATUS failed SourceUnreachable no node's summary could be read" <<<"$out"
check "the message names the node proxy path" grep -q "/api/v1/nodes/.*/proxy/stats/summary" <<<"$out"
check "every node is Unknown, unreachable" \
  test "$(grep -c '^NODE .* Unknown Unknown Unknown SourceUnreachable$' <<<"$out")" -eq "${#nodes[@]}"
# the nodes are read at once: the error kept as the first is whichever failed first
check "each node's failure is counted" \
  grep -qE "^NODE_ERRORS ${#nodes[@]} node ($(IFS='|'; echo "${nodes[*]}")): SourceUnreachable" <<<"$out"

out=$("$probe" no-such-node)
echo "$out" | sed 's/^/# /'
check "a node that does not exist: NotFound" grep -q "^STATUS failed NotFound .*no-such-node" <<<"$out"

# As a service account, the way the operator runs.
kubectl create namespace "$ns" >/dev/null
kubectl create serviceaccount probe -n "$ns" >/dev/null
hostport=${PSI_APISERVER_URL#https://}
sa=$work/sa
mkdir -p "$sa" "$work/home"
cp "$PSI_TESTBED/pki/ca.crt" "$sa/ca.crt"
echo "$ns" >"$sa/namespace"
kubectl create token probe -n "$ns" --duration=1h >"$sa/token"
as_sa() {
  env -u KUBECONFIG HOME="$work/home" KUBERNETES_SERVICE_HOST="${hostport%:*}" \
    KUBERNETES_SERVICE_PORT="${hostport##*:}" PSI_SERVICEACCOUNT_DIR="$sa" "$probe" "$@"
}
out=$(as_sa "${nodes[0]}")
echo "$out" | sed 's/^/# /'
check "without get on nodes/proxy: Forbidden naming the service account" \
  grep -q "^STATUS failed Forbidden .*system:serviceaccount:$ns:probe" <<<"$out"

kubectl create clusterrole "$ns" --verb=get --resource=nodes/proxy >/dev/null
kubectl create clusterrolebinding "$ns" --clusterrole="$ns" --serviceaccount="$ns:probe" >/dev/null
sa_reaches_proxy() { as_sa "${nodes[0]}" | grep -q "^STATUS failed SourceUnreachable"; }
eventually 30 "with get on nodes/proxy the request passes RBAC and reaches the node proxy" sa_reaches_proxy
finish
