#!/usr/bin/env bash
# The docs run: the user's path is the test. Every shell block of README.md and
# docs/runbooks/*.md runs against the test bed, with the operator installed as the README says,
# or carries a skip marker saying why it cannot run here. A command that fails, or that names a
# label, namespace or field the installed operator does not have, fails the test, named by
# FILE:LINE with its output.
#
# The docs' side (docs_run.py, which pulls the blocks out and runs them):
# - a command block is a fenced block whose info string is sh, bash or shell;
# - the skip marker, the one form there is, is an HTML comment on the line before the fence:
#       <!-- docs-run: skip (REASON) -->
#   REASON says why it cannot run on the test bed (needs a real OpenShift cluster, OLM, a
#   registry, ...); a marker with no block after it, or another docs-run comment, is an error;
# - placeholders (<name>, <node>) are filled from placeholders.txt beside this script; one the
#   table lacks fails the test by name;
# - in the runbooks every command is in a block: an inline `oc ...` or `kubectl ...` is an error.
#
# The bed, as the README's quick path makes it: the CRD, the namespace and config/rbac
# (install_operator_rbac), the operator under its ServiceAccount in the background
# (start_operator: the README runs it in the foreground, so that block is marked), the seed
# sample (reading the bed's Prometheus and the pressure exporter: its Thanos querier does not
# resolve here), and config/default (the Deployment, Service and admission policies the runbooks look
# at: the bed runs no container, kwok plays the Deployment's pods). The bed plays OpenShift's
# worker MachineConfigPool (mco.sh), which `oc get mcp` lists.
#
# `oc` is kubectl (a shim on the PATH, as is kubectl itself); both ask kubectl to fail on a
# JSONPath key the object lacks (--allow-missing-template-keys=false), so that a runbook's
# jsonpath naming a field that does not exist fails rather than printing nothing (but for a
# template with a filter, [?(...)]: kubectl's strict mode fails on a filter that matches no
# item, an empty answer the runbooks expect). Each block
# has a 60 s timeout. What the commands create (RBAC, the admission policies, config/default's
# objects, the MachineConfigs the operator writes) is deleted afterwards; what existed stays.
#
#   docs_run.sh    (run by ctest)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/testlib.sh"
source "$here/../lib/operator.sh"
source "$here/../lib/mco.sh"
src=${PSI_SOURCE_DIR:?}
sample=vm-rebalance

# snapshot: RESOURCE NAMESPACE NAME of every object of the kinds the docs' commands create.
kinds=(clusterroles clusterrolebindings validatingadmissionpolicies validatingadmissionpolicybindings
  machineconfigs psirebalances deployments services networkpolicies serviceaccounts roles rolebindings)
snapshot() {
  local k
  for k in "${kinds[@]}"; do
    kubectl get "$k" -A -o json | jq -r --arg k "$k" '.items[] | [$k, (.metadata.namespace // "-"), .metadata.name] | @tsv'
  done | sort
}

cleanup() {
  # The PsiRebalance goes while the operator runs: it takes its taints and finalizer off.
  kubectl delete psirebalance "$sample" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  stop_operator
  if [ -s "$work/before.txt" ] && snapshot > "$work/after.txt"; then
    comm -13 "$work/before.txt" "$work/after.txt" | while IFS=$'\t' read -r k ns name; do
      if [ "$ns" = - ]; then ns_arg=(); else ns_arg=(-n "$ns"); fi
      kubectl delete "$k" "$name" "${ns_arg[@]}" --ignore-not-found --timeout=120s >/dev/null 2>&1 ||
        echo "cleanup: could not delete $k $ns/$name"
    done
  fi
  mco_forget_pools worker 99-worker-psi-rebalancer
  operator_cleanup
}
trap cleanup EXIT

# The README's quick path: the CRD, the namespace, config/rbac, the operator, the seed sample.
install_operator_rbac
snapshot > "$work/before.txt"
mco_worker_pool
start_operator
check "the quick path's sample applies" kubectl apply -f "$src/config/samples/rebalance_v1alpha1_psirebalance_seed.yaml"
# Its Thanos querier does not resolve here: the bed's Prometheus stands in, fed by the pressure
# exporter (every node at 0), so that the nodes have readings as on a working cluster.
start_exporter worker-0 worker-1 worker-2
check "the sample reads the bed's Prometheus" kubectl patch psirebalance "$sample" --type merge -p "spec: {metrics: $bed_metrics}"
check "kubectl get psirebalance -o wide lists it" bash -c "kubectl get psirebalance -o wide | grep -q '^$sample '"
check "kubectl explain psirebalance.spec describes the spec" bash -c "kubectl explain psirebalance.spec | grep -q nodeSelector"
# In the cluster: config/default (README, Kubernetes (kustomize)); kwok plays its pods.
check "config/default applies" kubectl apply -k "$src/config/default"
pods_running() {
  [ "$(kubectl get pods -n psi-rebalancer -l app.kubernetes.io/name=psi-rebalancer --field-selector status.phase=Running -o name | wc -l)" -ge 1 ]
}
eventually 90 "the Deployment's pods run (kwok)" pods_running
leading() {
  [ "$(kubectl get lease -n psi-rebalancer psi-rebalancer-leader -o jsonpath='{.spec.holderIdentity}')" = "$(hostname)_$operator_pid" ]
}
eventually 60 "the operator leads (the Lease psi-rebalancer-leader names it)" leading
reconciled() { [ "$(condition "$sample" Ready)" != "" ] && [ "$(psir_field "$sample" '.status.nodes | length')" -gt 0 ]; }
eventually 90 "the operator has reconciled $sample (conditions and nodes in status)" reconciled
DOCS_NODE=$(kubectl get pods -n psi-rebalancer -l app.kubernetes.io/name=psi-rebalancer \
  --field-selector status.phase=Running -o jsonpath='{.items[0].spec.nodeName}')
export DOCS_NODE

# oc and kubectl on the PATH: the bed's kubectl, strict about JSONPath keys; kubectl-psi beside.
real_kubectl=$(command -v kubectl)
mkdir -p "$work/bin"
for shim in oc kubectl; do
  cat > "$work/bin/$shim" <<SH
#!/usr/bin/env bash
# $shim for the docs run: the test bed's kubectl, failing on a JSONPath key the object lacks.
for a in "\$@"; do
  case \$a in *'[?('*) break ;; esac
  case \$a in jsonpath=* | -ojsonpath=* | --output=jsonpath=* | -o=jsonpath=*)
    exec "$real_kubectl" "\$@" --allow-missing-template-keys=false ;;
  esac
done
exec "$real_kubectl" "\$@"
SH
  chmod +x "$work/bin/$shim"
done
export PATH=$work/bin:$PSI_BINARY_DIR/cli:$PATH

runbooks=("$src"/docs/runbooks/*.md)
no_inline=()
for r in "${runbooks[@]}"; do no_inline+=(--no-inline "${r#"$src"/}"); done
docs_run() {
  (cd "$src" && python3 "$here/docs_run.py" run --table "$here/placeholders.txt" --timeout 60 --root "$src" \
    "${no_inline[@]}" README.md "${runbooks[@]#"$src"/}")
}
if docs_run; then pass "every unmarked shell block of README.md and docs/runbooks ran"; else fail "shell blocks of the docs failed (above)"; fi
finish
