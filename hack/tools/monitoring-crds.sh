#!/usr/bin/env bash
# The Prometheus Operator's CRDs (monitoring.coreos.com: ServiceMonitor, PrometheusRule, ...) at
# the version hack/tools/prometheus-operator/go.mod pins, from its Go module (the module cache
# keeps them; nothing is built). Prints the directory that holds monitoring.coreos.com_<plural>.yaml.
#
#   hack/tools/monitoring-crds.sh
set -euo pipefail
module=github.com/prometheus-operator/prometheus-operator
version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3; exit }' "$(dirname "$0")/prometheus-operator/go.mod")
[ -n "$version" ] || { echo "monitoring-crds.sh: no version of $module in hack/tools/prometheus-operator/go.mod" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(cd "$tmp" && GOFLAGS=-modcacherw GO111MODULE=on go mod download -json "$module@$version" | jq -r .Dir)
[ -f "$dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" ] ||
  { echo "monitoring-crds.sh: $module@$version has no example/prometheus-operator-crd" >&2; exit 1; }
echo "$dir/example/prometheus-operator-crd"
