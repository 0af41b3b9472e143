#!/usr/bin/env bash
# KubeVirt's migration limits come from its CR: the scenario of limits.sh (two moves needed off
# worker-0, two destinations, maxPerNode 2, maxInFlightMigrations 3), but the KubeVirt CR says
# parallelOutboundMigrationsPerNode: 1 (as HyperConverged now writes it). The operator reads
# the CR (under its own RBAC) and moves one VM off worker-0 per cycle, one migration at a time,
# never two together; with KubeVirt's default (2) it would evict both in one cycle.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=kvlimits-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/rebalance-limits.yaml"
kv=$(kubectl get kubevirts -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}' | head -1)
check "the simulator published a KubeVirt CR ($kv)" test -n "$kv"
kubectl patch kubevirt "${kv#*/}" -n "${kv%%/*}" --type merge \
  -p '{"spec":{"configuration":{"migrations":{"parallelOutboundMigrationsPerNode":1}}}}' >/dev/null
before=$(vmis)
start_operator
apply_psir "$name" Automatic "    maxPerNode: 2
    maxPerNamespace: 2
    maxTotal: 2
    maxInFlightMigrations: 3"

eventually 300 "two moves made and succeeded" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 2 ]"
check_limits 2 1 1
check "no VMI changed its UID" test "$(vmis | awk '{print $1, $3}')" = "$(echo "$before" | awk '{print $1, $3}')"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
