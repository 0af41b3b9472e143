#!/usr/bin/env bash
# kubectl psi top, moves and why, found by kubectl on the PATH as a plugin, checked against
# the cluster's state: the seed scenario (six VMs on worker-0, three busy) and the operator
# in DryRun, which taints worker-0 and reports the moves it would make. Each view's content
# (pressures, states, VM counts, moves, reasons) must agree with status and the VMIs read at
# the same resourceVersion; `top -w -o json` must follow the changes as they happen; then,
# switched to Automatic, `why` must say worker-0 is being relieved while a move off it runs.
# `why -o json` must give the same answer as the text, read at the same resourceVersion.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/../rebalance/lib.sh"

export PATH=$PSI_BINARY_DIR/cli:$PATH NO_COLOR=1
name=cli-$$
watch_pid=
cleanup() {
  local rc=$?
  [ -z "$watch_pid" ] || { kill -TERM "$watch_pid" 2>/dev/null || true; wait "$watch_pid" 2>/dev/null || true; }
  rebalance_cleanup "$name" "$rc"
}
trap cleanup EXIT
cooldown="{initial: 10m, max: 20m, history: 1h}"

start_sim "$scenarios/seed.yaml"
start_operator
check "kubectl finds the plugin" bash -c "kubectl plugin list 2>/dev/null | grep -q '/kubectl-psi$'"
# follow from before the PsiRebalance exists: one JSON document per change
kubectl psi top -w -o json >"$work/watch.jsonl" 2>"$work/watch.err" &
watch_pid=$!
eventually 20 "top -w prints its first document" test -s "$work/watch.jsonl"
[ -s "$work/watch.jsonl" ] || echo "top -w said: $(cat "$work/watch.err")"
apply_psir "$name" DryRun

would() { psir_field "$1" '[.status.moves[]? | select(.phase=="WouldMove")] | length'; }
eventually 240 "the operator reports two moves it would make" bash -c "$(declare -f psir_field would); [ \"\$(would $name)\" = 2 ]"

# snapshot CMD...: run CMD between two reads of the PsiRebalance and the VMIs that saw the
# same resourceVersions; $status, $vmis and $out hold what was read.
snapshot() {
  local i a b
  for i in $(seq 1 30); do
    a=$(kubectl get psirebalance "$name" -o json) && vmis=$(kubectl get vmi -A -o json) && out=$("$@" 2>>"$work/psi.err") &&
      b=$(kubectl get psirebalance "$name" -o json) || return 1
    if [ "$(jq -r .metadata.resourceVersion <<<"$a")" = "$(jq -r .metadata.resourceVersion <<<"$b")" ] &&
       [ "$(jq -r .metadata.resourceVersion <<<"$vmis")" = "$(kubectl get vmi -A -o json | jq -r .metadata.resourceVersion)" ]; then
      status=$a
      return 0
    fi
    sleep 0.5
  done
  return 1
}

