# shellcheck shell=bash
# OpenShift's platform monitoring on the test bed, as the cluster-monitoring-operator sets it up:
#   - the Prometheus Operator (hack/tools/build.sh builds it and its prometheus-config-reloader
#     at the version hack/tools/prometheus-operator/go.mod pins) with every CRD of
#     monitoring.coreos.com, run as a host process with the bed's admin credentials;
#   - in openshift-monitoring, the Prometheus `k8s` with what the cluster-monitoring-operator
#     gives it that bears on scraping and rules (its assets/prometheus-k8s/prometheus.yaml:
#     the namespace selectors on openshift.io/cluster-monitoring, every ServiceMonitor and
#     PrometheusRule there, the ConfigMap serving-certs-ca-bundle, ServiceAccount prometheus-k8s
#     with ClusterRole prometheus-k8s as its cluster-role.yaml has it, Endpoints discovery,
#     listenLocal);
#   - its pod, played here: the volumes of the StatefulSet the Prometheus Operator generates,
#     filled as the kubelet fills them (pod_volumes.py, again every 2 s) and mounted at the
#     StatefulSet's paths in a mount namespace of their own (unshare: nothing on the machine
#     changes), the ServiceAccount token where a pod has it; there Prometheus runs the
#     prometheus container's arguments and the real prometheus-config-reloader the
#     config-reloader's (it writes the configuration the operator generated and reloads
#     Prometheus when it or a rule file changes). That Prometheus is built by
#     hack/tools/build.sh at the version the Prometheus Operator defaults to (Debian's has no
#     Kubernetes service discovery).
# Two things differ from a cluster, both said where they are done: the bed has no pod
# network and no persistent volume. A pod IP is kwok's, from 10.244.0.0/16, which nothing may
# dial: a default scrape class of the Prometheus maps a target's 10.244.A.B to the loopback
# address 127.244.A.B, where a test runs that pod's process. The pod's listen ports and its
# storage are the test's own.
#
#   platform_monitoring_up        all of the above; sets platform_prometheus_url
#   platform_monitoring_cleanup   stop it and leave the bed as it was (call from the EXIT trap)
# Needs $work, PSI_SOURCE_DIR, the bed's env (testlib.sh) and service_ca.sh.

mon_ns=openshift-monitoring
# pod_address POD_IP: where the test bed's network puts a pod's address (see above).
pod_address() { sed -n 's/^10\.244\.\([0-9]*\)\.\([0-9]*\)$/127.244.\1.\2/p' <<<"$1"; }

platform_monitoring_up() {
  eval "$("$PSI_SOURCE_DIR/hack/tools/build.sh")"
  local crds version
  crds=$("$PSI_SOURCE_DIR/hack/tools/monitoring-crds.sh")
  mon_crds_before=$(kubectl get crd -o name | grep 'monitoring\.coreos\.com$' || true)
  mon_ns_before=$(kubectl get namespace "$mon_ns" -o name 2>/dev/null || true)
  mon_role_before=$(kubectl get clusterrole prometheus-k8s -o name 2>/dev/null || true)
  kubectl apply --server-side --force-conflicts -f "$crds" >/dev/null
  kubectl wait --for=condition=Established -f "$crds" --timeout=60s >/dev/null
  version=$("$PSI_PROMETHEUS_BIN/prometheus" --version 2>&1 | sed -n '1s/^prometheus, version \([0-9.]*\).*/v\1/p')
  [ -n "$version" ] || { echo "platform monitoring: cannot read the version of $PSI_PROMETHEUS_BIN/prometheus" >&2; return 1; }
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: $mon_ns
  labels: {openshift.io/cluster-monitoring: "true"}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: prometheus-k8s, namespace: $mon_ns}
