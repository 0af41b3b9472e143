#!/usr/bin/env bash
# The seed story with every field of the PsiRebalance at its default except the metrics
# source (the bed's Prometheus) and eviction.mode Automatic: evictAbovePercent 40, taint 25 %,
# untaint 15 %, the relief target at untaintBelowPercent, method Auto, one move per node and
# two in all per cycle, sustain 1m, window 1m. worker-0 starts at ~83 % CPU pressure; one
# move gets it to ~33 %, below evictAbovePercent but still tainted: it stays a source until
# it is below the target. It ends with every worker below the taint level after the optimal
# two moves (one busy VM per worker), no VM moved back, and no taint left.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=defaults-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/seed.yaml"
before=$(vmis)
start_operator
kubectl apply -f - >/dev/null <<YAML
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: $name}
spec:
  metrics:
    source: Prometheus
    prometheus: {url: "$PSI_PROMETHEUS_URL", bearerTokenFile: ""}
  eviction:
    mode: Automatic
YAML

eventually 480 "one busy VM per worker" bash -c "$(declare -f vmis per_node); sim_ns=$sim_ns
  [ \"\$(per_node hot- | awk '{print \$2}' | tr '\n' ' ')\" = '1 1 1 ' ]"
eventually 180 "both moves Succeeded in status" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[]? | select(.phase==\"Succeeded\")] | length')\" = 2 ]"
eventually 240 "every worker below the taint level, and untainted" bash -c "$(declare -f psir_field no_taint)
  no_taint && psir_field $name '[.status.nodes[] | (.pressure.cpu // \"100\" | tonumber) < 25] | all' | grep -q true"
after=$(vmis)
check "the optimal number of moves: 2 (status)" test "$(psir_field "$name" '.status.moves | length')" -eq 2
check "no VM moved twice, none moved back" test \
  "$(psir_field "$name" '[.status.moves[].name] | unique | length')" -eq 2
check "only busy VMs were moved, off worker-0" test \
  "$(psir_field "$name" '[.status.moves[] | select((.name | startswith("hot-")) and .sourceNode=="worker-0")] | length')" -eq 2
check "every VMI kept its UID (live-migrated, not restarted)" test \
  "$(echo "$before" | awk '{print $1, $3}')" = "$(echo "$after" | awk '{print $1, $3}')"
check "no migration failed (record)" test "$(migrations_ended Failed | wc -l)" -eq 0
eventually 180 "each move settled reports predicted and observed pressure" bash -c "$(declare -f psir_field)
  [ \"\$(psir_field $name '[.status.moves[] | select(.prediction.source and .prediction.observedSource and .prediction.observedDestination)] | length')\" = 2 ]"
metrics_port=$(sed -n 's/.*serving paths=\/metrics port=\([0-9]*\).*/\1/p' "$work/operator.log")
check "/metrics: both predictions checked, with the error of sources and destinations" bash -c \
  "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q '^psi_rebalancer_predictions_checked_total 2' &&
   curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q '^psi_rebalancer_prediction_error_percent_total{role=\"destination\"}'"
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
