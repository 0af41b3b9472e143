#!/usr/bin/env bash
# Limits: five busy VMs on worker-0 need three moves to get it below the relief target
# (untaintBelowPercent, 15 %), and two workers could take one each in the same cycle
# (maxPerNode 2, maxPerNamespace 2, maxTotal 2), but maxInFlightMigrations is 1: the record
# shows the migrations one after the other, never together, and the load still ends even.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=limits-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/rebalance-limits.yaml"
before=$(vmis)
start_operator
apply_psir "$name" Automatic "    maxPerNode: 2
    maxPerNamespace: 2
    maxTotal: 2
    maxInFlightMigrations: 1"

eventually 300 "three moves made and succeeded" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 3 ]"
sleep 40
check "worker-0 is below the relief target now" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '.status.nodes[] | select(.name==\"worker-0\") | .pressure.cpu | tonumber < 15')\" = true ]"
check "the busy VMs are spread: 2 on worker-0, 2 and 1 on the others" test \
  "$(per_node busy- | awk '{print $2}' | head -1) $(per_node busy- | awk 'NR > 1 {print $2}' | sort | tr '\n' ' ')" = "2 1 2 "
check "exactly three evictions (record)" test "$(our_evictions | wc -l)" -eq 3
check_limits 1 1 1
check "no VMI changed its UID" test "$(vmis | awk '{print $1, $3}')" = "$(echo "$before" | awk '{print $1, $3}')"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
