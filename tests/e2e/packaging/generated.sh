#!/usr/bin/env bash
# bundle/ and catalog/ are exactly what hack/bundle.sh generates from config/, crds/ and
# config/samples, so they cannot drift from the manifests kustomize installs:
# - regenerated with the arguments the committed files record (the CSV's version,
#   containerImage and createdAt, the catalog's bundle image), both trees are byte-identical,
#   and so they are when hack/bundle.sh is run without arguments (it reads those itself);
# - a release run (images by digest; a test digest of zeros into the build directory, never
#   into the repository) puts the operator image by digest in the Deployment and in
#   relatedImages, the bundle image by digest in the catalog, and still validates;
# - hack/bundle.sh refuses an image reference that is neither REPO@sha256:<64 hex> nor REPO:TAG;
# - the CSV's install strategy is config/'s: the Deployment spec and the RBAC rules equal the
#   kustomize render of config/openshift;
# - the bundle ships no ClusterRole or ClusterRoleBinding as a manifest (OLM would keep it
#   after an uninstall), and config/openshift has no /metrics reader role to ship.
#
#   generated.sh    (run by ctest, label package)
source "$(dirname "$0")/lib.sh"

csv_file=$src/bundle/manifests/psi-rebalancer.clusterserviceversion.yaml
yaml2json "$csv_file" > "$work/csv.json"
version=$(jq -r .spec.version "$work/csv.json")
image=$(jq -r .metadata.annotations.containerImage "$work/csv.json")
created_at=$(jq -r '.metadata.annotations.createdAt // ""' "$work/csv.json")
bundle_image=$(python3 -c 'import sys, yaml; print(next(d["image"] for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("schema") == "olm.bundle"))' \
  "$src/catalog/psi-rebalancer/catalog.yaml")
echo "committed: version $version, image $image, bundle image $bundle_image${created_at:+, createdAt $created_at}"

args=(--out "$work/gen")
[ -z "$created_at" ] || args+=(--created-at "$created_at")
check "hack/bundle.sh regenerates the bundle and the catalog" \
  "$src/hack/bundle.sh" "${args[@]}" "$version" "$image" "$bundle_image"
same() { # same DIR: the committed DIR equals the generated one
  if diff -r "$src/$1" "$work/gen/$1" > "$work/$1.diff"; then return 0; fi
  head -40 "$work/$1.diff"
  echo "(regenerate with: hack/bundle.sh ${created_at:+--created-at $created_at }$version $image $bundle_image)"
  return 1
}
check "bundle/ is what hack/bundle.sh generates" same bundle
check "catalog/ is what hack/bundle.sh generates" same catalog
check "hack/bundle.sh without arguments regenerates them with the arguments they record" bash -c \
  '"$0/hack/bundle.sh" --out "$1/again" 2>/dev/null && diff -r "$0/bundle" "$1/again/bundle" && diff -r "$0/catalog" "$1/again/catalog"' "$src" "$work"

# --- the install strategy is config/'s -----------------------------------------------------------
eval "$("$src/hack/tools/build.sh")"
"$PSI_KUBE_BIN/kubectl" kustomize "$src/config/openshift" |
  python3 -c 'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(sys.stdin) if d], sys.stdout)' > "$work/config.json"
jqe() { jq -e "$@" >/dev/null; }
check "the CSV's Deployment spec is config/manager's (image aside)" jqe --slurpfile csv "$work/csv.json" '
  (.[] | select(.kind == "Deployment") | .spec | del(.template.spec.containers[].image)) ==
  ($csv[0].spec.install.spec.deployments[0].spec | del(.template.spec.containers[].image))' "$work/config.json"
