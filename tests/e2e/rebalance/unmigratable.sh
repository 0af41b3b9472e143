#!/usr/bin/env bash
# A VM that cannot live-migrate is never picked: of three busy VMs on worker-0, "stuck" has
# LiveMigratable=False (KubeVirt would refuse its migration with a 400). With eviction.method
# Migrate the operator relieves worker-0 with the two others, never asks for "stuck", and no
# cycle fails on it.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=unmigratable-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/rebalance-unmigratable.yaml"
check "stuck's VMI says it cannot live-migrate" test \
  "$(kubectl get vmi stuck -n "$sim_ns" -o json | jq -r '.status.conditions[] | select(.type=="LiveMigratable") | .status')" = False
start_operator
apply_psir "$name" Automatic "    method: Migrate"

eventually 240 "both migratable busy VMs moved off worker-0" bash -c "$(declare -f vmis); sim_ns=$sim_ns
  [ \"\$(vmis | awk '\$1 ~ /^hot-/ && \$2 != \"worker-0\"' | wc -l)\" -eq 2 ]"
eventually 90 "Rebalancing: nothing pressured any more" bash -c "$(declare -f psir_field rebalancing)
  [ \"\$(rebalancing $name)\" = NoPressuredNode ]"
check "stuck is still on worker-0" bash -c "$(declare -f vmis); sim_ns=$sim_ns; vmis | grep -q '^stuck worker-0 '"
check "stuck was never asked for: no migration, no eviction (record)" test \
  "$(jq -c 'select((.type=="migration" or .type=="eviction") and .vmi=="stuck")' "$record" | wc -l)" -eq 0
check "no cycle failed (Degraded False, Ready True)" test \
  "$(condition "$name" Degraded) $(condition "$name" Ready)" = "False True"
check "no failed move, and no refusal of stuck (it was never tried)" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and (.reason==\"EvictionFailed\" or .reason==\"MigrationFailed\"
       or (.reason==\"EvictionRefused\" and (.note | test(\"stuck\")))))] | length == 0' >/dev/null"

finish
