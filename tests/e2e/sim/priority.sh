#!/usr/bin/env bash
# KubeVirt's migration priority queue holds in the simulator: with one migration slot in the
# cluster (the KubeVirt CR's parallelMigrationsPerCluster 1), a migration asked by a plain
# eviction (a node drain: system-critical) goes before the ones asked by evictions that carry
# requested-by: sigs.k8s.io/descheduler (what the operator's evictions carry:
# system-maintenance), though it was asked after them.
# KubeVirt: markVMI in pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go,
# the evacuation controller's priority in pkg/virt-controller/watch/drain/evacuation/evacuation.go,
# the queue in pkg/virt-controller/watch/migration/migration.go.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/simlib.sh"
trap sim_cleanup EXIT

ns=sim-priority-$$
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-priority.yaml" "$ns" || { finish; exit 1; }
kubectl patch kubevirt kubevirt-kubevirt-hyperconverged -n "$ns" --type merge -p \
  '{"spec":{"configuration":{"migrations":{"parallelMigrationsPerCluster":1,"parallelOutboundMigrationsPerNode":1}}}}' >/dev/null
eventually 30 "the simulator's migration controller took one slot for the cluster" bash -c \
  "jq -s -e '[.[] | select(.type == \"limits\")] | last | .perCluster == \"1\"' $sim_record >/dev/null"

# recorded: VMI's migration was created (evacuation), or took the slot (Scheduling)
created() { jq -s -e --arg v "$1" '[.[] | select(.type == "evacuation" and .vmi == $v)] | length > 0' "$sim_record"; }
scheduling() { jq -s -e --arg v "$1" '[.[] | select(.type == "migration" and .phase == "Scheduling" and .vmi == $v)] | length > 0' "$sim_record"; }
descheduler='{"requested-by":"sigs.k8s.io/descheduler"}'
answers=0
asked() {
  echo "# eviction answered: $1"
  if [[ $1 == "429 "*"Eviction triggered evacuation"* ]]; then answers=$((answers + 1)); fi
}

# A plain eviction takes the slot; two operator-style ones queue behind it; then a drain's
# (plain) eviction comes last, while the first migration still holds the slot.
asked "$(evict "$ns" "$(launcher first)")"
eventually 30 "first's migration took the one slot" scheduling first
asked "$(evict "$ns" "$(launcher ours-0)" "" "$descheduler")"
asked "$(evict "$ns" "$(launcher ours-1)" "" "$descheduler")"
eventually 10 "ours-0's and ours-1's migrations were created, queued" bash -c \
  "$(declare -f created); sim_record=$sim_record; created ours-0 && created ours-1"
asked "$(evict "$ns" "$(launcher drain)")"
check "four evictions answered 429 (evacuation): first and drain plain, ours-0 and ours-1 as the operator's ($answers)" test "$answers" = 4
check "first still held the slot when drain's eviction came" bash -c \
  "! jq -s -e '[.[] | select(.type == \"migration\" and .vmi == \"first\" and .phase == \"Succeeded\")] | length > 0' $sim_record"
eventually 180 "the four migrations succeed" bash -c \
  "kubectl get vmim -n $ns -o json | jq -e '[.items[] | select(.status.phase == \"Succeeded\")] | length == 4' >/dev/null"

priority() { kubectl get vmim -n "$ns" -o json | jq -r --arg v "$1" '.items[] | select(.spec.vmiName == $v) | .spec.priority'; }
check "the plain evictions' migrations have priority system-critical (API)" \
  test "$(priority first) $(priority drain)" = "system-critical system-critical"
check "the operator-style evictions' migrations have priority system-maintenance (API)" \
  test "$(priority ours-0) $(priority ours-1)" = "system-maintenance system-maintenance"
# the order the migrations were created in, and the order they took the slot in
created=$(jq -s -r '[.[] | select(.type == "evacuation") | .vmi] | join(" ")' "$sim_record")
started=$(jq -s -r '[.[] | select(.type == "migration" and .phase == "Scheduling") | .vmi] | join(" ")' "$sim_record")
echo "# created: $created; started: $started"
check "the drain's migration was created last" bash -c "[[ '$created' == 'first '*' drain' ]]"
check "the drain's migration took the slot after first's, before both queued system-maintenance ones" \
  bash -c "[[ '$started' == 'first drain '* ]] && [ \$(wc -w <<<'$started') = 4 ]"
finish
