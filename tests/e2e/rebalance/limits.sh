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

# What each move cost (status.moves[].cost): the VM's guest memory, the time its migration took
# (its migrationState's start to end, as the API shows it), and, for a move decided once others
# were timed (one at a time here: each after the one before ended), the time expected: the
# guest memory at the median seconds per GiB of the moves timed before it.
moves=$(psir_field "$name" '[.status.moves[] | select(.phase == "Succeeded")] | sort_by(.time)')
vmims=$(kubectl get vmim -n "$sim_ns" -o json)
echo "# costs: $(jq -c "[.[] | .cost]" <<<"$moves")"
check "each move's cost names the VM's guest memory (2Gi)" \
  jq -e 'length == 3 and all(.[]; .cost.memoryBytes == 2147483648)' <<<"$moves"
check "each move took its migration's start to end (API)" jq -e --argjson m "$vmims" '
  ($m.items | map({key: .metadata.name, value: .status.migrationState}) | from_entries) as $st |
  all(.[]; .cost.durationSeconds == (($st[.migration].endTimestamp | fromdate) - ($st[.migration].startTimestamp | fromdate)))' <<<"$moves"
check "the first move had nothing to be estimated from, the others the median rate before them" jq -e '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  . as $v | ($v[0].cost | has("expectedSeconds") | not) and
  all(range(1; length);
    . as $k | $v[$k].cost.expectedFrom == "ClusterRate" and
    $v[$k].cost.expectedSeconds ==
      ([$v[0:$k][] | .cost.durationSeconds / (.cost.memoryBytes / 1073741824)] | median * $v[$k].cost.memoryBytes / 1073741824 | round))' <<<"$moves"
metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log")
metric() { curl -sf "http://127.0.0.1:$metrics_port/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
check "/metrics: 3 migrations timed, their seconds, 2 estimated and the estimate's error" test \
  "$(metric psi_rebalancer_migrations_timed_total) $(metric psi_rebalancer_migration_duration_seconds_total) $(metric psi_rebalancer_migrations_estimated_total) $(metric psi_rebalancer_migration_estimate_error_seconds_total)" = \
  "$(jq -r '"3 \([.[].cost.durationSeconds] | add) 2 \([.[1:][] | (.cost.durationSeconds - .cost.expectedSeconds) | fabs] | add)"' <<<"$moves")"
check "no VMI changed its UID" test "$(vmis | awk '{print $1, $3}')" = "$(echo "$before" | awk '{print $1, $3}')"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
