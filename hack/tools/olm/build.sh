#!/usr/bin/env bash
# Build the pinned OLM tools from their Go modules, once per version (like hack/tools/build.sh
# does for the test bed's components):
#   opm              operator-registry's CLI: `opm validate` of catalog/, `opm render` of bundle/
#   bundle-validate  the checks of `operator-sdk bundle validate --select-optional
#                    suite=operatorframework`, with the same libraries (./bundle-validate)
# Binaries are cached outside the repository, keyed by opm's version and a hash of this
# module's files; a second run only prints where they are, as a shell assignment on stdout:
#   PSI_OLM_BIN=DIR
#
# `build.sh operators` builds OLM v0 itself instead, for the OLM install test only (never by
# default: it is the heaviest of the test components):
#   olm, catalog     olm-operator and catalog-operator (./operators, a module of its own)
#   crds/            OLM's CRDs from the same module's deploy/ manifests, and the ServiceMonitor
#                    and PrometheusRule CRDs of prometheus-operator (hack/tools/monitoring-crds.sh;
#                    OpenShift ships both; the
#                    bundle carries a ServiceMonitor, which OLM cannot create without its CRD)
# and prints PSI_OLM_OPERATORS_BIN=DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${PSI_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/psi-rebalancer}
# One build at a time per cache: two runs (the test command and the demo, or two worktrees)
# would otherwise compile the same modules side by side and remove each other's .partial.
mkdir -p "$cache"
exec 9>"$cache/.olm-build.lock"
flock 9

if [ "${1:-}" = operators ]; then
  monitoring_crds=$("$here/../monitoring-crds.sh")
  olm_mod=github.com/operator-framework/operator-lifecycle-manager
  olm_version=$(awk -v m="$olm_mod" '$1 == m || ($1 == "require" && $2 == m) { print ($1 == m) ? $2 : $3; exit }' "$here/operators/go.mod")
  [ -n "$olm_version" ] || { echo "olm/build.sh: cannot read the pinned OLM version from $here/operators/go.mod" >&2; exit 1; }
  key=$( (cat "$here/operators/go.mod" "$here/operators/go.sum"; echo "$monitoring_crds") | sha256sum | cut -c1-12)
  dir=$cache/olm-operators-$olm_version-$key
  if [ ! -d "$dir/crds" ]; then
    rm -rf "$dir.partial"
    echo "olm/build.sh: building OLM $olm_version (olm-operator, catalog-operator; one-time, several minutes)" >&2
    start=$SECONDS
    (cd "$here/operators" && go build -trimpath -ldflags='-s -w' -o "$dir.partial/" "$olm_mod/cmd/olm" "$olm_mod/cmd/catalog") >&2
    echo "olm/build.sh: built in $((SECONDS - start)) s" >&2
    olm_src=$(cd "$here/operators" && go mod download -json "$olm_mod@$olm_version" | jq -r .Dir)
    mkdir -p "$dir.partial/crds"
    cp "$olm_src"/deploy/chart/crds/*.yaml "$monitoring_crds"/monitoring.coreos.com_{servicemonitors,prometheusrules}.yaml \
      "$dir.partial/crds/"
    chmod -R u+w "$dir.partial/crds"
    rm -rf "$dir" && mv "$dir.partial" "$dir"
  fi
  echo "PSI_OLM_OPERATORS_BIN=$dir"
  exit 0
fi

opm_version=$(awk '$1 == "github.com/operator-framework/operator-registry" { print $2; exit }
                   $1 == "require" && $2 == "github.com/operator-framework/operator-registry" { print $3; exit }' "$here/go.mod")
[ -n "$opm_version" ] || { echo "olm/build.sh: cannot read the pinned operator-registry version from $here/go.mod" >&2; exit 1; }
key=$(cat "$here/go.mod" "$here/go.sum" "$here/bundle-validate/main.go" | sha256sum | cut -c1-12)
dir=$cache/olm-$opm_version-$key

if [ ! -x "$dir/bundle-validate" ]; then
  rm -rf "$dir.partial"
  echo "olm/build.sh: building opm $opm_version and bundle-validate (one-time, a few minutes)" >&2
  start=$SECONDS
  # json1: the sqlite extension opm's deprecated index commands use; containers_image_openpgp:
  # pure-Go signature code instead of cgo gpgme (no libgpgme needed).
  (cd "$here" && go build -trimpath -tags=json1,containers_image_openpgp -ldflags='-s -w' \
     -o "$dir.partial/" github.com/operator-framework/operator-registry/cmd/opm ./bundle-validate) >&2
  echo "olm/build.sh: built in $((SECONDS - start)) s" >&2
  rm -rf "$dir" && mv "$dir.partial" "$dir"
fi

echo "PSI_OLM_BIN=$dir"
