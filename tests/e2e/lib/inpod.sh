# shellcheck shell=bash
# The operator run as in an OpenShift pod: no kubeconfig, KUBERNETES_SERVICE_HOST/_PORT, and
# a ServiceAccount directory laid out as OpenShift mounts it (token, ca.crt, service-ca.crt,
# namespace), found through PSI_SERVICEACCOUNT_DIR. Source after testlib.sh and operator.sh;
# the querier stand-in (hack/cluster/monitoring up) gives $PSI_SERVICE_CA.

# put FILE: stdin into FILE the way the kubelet updates a projected volume (a new file
# renamed over the old one).
put() { cat > "$1.new" && mv -f "$1.new" "$1"; }

# operator_sa_dir DIR TOKEN: DIR holds TOKEN (of psi-rebalancer/psi-rebalancer), the bed's CA
# as ca.crt, its service CA as service-ca.crt and the namespace.
operator_sa_dir() {
  mkdir -p "$1"
  printf %s "$2" | put "$1/token"
  cp "$PSI_TESTBED/pki/ca.crt" "$1/ca.crt"
  put "$1/service-ca.crt" < "$PSI_SERVICE_CA"
  printf %s psi-rebalancer > "$1/namespace"
}

# start_operator_in_pod DIR: the operator with DIR as its ServiceAccount directory, the
# Deployment's leader election, loopback listen addresses; log in $work/operator.log.
start_operator_in_pod() {
  (
    unset KUBECONFIG
    export KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=${PSI_APISERVER_URL##*:} PSI_SERVICEACCOUNT_DIR=$1
    exec "$operator_bin" --leader-elect=true --leader-election-namespace psi-rebalancer \
      --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 --log-level debug
  ) >>"$work/operator.log" 2>&1 &
  operator_pid=$!
}

# monitoring_up: the querier stand-in up (hack/cluster/monitoring) and its settings
# ($PSI_THANOS_URL, $PSI_SERVICE_CA, ...) in this shell; `hack/cluster/monitoring down` undoes it.
monitoring_up() {
  "$PSI_SOURCE_DIR/hack/cluster/monitoring" --dir "$PSI_TESTBED" up >/dev/null
  eval "$("$PSI_SOURCE_DIR/hack/cluster/env" --dir "$PSI_TESTBED")"
}

# querier_psirebalance NAME SUSTAIN [SPEC]: apply PsiRebalance NAME whose metrics name nothing
# but the querier's URL (every 5s, over 15s), tainting on cpu above 25 % and untainting below
# 15 % after SUSTAIN; SPEC: more lines of its spec (indented by two spaces), e.g. eviction.
querier_psirebalance() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $1}
spec:
  metrics:
    prometheus: {url: "$PSI_THANOS_URL"}
    interval: 5s
    window: 15s
  pressure: {resource: cpu, taintAbovePercent: 25, untaintBelowPercent: 15, sustain: $2}
${3:-}
YAML
}
