#!/usr/bin/env bash
# The informer survives kube-apiserver going away mid-stream: a writer keeps changing a
# node while the API server is stopped and started again; while it is down, a node is
# deleted behind its back (directly in etcd); right after the restart more changes follow.
# The informer reconnects with backoff and converges: its cache equals a fresh LIST, the
# handler log replays to the same state without a duplicate, every node's steps arrive in
# order, and each deleted node is deleted exactly once.
#
#   informer_apiserver_restart.sh PROBE
source "$(dirname "$0")/informer_lib.sh" "$1"

for i in 1 2 3; do create_node "${prefix}$i" 0 >/dev/null; done
start_probe
eventually 30 "the informer synced" synced

# The writer: step=1,2,3... on node 1, until told to stop; failures (API down) are fine.
writer() {
  local step=1
  while [ ! -f "$work/stop-writer" ]; do
    set_label "${prefix}1" step "$step" >/dev/null 2>&1 && step=$((step + 1))
    sleep 0.2
  done
  echo "$((step - 1))" > "$work/writer-last"
}
writer &
writer_pid=$!
sleep 2

ctl stop apiserver
eventually 30 "the watch noticed the API server is gone" grep -q 'watch stream failed' "$work/log"
sleep 2
# A change the informer cannot see happen: the object disappears from etcd.
ctl etcdctl del "/registry/minions/${prefix}3" >/dev/null 2>&1
ctl start apiserver
kubectl delete node "${prefix}2" >/dev/null
create_node "${prefix}4" 0 >/dev/null
sleep 2
touch "$work/stop-writer"
wait "$writer_pid"
last=$(cat "$work/writer-last")
check "the writer made changes before and after the outage (last step $last)" test "$last" -ge 5

eventually 60 "cache == fresh LIST == replayed handler log" converged || show_state
check "the handler log replays without an inconsistency or a duplicate" replay_ok
steps=$(sed -nE "s/^(ADD|UPDATE) ${prefix}1 .* ([0-9]+)$/\2/p" "$work/log" | uniq)
check "node 1's steps arrived in increasing order" bash -c "sort -n -c <<<'$steps'"
check "node 1's last step $last reached the handlers" test "$(tail -n 1 <<<"$steps")" = "$last"
check "${prefix}2 (deleted after the restart): exactly one delete" test "$(count "^DELETE ${prefix}2 ")" -eq 1
check "${prefix}3 (deleted in etcd during the outage): exactly one delete" test "$(count "^DELETE ${prefix}3 ")" -eq 1
check "${prefix}4 (created after the restart): exactly one add" test "$(count "^ADD ${prefix}4 ")" -eq 1
check "the watch retried with backoff while the API server was down" grep -q 'watch retrying .* relist=false' "$work/log"
# What happens after a restart: the new API server's watch cache starts at the current
# revision, so resuming from an older resourceVersion is answered 410 "too old resource
# version" and the informer relists. Either way (resume or relist) it must converge;
# the log says which it took.
if grep -q 'watch relisting .* status=410' "$work/log"; then
  echo "note - the restart was followed by a 410 and a relist"
else
  echo "note - the watch resumed without a relist"
fi
check "the probe exits cleanly on SIGTERM" stop_probe
check "no event was delivered twice (the informer dropped none as duplicate either)" test "$(stat duplicates)" = 0
finish
