#!/usr/bin/env bash
# Leader election between real processes on one Lease (default timing 15 s / 10 s / 2 s):
#  1. A leads; B follows while A renews.
#  2. kill -9 A: B takes over once A's lease has run out (within the lease duration plus
#     a retry period of the last renewal), not before.
#  3. SIGTERM B: B releases the Lease and C takes over at its next retry, well before the
#     lease duration.
# usage: leader_election.sh PATH/TO/leader_probe
source "$(dirname "$0")/../lib/testlib.sh"
probe=$1
ns=lease-e2e-$$
lease=psi-e2e
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
kubectl create namespace "$ns" >/dev/null

start() { # start ID: run a probe with its output in $work/ID.log
  "$probe" --namespace "$ns" --name "$lease" --identity "$1" >"$work/$1.log" 2>&1 &
  pids+=($!)
  eval "pid_$1=$!"
}
leading_at() { awk -v id="$1" '$1 == "LEADING" && $2 == id {print $3; exit}' "$work/$1.log"; }
is_leading() { [ -n "$(leading_at "$1")" ]; }
holder() { kubectl get lease -n "$ns" "$lease" -o jsonpath='{.spec.holderIdentity}'; }
now_ms() { date +%s%3N; }

start a
eventually 30 "a starts leading" is_leading a
check "the Lease names a as holder" test "$(holder)" = a
start b
sleep 6  # three retry periods: b must keep following while a renews
check "b follows while a renews" bash -c "! grep -q '^LEADING' '$work/b.log'"
check "b is running" kill -0 "$pid_b"

# last renewal by a, as the server stored it, then kill -9
kill -9 "$pid_a"
killed=$(now_ms)
eventually 40 "b takes over after a was killed (kill -9)" is_leading b
if is_leading b; then
  took=$(( $(leading_at b) - killed ))
  echo "# b took over ${took} ms after the kill"
  # a renewed at most one retry period (2 s) before the kill; the lease lasts 15 s from the
  # moment b saw that renewal (b polls every 2-2.4 s), and b acquires at its first poll after
  # that: takeover lies between ~13 s and 15 s + 2 polls (~19.8 s) after the kill.
  check "b waited for a's lease to run out (${took} ms >= 12000)" test "$took" -ge 12000
  check "b took over once the lease ran out, within a poll of it (${took} ms <= 22000)" test "$took" -le 22000
  check "the Lease names b" test "$(holder)" = b
fi

start c
sleep 3
check "c follows b" bash -c "! grep -q '^LEADING' '$work/c.log'"
kill -TERM "$pid_b"
termed=$(now_ms)
eventually 20 "b exits after SIGTERM" bash -c "! kill -0 $pid_b 2>/dev/null"
check "b released the Lease" grep -q '^RELEASED b' "$work/b.log"
rc=0; wait "$pid_b" || rc=$?
check "b exited 0 (rc $rc)" test "$rc" -eq 0
eventually 20 "c takes over after b's release" is_leading c
if is_leading c; then
  took=$(( $(leading_at c) - termed ))
  echo "# c took over ${took} ms after SIGTERM to b"
  # released: c acquires at its next retry (2 s + up to 20 % jitter), not after 15 s
  check "c took over at once, well under the 15 s lease duration (${took} ms <= 6000)" test "$took" -le 6000
  check "the Lease names c" test "$(holder)" = c
  check "leaseTransitions counted b and c taking over" \
    test "$(kubectl get lease -n "$ns" "$lease" -o jsonpath='{.spec.leaseTransitions}')" -ge 2
fi
for id in a b c; do echo "# $id:"; sed 's/^/#   /' "$work/$id.log"; done
finish
