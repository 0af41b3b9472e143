#!/usr/bin/env bash
# The MachineConfig operator stand-in: a MachineConfig with psi=1 for the worker role makes
# the worker pool render a new configuration and roll it out one machine at a time
# (cordon, drain through evictions that become live migrations, reboot, uncordon) until
# the pool is Updated, with the status fields the real operator writes. A node exports PSI
# only once it runs a configuration with psi=1. The VMs keep running (same UIDs).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/simlib.sh"
source "$(dirname "$0")/../lib/mco.sh"

mc=99-worker-e2e-psi
forget_pool() { mco_forget_pools worker "$mc"; }
cleanup() { sim_cleanup; forget_pool; }
trap cleanup EXIT
forget_pool

ns=sim-pool-$$
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-mco.yaml" "$ns" || { finish; exit 1; }
declare -A uid
for i in 0 1 2; do uid[vm-$i]=$(vmi_field "vm-$i" .metadata.uid); done
pool() { kubectl get machineconfigpool worker -o json; }
psi_lines() { curl -sf "$sim_metrics/metrics/node/$1" | grep -c '^node_pressure_cpu_waiting_seconds_total' || true; }

check "before any psi=1 configuration, no node exports PSI" bash -c \
  "$(declare -f psi_lines); sim_metrics=$sim_metrics; [ \$(psi_lines worker-0) = 0 ] && [ \$(psi_lines worker-1) = 0 ]"
eventually 30 "the simulator created the worker pool, Updated on its base configuration" bash -c \
  "$(declare -f pool); pool | jq -e '(.status.conditions[] | select(.type == \"Updated\") | .status == \"True\") and
     .status.machineCount == 3 and (.status.configuration.source | map(.name) == [\"00-worker\"])' >/dev/null"
base=$(pool | jq -r .status.configuration.name)
check "every node runs it ($base)" bash -c \
  "kubectl get nodes -l node-role.kubernetes.io/worker -o json | jq -e --arg c '$base' '[.items[].metadata.annotations[\"machineconfiguration.openshift.io/currentConfig\"]] | all(. == \$c)' >/dev/null"

eventually 60 "the MachineConfig $mc appears and the pool targets a new rendered configuration" bash -c \
  "$(declare -f pool); pool | jq -e --arg b '$base' '.spec.configuration.name != \$b and (.spec.configuration.source | map(.name) | index(\"$mc\") != null)' >/dev/null"
target=$(pool | jq -r .spec.configuration.name)
check "the rendered configuration $target carries psi=1" bash -c \
  "kubectl get machineconfig $target -o json | jq -e '.spec.kernelArguments | index(\"psi=1\") != null' >/dev/null"
eventually 60 "the pool reports Updating while machines update" bash -c \
  "$(declare -f pool); pool | jq -e '(.status.conditions[] | select(.type == \"Updating\") | .status == \"True\")' >/dev/null"
eventually 240 "the pool reaches Updated: every machine on the new configuration" bash -c \
  "$(declare -f pool); pool | jq -e --arg t '$target' '(.status.conditions[] | select(.type == \"Updated\") | .status == \"True\") and
     .status.configuration.name == \$t and .status.updatedMachineCount == 3 and .status.machineCount == 3 and
     .status.readyMachineCount == 3 and .status.degradedMachineCount == 0 and .status.unavailableMachineCount == 0' >/dev/null"
check "status.configuration.source lists $mc" bash -c \
  "$(declare -f pool); pool | jq -e '.status.configuration.source | map(.name) | index(\"$mc\") != null' >/dev/null"
check "Degraded is False" bash -c \
  "$(declare -f pool); pool | jq -e '.status.conditions[] | select(.type == \"Degraded\") | .status == \"False\"' >/dev/null"
check "every node runs $target, state Done, and is schedulable again" bash -c \
  "kubectl get nodes -l node-role.kubernetes.io/worker -o json | jq -e --arg t '$target' '.items | all(
     .metadata.annotations[\"machineconfiguration.openshift.io/currentConfig\"] == \$t and
     .metadata.annotations[\"machineconfiguration.openshift.io/state\"] == \"Done\" and (.spec.unschedulable // false) == false)' >/dev/null"
overlap=$(jq -s -r '[.[] | select(.type == "mco-node")] | reduce .[] as $e ({busy: 0, max: 0, done: 0};
    if $e.phase == "Working" then .busy += 1 | .max = ([.max, .busy] | max) elif $e.phase == "Done" then .busy -= 1 | .done += 1 else . end)
  | "\(.max) \(.done)"' "$sim_record")
check "machines updated one at a time, all three ($overlap: most at once, done)" test "$overlap" = "1 3"
check "the drains moved the VMs by live migration" bash -c \
  "kubectl get vmim -n $ns -o json | jq -e '[.items[] | select(.status.phase == \"Succeeded\")] | length >= 1' >/dev/null"
same=0
for i in 0 1 2; do
  [ "$(vmi_field "vm-$i" .metadata.uid)" = "${uid[vm-$i]}" ] && [ "$(vmi_field "vm-$i" .status.phase)" = Running ] && same=$((same + 1))
done
check "every VM still runs with its VMI's UID ($same of 3)" test "$same" = 3
eventually 30 "now every node exports PSI" bash -c \
  "$(declare -f psi_lines); sim_metrics=$sim_metrics; [ \$(psi_lines worker-0) = 1 ] && [ \$(psi_lines worker-1) = 1 ] && [ \$(psi_lines worker-2) = 1 ]"
finish
