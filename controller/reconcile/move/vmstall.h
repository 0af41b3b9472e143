/* vmstall: what each workload's own PSI says of it on a node the planner relieves. Pure.
 *
 * From Kubernetes 1.34 the kubelet reports PSI per pod (the Summary's pods[].cpu.psi, cAdvisor's
 * container_pressure_*; usage.h reads them). A workload's own CPU "some" is the share of time at
 * least one of its tasks waited for a CPU; bench/psi-kernel measured it per cgroup.
 *
 * Demand. Below saturation every demand is served over the window (usage follows demand within
 * 2 % up to 0.9 x capacity), so waiting there is delay, not demand unserved: a workload wants
 * what it uses. What the node's demand exceeds its usage by (the unserved part, demand.h) is
 * shared by its workloads. Without per-pod PSI the share follows usage (each workload wants its
 * usage times the node's demand over its usage: the caller's estimate, left as it is and
 * marked NodePressure). With it, the share follows each workload's own stall: the one that
 * waited more got less of what it wanted (OwnPressure). A workload never wants less than it
 * uses, nor more than its vCPUs where they are known. Per-pod PSI counts only where every
 * workload with a usage reading on the node has it: one without would take no share.
 *
 * Role, on a node being relieved:
 *   - Causes: its usage is VMSTALL_CAUSE_SHARE or more of the node's workloads' usage;
 *   - Suffers: otherwise, when its own CPU or memory stall is VMSTALL_SUFFERS % or more: it
 *     waits for the node on a small share of the load. Moving it relieves it; moving the one
 *     that causes the load relieves every workload there. */
#ifndef PSI_RECONCILE_MOVE_VMSTALL_H
#define PSI_RECONCILE_MOVE_VMSTALL_H

#include <stddef.h>

#include "api/status.h"

/* A workload carrying this share of its node's workloads' usage causes its load. */
#define VMSTALL_CAUSE_SHARE 0.25
/* Own stall (percent) from which a workload with a small share suffers. */
#define VMSTALL_SUFFERS 10.0

/* One workload of a node. In: usage, vcpus, cpu_stall, mem_stall, demand (the caller's
 * estimate); out: demand, from, role. */
struct vmstall_workload {
    double usage;                /* cores; NAN: unknown */
    double vcpus;                /* cores it cannot want more than; <= 0 or NAN: unknown */
    double cpu_stall, mem_stall; /* its own PSI "some", percent; NAN: not reported */
    double demand;               /* cores */
    enum api_demand_from from;
    enum api_workload_role role;
};

/* Apply the rules above to the n workloads of one node whose usage is node_usage and demand
 * node_demand (cores; NAN: unknown, then nothing is unserved). */
void vmstall_attribute(double node_usage, double node_demand, struct vmstall_workload *w, size_t n);

/* The order status.nodes[].workloads lists them in: those that cause the load, busiest first,
 * then the others, most stalled first (CPU or memory), then busiest. Writes up to max indexes
 * of w into idx; returns how many. */
size_t vmstall_rank(const struct vmstall_workload *w, size_t n, size_t *idx, size_t max);

#endif
