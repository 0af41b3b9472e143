#!/usr/bin/env bash
# Regenerate the OLM bundle (bundle/) and the file-based catalog (catalog/) from config/,
# crds/ and config/samples, for one version and one operator image.
#
#   hack/bundle.sh [--out DIR] [--created-at TIME] VERSION IMAGE [BUNDLE_IMAGE]
#   hack/bundle.sh [--out DIR]
#
# Without VERSION and IMAGE it regenerates the committed bundle/ and catalog/ with the
# arguments they record (the CSV's version, containerImage and createdAt, the catalog's bundle
# image): after a change to config/, crds/ or config/samples, or to settle a merge conflict in
# the generated files.
#
#   VERSION       the release, semver without a leading v (0.1.0)
#   IMAGE         the operator image. A release passes it by digest, REPO@sha256:HEX, as the
#                 registry answered when the image was pushed: disconnected clusters mirror by
#                 digest (ImageDigestMirrorSet). REPO:TAG is accepted for development, with a
#                 warning.
#   BUNDLE_IMAGE  the bundle image built from bundle/ (catalog/ points at it), by digest in a
#                 release; default REPO-bundle:vVERSION, a tag, with a warning.
#   --out DIR     write DIR/bundle and DIR/catalog instead of the repository's (tests use it)
#   --created-at  the CSV's createdAt annotation (e.g. 2026-01-31T00:00:00Z); none when omitted
#
# The same arguments always give the same files. Needs python3 with PyYAML (hack/deps.sh),
# and builds the pinned kubectl (hack/tools/build.sh) and opm (hack/tools/olm/build.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=$root
created_at=""
while (($#)); do
  case $1 in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --created-at) created_at=${2:?--created-at needs a time}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "bundle.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
if (($# == 0)); then
  # The arguments the committed files record.
  recorded=$(python3 - "$root" "$created_at" <<'PY'
import shlex, subprocess, sys, yaml
root, created_at = sys.argv[1], sys.argv[2]

def docs(path):
    # The file's YAML documents; in a merge conflict (markers), those of the last commit.
    try:
        with open(f"{root}/{path}") as f:
            return [d for d in yaml.safe_load_all(f) if d]
    except (OSError, yaml.YAMLError):
        text = subprocess.run(["git", "-C", root, "show", f"HEAD:{path}"], capture_output=True, text=True,
                              check=True).stdout
        return [d for d in yaml.safe_load_all(text) if d]

try:
    csv = docs("bundle/manifests/psi-rebalancer.clusterserviceversion.yaml")[0]
    bundle = next(d for d in docs("catalog/psi-rebalancer/catalog.yaml") if d.get("schema") == "olm.bundle")
    ann = csv["metadata"]["annotations"]
    args = [csv["spec"]["version"], ann["containerImage"], bundle["image"]]
    created_at = created_at or ann.get("createdAt", "")
except (OSError, KeyError, IndexError, TypeError, StopIteration, yaml.YAMLError, subprocess.CalledProcessError) as e:
    sys.exit(f"bundle.sh: the committed bundle/ and catalog/ do not say which version and images they are for "
             f"({type(e).__name__}: {e}); pass VERSION and IMAGE")
print("set -- " + " ".join(shlex.quote(a) for a in args) + "; created_at=" + shlex.quote(created_at))
PY
) || exit 1
  eval "$recorded"
  echo "bundle.sh: regenerating with the recorded arguments: ${created_at:+--created-at $created_at }$*" >&2
fi
(($# == 2 || $# == 3)) || usage
version=$1 image=$2 bundle_image=${3:-}

[[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
  { echo "bundle.sh: VERSION must be semver without a leading v (0.1.0), not '$version'" >&2; exit 2; }

# split_ref REF: sets ref_repo, and ref_digest or ref_tag; refuses anything else.
split_ref() {
  local ref=$1 last
  ref_repo="" ref_digest="" ref_tag=""
  if [[ $ref =~ ^([a-z0-9][a-z0-9._:/-]*[a-z0-9])@(sha256:[0-9a-f]{64})$ ]]; then
    ref_repo=${BASH_REMATCH[1]} ref_digest=${BASH_REMATCH[2]}
    return 0
  fi
  last=${ref##*/}
  if [[ $ref == */* && $last == *:* ]]; then
    ref_repo=${ref%:*} ref_tag=${ref##*:}
    if [[ $ref_repo =~ ^[a-z0-9][a-z0-9._:/-]*[a-z0-9]$ && $ref_tag =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]]; then
      return 0
    fi
  fi
  echo "bundle.sh: '$ref' is not an image reference REGISTRY/REPO@sha256:<64 hex> or REGISTRY/REPO:TAG" >&2
  exit 2
}

split_ref "$image"
image_repo=$ref_repo image_digest=$ref_digest image_tag=$ref_tag
[ -n "$image_digest" ] || echo "bundle.sh: warning: $image is a tag, not a digest; a release passes IMAGE@sha256:... (disconnected mirrors resolve digests)" >&2
if [ -z "$bundle_image" ]; then
  bundle_image=$image_repo-bundle:v$version
fi
split_ref "$bundle_image"
[ -n "$ref_digest" ] || echo "bundle.sh: warning: the catalog refers to the bundle by tag ($bundle_image); a release passes BUNDLE_IMAGE@sha256:..." >&2

python3 -c 'import yaml' 2>/dev/null || { echo "bundle.sh: python3 with PyYAML is needed (hack/deps.sh installs python3-yaml)" >&2; exit 1; }
eval "$("$root/hack/tools/build.sh")"
eval "$("$root/hack/tools/olm/build.sh")"
kubectl=$PSI_KUBE_BIN/kubectl
opm=$PSI_OLM_BIN/opm

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The OpenShift overlay with the image set: what OLM will install. The overlay's image entry
# matches the name config/default gives the image.
default_image=$(python3 -c 'import sys, yaml
k = yaml.safe_load(open(sys.argv[1]))
print(next(i.get("newName", i["name"]) for i in k.get("images", []) if i["name"] == "psi-rebalancer"))' \
  "$root/config/default/kustomization.yaml") ||
  { echo "bundle.sh: config/default/kustomization.yaml sets no image for psi-rebalancer" >&2; exit 1; }
mkdir -p "$tmp/overlay"
{
  echo "apiVersion: kustomize.config.k8s.io/v1beta1"
  echo "kind: Kustomization"
  echo "resources:"
  echo "- $(realpath --relative-to="$tmp/overlay" "$root/config/openshift")"
  echo "images:"
  echo "- name: $default_image"
  echo "  newName: $image_repo"
  if [ -n "$image_digest" ]; then echo "  digest: $image_digest"; else echo "  newTag: \"$image_tag\""; fi
} > "$tmp/overlay/kustomization.yaml"
"$kubectl" kustomize "$tmp/overlay" > "$tmp/rendered.yaml"

render=$root/hack/tools/olm/render_bundle.py
python3 "$render" bundle --root "$root" --manifests "$tmp/rendered.yaml" --version "$version" \
  --image "$image" --created-at "$created_at" --out "$tmp/bundle"
# opm renders the bundle directory into its olm.bundle catalog entry (properties, related
# images), as it would render the bundle image; the CSV's metadata becomes olm.csv.metadata
# (OLM reads the rest from the bundle image at install).
(cd "$tmp" && "$opm" render ./bundle --alpha-image-ref-template "$bundle_image" \
   --migrate-level bundle-object-to-csv-metadata -o yaml) > "$tmp/bundle-fbc.yaml"
python3 "$render" catalog --root "$root" --bundle-fbc "$tmp/bundle-fbc.yaml" --version "$version" --out "$tmp/catalog"

mkdir -p "$out"
rm -rf "$out/bundle" "$out/catalog"
mv "$tmp/bundle" "$out/bundle"
mv "$tmp/catalog" "$out/catalog"
echo "bundle.sh: wrote $out/bundle and $out/catalog for psi-rebalancer.v$version ($image; bundle $bundle_image)" >&2
