# shellcheck shell=bash
# Shared by the informer e2e tests: run tests/e2e/kube/informer_probe on Nodes carrying a
# label unique to this run, and compare what its handlers were told with the truth.
#
#   source informer_lib.sh PROBE_BINARY
#
# The probe's log is $work/log (ADD/UPDATE/DELETE/SYNCED/LOG/STATS lines, see
# informer_probe.c); test nodes are named ${prefix}N and labelled $sel.
probe_bin=${1:?usage: $0 PATH_TO_informer_probe}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/testlib.sh"
[ -x "$probe_bin" ] || { echo "no probe binary at $probe_bin" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/psi-informer.XXXXXX")
run=$$
sel_key=psi-e2e-informer
sel="$sel_key=r$run"
prefix=psi-inf-$run-
probe_pid=
ctl() { "$PSI_SOURCE_DIR/hack/cluster/ctl" --dir "$PSI_TESTBED" "$@"; }

cleanup() {
  local rc=$?
  if [ -n "$probe_pid" ] && kill -0 "$probe_pid" 2>/dev/null; then
    kill -TERM "$probe_pid" 2>/dev/null || true
    wait "$probe_pid" 2>/dev/null || true
  fi
  ctl start apiserver >/dev/null 2>&1 || true   # never leave the shared test bed broken
  kubectl delete nodes -l "$sel" --wait=false >/dev/null 2>&1 || true
  if ((rc != 0 || failures != 0)); then
    echo "--- probe log ($work/log) ---"; tail -n 80 "$work/log" 2>/dev/null || true
    echo "--- kept $work for inspection"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# node_yaml NAME STEP: a test node (no kwok annotation: no simulated kubelet touches it).
node_yaml() {
  printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels: {%s: "r%s", step: "%s"}\n' "$1" "$sel_key" "$run" "$2"
}
# create_node NAME STEP: create; prints the new resourceVersion.
create_node() { node_yaml "$1" "$2" | kubectl create -f - -o jsonpath='{.metadata.resourceVersion}'; }
# set_label NAME KEY VALUE: patch a label; prints the new resourceVersion.
set_label() {
  kubectl patch node "$1" --type merge -p "{\"metadata\":{\"labels\":{\"$2\":\"$3\"}}}" \
    -o jsonpath='{.metadata.resourceVersion}'
}

# start_probe [ARGS...]: run the probe in the background ($probe_wrapper may prefix it).
start_probe() {
  : > "$work/log"
  ${probe_wrapper:-} "$probe_bin" --log "$work/log" --dump "$work/dump" --selector "$sel" "$@" \
    >"$work/probe.out" 2>&1 &
  probe_pid=$!
}

# stop_probe: SIGTERM, wait; returns the probe's exit status.
stop_probe() {
  local rc=0
  kill -TERM "$probe_pid" 2>/dev/null || true
  wait "$probe_pid" || rc=$?
  probe_pid=
  return "$rc"
}

synced() { grep -q '^SYNCED ' "$work/log"; }

# dump_cache: the probe's cache, "name rv" sorted.
dump_cache() {
  rm -f "$work/dump"
  kill -USR1 "$probe_pid" || return 1
  local i
  for i in $(seq 1 100); do [ -f "$work/dump" ] && break; sleep 0.1; done
  [ -f "$work/dump" ] || return 1
  grep -v '^END$' "$work/dump" | sort
}

# list_truth: a fresh LIST of the test nodes, "name rv" sorted.
list_truth() {
  kubectl get nodes -l "$sel" -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}' | sort
}

# replay: replay the handler log as a state machine and print the resulting state ("name
# rv" sorted); fails, naming the line, on an ADD of a cached key, an UPDATE or DELETE of
# an unknown key, an UPDATE whose old rv is not the cached one or that does not change the
# rv, and any (key, rv) delivered twice.
replay() {
  awk '
    function bad(m) { print "handler log line " NR ": " m ": " $0 > "/dev/stderr"; err = 1 }
    $1 == "ADD" {
      if ($2 in rv) bad("ADD of a cached key")
      if (seen[$2 " " $3]++) bad("delivered twice")
      rv[$2] = $3
    }
    $1 == "UPDATE" {
      if (!($2 in rv)) bad("UPDATE of an unknown key")
      else if (rv[$2] != $3) bad("UPDATE from rv " $3 " but the cached rv was " rv[$2])
      if ($3 == $4) bad("UPDATE without a new rv")
      if (seen[$2 " " $4]++) bad("delivered twice")
      rv[$2] = $4
    }
    $1 == "DELETE" {
      if (!($2 in rv)) bad("DELETE of an unknown key")
      delete rv[$2]
    }
    END { for (k in rv) print k, rv[k]; exit err }' "$work/log" | sort
  return "${PIPESTATUS[0]}"
}

# converged: the cache equals a fresh LIST, and replaying the handler log gives it too.
replay_ok() { replay >/dev/null; }

converged() {
  local truth cache replayed
  truth=$(list_truth) || return 1
  cache=$(dump_cache) || return 1
  replayed=$(replay 2>/dev/null) || return 1
  [ "$cache" = "$truth" ] && [ "$replayed" = "$truth" ]
}

# show_state: print the three views, for a failure's diagnosis.
show_state() {
  echo "--- LIST:";    list_truth || true
  echo "--- cache:";   dump_cache || true
  echo "--- replayed:"; replay || true
}

# count PATTERN: lines of the handler log matching the extended regex.
count() { grep -cE "$1" "$work/log" || true; }

# stat NAME: a counter from the probe's STATS line.
stat() { sed -n "s/^STATS.* $1=\([0-9]*\).*/\1/p" "$work/log" | tail -n 1; }
