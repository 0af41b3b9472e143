#!/usr/bin/env bash
# No leak over a long watch session: the probe runs under valgrind (memcheck) for
# $PSI_VALGRIND_SECONDS (default 150 s) with 10 s server-side watch timeouts (so streams
# end and resume many times), a writer changing nodes all along, nodes created and
# deleted, and one API server restart (reconnect, backoff, 410, relist). At SIGTERM the
# probe frees everything; valgrind must report definitely and indirectly lost = 0 and
# no memory error.
#
#   informer_valgrind.sh PROBE
source "$(dirname "$0")/informer_lib.sh" "$1"
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
secs=${PSI_VALGRIND_SECONDS:-150}

for i in 1 2 3; do create_node "${prefix}$i" 0 >/dev/null; done
probe_wrapper="valgrind --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --log-file=$work/valgrind.log"
start_probe --watch-timeout 10
eventually 120 "the informer synced under valgrind" synced

deadline=$((SECONDS + secs))
restarted=0
step=1
while ((SECONDS < deadline)); do
  set_label "${prefix}1" step "$step" >/dev/null 2>&1 && step=$((step + 1))
  if ((step % 10 == 0)); then
    kubectl delete node "${prefix}4" >/dev/null 2>&1 || create_node "${prefix}4" 0 >/dev/null 2>&1 || true
  fi
  if ((!restarted && SECONDS > deadline - secs / 2)); then
    ctl restart apiserver
    restarted=1
  fi
  sleep 1
done
eventually 120 "cache == fresh LIST == replayed handler log" converged || show_state
check "the handler log replays without an inconsistency or a duplicate" replay_ok
check "the probe exits cleanly on SIGTERM under valgrind (no leak, no error)" stop_probe
echo "--- valgrind summary"; sed -n '/HEAP SUMMARY/,$p' "$work/valgrind.log"
vg() { grep -qE "$1" "$work/valgrind.log"; }
check "valgrind ran the probe and reported" vg 'ERROR SUMMARY: '
check "valgrind: definitely lost = 0" bash -c "grep -qE 'definitely lost: 0 bytes|no leaks are possible' '$work/valgrind.log'"
check "valgrind: indirectly lost = 0" bash -c "grep -qE 'indirectly lost: 0 bytes|no leaks are possible' '$work/valgrind.log'"
check "valgrind: no memory error" vg 'ERROR SUMMARY: 0 errors' 
min_streams=$((secs / 20 > 2 ? secs / 20 : 2))
check "streams ended by their timeout and resumed many times (streams >= $min_streams)" test "$(stat streams)" -ge "$min_streams"
check "the API server restart led to a reconnect (failures >= 1)" test "$(stat failures)" -ge 1
finish
