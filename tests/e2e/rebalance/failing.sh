#!/usr/bin/env bash
# Failing live migrations: the seed, but every migration of a busy VM fails. The operator
# asks once; KubeVirt retries the evacuation on its own backoff; the operator follows each
# failure (status, Events, counters) and lengthens the VM's cooldown each time, and asks for
# no other eviction meanwhile: no retry storm.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=failing-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$scenarios/rebalance-failing.yaml"
start_operator
apply_psir "$name" Automatic

failures() { psir_field "$1" '[.status.moves[]?.failures // 0] | max // 0'; }
until_of() { psir_field "$1" '.status.moves[0].cooldownUntil // ""'; }
eventually 180 "a first migration failed and status counts it" bash -c "$(declare -f psir_field failures); [ \"\$(failures $name)\" -ge 1 ]"
# the cooldown and the failure count it belongs to, from one read of the status
read -r f1 u1 < <(psir_field "$name" '"\([.status.moves[]?.failures // 0] | max // 0) \(.status.moves[0].cooldownUntil // "")"') || true
check "the move is reported Failed or Migrating again, with its migration" bash -c "$(declare -f psir_field)
  psir_field $name '.status.moves[0] | \"\(.phase) \(.migration)\"' | grep -Eq '^(Failed|Migrating|MigrationRequested) kubevirt-evacuation-'"
eventually 180 "KubeVirt's retry failed too, and status counts it" bash -c "$(declare -f psir_field failures); [ \"\$(failures $name)\" -gt $f1 ]"
u2=$(until_of "$name")
check "the cooldown grew with the failure ($u1 -> $u2)" test "$(date -d "$u2" +%s)" -gt "$(date -d "$u1" +%s)"
check "summary counts the failed migrations" test "$(psir_field "$name" .status.summary.migrationsFailed)" -ge 2
check "worker-0's entry counts them too" test \
  "$(psir_field "$name" '.status.nodes[] | select(.name=="worker-0") | .migrations.failed')" -ge 2
check "a Warning Event MigrationFailed for each" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and .reason==\"MigrationFailed\" and .type==\"Warning\")] | length >= 1' >/dev/null"
sleep 30
check "one eviction asked in all, however often the migration failed (record)" test "$(our_evictions | wc -l)" -eq 1
check "... while KubeVirt retried it (record: failed migrations)" test "$(migrations_ended Failed | wc -l)" -ge 2
check "no VM restarted (record)" test "$(jq -c 'select(.type=="vm-restart")' "$record" | wc -l)" -eq 0
check_limits 2 1 2
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