# ---- top -o json: every node's values as status and the VMIs have them ----
snapshot kubectl psi top "$name" -o json || fail "no quiet moment to compare top -o json"
expected=$(jq -c --argjson vmis "$vmis" '[.status.nodes[] | .name as $n | {name, state,
    cpu: (.pressure.cpu // null | if . then tonumber else . end),
    utilization: (.utilization // null | if . then tonumber else . end),
    vms: ([$vmis.items[] | select(.status.nodeName == $n)] | length)}]' <<<"$status")
got=$(jq -c '[.items[0].nodes[] | {name, state, cpu: .pressure.cpu, utilization, vms}]' <<<"$out")
check "top -o json: each node's state, cpu pressure, utilisation and VMs are status's and the VMIs' ($got)" \
  test "$got" = "$expected"
check "top -o json: worker-0 is Tainted with all 6 VMs, its pressure above the evict level" \
  jq -e '.items[0].nodes[] | select(.name == "worker-0") | .state == "Tainted" and .vms == 6 and .pressure.cpu > 30' <<<"$out"
check "top -o json: thresholds and summary are the spec's and status's" \
  jq -e --argjson s "$(jq .status.summary <<<"$status")" '.items[0] | .thresholds.taintAbovePercent == 25
    and .thresholds.evictAbovePercent == 30 and .mode == "DryRun" and .summary.evictions == $s.evictions
    and .summary.tainted == $s.tainted' <<<"$out"

# ---- top (text): each node's row carries its state, its cpu pressure and VM count ----
snapshot kubectl psi top "$name" || fail "no quiet moment to compare top"
rows_ok() {
  local n st p v row
  while read -r n st p; do
    row=$(grep "^$n " <<<"$out") || return 1
    v=$(jq --arg n "$n" '[.items[] | select(.status.nodeName == $n)] | length' <<<"$vmis")
    grep -q " $st " <<<"$row" && grep -q " $(printf '%.1f%%' "$p") " <<<"$row" && grep -qE " $v +[0-9]+ +[0-9]+  " <<<"$row" || return 1
  done < <(jq -r '.status.nodes[] | "\(.name) \(.state) \(.pressure.cpu)"' <<<"$status")
}
check "top: every node's row shows its state, cpu pressure and VMs" rows_ok
check "top: worker-0's row has a bar past both marks and says why it is Tainted" \
  grep -qE '^worker-0 .*\[#####\|!#+\.*\].* Tainted .*tainted; above evict 30%' <<<"$out"
check "top: the Rebalancing condition as status has it" \
  grep -qF "Rebalancing $(jq -r '.status.conditions[] | select(.type == "Rebalancing") | "\(.status) (\(.reason))"' <<<"$status")" <<<"$out"
check "top: no colour when NO_COLOR is set (and not on a pipe)" bash -c '! grep -q "$(printf "\033")" <<<"$0"' "$out"
# on a terminal (script(1) gives it one): Tainted in red, unless NO_COLOR says otherwise
check "top on a terminal: worker-0's state in colour" bash -c \
  "env -u NO_COLOR script -qec 'kubectl psi top $name' /dev/null | grep -q \"\$(printf '\033')\\[31mTainted\""
check "top on a terminal with NO_COLOR=1: no colour" bash -c \
  "! NO_COLOR=1 script -qec 'kubectl psi top $name' /dev/null | grep -q \"\$(printf '\033')\""

# ---- moves ----
snapshot kubectl psi moves "$name" -o json || fail "no quiet moment to compare moves -o json"
check "moves -o json: the moves of status, newest first, method DryRun" test \
  "$(jq -c '[.items[] | {name, source, destination, phase, method}]' <<<"$out")" = \
  "$(jq -c '[.status.moves | reverse | .[] | {name, source: .sourceNode, destination: .destinationNode, phase, method: "DryRun"}]' <<<"$status")"
check "moves -o json: each is cooling down for the 10m cooldown" \
  jq -e '[.items[] | .cooldownSeconds > 300 and .cooldownSeconds <= 600] | all and length == 2' <<<"$out"
snapshot kubectl psi moves "$name" || fail "no quiet moment to compare moves"
moves_ok() {
  local n s d
  while read -r n s d; do
    grep -qE "VirtualMachineInstance [^ ]+/$n +$s -> $d +DryRun +WouldMove " <<<"$out" || return 1
  done < <(jq -r '.status.moves[] | "\(.name) \(.sourceNode) \(.destinationNode)"' <<<"$status")
}
check "moves: a row per move: workload, source -> destination, method, phase" moves_ok

# ---- why ----
snapshot kubectl psi why worker-0 || fail "no quiet moment to compare why"
check "why worker-0: its pressure and state as status has them" grep -qF \
  "$(jq -r '.status.nodes[] | select(.name == "worker-0") | "cpu \(.pressure.cpu)%"' <<<"$status")" <<<"$out"
check "why worker-0: not relieved, because the mode is DryRun" \
  bash -c 'grep -q "verdict    not being relieved now" <<<"$0" && grep -q "\[dry-run\] spec.eviction.mode is DryRun" <<<"$0"' "$out"
check "why worker-0: the last decision, with the Rebalancing reason status has" \
  grep -qF "Rebalancing $(jq -r '.status.conditions[] | select(.type == "Rebalancing") | .reason' <<<"$status")" <<<"$out"
check "why worker-0: the moved VMs' cooldowns" bash -c \
  "[ \$(grep -c '\[cooldown\] VirtualMachineInstance .* would move off it to worker-' <<<\"\$0\") -eq 2 ]" "$out"
# why -o json: the same answer for scripts, read with the text at the same resourceVersion
why_both() { kubectl psi why worker-0 -o json && echo '----' && kubectl psi why worker-0; }
snapshot why_both || fail "no quiet moment to compare why -o json"
why_json=${out%%----*} why_text=${out#*----}
check "why -o json worker-0: its state, cpu pressure and thresholds as status and the spec have them" \
  jq -e --argjson n "$(jq '.status.nodes[] | select(.name == "worker-0")' <<<"$status")" --arg p "$name" '
    .node == "worker-0" and .psiRebalance == $p and .mode == "DryRun" and .status.state == $n.state
    and .status.pressure.cpu == ($n.pressure.cpu | tonumber) and .thresholds.evictAbovePercent == 30' <<<"$why_json"
check "why -o json worker-0: verdict blocked, the dry-run reason, the Rebalancing reason status has, two cooldowns" \
  jq -e --arg r "$(jq -r '.status.conditions[] | select(.type == "Rebalancing") | .reason' <<<"$status")" '
    .verdict == "blocked" and .verdictText == "not being relieved now" and any(.reasons[]; .code == "dry-run")
    and any(.reasons[]; .text | contains("Rebalancing " + $r)) and ([.reasons[] | select(.code == "cooldown")] | length == 2)' \
  <<<"$why_json"
check "why -o json worker-0: the reasons the text lists, in its order" test \
  "$(jq -r '.reasons[].code' <<<"$why_json")" = "$(sed -n 's/^  - \[\([a-z-]*\)\] .*/\1/p' <<<"$why_text")"
not_listed() {
  local rc=0
  kubectl psi why no-such-node -o json >"$work/why-none.json" 2>>"$work/psi.err" || rc=$?
  [ "$rc" -eq 1 ] && jq -e '.node == "no-such-node" and .verdict == "not-listed" and (has("psiRebalance") | not)' "$work/why-none.json"
}
check "why -o json for a node no PsiRebalance lists: verdict not-listed, exit 1" not_listed
cool=$(jq -r '[.status.nodes[] | select(.name != "worker-0")][0].name' <<<"$status")
snapshot kubectl psi why "$cool" || fail "no quiet moment to compare why $cool"
check "why $cool: nothing to relieve, its pressure under the evict level" grep -qF \
  "[below-evict] its cpu pressure $(jq -r --arg n "$cool" '.status.nodes[] | select(.name == $n) | .pressure.cpu' <<<"$status")% is not above evictAbovePercent 30%" <<<"$out"

# ---- top -w: the changes as they happened, through the watch ----
# LIST requests for PsiRebalances the API server has answered, from its own metrics
lists() {
  kubectl get --raw /metrics |
    awk '/^apiserver_request_total[{]/ && /resource="psirebalances"/ && /verb="LIST"/ {s += $NF} END {print s + 0}'
}
frames() { wc -l <"$work/watch.jsonl"; }
l0=$(lists)
check "the API server's metrics count LISTs of PsiRebalances (top -w's first read was one)" test "$l0" -gt 0
for i in 1 2 3; do
  f=$(frames)
  kubectl annotate psirebalance "$name" --overwrite "e2e.psi.dev/touch=$i" >/dev/null
  eventually 30 "top -w: a new document after change $i" bash -c "[ \$(wc -l <'$work/watch.jsonl') -gt $f ]"
done
check "top -w: it followed those changes without a LIST (a watch, not polling)" test "$(lists)" = "$l0"
rc=0
kill -TERM "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || rc=$?
check "top -w ended cleanly on SIGTERM" test "$rc" -eq 0
watch_pid=
w0() { jq -c --arg p "$name" '.items[] | select(.name == $p) | .nodes[] | select(.name == "worker-0") | .state' "$work/watch.jsonl"; }
check "top -w: a document with no PsiRebalance yet, then the new one" \
  bash -c "head -1 '$work/watch.jsonl' | jq -e --arg p $name '[.items[] | select(.name == \$p)] | length == 0'"
check "top -w: worker-0 went from an untainted state to Tainted" \
  bash -c "$(declare -f w0); name=$name work=$work; w0 | head -1 | grep -qv Tainted && w0 | tail -1 | grep -q Tainted"
check "top -w: the last document has both moves" \
  bash -c "tail -1 '$work/watch.jsonl' | jq -e --arg p $name '.items[] | select(.name == \$p) | .nodes[] | select(.name == \"worker-0\") | .movesOut == 2'"
check "top -w: no error" test ! -s "$work/watch.err"

# ---- why, while a move runs: Automatic makes the moves DryRun reported ----
kubectl patch psirebalance "$name" --type merge -p '{"spec":{"eviction":{"mode":"Automatic"}}}' >/dev/null
relieving() {
  kubectl psi why worker-0 >"$work/why.txt" 2>>"$work/psi.err" && grep -q '^  verdict    being relieved$' "$work/why.txt"
}
eventually 180 "why worker-0 in Automatic: being relieved while a move off it runs" relieving
vm=$(sed -n 's#^  - \[moving\] VirtualMachineInstance [^/]*/\([^ ]*\) is moving to .*#\1#p' "$work/why.txt" | head -1)
check "... naming the VM ($vm) that status shows moving off worker-0" bash -c "kubectl get psirebalance $name -o json |
  jq -e --arg vm '$vm' '[.status.moves[] | select(.name == \$vm and .sourceNode == \"worker-0\" and .phase != \"WouldMove\")] | length > 0'"
check "the commands wrote nothing on stderr (nor did a sanitizer)" test ! -s "$work/psi.err"

finish
