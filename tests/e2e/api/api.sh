#!/usr/bin/env bash
# The PsiRebalance API against the real API server of the test bed:
# - the CRD installs and becomes Established, cluster-scoped, short name psir;
# - every sample in config/samples applies, and what the server stores (its defaults filled
#   in) is what the C decoder makes of the same sample (psi_api_tool spec);
# - the server's defaults for an empty spec are the documented ones
#   (tests/testdata/api/defaults.json, which tests/unit/api also holds the CRD and C to);
# - a status written as api_status_encode writes it is accepted through the status
#   subresource unchanged, and `kubectl get psir` (and -o wide) prints it as columns;
# - `kubectl explain psirebalance.spec.pressure` prints every field with its description;
# - every document of tests/testdata/api/invalid.json is refused, naming its field.
#
#   api.sh PSI_API_TOOL      (run by ctest, which passes the tool built from psi_api_tool.c)
source "$(dirname "$0")/../lib/testlib.sh"

tool=${1:?usage: api.sh PATH_TO_psi_api_tool}
src=${PSI_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
data=$src/tests/testdata/api
crd=psirebalances.rebalance.psi.dev
samples=("$src"/config/samples/rebalance_v1alpha1_psirebalance_*.yaml)
tmp=$(mktemp -d)
label=psi-e2e=api

cleanup() {
  kubectl delete psirebalance -l "$label" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete -f "$src/config/samples/" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
quiet() { "$@" >/dev/null; } # run a command, keeping only its errors

# --- the CRD -------------------------------------------------------------------------------
check "the CRD applies" quiet kubectl apply --server-side --force-conflicts --field-manager=psi-e2e-api -f "$src/crds/"
check "the CRD becomes Established" quiet kubectl wait --for=condition=Established "crd/$crd" --timeout=60s
check "the CRD's names are accepted" quiet kubectl wait --for=condition=NamesAccepted "crd/$crd" --timeout=60s
# (the API server's discovery follows an Established CRD asynchronously)
eventually 30 "PsiRebalance is cluster-scoped with short name psir" bash -c \
  "kubectl api-resources --api-group=rebalance.psi.dev --no-headers | grep -Eq '^psirebalances +psir +rebalance.psi.dev/v1alpha1 +false +PsiRebalance$'"
cleanup
mkdir -p "$tmp"

# --- samples -------------------------------------------------------------------------------
for f in "${samples[@]}"; do
  name=$(basename "$f" .yaml)
  check "sample $name applies" quiet kubectl apply -f "$f"
  kubectl get -f "$f" -o json > "$tmp/$name.server.json" || true
  kubectl create --dry-run=client -o json -f "$f" > "$tmp/$name.client.json"
  if "$tool" spec "$tmp/$name.client.json" > "$tmp/$name.c.json" &&
     jq -e --slurpfile c "$tmp/$name.c.json" '(.spec | walk(if type == "object" then to_entries | sort_by(.key) | from_entries else . end)) == ($c[0] | walk(if type == "object" then to_entries | sort_by(.key) | from_entries else . end))' \
       "$tmp/$name.server.json" >/dev/null; then
    pass "sample $name: the server's defaulted spec is the C decoder's"
  else
    fail "sample $name: the server's defaulted spec differs from the C decoder's:"
    diff <(jq -S .spec "$tmp/$name.server.json") <(jq -S . "$tmp/$name.c.json") || true
  fi
  check "sample $name: the stored object passes the C validator" "$tool" check "$tmp/$name.server.json"
done

# --- defaults ------------------------------------------------------------------------------
same_json() { # same_json A B: equal as JSON values (key order aside)
  [ "$(jq -S . "$1")" = "$(jq -S . "$2")" ]
}
kubectl get psirebalance workers -o json | jq .spec > "$tmp/minimal.spec.json"
if same_json "$tmp/minimal.spec.json" "$data/defaults.json"; then
  pass "the server fills the documented defaults into the minimal sample"
else
  fail "the server's defaults differ from tests/testdata/api/defaults.json:"
  diff <(jq -S . "$tmp/minimal.spec.json") <(jq -S . "$data/defaults.json") || true
fi
printf '{"apiVersion":"rebalance.psi.dev/v1alpha1","kind":"PsiRebalance","metadata":{"name":"e2e-no-spec","labels":{"psi-e2e":"api"}}}' |
  kubectl apply -f - >/dev/null
kubectl get psirebalance e2e-no-spec -o json | jq .spec > "$tmp/nospec.json"
check "an object without spec gets the documented defaults too" same_json "$tmp/nospec.json" "$data/defaults.json"
# A partial spec: the server keeps what is given and defaults the rest as C does.
partial='{"apiVersion":"rebalance.psi.dev/v1alpha1","kind":"PsiRebalance","metadata":{"name":"e2e-partial","labels":{"psi-e2e":"api"}},
  "spec":{"nodeSelector":{},"metrics":{"source":"Kubelet","prometheus":{"url":"http://127.0.0.1:9090"}},
          "pressure":{"resource":"memory","taintAbovePercent":10,"untaintBelowPercent":5},
          "eviction":{"podSelector":{},"excludedNamespaces":[],"cooldown":{"initial":"30m"}}}}'
printf '%s' "$partial" > "$tmp/partial.json"
kubectl apply -f "$tmp/partial.json" >/dev/null
kubectl get psirebalance e2e-partial -o json | jq .spec > "$tmp/partial.server.json"
"$tool" spec "$tmp/partial.json" > "$tmp/partial.c.json"
check "a partial spec is defaulted by the server as by the C decoder" same_json "$tmp/partial.server.json" "$tmp/partial.c.json"

# --- status and printer columns ------------------------------------------------------------
"$tool" status-sample > "$tmp/status.json"
check "a status encoded by api_status_encode is accepted by the status subresource" \
  quiet kubectl patch psirebalance workers --subresource=status --type=merge -p "{\"status\": $(cat "$tmp/status.json")}"
kubectl get psirebalance workers -o json | jq .status > "$tmp/status.server.json"
check "the status reads back as written (api_status_changed sees nothing new)" \
  "$tool" status-same "$tmp/status.json" "$tmp/status.server.json"
kubectl patch psirebalance workers --type=merge -p '{"status":{"summary":{"nodes":99}}}' >/dev/null 2>&1 || true
check "status is a subresource: writing it through the object changes nothing" \
  test "$(kubectl get psirebalance workers -o jsonpath='{.status.summary.nodes}')" = 3

columns() { # columns ARGS...: the header and the row of `kubectl get psir workers ARGS`, spaces squeezed
  kubectl get psir workers "$@" | tr -s ' '
}
header=$(columns | head -1)
row=$(columns | sed -n 2p)
check "kubectl get psir prints Nodes, Pressured, Tainted, Evictions, Migrations, Ready, Age (got '$header')" \
  test "$header" = "NAME NODES PRESSURED TAINTED EVICTIONS MIGRATIONS READY AGE"
check "kubectl get psir prints the summary (got '$row')" \
  bash -c "[[ '$row' =~ ^workers\ 3\ 1\ 1\ 2\ 2\ True\ [0-9]+[smhd] ]]"
header=$(columns -o wide | head -1)
row=$(columns -o wide | sed -n 2p)
check "kubectl get psir -o wide adds Mode, Source, Resource (got '$header')" \
  test "$header" = "NAME NODES PRESSURED TAINTED EVICTIONS MIGRATIONS READY AGE MODE SOURCE RESOURCE"
check "kubectl get psir -o wide prints them (got '$row')" \
  bash -c "[[ '$row' =~ \ DryRun\ Prometheus\ cpu$ ]]"
check "kubectl get psir works for every sample" \
  test "$(kubectl get psir workers vm-rebalance production --no-headers | wc -l)" = 3

# --- kubectl explain -----------------------------------------------------------------------
explain=$(kubectl explain psirebalance.spec.pressure 2>&1 | tr -s ' \t\n' '   ')
kubectl get crd "$crd" -o json |
  jq -r '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.pressure.properties
         | to_entries[] | "\(.key)\t\(.value.description | split(" ")[0:6] | join(" "))"' > "$tmp/pressure.fields"
check "the CRD has pressure fields to explain" test -s "$tmp/pressure.fields"
while IFS=$'\t' read -r field words; do
  if [[ $explain == *" $field <"* && $explain == *"$words"* ]]; then
    pass "kubectl explain psirebalance.spec.pressure describes $field"
  else
    fail "kubectl explain psirebalance.spec.pressure lacks $field or its description ('$words')"
  fi
done < "$tmp/pressure.fields"
check "kubectl explain psirebalance.spec.pressure describes the section (hysteresis)" \
  bash -c "[[ '$explain' == *'(hysteresis)'* ]]"

# --- invalid documents ---------------------------------------------------------------------
n=$(jq '.cases | length' "$data/invalid.json")
check "the invalid-document table has at least 20 cases ($n)" test "$n" -ge 20
for ((i = 0; i < n; i++)); do
  jq -c ".cases[$i]" "$data/invalid.json" > "$tmp/case.json"
  name=$(jq -r .name "$tmp/case.json")
  field=$(jq -r .field "$tmp/case.json")
  jq --arg n "e2e-invalid-$i" \
    '{apiVersion: "rebalance.psi.dev/v1alpha1", kind: "PsiRebalance",
      metadata: {name: $n, labels: {"psi-e2e": "api"}}, spec: .spec}' "$tmp/case.json" > "$tmp/doc.json"
  if out=$(kubectl apply -f "$tmp/doc.json" 2>&1); then
    fail "invalid $name: accepted by the server"
    kubectl delete psirebalance "e2e-invalid-$i" --ignore-not-found >/dev/null 2>&1 || true
  elif [[ $out == *"$field: "* || $out == *"\"$field\""* ]]; then
    pass "invalid $name: refused, naming $field"
  else
    fail "invalid $name: refused, but the message does not name $field: $out"
  fi
done
check "no invalid document was stored" \
  test -z "$(kubectl get psirebalance -l "$label" -o name | grep e2e-invalid || true)"

finish