perm() { echo "\$csv[0].spec.install.spec.$1[] | select(.serviceAccountName == \"$2\") | .rules"; }
check "the CSV's clusterPermissions of the operator hold the rules of config/rbac's ClusterRoles" jqe --slurpfile csv "$work/csv.json" "
  [.[] | select(.kind == \"ClusterRole\") | .rules[]]
    - ($(perm clusterPermissions psi-rebalancer)) == []" "$work/config.json"
# OLM never deletes a ClusterRole or ClusterRoleBinding shipped as a bundle manifest: all of the
# bundle's cluster-scoped RBAC must be clusterPermissions, which go with the CSV.
no_cluster_rbac_manifest() {
  ! grep -lE '^kind: ClusterRole(Binding)?$' "$src"/bundle/manifests/*.yaml
}
check "the bundle ships no ClusterRole or ClusterRoleBinding as a manifest" no_cluster_rbac_manifest
check "config/openshift leaves out the /metrics reader ClusterRole (config/metrics-reader, applied by hand)" jqe \
  '[.[] | select(.kind == "ClusterRole" and .metadata.name == "psi-rebalancer-metrics-reader")] == []' "$work/config.json"
check "the CSV's permissions of the operator are the rules of config/rbac's leader-election and pressure-token Roles and config/prometheus' ServiceMonitor Role" \
  jqe --slurpfile csv "$work/csv.json" "
  [.[] | select(.kind == \"Role\" and (.metadata.name | IN(\"psi-rebalancer-leader-election\", \"psi-rebalancer-pressure-token\", \"psi-rebalancer-servicemonitor\"))) | .rules[]]
  | sort == ($(perm permissions psi-rebalancer) | sort)" "$work/config.json"
yaml2json "$src/config/manifests/cluster-monitoring-view.yaml" > "$work/view.json"
check "only the pressure-reading ServiceAccount may read monitoring data (cluster-monitoring-view's rules)" \
  jqe --slurpfile csv "$work/csv.json" --slurpfile view "$work/view.json" "
  ($(perm clusterPermissions psi-rebalancer-pressure-reader)) == \$view[0].rules and
  ([$(perm clusterPermissions psi-rebalancer)[] | select(.resources | index(\"prometheuses/api\"))] == [])" "$work/config.json"
check "alm-examples are the samples of config/samples" bash -c '
  python3 -c "import json, sys, yaml, glob; json.dump(sorted((d for f in sorted(glob.glob(sys.argv[1] + \"/*.yaml\")) for d in yaml.safe_load_all(open(f)) if d), key=json.dumps), sys.stdout)" "$0/config/samples" > "$1/samples.json"
  jq -e --slurpfile s "$1/samples.json" "(.metadata.annotations[\"alm-examples\"] | fromjson | sort_by(tojson)) == (\$s[0] | sort_by(tojson))" "$1/csv.json" >/dev/null' "$src" "$work"

# --- a release: images by digest (a test digest, into the build directory only) ------------------
zeros=sha256:$(printf '0%.0s' $(seq 64))
ones=sha256:$(printf '1%.0s' $(seq 64))
rel_image=registry.invalid/psi-rebalancer/psi-rebalancer@$zeros
rel_bundle=registry.invalid/psi-rebalancer/psi-rebalancer-bundle@$ones
check "hack/bundle.sh generates a release by digest" "$src/hack/bundle.sh" --out "$work/rel" --created-at 2000-01-01T00:00:00Z "$version" "$rel_image" "$rel_bundle"
[ -d "$work/rel/bundle" ] || { finish; exit 1; }
yaml2json "$work/rel/bundle/manifests/psi-rebalancer.clusterserviceversion.yaml" > "$work/rel-csv.json"
check "release: the Deployment runs the operator image by digest" jqe --arg i "$rel_image" \
  '[.spec.install.spec.deployments[].spec.template.spec.containers[].image] == [$i]' "$work/rel-csv.json"
check "release: every related image is by digest" jqe \
  '[.spec.relatedImages[].image | test("@sha256:[0-9a-f]{64}$")] | all' "$work/rel-csv.json"
check "release: containerImage and createdAt are set" jqe --arg i "$rel_image" \
  '.metadata.annotations.containerImage == $i and .metadata.annotations.createdAt == "2000-01-01T00:00:00Z"' "$work/rel-csv.json"
python3 -c 'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)' \
  "$work/rel/catalog/psi-rebalancer/catalog.yaml" > "$work/rel-fbc.json"
check "release: the catalog points at the bundle image by digest, every related image by digest" jqe --arg b "$rel_bundle" \
  '.[] | select(.schema == "olm.bundle") | .image == $b and ([.relatedImages[].image | test("@sha256:[0-9a-f]{64}$")] | all)' "$work/rel-fbc.json"
check "release: bundle-validate finds no error" "$bundle_validate" --k8s-version 1.34 "$work/rel/bundle"
check "release: opm validate accepts the catalog" "$opm" validate "$work/rel/catalog"

refused "hack/bundle.sh refuses an image without tag or digest" "$src/hack/bundle.sh" --out "$work/bad" "$version" registry.invalid/psi-rebalancer/psi-rebalancer
refused "hack/bundle.sh refuses a malformed digest" "$src/hack/bundle.sh" --out "$work/bad" "$version" registry.invalid/psi-rebalancer/psi-rebalancer@sha256:abc
refused "hack/bundle.sh refuses a version with a leading v" "$src/hack/bundle.sh" --out "$work/bad" "v$version" "$image"
finish
