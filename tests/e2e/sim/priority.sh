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
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-limits.yaml" "$ns" || { finish; exit 1; }
kubectl patch kubevirt kubevirt-kubevirt-hyperconverged -n "$ns" --type merge -p \
  '{"spec":{"configuration":{"migrations":{"parallelMigrationsPerCluster":1,"parallelOutboundMigrationsPerNode":1}}}}' >/dev/null
eventually 30 "the simulator's migration controller took one slot for the cluster" bash -c \
  "jq -s -e '[.[] | select(.type == \"limits\")] | last | .perCluster == \"1\"' $sim_record >/dev/null"

# the launcher pods first, so that the evictions go out back to back
first=$(launcher vm-a-0) ours1=$(launcher vm-b-0) ours2=$(launcher vm-b-1) drain=$(launcher vm-c-0)
answers=0
descheduler='{"requested-by":"sigs.k8s.io/descheduler"}'
for pod in "$first" "$ours1" "$ours2" "$drain"; do
  annotations=""
  case $pod in "$ours1" | "$ours2") annotations=$descheduler ;; esac
  [[ $(evict "$ns" "$pod" "" "$annotations") == "429 "*"Eviction triggered evacuation"* ]] && answers=$((answers + 1))
done
check "four evictions answered 429 (evacuation): vm-a-0 and vm-c-0 plain, vm-b-0 and vm-b-1 as the operator's ($answers)" test "$answers" = 4
eventually 120 "the four migrations succeed" bash -c \
  "kubectl get vmim -n $ns -o json | jq -e '[.items[] | select(.status.phase == \"Succeeded\")] | length == 4' >/dev/null"

priority() { kubectl get vmim -n "$ns" -o json | jq -r --arg v "$1" '.items[] | select(.spec.vmiName == $v) | .spec.priority'; }
check "the plain evictions' migrations have priority system-critical (API)" \
  test "$(priority vm-a-0) $(priority vm-c-0)" = "system-critical system-critical"
check "the operator-style evictions' migrations have priority system-maintenance (API)" \
  test "$(priority vm-b-0) $(priority vm-b-1)" = "system-maintenance system-maintenance"
# the order the migrations were created in, and the order they started in (Scheduling: the slot taken)
created=$(jq -s -r '[.[] | select(.type == "evacuation") | .vmi] | join(" ")' "$sim_record")
started=$(jq -s -r '[.[] | select(.type == "migration" and .phase == "Scheduling") | .vmi] | join(" ")' "$sim_record")
echo "# created: $created; started: $started"
# The evacuation controller creates the migrations as it sees the marks, not quite in the
# evictions' order, and within a priority the queue goes by creationTimestamp (seconds) and
# then by the generated name. So: whichever migration came first took the free slot; after
# it, every system-critical one started before every system-maintenance one; and the drain's,
# created after one of ours, started before it.
ours_first=$(grep -o 'vm-b-[01]' <<<"$created" | head -1)
check "the drain's migration was created after $ours_first's" bash -c "[[ '$created' == *$ours_first*vm-c-0* ]]"
check "after the first, the system-critical migrations started before the system-maintenance ones" \
  jq -n -e --arg s "$started" '($s | split(" ")) as $a | ($a | length) == 4 and ($a[1:] | map(test("vm-b")) | . == sort)'
check "the drain's vm-c-0 started before $ours_first" bash -c "[[ '$started' == *vm-c-0*$ours_first* ]]"
finish