---
# The cluster-monitoring-operator's assets/prometheus-k8s/cluster-role.yaml, less the
# SecurityContextConstraints a bed does not have.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: prometheus-k8s}
rules:
- {apiGroups: [""], resources: [nodes/metrics], verbs: [get]}
- {nonResourceURLs: [/metrics, /metrics/slis], verbs: [get]}
- {apiGroups: [authentication.k8s.io], resources: [tokenreviews], verbs: [create]}
- {apiGroups: [authorization.k8s.io], resources: [subjectaccessreviews], verbs: [create]}
- {apiGroups: [""], resources: [namespaces], verbs: [get]}
- {apiGroups: [""], resources: [nodes], verbs: [get, list, watch]}
- {apiGroups: [monitoring.coreos.com], resourceNames: [k8s], resources: [prometheuses/api], verbs: [get, create, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: prometheus-k8s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: prometheus-k8s}
subjects: [{kind: ServiceAccount, name: prometheus-k8s, namespace: $mon_ns}]
YAML
  service_ca_bundle "$mon_ns" serving-certs-ca-bundle
  setsid "$PSI_PROMETHEUS_OPERATOR_BIN/prometheus-operator" --apiserver="$PSI_APISERVER_URL" \
    --ca-file="$PSI_TESTBED/pki/ca.crt" --cert-file="$PSI_TESTBED/pki/admin.crt" --key-file="$PSI_TESTBED/pki/admin.key" \
    --web.listen-address="127.0.0.1:$(free_port)" --controller-id="$mon_ns/prometheus-operator" \
    </dev/null >"$work/prometheus-operator.log" 2>&1 &
  prom_operator_pid=$!
  kubectl apply -f - >/dev/null <<YAML
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata:
  name: k8s
  namespace: $mon_ns
  annotations: {operator.prometheus.io/controller-id: $mon_ns/prometheus-operator}
spec:
  version: $version
  replicas: 1
  serviceAccountName: prometheus-k8s
  configMaps: [serving-certs-ca-bundle]
  listenLocal: true
  serviceDiscoveryRole: Endpoints
  serviceMonitorNamespaceSelector: {matchLabels: {openshift.io/cluster-monitoring: "true"}}
  serviceMonitorSelector: {}
  podMonitorNamespaceSelector: {matchLabels: {openshift.io/cluster-monitoring: "true"}}
  podMonitorSelector: {}
  probeNamespaceSelector: {matchLabels: {openshift.io/cluster-monitoring: "true"}}
  probeSelector: {}
  ruleNamespaceSelector: {matchLabels: {openshift.io/cluster-monitoring: "true"}}
  ruleSelector: {}
  # The test bed's network (above): the only setting the cluster-monitoring-operator does not make.
  scrapeClasses:
  - name: test-bed-network
    default: true
    relabelings:
    - sourceLabels: [__address__]
      regex: '10\.244\.([0-9]+)\.([0-9]+):([0-9]+)'
      targetLabel: __address__
      replacement: '127.244.\$1.\$2:\$3'
YAML
  local i
  for i in $(seq 1 120); do
    kubectl get statefulset prometheus-k8s -n "$mon_ns" -o json >"$work/prometheus-sts.json" 2>/dev/null &&
      kubectl get secret prometheus-k8s -n "$mon_ns" -o name >/dev/null 2>&1 && break
    sleep 0.5
  done
  ((i < 120)) || { echo "platform monitoring: the Prometheus Operator made no StatefulSet prometheus-k8s:" >&2; tail -20 "$work/prometheus-operator.log" >&2; return 1; }
  platform_pod_up
}

