#!/usr/bin/env bash
# Streaming list not honoured -> LIST then WATCH. kube-apiserver 1.34 serves streaming
# lists; one older than 1.27 ignores sendInitialEvents: it sends the state as ADDED events
# and never the k8s.io/initial-events-end bookmark. The probe reproduces that on the real
# server by leaving out allowWatchBookmarks (the server then sends no bookmark at all).
# After 30 s without data and without that bookmark the watch falls back to LIST, for
# good; the informer syncs and the objects the abandoned streaming list delivered are not
# delivered a second time by the LIST.
#
#   informer_fallback.sh PROBE
source "$(dirname "$0")/informer_lib.sh" "$1"

for i in 1 2 3; do create_node "${prefix}$i" 0 >/dev/null; done
start_probe --mode auto --no-bookmarks
eventually 90 "the watch gave up the streaming list and used LIST" \
  grep -q 'watch streaming list refused, using LIST' "$work/log"
eventually 30 "the informer synced" synced
check "the sync came from a LIST" grep -q 'watch listed .* mode=list ' "$work/log"
check "each node was added exactly once (the LIST did not repeat the stream's adds)" \
  test "$(count "^ADD ${prefix}")" -eq 3 -a "$(count "^ADD ${prefix}1 ")" -eq 1
rv=$(set_label "${prefix}1" step 1)
eventually 30 "a change after the fallback reached the handlers" grep -qE "^UPDATE ${prefix}1 [0-9]+ $rv 1\$" "$work/log"
eventually 30 "cache == fresh LIST == replayed handler log" converged || show_state
check "the handler log replays without an inconsistency or a duplicate" replay_ok
check "the probe exits cleanly on SIGTERM" stop_probe
check "the watch remembers the refusal (streaming_refused=1, no streamed list)" \
  test "$(stat streaming_refused)" = 1 -a "$(stat streamed_lists)" = 0
finish
