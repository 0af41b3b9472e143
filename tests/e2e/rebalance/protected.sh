#!/usr/bin/env bash
# What must not move does not: with the scenario's namespace excluded nothing is evicted and
# the status says why; then, with the default exclusions, of three busy VMs on worker-0 only
# the free one moves: "guarded" has eviction strategy None, so its eviction would restart it,
# and it is skipped for that (never asked for, its VMI's UID unchanged, the reason in the
# Rebalancing message), and the prefer-no-eviction one is never asked for. Last, with
# eviction.allowVMRestart true, guarded may be asked for: its PodDisruptionBudget makes the
# Eviction API refuse (skipped, with an Event, never evicted or restarted).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=protected-$$
trap 'rc=$?; kubectl delete pdb guarded -n "$sim_ns" --ignore-not-found >/dev/null 2>&1; rebalance_cleanup "$name" $rc' EXIT

start_sim "$scenarios/rebalance-protected.yaml"
kubectl annotate pod -n "$sim_ns" -l app=shy descheduler.alpha.kubernetes.io/prefer-no-eviction=true >/dev/null
kubectl create -n "$sim_ns" -f - >/dev/null <<YAML
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: guarded}}
YAML
eventually 60 "the PodDisruptionBudget allows no disruption" bash -c \
  "[ \"\$(kubectl get pdb guarded -n $sim_ns -o jsonpath='{.status.currentHealthy} {.status.disruptionsAllowed}')\" = '1 0' ]"
before=$(vmis)
guarded_pod=$(kubectl get pod -n "$sim_ns" -l app=guarded -o jsonpath='{.items[*].metadata.name}')
start_operator

# 1. the namespace excluded: nothing moves, and the status says why
apply_psir "$name" Automatic "    excludedNamespaces: [kube-*, openshift-*, $sim_ns]"
eventually 120 "Rebalancing: NoCandidate" bash -c "$(declare -f psir_field rebalancing); [ \"\$(rebalancing $name)\" = NoCandidate ]"
check "the message counts the pods of the excluded namespace" bash -c \
  "$(declare -f psir_field); psir_field $name '.status.conditions[] | select(.type==\"Rebalancing\") | .message' | grep -q '5 excluded namespace'"
sleep 30
check "nothing was evicted from the excluded namespace (record)" test "$(our_evictions all | wc -l)" -eq 0

# 2. default exclusions: only "free" may go; guarded would restart, shy prefers not
kubectl patch psirebalance "$name" --type merge -p '{"spec":{"eviction":{"excludedNamespaces":["kube-*","openshift-*"]}}}' >/dev/null
eventually 180 "free moved off worker-0" bash -c "$(declare -f vmis); sim_ns=$sim_ns; vmis | grep -q '^free worker-[12] '"
eventually 120 "Rebalancing: nothing else that helps may move, guarded skipped as it would restart" bash -c \
  "$(declare -f psir_field rebalancing)
  case \$(rebalancing $name) in NoCandidate|NoImprovingMove|NoPlacement) ;; *) exit 1 ;; esac
  psir_field $name '.status.conditions[] | select(.type==\"Rebalancing\") | .message' |
    grep 'prefer-no-eviction' | grep -q 'VM would restart (eviction strategy None)'"
check "guarded's pod was never asked for, not even in a dry run (record)" test \
  "$(our_evictions all | jq -r .vmi | grep -c '^guarded$')" -eq 0
check "guarded still on worker-0, same VMI UID" test "$(vmis | grep '^guarded ')" = "$(echo "$before" | grep '^guarded ')"

# 3. restarts allowed: guarded may be asked for, and its PodDisruptionBudget refuses
kubectl patch psirebalance "$name" --type merge -p '{"spec":{"eviction":{"allowVMRestart":true}}}' >/dev/null
eventually 120 "the guarded VM's eviction was refused, with an Event" bash -c \
  "kubectl get events.events.k8s.io -n default -o json | jq -e --arg n $name '
     [.items[] | select(.regarding.name==\$n and .reason==\"EvictionRefused\" and (.note | test(\"virt-launcher-guarded\")) and (.note | test(\"disruption budget\")))] | length >= 1' >/dev/null"
eventually 120 "Rebalancing names prefer-no-eviction and the refusal" bash -c "$(declare -f psir_field rebalancing)
  psir_field $name '.status.conditions[] | select(.type==\"Rebalancing\") | .message' | grep 'prefer-no-eviction' | grep -q 'eviction refused'"
sleep 20
after=$(vmis)
check "guarded still on worker-0, same VMI at the end" test "$(echo "$after" | grep '^guarded ')" = "$(echo "$before" | grep '^guarded ')"
check "shy still on worker-0, same VMI" test "$(echo "$after" | grep '^shy ')" = "$(echo "$before" | grep '^shy ')"
check "no VM restarted (record)" test "$(jq -c 'select(.type=="vm-restart")' "$record" | wc -l)" -eq 0
check "shy's pod was never asked for (record)" test "$(our_evictions all | jq -r .vmi | grep -c '^shy$')" -eq 0
check "guarded's launcher pod is the same pod, not evicted" test \
  "$(kubectl get pod -n "$sim_ns" -l app=guarded -o jsonpath='{.items[*].metadata.name}')" = "$guarded_pod"
check "only free was migrated (record)" test "$(migrations_ended Succeeded | wc -l)" -eq 1
check "the refused guarded VM was not asked again and again (at most 2 in the test)" test \
  "$(our_evictions | jq -r .vmi | grep -c '^guarded$')" -le 2
check "no permission was denied to the operator" bash -c "! grep -E 'Forbidden|forbidden' $work/operator.log"

finish
