#!/usr/bin/env bash
# The Prometheus Operator's CRDs (monitoring.coreos.com: ServiceMonitor, PrometheusRule, ...) at
# a pinned version, from its Go module (the module cache keeps them; nothing is built). Prints
# the directory that holds monitoring.coreos.com_<plural>.yaml.
#
#   hack/tools/monitoring-crds.sh
set -euo pipefail
module=github.com/prometheus-operator/prometheus-operator
version=v0.85.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(cd "$tmp" && GOFLAGS=-modcacherw GO111MODULE=on go mod download -json "$module@$version" | jq -r .Dir)
[ -f "$dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" ] ||
  { echo "monitoring-crds.sh: $module@$version has no example/prometheus-operator-crd" >&2; exit 1; }
echo "$dir/example/prometheus-operator-crd"
