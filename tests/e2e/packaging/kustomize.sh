#!/usr/bin/env bash
# The kustomize install of config/ against the test bed's real API server:
# - config/default, config/prometheus and config/openshift render (kubectl's kustomize);
# - config/default applies: the CRD, the namespace (Pod Security "restricted" enforced), RBAC,
#   the admission policies, the Deployment, the metrics Service and the NetworkPolicy;
# - the Deployment's two pods are admitted under the restricted profile and run (on kwok
#   nodes), one per node, and the metrics Service selects both;
# - config/openshift, every object but the ServiceMonitor and the PrometheusRule (their CRDs
#   are not on the bed; tests/unit/prometheus checks the rules with promtool), passes
#   a server-side dry run on top of it; the ServiceMonitor selects the metrics Service and
#   names its port;
# - a pod template that breaks the restricted profile is refused in that namespace, so the
#   admission above means something.
# The test bed runs no container: the pods' image is never pulled, kwok plays their kubelet.
#
#   kustomize.sh    (run by ctest)
source "$(dirname "$0")/../lib/testlib.sh"
src=${PSI_SOURCE_DIR:?}
work=$(mktemp -d)
ns=psi-rebalancer
crd=psirebalances.rebalance.psi.dev

# Objects of config/default already on the bed before this test (the CRD, or the namespace and
# RBAC of the operator tests) stay; only what this test created is deleted, and the deletion
# is waited for so that the next test finds the bed as it was.
cleanup() {
  if [ -s "$work/created.txt" ]; then
    grep -v '^namespace/' "$work/created.txt" | xargs -r kubectl delete -n "$ns" --ignore-not-found --timeout=120s >/dev/null 2>&1 || true
    grep '^namespace/' "$work/created.txt" | xargs -r kubectl delete --ignore-not-found --timeout=120s >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

render() { kubectl kustomize "$src/config/$1" > "$work/$1.yaml"; }
check "config/default renders" render default
check "config/prometheus renders" render prometheus
check "config/openshift renders" render openshift

# Without the namespace object first, a server-side dry run cannot place namespaced objects.
kubectl get -f "$work/default.yaml" -o name --ignore-not-found 2>/dev/null | sort > "$work/existed.txt" || true
kubectl create --dry-run=client -f "$work/default.yaml" -o name | sort > "$work/all.txt"
comm -23 "$work/all.txt" "$work/existed.txt" > "$work/created.txt"
apply_default() { kubectl apply --server-side --force-conflicts --field-manager=psi-e2e-kustomize -f "$work/default.yaml" >/dev/null; }
check "config/default applies" apply_default
check "the namespace enforces Pod Security restricted" bash -c \
  "[ \"\$(kubectl get ns $ns -o jsonpath='{.metadata.labels.pod-security\\.kubernetes\\.io/enforce}')\" = restricted ]"
running() { [ "$(kubectl get pods -n "$ns" -l app.kubernetes.io/name=psi-rebalancer --field-selector status.phase=Running -o name | wc -l)" -eq 2 ]; }
eventually 90 "the Deployment's 2 pods are admitted (restricted) and run" running
nodes() { [ "$(kubectl get pods -n "$ns" -l app.kubernetes.io/name=psi-rebalancer -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | grep -c .)" -eq 2 ]; }
check "the two replicas are on two nodes (anti-affinity)" nodes
no_rejection() { ! kubectl get events -n "$ns" -o json | jq -e '[.items[] | select(.reason == "FailedCreate")] | length > 0' >/dev/null; }
check "no FailedCreate (Pod Security) event for the ReplicaSet" no_rejection
endpoints() {
  [ "$(kubectl get endpointslices -n "$ns" -l kubernetes.io/service-name=psi-rebalancer-metrics -o json |
       jq '[.items[].endpoints[]? | select(.conditions.ready)] | length')" -eq 2 ]
}
eventually 60 "the metrics Service selects both pods" endpoints

bad_pod() {
  kubectl run psi-e2e-privileged -n "$ns" --image=registry.invalid/never-pulled:1 --dry-run=server \
    --overrides='{"spec":{"containers":[{"name":"c","image":"registry.invalid/never-pulled:1","securityContext":{"privileged":true}}]}}' >/dev/null 2>&1
}
check "a privileged pod is refused in the namespace" bash -c "! $(declare -f bad_pod); bad_pod"

# config/openshift: everything but the ServiceMonitor, server-side dry run.
python3 - "$work/openshift.yaml" "$work/openshift-no-sm.yaml" "$work/sm.json" "$work/svc.json" <<'PY'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
yaml.safe_dump_all([d for d in docs if d["kind"] not in ("ServiceMonitor", "PrometheusRule")], open(sys.argv[2], "w"))
json.dump([d for d in docs if d["kind"] == "ServiceMonitor"], open(sys.argv[3], "w"))
json.dump([d for d in docs if d["kind"] == "Service"], open(sys.argv[4], "w"))
PY
dry_openshift() { kubectl apply --server-side --force-conflicts --field-manager=psi-e2e-kustomize --dry-run=server -f "$work/openshift-no-sm.yaml" >/dev/null; }
check "config/openshift (without the ServiceMonitor and PrometheusRule) passes a server-side dry run" dry_openshift
check "config/openshift binds the operator to cluster-monitoring-view" bash -c \
  "grep -q 'name: cluster-monitoring-view' '$work/openshift.yaml'"
np_sources() { # the namespaces config/openshift's NetworkPolicy admits scrapes from
  python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "NetworkPolicy":
        for e in d["spec"]["ingress"][0]["from"][0]["namespaceSelector"]["matchExpressions"]:
            print(" ".join(e["values"]))' "$work/openshift.yaml"
}
check "config/openshift's NetworkPolicy admits openshift-monitoring and user-workload monitoring" bash -c \
  "$(declare -f np_sources); work=$work; [ \"\$(np_sources)\" = 'openshift-monitoring openshift-user-workload-monitoring' ]"
check "config/default carries the admission policies that confine the operator" bash -c \
  "[ \$(grep -c '^kind: ValidatingAdmissionPolicy\$' '$work/default.yaml') = 4 ] && [ \$(grep -c '^kind: ValidatingAdmissionPolicyBinding\$' '$work/default.yaml') = 4 ]"
jqe() { jq -e "$@" >/dev/null; }
check "the ServiceMonitor selects the metrics Service and scrapes its metrics port on /metrics" \
  jqe --slurpfile svc "$work/svc.json" '
    length == 1 and (.[0] as $sm | $svc[0] | length == 1 and (.[0] as $s |
      ($sm.spec.selector.matchLabels | to_entries | all(. as $e | $s.metadata.labels[$e.key] == $e.value)) and
      ($sm.metadata.namespace == $s.metadata.namespace) and
      ([$s.spec.ports[].name] | index($sm.spec.endpoints[0].port) != null) and
      $sm.spec.endpoints[0].path == "/metrics"))' "$work/sm.json"

finish
