#!/usr/bin/env bash
# kubectl-psi's errors, each a sentence naming the problem, exit status 1, and nothing
# printed on stdout: an unusable kubeconfig, no PsiRebalance API (the CRD removed), a user
# without the right to read PsiRebalances (a ServiceAccount without roles: 403), then the
# same user with get, list and watch on them and nothing else (enough: VMs show as unknown),
# and a PsiRebalance that does not exist. The CRD is installed again at the end.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"

psi=$PSI_BINARY_DIR/cli/kubectl-psi
sa=psi-cli-e2e-$$
cleanup() {
  local rc=$?
  kubectl delete clusterrolebinding "$sa" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete clusterrole "$sa" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete serviceaccount "$sa" -n default --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete psirebalance "$sa" --ignore-not-found >/dev/null 2>&1 || true
  install_operator_rbac
  operator_cleanup
  exit "$rc"
}
trap cleanup EXIT

# fails_with DESCRIPTION TEXT CMD...: CMD exits 1, prints nothing on stdout and TEXT on stderr
# (and no sanitizer report: the error paths free what they took).
fails_with() {
  local d=$1 text=$2 rc=0; shift 2
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" -eq 1 ] && [ ! -s "$work/out" ] && grep -qF -- "$text" "$work/err" && ! grep -q Sanitizer "$work/err"; then
    pass "$d"
  else
    fail "$d (exit $rc; stdout: $(head -c 300 "$work/out"); stderr: $(head -c 300 "$work/err"))"
  fi
}

# ---- the kubeconfig ----
fails_with "--kubeconfig naming no file" "cannot use the kubeconfig: kubeconfig $work/none" \
  "$psi" top --kubeconfig "$work/none"
printf 'apiVersion: v1\nkind: Config\nclusters: [\n' >"$work/broken.kubeconfig"
fails_with "KUBECONFIG that is not YAML" "cannot use the kubeconfig" env KUBECONFIG="$work/broken.kubeconfig" "$psi" moves
fails_with "--context that the kubeconfig lacks" "cannot use the kubeconfig" "$psi" why worker-0 --context no-such-context
fails_with "a server that does not answer" "cannot reach the API server at https://127.0.0.1:1" \
  "$psi" top --kubeconfig <(sed 's#server: .*#server: https://127.0.0.1:1#' "$KUBECONFIG")

# ---- no CRD ----
for p in $(kubectl get psirebalances -o name 2>/dev/null); do # left by earlier tests: no operator runs now
  kubectl patch "$p" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
done
kubectl delete crd psirebalances.rebalance.psi.dev --ignore-not-found --timeout=120s >/dev/null
fails_with "no CRD: top says the API is not installed" "the PsiRebalance API (psirebalances.rebalance.psi.dev) is not installed" "$psi" top
fails_with "no CRD: top NAME says so too, not that NAME is missing" "is not installed" "$psi" top demo
fails_with "no CRD: why says so" "is not installed" "$psi" why worker-0

# ---- Forbidden ----
install_operator_rbac
kubectl create serviceaccount "$sa" -n default >/dev/null
token=$(kubectl create token "$sa" -n default --duration=1h)
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
cat >"$work/user.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: bed, cluster: {server: "$server", certificate-authority: "$PSI_TESTBED/pki/ca.crt"}}]
contexts: [{name: viewer, context: {cluster: bed, user: viewer}}, {name: other, context: {cluster: bed, user: nobody}}]
users: [{name: viewer, user: {token: "$token"}}, {name: nobody, user: {token: "not-a-token"}}]
current-context: viewer
YAML
fails_with "a user without rights: 403, and what is needed" "you may not read PsiRebalances (403 Forbidden)" \
  "$psi" top --kubeconfig "$work/user.kubeconfig"
fails_with "... naming the verbs and the resource" "get, list and watch on psirebalances.rebalance.psi.dev" \
  "$psi" moves --kubeconfig "$work/user.kubeconfig"
fails_with "--context picks the other user: 401" "refused the credentials" \
  "$psi" top --kubeconfig "$work/user.kubeconfig" --context other

# get, list and watch on PsiRebalances, nothing else, is enough
kubectl create clusterrole "$sa" --verb=get,list,watch --resource=psirebalances.rebalance.psi.dev >/dev/null
kubectl create clusterrolebinding "$sa" --clusterrole="$sa" --serviceaccount="default:$sa" >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $sa}
spec:
  eviction: {mode: Disabled}
YAML
eventually 30 "with get, list and watch: top lists the PsiRebalance" bash -c \
  "'$psi' top --kubeconfig '$work/user.kubeconfig' | grep -q '^PsiRebalance $sa: cpu pressure (some); taint above 25%'"
check "... and says it has no status yet (no operator runs)" bash -c \
  "'$psi' top --kubeconfig '$work/user.kubeconfig' $sa | grep -q 'no status yet'"
check "... VMs unknown (no right to list VMIs) is not an error: top -o json answers" bash -c \
  "'$psi' top --kubeconfig '$work/user.kubeconfig' -o json | jq -e --arg n $sa '.items[] | select(.name == \$n) | .mode == \"Disabled\"'"
fails_with "a PsiRebalance that does not exist" 'PsiRebalance "no-such-psir" not found' \
  "$psi" top no-such-psir --kubeconfig "$work/user.kubeconfig"
check "why a node no PsiRebalance lists: says so, exit 1" bash -c \
  "out=\$('$psi' why worker-9); rc=\$?; [ \$rc -eq 1 ] && grep -q 'Node worker-9: not listed by any PsiRebalance' <<<\"\$out\""
check "usage errors exit 2" bash -c "'$psi' frob; [ \$? -eq 2 ]"

finish
