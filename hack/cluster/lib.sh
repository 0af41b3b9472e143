# shellcheck shell=bash
# Shared by hack/cluster/{up,down,env,ctl}: the test bed's layout and how each component starts.
# A test bed lives in one directory (default: build/testbed under the repository):
#   pki/  admin.kubeconfig  ports.env  env  logs/  pids/  etcd/  prometheus/  kwok/
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
components=(etcd apiserver controller-manager scheduler kwok prometheus)
# Started on demand by their own scripts (hack/cluster/monitoring), stopped by down.
optional_components=(thanos-querier)

die() { echo "testbed: $*" >&2; exit 1; }
log() { echo "testbed: $*" >&2; }

# parse_dir_arg ARGS...: sets $dir from --dir (or $PSI_TESTBED, or build/testbed); leaves the rest in $rest.
parse_dir_arg() {
  dir=${PSI_TESTBED:-$repo/build/testbed}
  rest=()
  while (($#)); do
    case $1 in
      --dir) [ $# -ge 2 ] || die "--dir needs a directory"; dir=$2; shift 2 ;;
      --dir=*) dir=${1#--dir=}; shift ;;
      *) rest+=("$1"); shift ;;
    esac
  done
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
}

load_tools() {
  eval "$("$repo/hack/tools/build.sh")"
  etcd_bin=$PSI_ETCD_BIN/etcd
  etcdctl_bin=$PSI_ETCD_BIN/etcdctl
  prometheus_bin=$(command -v prometheus) || die "prometheus not found: run hack/deps.sh"
}

port_in_use() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

# Ports are chosen under a lock shared by the test beds in one directory (CTest brings three
# up at once), never one a sibling bed has written to its ports.env and not bound yet.
ports_lock() {
  exec {ports_lock_fd}>"$(dirname "$dir")/.testbed-ports.lock"
  flock "$ports_lock_fd"
}
ports_unlock() { exec {ports_lock_fd}>&-; }
# port_free P: P is on no bed's list here and nothing listens on it.
port_free() { ! grep -qs "=$1\$" "$(dirname "$dir")"/*/ports.env && ! port_in_use "$1"; }

# choose_ports: pick free loopback ports once per test bed and keep them in ports.env,
# so that a restart reuses them and two test beds never share one.
choose_ports() {
  if [ -f "$dir/ports.env" ]; then source "$dir/ports.env"; return; fi
  local names=(ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KCM_PORT SCHEDULER_PORT KWOK_PORT PROMETHEUS_PORT)
  local taken=" " name p
  ports_lock
  : > "$dir/ports.env.tmp"
  for name in "${names[@]}"; do
    while :; do
      p=$((10000 + RANDOM % 20000)) # below the kernel's ephemeral range (32768+)
      [[ $taken == *" $p "* ]] && continue
      port_free "$p" || continue
      break
    done
    taken+="$p "
    echo "$name=$p" >> "$dir/ports.env.tmp"
  done
  mv "$dir/ports.env.tmp" "$dir/ports.env"
  ports_unlock
  source "$dir/ports.env"
}

# The nodes' kubelets. The API server reaches them only through its "cluster" egress, HTTP
# CONNECT over a Unix socket of the bed ($dir/kubelet.sock, served by psi-sim), so a node's
# address is the name of a tunnel and never dialed. It cannot be a loopback address: the node
# proxy refuses any address that is not global unicast (isProxyableHostname in
# pkg/registry/core/node/strategy.go). Nodes take theirs from 198.18.0.0/15, the range set
# aside for benchmarking (RFC 2544), 250 to a /24: worker-I is node_address I.
KUBELET_PORT=10250
kubelet_socket() { echo "$dir/kubelet.sock"; }
node_address() { echo "198.18.$(($1 / 250)).$(($1 % 250 + 2))"; }

write_egress_config() {
  cat > "$dir/egress-selector.yaml" <<YAML
# Written by hack/cluster/up: the API server reaches kubelets through psi-sim's socket.
apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds: {udsName: $(kubelet_socket)}
YAML
}

# extra_port NAME: a free loopback port for an optional component, added to ports.env once.
extra_port() {
  [ -n "${!1:-}" ] && return
  local p
  ports_lock
  while :; do
    p=$((10000 + RANDOM % 20000))
    port_free "$p" && break
  done
  echo "$1=$p" >> "$dir/ports.env"
  ports_unlock
  printf -v "$1" %s "$p"
}

pidfile() { echo "$dir/pids/$1.pid"; }

# running COMPONENT: true when the PID in its pid file is alive and is ours (its command
# line, or its KUBECONFIG, names this test bed's directory), so a recycled PID is never
# mistaken for it.
running() {
  local f pid
  f=$(pidfile "$1")
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF "$dir" && return 0
  tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qxF "KUBECONFIG=$dir/admin.kubeconfig"
}

# spawn COMPONENT CMD...: start detached, all output to logs/COMPONENT.log, PID to pids/.
spawn() {
  local name=$1; shift
  mkdir -p "$dir/logs" "$dir/pids"
  setsid "$@" </dev/null >>"$dir/logs/$name.log" 2>&1 &
  echo $! > "$(pidfile "$name")"
}

stop_component() {
  local name=$1 f pid i
  f=$(pidfile "$name")
  if ! running "$name"; then rm -f "$f"; return 0; fi
  pid=$(cat "$f")
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    [ -d "/proc/$pid" ] || break
    sleep 0.1
  done
  [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

curl_api() { curl -sS --max-time 5 --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" "https://127.0.0.1:$APISERVER_PORT$1"; }

# wait_for WHAT SECONDS CMD...: poll CMD until it succeeds, or fail naming WHAT and the log to read.
wait_for() {
  local what=$1 secs=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "$what not ready after ${secs}s (logs: $dir/logs/)"
    sleep 0.25
  done
}

start_etcd() {
  spawn etcd "$etcd_bin" --name testbed --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "testbed=http://127.0.0.1:$ETCD_PEER_PORT" \
    --quota-backend-bytes 4294967296 --unsafe-no-fsync --log-level warn
  wait_for etcd 30 "$etcdctl_bin" --endpoints "127.0.0.1:$ETCD_PORT" endpoint health
}

start_apiserver() {
  local p=$dir/pki
  write_egress_config
  spawn apiserver "$PSI_KUBE_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --client-ca-file "$p/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --authorization-mode Node,RBAC \
    --allow-privileged --profiling=false --enable-priority-and-fairness=false \
    --kubelet-preferred-address-types InternalIP --kubelet-certificate-authority "$p/ca.crt" \
    --egress-selector-config-file "$dir/egress-selector.yaml" \
    --kubelet-client-certificate "$p/kubelet-client.crt" --kubelet-client-key "$p/kubelet-client.key" \
    ${PSI_TESTBED_AUDIT:+--audit-policy-file "$repo/hack/cluster/audit-policy.yaml" --audit-log-path "$dir/logs/audit.log"}
  wait_for kube-apiserver 60 curl_api /readyz
}

start_controller_manager() {
  local p=$dir/pki
  spawn controller-manager "$PSI_KUBE_BIN/kube-controller-manager" \
    --kubeconfig "$dir/admin.kubeconfig" --authentication-kubeconfig "$dir/admin.kubeconfig" \
    --authorization-kubeconfig "$dir/admin.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --use-service-account-credentials --profiling=false
  wait_for kube-controller-manager 30 curl -sfk "https://127.0.0.1:$KCM_PORT/healthz"
}

start_scheduler() {
  spawn scheduler "$PSI_KUBE_BIN/kube-scheduler" \
    --kubeconfig "$dir/admin.kubeconfig" --authentication-kubeconfig "$dir/admin.kubeconfig" \
    --authorization-kubeconfig "$dir/admin.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false --profiling=false
  wait_for kube-scheduler 30 curl -sfk "https://127.0.0.1:$SCHEDULER_PORT/healthz"
}

start_kwok() {
  spawn kwok "$PSI_KWOK_BIN/kwok" --config "$PSI_KWOK_BIN/stages.yaml" \
    --kubeconfig "$dir/admin.kubeconfig" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --cidr 10.244.0.0/16 --server-address "127.0.0.1:$KWOK_PORT" --node-lease-duration-seconds 40 \
    --node-port "$KUBELET_PORT"
  wait_for kwok 30 curl -sf "http://127.0.0.1:$KWOK_PORT/healthz"
}

start_prometheus() {
  mkdir -p "$dir/prometheus/targets" "$dir/prometheus/data" "$dir/prometheus/rules" "$dir/prometheus/targets-operator"
  cat > "$dir/prometheus/prometheus.yml" <<YAML
# Written by hack/cluster/up. Targets are added at run time as files in targets/; rule files
# in rules/ (POST /-/reload after adding one).
global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files: ['$dir/prometheus/rules/*.yaml']
scrape_configs:
- job_name: testbed
  file_sd_configs:
  - files: ['$dir/prometheus/targets/*.json']
    refresh_interval: 5s
# The operator's HTTPS metrics endpoint as its ServiceMonitor scrapes it: a ServiceAccount
# token (written to operator-scrape.token by the test) and the bed's CA for the Service name.
- job_name: psi-rebalancer-metrics
  scheme: https
  authorization: {credentials_file: '$dir/prometheus/operator-scrape.token'}
  tls_config: {ca_file: '$dir/pki/ca.crt', server_name: psi-rebalancer-metrics.psi-rebalancer.svc}
  file_sd_configs:
  - files: ['$dir/prometheus/targets-operator/*.json']
    refresh_interval: 5s
YAML
  spawn prometheus "$prometheus_bin" --config.file "$dir/prometheus/prometheus.yml" \
    --storage.tsdb.path "$dir/prometheus/data" --storage.tsdb.retention.time 1d \
    --web.listen-address "127.0.0.1:$PROMETHEUS_PORT" --web.enable-lifecycle --log.level warn
  wait_for prometheus 60 curl -sf "http://127.0.0.1:$PROMETHEUS_PORT/-/ready"
}

start_component() {
  case $1 in
    etcd) start_etcd ;;
    apiserver) start_apiserver ;;
    controller-manager) start_controller_manager ;;
    scheduler) start_scheduler ;;
    kwok) start_kwok ;;
    prometheus) start_prometheus ;;
    *) die "unknown component '$1' (one of: ${components[*]})" ;;
  esac
}

write_env() {
  cat > "$dir/env" <<ENV
export PSI_TESTBED='$dir'
export KUBECONFIG='$dir/admin.kubeconfig'
export PATH='$PSI_KUBE_BIN':"\$PATH"
export PSI_APISERVER_URL='https://127.0.0.1:$APISERVER_PORT'
export PSI_ETCD_URL='http://127.0.0.1:$ETCD_PORT'
export PSI_PROMETHEUS_URL='http://127.0.0.1:$PROMETHEUS_PORT'
export PSI_PROMETHEUS_TARGETS='$dir/prometheus/targets'
export PSI_KUBELET_SOCKET='$(kubelet_socket)'
export PSI_KUBE_BIN='$PSI_KUBE_BIN'
export PSI_ETCD_BIN='$PSI_ETCD_BIN'
export PSI_KWOK_BIN='$PSI_KWOK_BIN'
ENV
}
