#!/usr/bin/env bash
# Build the pinned upstream test components from their Go modules, once per version:
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl  (hack/tools/kube)
#   etcd, etcdctl                                                     (hack/tools/etcd)
#   kwok, with its upstream node and pod stages                        (hack/tools/kwok)
#   kube-rbac-proxy, the test bed's Thanos querier stand-in           (hack/tools/kube-rbac-proxy)
#   prometheus-operator and prometheus-config-reloader                 (hack/tools/prometheus-operator)
#   prometheus, with Kubernetes service discovery, for them            (hack/tools/prometheus)
#   descheduler, only when asked: build.sh descheduler                 (hack/tools/descheduler)
# Binaries are cached outside the repository, keyed by version; a second run only prints
# where they are. Prints the directories as shell assignments on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${PSI_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/psi-rebalancer}
# One build at a time per cache: two runs (the test command and the demo, or two worktrees)
# would otherwise compile the same modules side by side and remove each other's .partial.
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
flock 9

pinned() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) { print ($1 == m) ? $2 : $3; exit }' "$here/$1/go.mod"; }
kube_version=$(pinned kube k8s.io/kubernetes)
etcd_version=$(pinned etcd go.etcd.io/etcd/server/v3)
kwok_version=$(pinned kwok sigs.k8s.io/kwok)
krp_version=$(pinned kube-rbac-proxy github.com/brancz/kube-rbac-proxy)
promop_version=$(pinned prometheus-operator github.com/prometheus-operator/prometheus-operator)
prom_version=$(pinned prometheus github.com/prometheus/prometheus)
[ -n "$kube_version" ] && [ -n "$etcd_version" ] && [ -n "$kwok_version" ] && [ -n "$krp_version" ] && [ -n "$promop_version" ] &&
  [ -n "$prom_version" ] || { echo "build.sh: cannot read pinned versions from hack/tools/*/go.mod" >&2; exit 1; }

# Kubernetes reports the version it was built as (kubectl version, /version): a plain
# `go build` leaves v0.0.0-master, which OLM reads as older than any CSV's minKubeVersion.
kube_ldflags="-X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitTreeState=clean"
kube_dir=$cache/kube-$kube_version-$(echo "$kube_ldflags" | sha256sum | cut -c1-8)
etcd_dir=$cache/etcd-$etcd_version
kwok_dir=$cache/kwok-$kwok_version
krp_dir=$cache/kube-rbac-proxy-$krp_version
promop_dir=$cache/prometheus-operator-$promop_version
prom_dir=$cache/prometheus-$prom_version

build() { # build OUTPUT MODULE_DIR PACKAGES...: OUTPUT is a file, or a directory ending in /
  local out=$1 mod=$2; shift 2
  echo "build.sh: building $* (one-time, a few minutes)" >&2
  local start=$SECONDS
  (cd "$here/$mod" && go build -trimpath -ldflags="-s -w ${ldflags:-}" -o "$out" "$@") >&2
  echo "build.sh: built in $((SECONDS - start)) s" >&2
}

# Optional, for bench/ only (never built by the test command): `build.sh descheduler`.
if [ "${1:-}" = descheduler ]; then
  desched_version=$(pinned descheduler sigs.k8s.io/descheduler)
  desched_dir=$cache/descheduler-$desched_version
  if [ ! -x "$desched_dir/descheduler" ]; then
    rm -rf "$desched_dir.partial"
    build "$desched_dir.partial/descheduler" descheduler sigs.k8s.io/descheduler/cmd/descheduler
    rm -rf "$desched_dir" && mv "$desched_dir.partial" "$desched_dir"
  fi
  echo "PSI_DESCHEDULER_BIN=$desched_dir"
  exit 0
fi

if [ ! -x "$kube_dir/kubectl" ]; then
  rm -rf "$kube_dir.partial"
  ldflags=$kube_ldflags build "$kube_dir.partial/" kube k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
  rm -rf "$kube_dir" && mv "$kube_dir.partial" "$kube_dir"
fi

if [ ! -x "$etcd_dir/etcdctl" ]; then
  rm -rf "$etcd_dir.partial"
  build "$etcd_dir.partial/etcd" etcd go.etcd.io/etcd/server/v3
  build "$etcd_dir.partial/etcdctl" etcd go.etcd.io/etcd/etcdctl/v3
  rm -rf "$etcd_dir" && mv "$etcd_dir.partial" "$etcd_dir"
fi

if [ ! -f "$kwok_dir/stages.yaml" ]; then
  rm -rf "$kwok_dir.partial"
  build "$kwok_dir.partial/" kwok sigs.k8s.io/kwok/cmd/kwok
  # kwok needs Stage objects to play the kubelet: take upstream's own "fast" node and pod
  # stages and the lease heartbeat from the pinned module, unchanged.
  src=$(cd "$here/kwok" && go mod download -json "sigs.k8s.io/kwok@$kwok_version" | jq -r .Dir)
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"; cat "$src/kustomize/stage/$f"
  done > "$kwok_dir.partial/stages.yaml"
  rm -rf "$kwok_dir" && mv "$kwok_dir.partial" "$kwok_dir"
fi

if [ ! -x "$krp_dir/kube-rbac-proxy" ]; then
  rm -rf "$krp_dir.partial"
  build "$krp_dir.partial/kube-rbac-proxy" kube-rbac-proxy github.com/brancz/kube-rbac-proxy/cmd/kube-rbac-proxy
  rm -rf "$krp_dir" && mv "$krp_dir.partial" "$krp_dir"
fi

if [ ! -x "$promop_dir/prometheus-config-reloader" ]; then
  rm -rf "$promop_dir.partial"
  build "$promop_dir.partial/prometheus-operator" prometheus-operator github.com/prometheus-operator/prometheus-operator/cmd/operator
  build "$promop_dir.partial/prometheus-config-reloader" prometheus-operator \
    github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader
  rm -rf "$promop_dir" && mv "$promop_dir.partial" "$promop_dir"
fi

if [ ! -x "$prom_dir/prometheus" ]; then
  rm -rf "$prom_dir.partial"
  # Its module v0.3MM.P is Prometheus 3.MM.P, which it reports as its version (--version).
  release=$(echo "$prom_version" | awk -F. '{ printf "%d.%d.%s", substr($2, 1, 1), substr($2, 2), $3 }')
  ldflags="-X github.com/prometheus/common/version.Version=$release" \
    build "$prom_dir.partial/prometheus" prometheus github.com/prometheus/prometheus/cmd/prometheus
  rm -rf "$prom_dir" && mv "$prom_dir.partial" "$prom_dir"
fi

echo "PSI_KUBE_BIN=$kube_dir"
echo "PSI_ETCD_BIN=$etcd_dir"
echo "PSI_KWOK_BIN=$kwok_dir"
echo "PSI_KUBE_RBAC_PROXY_BIN=$krp_dir"
echo "PSI_PROMETHEUS_OPERATOR_BIN=$promop_dir"
echo "PSI_PROMETHEUS_BIN=$prom_dir"
