#!/usr/bin/env bash
# bundle/ and catalog/ pass the OLM validators, built from their pinned Go modules:
# - bundle-validate (the checks of `operator-sdk bundle validate --select-optional
#   suite=operatorframework`) finds no error in bundle/, and no warning but those
#   known-warnings.txt accepts with a reason;
# - `opm validate` accepts catalog/;
# - the catalog's bundle is the bundle's CSV, its related images include the operator image;
# and each validator refuses a broken copy, so a pass means something.
#
#   validate.sh    (run by ctest, label package)
source "$(dirname "$0")/lib.sh"
kube_version=1.34

# --- the bundle -----------------------------------------------------------------------------
"$bundle_validate" --k8s-version "$kube_version" "$src/bundle" > "$work/validate.out" 2>&1 && rc=0 || rc=$?
cat "$work/validate.out"
check "bundle-validate: bundle/ has no error" test "$rc" -eq 0
grep -v '^\s*\(#\|$\)' "$(dirname "$0")/known-warnings.txt" > "$work/known" || true
if [ -s "$work/known" ]; then
  unknown=$(grep '^WARN' "$work/validate.out" | grep -Evf "$work/known" || true)
else
  unknown=$(grep '^WARN' "$work/validate.out" || true)
fi
if [ -z "$unknown" ]; then pass "bundle-validate: no warning beyond known-warnings.txt"
else fail "bundle-validate: warnings not accepted by known-warnings.txt:"; echo "$unknown"; fi

broken() { rm -rf "$work/b"; cp -r "$src/bundle" "$work/b"; }
csv=$work/b/manifests/psi-rebalancer.clusterserviceversion.yaml
broken; sed -i '/^  minKubeVersion:/d' "$csv"
warns_on() { "$bundle_validate" "$work/b" > "$work/b.out" 2>&1; grep -q "^WARN .*$1" "$work/b.out"; }
check "bundle-validate runs the operatorframework suite (it warns when minKubeVersion is missing)" warns_on minKubeVersion
broken; rm "$work/b/metadata/annotations.yaml"
refused "bundle-validate refuses a bundle without metadata/annotations.yaml" "$bundle_validate" "$work/b"
broken; sed -i 's/^    categories: .*/    categories: Not A Category/' "$csv"
refused "bundle-validate refuses a CSV with a category OperatorHub does not know" "$bundle_validate" "$work/b"
broken; sed -i 's/^  version: .*/  version: not-semver/' "$csv"
refused "bundle-validate refuses a CSV whose version is not semver" "$bundle_validate" "$work/b"
broken; printf 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\nspec: {}\n' > "$work/b/manifests/x.yaml"
refused "bundle-validate refuses a kind a registry+v1 bundle cannot carry" "$bundle_validate" "$work/b"

jqe() { jq -e "$@" >/dev/null; }

# --- the catalog ----------------------------------------------------------------------------
check "opm validate: catalog/ is a valid file-based catalog" "$opm" validate "$src/catalog"
fbc=$src/catalog/psi-rebalancer/catalog.yaml
python3 -c 'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)' "$fbc" > "$work/fbc.json"
yaml2json "$src/bundle/manifests/psi-rebalancer.clusterserviceversion.yaml" > "$work/csv.json"
check "catalog: package psi-rebalancer, default channel stable" \
  jqe '[.[] | select(.schema == "olm.package" and .name == "psi-rebalancer" and .defaultChannel == "stable")] | length == 1' "$work/fbc.json"
check "catalog: channel stable's head is the bundle's CSV" \
  jqe --slurpfile csv "$work/csv.json" '[.[] | select(.schema == "olm.channel" and .name == "stable") | .entries[].name] == [$csv[0].metadata.name]' "$work/fbc.json"
check "catalog: the bundle's version is the CSV's" \
  jqe --slurpfile csv "$work/csv.json" '.[] | select(.schema == "olm.bundle") | .properties[] | select(.type == "olm.package") | .value.version == $csv[0].spec.version' "$work/fbc.json"
check "catalog: the bundle's related images include every related image of the CSV" \
  jqe --slurpfile csv "$work/csv.json" '([.[] | select(.schema == "olm.bundle") | .relatedImages[].image]) as $have | [$csv[0].spec.relatedImages[].image] - $have == []' "$work/fbc.json"
check "catalog: the CSV's container image is one of its related images" \
  jqe '.metadata.annotations.containerImage as $i | [.spec.relatedImages[].image] | index($i) != null' "$work/csv.json"

# One namespace story: the service CA's certificate names only <service>.<namespace>.svc, so
# the ServiceMonitor's serverName names the bundle's metrics Service in the namespace the CSV
# suggests, and the CSV's description suggests that same namespace.
yaml2json "$src/bundle/manifests/psi-rebalancer_monitoring.coreos.com_v1_servicemonitor.yaml" > "$work/sm.json"
yaml2json "$src/bundle/manifests/psi-rebalancer-metrics_v1_service.yaml" > "$work/svc.json"
suggested=$(jq -r '.metadata.annotations["operatorframework.io/suggested-namespace"]' "$work/csv.json")
check "the ServiceMonitor's serverName is the metrics Service in the suggested namespace ($suggested)" \
  jqe --slurpfile svc "$work/svc.json" --arg ns "$suggested" \
  '[.spec.endpoints[].tlsConfig.serverName] == ["\($svc[0].metadata.name).\($ns).svc"]' "$work/sm.json"
check "the CSV's description suggests that namespace, and no other" \
  jqe --arg ns "$suggested" '.spec.description | test("suggested: `\($ns)`") and (test("suggested: `(?!\($ns)`)") | not)' "$work/csv.json"

rm -rf "$work/c"; cp -r "$src/catalog" "$work/c"
sed -i 's/^- name: psi-rebalancer\.v.*/- name: psi-rebalancer.v9.9.9/' "$work/c/psi-rebalancer/catalog.yaml"
refused "opm validate refuses a channel whose entry names no bundle" "$opm" validate "$work/c"
rm -rf "$work/c"; cp -r "$src/catalog" "$work/c"
sed -i 's/^defaultChannel: stable/defaultChannel: fast/' "$work/c/psi-rebalancer/catalog.yaml"
refused "opm validate refuses a default channel that does not exist" "$opm" validate "$work/c"

finish
