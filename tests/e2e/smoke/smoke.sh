#!/usr/bin/env bash
# Smoke test of the test bed: the control loop the operator relies on is real.
# A Deployment runs on kwok nodes; an eviction through the Eviction API is replaced by the
# ReplicaSet and placed by the scheduler; a NoSchedule taint keeps new pods away;
# Prometheus scrapes a target added at run time.
source "$(dirname "$0")/../lib/testlib.sh"

ns=smoke-$$
kubectl create namespace "$ns" >/dev/null
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; kubectl taint node worker-0 smoke- >/dev/null 2>&1 || true; rm -f "$PSI_PROMETHEUS_TARGETS/smoke.json"' EXIT

# running APP N: exactly N pods of APP are Running (evaluated anew at every poll).
running() { test "$(kubectl get pods -n "$ns" -l "app=$1" --field-selector status.phase=Running -o name | wc -l)" -eq "$2"; }
deploy() { # deploy NAME REPLICAS
  kubectl create deployment "$1" -n "$ns" --image=registry.invalid/never-pulled:1 --replicas="$2" >/dev/null
}

deploy web 3
eventually 60 "deployment web: 3 replicas Running on kwok nodes" running web 3
check "every web pod is bound to a kwok worker" \
  bash -c "kubectl get pods -n $ns -l app=web -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\n\"}{end}' | grep -qv '^worker-' && exit 1 || exit 0"

victim=$(kubectl get pods -n "$ns" -l app=web -o jsonpath='{.items[0].metadata.name}')
eviction=$(printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"%s"}}' "$victim" "$ns")
check "Eviction API accepts the eviction of $victim" \
  bash -c "kubectl create --raw /api/v1/namespaces/$ns/pods/$victim/eviction -f - <<<'$eviction' >/dev/null"
eventually 60 "evicted pod $victim is gone" bash -c "! kubectl get pod -n $ns $victim >/dev/null 2>&1"
eventually 60 "ReplicaSet replaced it: 3 Running again" running web 3
check "the replacement was placed by the scheduler (has a node, scheduled condition)" bash -c \
  "kubectl get pods -n $ns -l app=web -o json | jq -e '[.items[] | select(.spec.nodeName != null and (.status.conditions[]? | select(.type==\"PodScheduled\" and .status==\"True\")))] | length == 3' >/dev/null"

kubectl taint node worker-0 smoke=yes:NoSchedule >/dev/null
deploy spread 6
eventually 60 "deployment spread: 6 Running with worker-0 tainted" running spread 6
check "no new pod landed on the tainted node worker-0" bash -c \
  "! kubectl get pods -n $ns -l app=spread -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\n\"}{end}' | grep -qx worker-0"

kwok_port=$(source "$PSI_TESTBED/ports.env"; echo "$KWOK_PORT")
printf '[{"targets":["127.0.0.1:%s"],"labels":{"component":"kwok"}}]\n' "$kwok_port" > "$PSI_PROMETHEUS_TARGETS/smoke.json.tmp"
mv "$PSI_PROMETHEUS_TARGETS/smoke.json.tmp" "$PSI_PROMETHEUS_TARGETS/smoke.json"
scraped() {
  curl -sf "$PSI_PROMETHEUS_URL/api/v1/query" --data-urlencode "query=up{component=\"kwok\"}" |
    jq -e '.data.result | length == 1 and .[0].value[1] == "1"' >/dev/null
}
eventually 60 "Prometheus scrapes the target the test added (up == 1)" scraped

finish
