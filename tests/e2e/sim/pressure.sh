#!/usr/bin/env bash
# The PSI model seen through the test bed's real Prometheus, which scrapes one target per
# simulated node (file_sd in $PSI_PROMETHEUS_TARGETS): CPU pressure on worker-0 rises when
# its VMs want more CPU than it has and falls back when the demand leaves; the idle nodes
# stay calm; the VMs' kubevirt_vmi_cpu_usage_seconds_total grows by what they get.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/simlib.sh"
trap sim_cleanup EXIT

ns=sim-pressure-$$
sim_start "$PSI_SOURCE_DIR/tests/testdata/sim/e2e-pressure.yaml" "$ns" || { finish; exit 1; }
sel='job="psi-sim",sim_scenario="e2e-pressure"'
cpu() { prom "rate(node_pressure_cpu_waiting_seconds_total{$sel,instance=\"$1\"}[20s])" | jq -r '.[0].value[1] // "none"'; }
above() { local v; v=$(cpu "$1"); [ "$v" != none ] && jq -en --argjson v "$v" "\$v > $2" >/dev/null; }
below() { local v; v=$(cpu "$1"); [ "$v" != none ] && jq -en --argjson v "$v" "\$v < $2" >/dev/null; }

eventually 30 "the simulator keeps a file_sd file with one target per node" bash -c \
  "jq -e 'map(.labels.instance) | sort == [\"worker-0\",\"worker-1\",\"worker-2\"]' $PSI_PROMETHEUS_TARGETS/psi-sim-$ns.json >/dev/null"
check "the Nodes show the scenario's 4 CPUs to the scheduler and the operator" bash -c \
  "[ \"\$(kubectl get node worker-0 -o jsonpath='{.status.allocatable.cpu}')\" = 4 ]"
eventually 90 "Prometheus scrapes the node series with instance=<node>" bash -c \
  "$(declare -f prom); [ \"\$(prom 'node_pressure_cpu_waiting_seconds_total{$sel}' | jq length)\" -ge 3 ]"
check "the memory and io series (some and full) are there too" bash -c \
  "$(declare -f prom); [ \"\$(prom '{__name__=~\"node_pressure_(memory|io)_(waiting|stalled)_seconds_total\",$sel}' | jq length)\" -ge 12 ]"

eventually 120 "CPU pressure on worker-0 rises above 25 % when its VMs want 6 cores of 4" above worker-0 0.25
band() { local v; v=$(cpu worker-0); [ "$v" != none ] && jq -en --argjson v "$v" '$v > 0.95 and $v < 1.01' >/dev/null; }
eventually 60 "and settles where the kernel-fitted model puts it at load 1.5, ~100 % (95..101 %)" band
echo "     (worker-0 at $(cpu worker-0))"
check "the idle nodes stay below 1 % (worker-1: $(cpu worker-1))" below worker-1 0.01
usage=$(prom "rate(kubevirt_vmi_cpu_usage_seconds_total{namespace=\"$ns\",name=\"busy-0\"}[20s])")
check "busy-0's CPU usage is exported with name, namespace and node labels" bash -c \
  "jq -e '.[0].metric.node == \"worker-0\" and .[0].metric.name == \"busy-0\"' <<<'$usage' >/dev/null"
check "it gets less than the 2 cores it wants, the saturated node's share 4/6 x 2 ($(jq -r '.[0].value[1]' <<<"$usage"))" \
  jq -en --argjson v "$(jq -r '.[0].value[1] // 0' <<<"$usage")" '$v > 1.2 and $v < 1.45'

eventually 180 "CPU pressure on worker-0 falls below 2 % when the demand leaves" below worker-0 0.02
finish
