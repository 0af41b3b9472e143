#!/usr/bin/env bash
# The informer follows live changes: every create, label change and delete made while it
# watches reaches the handlers exactly once, with the resourceVersion the API returned;
# a label change that takes a node out of the selector is a delete, back in an add; the
# watch's server-side timeout (5 s here) ends streams that resume without a relist.
# With "keep" the informer has no projection and keeps the API objects themselves: what the
# handlers are told is read from them, and none keeps the metadata.managedFields the server
# sends (cut from the events' text, deleted from the LIST's items).
#
#   informer_live.sh PROBE auto|list [keep]  (auto: streaming initial list; list: LIST then WATCH)
source "$(dirname "$0")/informer_lib.sh" "$1"
mode=${2:?mode}
keep=()
[ "${3:-}" = keep ] && keep=(--keep-objects)

declare -A rv_of
for i in 1 2 3; do rv_of[$i]=$(create_node "${prefix}$i" 0); done
# Two more informers (namespaces, pods) in the same loop: their watches share the
# connection (HTTP/2 multiplexing).
start_probe --mode "$mode" --watch-timeout 5 --also /api/v1/namespaces --also /api/v1/pods "${keep[@]+"${keep[@]}"}"
eventually 30 "the informer synced (mode $mode)" synced
eventually 30 "the two other informers synced" test "$(count '^ALSO-SYNCED ')" -ge 2
if [ "$mode" = auto ]; then
  # (In list mode the REST client's own connection for the LISTs is there too.)
  port=$(source "$PSI_TESTBED/ports.env"; echo "$APISERVER_PORT")
  conns() { ss -Htnp state established "( dport = :$port )" | grep -c "pid=$probe_pid," || true; }
  check "three watches, one connection to the API server (HTTP/2 multiplexing)" test "$(conns)" -eq 1
fi
check "the initial list delivered the 3 nodes as adds" test "$(count "^ADD ${prefix}[123] ")" -eq 3
if [ "$mode" = auto ]; then
  check "the initial list was a streaming list (sendInitialEvents)" grep -q 'watch listed .* mode=stream ' "$work/log"
else
  check "the initial list was a LIST" grep -q 'watch listed .* mode=list ' "$work/log"
fi

truth=$work/truth   # what the API answered to each write: "ADD|UPDATE|DELETE name rv|- step|-"
: > "$truth"
for step in 1 2 3 4 5; do
  echo "UPDATE ${prefix}1 $(set_label "${prefix}1" step "$step") $step" >> "$truth"
done
echo "ADD ${prefix}4 $(create_node "${prefix}4" 0) 0" >> "$truth"
# Out of the selector: the server sends DELETED; back in: ADDED.
echo "DELETE ${prefix}2 $(set_label "${prefix}2" "$sel_key" other) -" >> "$truth"
echo "ADD ${prefix}2 $(set_label "${prefix}2" "$sel_key" "r$run") 0" >> "$truth"
kubectl delete node "${prefix}3" >/dev/null
echo "DELETE ${prefix}3 - -" >> "$truth"  # a Node DELETE answers a Status: no rv
sleep 6 # at least one stream ends by its timeout and resumes
for step in 6 7; do
  echo "UPDATE ${prefix}1 $(set_label "${prefix}1" step "$step") $step" >> "$truth"
done

eventually 30 "cache == fresh LIST == replayed handler log" converged || show_state
check "the handler log replays without an inconsistency or a duplicate" replay_ok
# Every write made while connected reached the handlers, in order.
missing=0
while read -r type name rv step; do
  case $type in
    ADD) pat="^ADD $name $rv $step\$" ;;
    UPDATE) pat="^UPDATE $name [0-9]+ $rv $step\$" ;;
    DELETE) pat="^DELETE $name ${rv/-/[0-9]+} final\$" ;;
  esac
  if ! grep -qE "$pat" "$work/log"; then echo "not delivered: $type $name $rv $step"; missing=1; fi
done < "$truth"
check "every write reached the handlers with its resourceVersion" test "$missing" -eq 0
check "updates arrived in order (steps 1..7 of ${prefix}1)" \
  test "$(sed -nE "s/^UPDATE ${prefix}1 [0-9]+ [0-9]+ ([0-9]+)$/\1/p" "$work/log" | uniq | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 " -o \
       "$(sed -nE "s/^UPDATE ${prefix}1 [0-9]+ [0-9]+ ([0-9]+)$/\1/p" "$work/log" | uniq | tr '\n' ' ')" = "1 2 3 4 5 6 7 "
check "${prefix}2: one delete (left the selector) and one add back" \
  test "$(count "^DELETE ${prefix}2 ")" -eq 1 -a "$(count "^ADD ${prefix}2 ")" -eq 2
check "${prefix}3: exactly one delete" test "$(count "^DELETE ${prefix}3 ")" -eq 1
check "${prefix}4: exactly one add" test "$(count "^ADD ${prefix}4 ")" -eq 1
check "streams ended by the server's timeout resumed from the last resourceVersion" \
  grep -qE "watch stream opening .* mode=watch rv=[0-9]+" "$work/log"

check "the probe exits cleanly on SIGTERM" stop_probe
check "no relist happened while connected (lists=1, expired=0)" test "$(stat lists)" = 1 -a "$(stat expired)" = 0
check "several streams were opened (timeout rotation)" test "$(stat streams)" -ge 2
check "no event was dropped as a duplicate by the informer" test "$(stat duplicates)" = 0
if [ ${#keep[@]} -gt 0 ]; then
  check "the server sends managedFields" test -n "$(kubectl get node "${prefix}1" --show-managed-fields \
    -o jsonpath='{.metadata.managedFields[0].manager}')"
  check "no kept object has managedFields" test "$(count '^MANAGED ')" -eq 0
fi
finish
