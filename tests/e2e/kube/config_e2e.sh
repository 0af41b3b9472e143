#!/usr/bin/env bash
# kube_config against the real API server: in-cluster config from a service-account directory
# (a token minted with `kubectl create token`), token rotation in a running process,
# kubeconfig -data fields, tls-server-name, and TLS verification that is never off unless
# insecure-skip-tls-verify: true is written.
# usage: config_e2e.sh PATH/TO/kube_get
source "$(dirname "$0")/../lib/testlib.sh"
get=$1
ns=config-e2e-$$
work=$(mktemp -d)
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
kubectl create namespace "$ns" >/dev/null
kubectl create serviceaccount probe -n "$ns" >/dev/null

hostport=${PSI_APISERVER_URL#https://}
host=${hostport%:*}
port=${hostport##*:}
pki=$PSI_TESTBED/pki
sa=$work/sa
mkdir -p "$sa" "$work/home"
cp "$pki/ca.crt" "$sa/ca.crt"
echo "$ns" >"$sa/namespace"
kubectl create token probe -n "$ns" --duration=1h >"$sa/token"
kubectl create token probe -n "$ns" --duration=1h >"$work/token2"

# run kube_get as a pod would: no KUBECONFIG, an empty HOME, the service env and the SA dir
incluster() {
  env -u KUBECONFIG HOME="$work/home" KUBERNETES_SERVICE_HOST="$host" KUBERNETES_SERVICE_PORT="$port" \
    PSI_SERVICEACCOUNT_DIR="$sa" "$get" "$@"
}

out=$(incluster "/api/v1/namespaces/$ns/configmaps" || true)
echo "$out" | sed 's/^/# /'
check "in-cluster config is chosen without a kubeconfig" grep -q "^CONFIG in-cluster https://$host:$port" <<<"$out"
check "the service-account token authenticates (403 names the service account)" \
  grep -q "^ERR 403 Forbidden .*system:serviceaccount:$ns:probe" <<<"$out"

kubectl create rolebinding probe-view -n "$ns" --clusterrole=view --serviceaccount="$ns:probe" >/dev/null
eventually 30 "with RBAC granted the same request succeeds" incluster "/api/v1/namespaces/$ns/configmaps"

# rotation: a bad token, replaced while the process runs, is re-read for the next request
echo "not-a-valid-token" >"$sa/token"
out=$(incluster --rotate "$work/token2" "$sa/token" "/api/v1/namespaces/$ns/configmaps" \
  "/api/v1/namespaces/$ns/configmaps" || true)
echo "$out" | sed 's/^/# /'
check "the stale token is refused (401)" grep -q "^ERR 401 Unauthorized" <<<"$out"
check "after rotation the same process uses the new token" bash -c "tail -n1 <<<'$out' | grep -q '^OK '"

# kubeconfig with -data fields and tls-server-name (the server certificate has
# kubernetes.default.svc, not the name we connect to)
b64() { base64 -w0 "$1"; }
kc() { # kc FILE TLS-LINES...: write a kubeconfig for the admin user with cluster lines
  local f=$1; shift
  {
    printf 'apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: c\n  cluster:\n    server: https://%s:%s\n' "$host" "$port"
    for l in "$@"; do printf '    %s\n' "$l"; done
    printf 'users:\n- name: u\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n' "$(b64 "$pki/admin.crt")" "$(b64 "$pki/admin.key")"
    printf 'contexts:\n- name: t\n  context: {cluster: c, user: u}\n'
  } >"$f"
}
kc "$work/data.yaml" "certificate-authority-data: $(b64 "$pki/ca.crt")"
check "CA and client certificate as -data fields" "$get" --kubeconfig "$work/data.yaml" /api/v1/namespaces
kc "$work/sni.yaml" "certificate-authority-data: $(b64 "$pki/ca.crt")" "tls-server-name: kubernetes.default.svc"
check "tls-server-name kubernetes.default.svc verifies against that name" "$get" --kubeconfig "$work/sni.yaml" /api/v1/namespaces
kc "$work/badsni.yaml" "certificate-authority-data: $(b64 "$pki/ca.crt")" "tls-server-name: wrong.example.test"
out=$("$get" --kubeconfig "$work/badsni.yaml" /api/v1/namespaces || true)
echo "$out" | sed 's/^/# /'
check "a tls-server-name the certificate does not carry fails verification" grep -q "^ERR 0 Transport" <<<"$out"
kc "$work/noca.yaml"
out=$("$get" --kubeconfig "$work/noca.yaml" /api/v1/namespaces || true)
echo "$out" | sed 's/^/# /'
check "no CA configured: verification against the system CAs fails (never silently insecure)" \
  grep -q "^ERR 0 Transport" <<<"$out"
kc "$work/insecure.yaml" "insecure-skip-tls-verify: true"
check "insecure-skip-tls-verify: true connects without a CA" "$get" --kubeconfig "$work/insecure.yaml" /api/v1/namespaces

# tokenFile in a kubeconfig, and $KUBECONFIG as a list with a missing file first
cat >"$work/tokenfile.yaml" <<YAML
apiVersion: v1
kind: Config
current-context: t
clusters:
- name: c
  cluster: {server: "https://$host:$port", certificate-authority: $sa/ca.crt}
users:
- name: sa
  user: {tokenFile: $work/token2}
contexts:
- name: t
  context: {cluster: c, user: sa}
YAML
check "\$KUBECONFIG list (missing file skipped) with a tokenFile user" \
  env KUBECONFIG="$work/missing.yaml:$work/tokenfile.yaml" "$get" "/api/v1/namespaces/$ns/configmaps"
out=$(env KUBECONFIG="$work/tokenfile.yaml" "$get" /api/v1/nodes || true)
check "the tokenFile user is the service account (nodes are forbidden to it)" \
  grep -q "^ERR 403 Forbidden .*system:serviceaccount:$ns:probe" <<<"$out"
finish
