#!/usr/bin/env bash
# A 410 forces a relist, and the relist's diff finds the delete the watch never saw.
# With the API server stopped, a node is deleted directly in etcd and etcd is compacted
# past it; when the API server is back, resuming the watch from the old resourceVersion
# is answered 410 (the test checks the watch's "relisting ... status=410" log line and its
# expired counter), the informer relists and emits exactly one delete, for that node,
# marked final_state_unknown; nothing else changes.
#
#   informer_410.sh PROBE [auto|list]
source "$(dirname "$0")/informer_lib.sh" "$1"
mode=${2:-auto}

for i in 1 2 3; do create_node "${prefix}$i" 0 >/dev/null; done
start_probe --mode "$mode"
eventually 30 "the informer synced (mode $mode)" synced
eventually 30 "the cache holds the 3 nodes" converged

ctl stop apiserver
ctl etcdctl del "/registry/minions/${prefix}2" >/dev/null 2>&1
rev=$(ctl etcdctl endpoint status -w json 2>/dev/null | jq -r '.[0].Status.header.revision')
check "etcd compacted at revision $rev" bash -c "'$PSI_SOURCE_DIR/hack/cluster/ctl' --dir '$PSI_TESTBED' etcdctl compact '$rev' >/dev/null 2>&1"
ctl start apiserver

eventually 60 "the watch was answered 410 and relisted" grep -qE 'watch relisting .* status=410' "$work/log"
eventually 60 "cache == fresh LIST == replayed handler log" converged || show_state
check "the handler log replays without an inconsistency or a duplicate" replay_ok
check "exactly one delete, for ${prefix}2, found by the relist" \
  test "$(count '^DELETE ')" -eq 1 -a "$(count "^DELETE ${prefix}2 [0-9]+ unknown\$")" -eq 1
check "no add after the first sync (nothing was created)" test "$(count '^ADD ')" -eq 3
check "a second complete list was delivered" test "$(count '^SYNCED ')" -ge 2
grep -E 'watch relisting' "$work/log" | sed 's/^/note - /'
check "the probe exits cleanly on SIGTERM" stop_probe
check "the watch counted the 410 (expired >= 1) and the relist delete (relist_deletes = 1)" \
  test "$(stat expired)" -ge 1 -a "$(stat relist_deletes)" = 1
finish