# platform_pod_up: the pod prometheus-k8s-0 (see above), its Prometheus at platform_prometheus_url.
platform_pod_up() {
  local pod=$work/prometheus-k8s-0 port reloader_port sts=$work/prometheus-sts.json
  mkdir -p "$pod/serviceaccount" "$pod/data"
  kubectl create token prometheus-k8s -n "$mon_ns" --duration=1h >"$pod/serviceaccount/token"
  cp "$PSI_TESTBED/pki/ca.crt" "$pod/serviceaccount/ca.crt"
  echo "$mon_ns" >"$pod/serviceaccount/namespace"
  python3 "$PSI_SOURCE_DIR/tests/e2e/lib/pod_volumes.py" "$sts" "$pod" init-config-reloader config-reloader prometheus |
    sort -u -t$'\t' -k2,2 >"$pod/mounts"
  port=$(free_port) reloader_port=$(free_port)
  platform_prometheus_url=http://127.0.0.1:$port
  # The containers' arguments, with the pod's ports and storage (see above) made the test's.
  container_args() {
    jq -r --arg c "$1" --arg port "$port" --arg rport "$reloader_port" --arg data "$pod/data" '
      [.spec.template.spec.initContainers[]?, .spec.template.spec.containers[]] | map(select(.name == $c))[0].args[] |
      gsub(":9090"; ":" + $port) | sub("^--listen-address=.*"; "--listen-address=127.0.0.1:" + $rport) |
      sub("^--storage.tsdb.path=.*"; "--storage.tsdb.path=" + $data)' "$sts"
  }
  container_args prometheus >"$pod/prometheus.args"
  container_args config-reloader >"$pod/config-reloader.args"
  container_args init-config-reloader >"$pod/init-config-reloader.args"
  # Every mount lands under /etc/prometheus, or is the storage the test replaces.
  if awk -F'\t' '$2 !~ "^/etc/prometheus(/|$)" && $2 != "/prometheus"' "$pod/mounts" | grep -q .; then
    echo "platform monitoring: the pod mounts outside /etc/prometheus, which this stand-in does not play:" >&2
    cat "$pod/mounts" >&2
    return 1
  fi
  # The pod: a mount namespace of its own, where /etc/prometheus and /run (so /var/run/secrets)
  # are the pod's.
  KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=${PSI_APISERVER_URL##*:} \
    POD_NAME=prometheus-k8s-0 SHARD=0 PROMETHEUS=$PSI_PROMETHEUS_BIN/prometheus \
    RELOADER=$PSI_PROMETHEUS_OPERATOR_BIN/prometheus-config-reloader POD=$pod \
    setsid unshare -m --propagation private bash -c '
      set -e
      mount -t tmpfs pod-etc-prometheus /etc/prometheus
      mount -t tmpfs pod-run /run
      mkdir -p /run/secrets/kubernetes.io/serviceaccount
      mount --bind "$POD/serviceaccount" /run/secrets/kubernetes.io/serviceaccount
      while read -r src dst; do
        [ "$dst" = /prometheus ] && continue
        if [ -d "$src" ]; then mkdir -p "$dst"; else mkdir -p "$(dirname "$dst")"; touch "$dst"; fi
        mount --bind "$src" "$dst"
      done <"$POD/mounts"
      mapfile -t init <"$POD/init-config-reloader.args"
      mapfile -t reloader <"$POD/config-reloader.args"
      mapfile -t prom <"$POD/prometheus.args"
      "$RELOADER" "${init[@]}"
      "$RELOADER" "${reloader[@]}" >"$POD/config-reloader.log" 2>&1 &
      exec "$PROMETHEUS" "${prom[@]}" >"$POD/prometheus.log" 2>&1
    ' </dev/null >"$pod/pod.log" 2>&1 &
  platform_pod_pid=$!
  # The kubelet's sync of the pod's volumes.
  (while sleep 2; do python3 "$PSI_SOURCE_DIR/tests/e2e/lib/pod_volumes.py" "$sts" "$pod" prometheus >/dev/null 2>&1 || true; done) </dev/null >/dev/null 2>&1 &
  platform_sync_pid=$!
  local i
  for i in $(seq 1 60); do curl -sf "$platform_prometheus_url/-/ready" >/dev/null && return 0; sleep 0.5; done
  echo "platform monitoring: the pod's Prometheus is not ready:" >&2
  tail -20 "$pod/pod.log" "$pod/prometheus.log" "$pod/config-reloader.log" >&2 2>/dev/null
  return 1
}

platform_monitoring_cleanup() {
  [ -z "${platform_sync_pid:-}" ] || kill "$platform_sync_pid" 2>/dev/null || true
  [ -z "${platform_pod_pid:-}" ] || kill -- "-$platform_pod_pid" 2>/dev/null || true
  [ -z "${prom_operator_pid:-}" ] || kill -- "-$prom_operator_pid" 2>/dev/null || true
  platform_sync_pid= platform_pod_pid= prom_operator_pid= # a second call kills nothing
  kubectl delete prometheus k8s -n "$mon_ns" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  [ -n "${mon_role_before-x}" ] || kubectl delete clusterrolebinding,clusterrole prometheus-k8s --ignore-not-found >/dev/null 2>&1 || true
  if [ -n "${mon_ns_before+set}" ] && [ -z "$mon_ns_before" ]; then
    kubectl delete namespace "$mon_ns" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  else
    kubectl delete serviceaccount prometheus-k8s -n "$mon_ns" --ignore-not-found >/dev/null 2>&1 || true
    kubectl delete configmap serving-certs-ca-bundle -n "$mon_ns" --ignore-not-found >/dev/null 2>&1 || true
  fi
  local c
  for c in $(kubectl get crd -o name 2>/dev/null | grep 'monitoring\.coreos\.com$'); do
    grep -qxF "$c" <<<"${mon_crds_before-$c}" || kubectl delete "$c" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  done
}
