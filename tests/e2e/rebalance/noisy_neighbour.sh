#!/usr/bin/env bash
# Each VM's own pressure (tests/testdata/sim/e2e-noisy-neighbour.yaml): the simulator's kubelets
# report PSI per pod, Prometheus scrapes cAdvisor's container_pressure_* counters, and the
# operator reads them in its usage query. On worker-0, the node it relieves, status names noisy
# as the VM that causes the load and a quiet VM as one that suffers, with their own CPU
# pressure and the demand given them by it (demandFrom OwnPressure); the move made is noisy's
# (the only one that relieves worker-0), its record keeps the figures it was decided on, and
# `kubectl psi top --node` and `kubectl psi moves` print them.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/operator.sh"
source "$(dirname "$0")/lib.sh"

name=noisy-$$
trap 'rebalance_cleanup "$name"' EXIT

start_sim "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-noisy-neighbour.yaml"
start_operator
apply_psir "$name" Automatic

workloads() { psir_field "$name" '.status.nodes[]? | select(.name == "worker-0") | .workloads // []'; }
seen() {
  workloads | jq -e '
    any(.[]; .name == "noisy" and .role == "Causes" and .demandFrom == "OwnPressure" and .cpu != null) and
    any(.[]; (.name | startswith("quiet")) and .role == "Suffers" and .demandFrom == "OwnPressure"
      and (.cpu | tonumber) >= 10 and (.demandCores | tonumber) >= (.usageCores | tonumber))' >/dev/null
}
eventually 120 "status.nodes[worker-0].workloads: noisy Causes, a quiet VM Suffers, from their own pressure" seen
workloads | jq -c '.[]'

move() { psir_field "$name" '.status.moves[]? | select(.sourceNode == "worker-0")'; }
moved() { move | jq -e -s 'length > 0' >/dev/null; }
eventually 90 "a move off worker-0 is made" moved
move | jq -c '{name, destinationNode, workloadPressure}'
check "the move is noisy's: the VM that causes the load" test "$(move | jq -r -s '.[0].name')" = noisy
check "no quiet VM was moved" test -z "$(our_evictions | jq -r 'select(.pod | startswith("virt-launcher-quiet"))')"
check "its record keeps its own pressure and the demand it was given" \
  bash -c "$(declare -f psir_field move); name=$name; move | jq -e -s '.[0].workloadPressure |
    .demandFrom == \"OwnPressure\" and .cpu != null and (.demandCores | tonumber) >= (.usageCores | tonumber)' >/dev/null"

top=$("$PSI_BINARY_DIR/cli/kubectl-psi" top --node worker-0 2>&1)
echo "$top"
check "kubectl psi top --node lists the workloads with their roles" \
  bash -c "grep -q 'VirtualMachineInstance .*/noisy .*Causes' <<<\"\$1\" && grep -q 'Suffers' <<<\"\$1\"" _ "$top"
moves=$("$PSI_BINARY_DIR/cli/kubectl-psi" moves 2>&1)
check "kubectl psi moves prints the move's own stall and demand" \
  bash -c "grep -q 'OWN STALL/DEMAND' <<<\"\$1\" && grep -E -q '/noisy .* [0-9.]+%/[0-9.]+c' <<<\"\$1\"" _ "$moves"
finish
