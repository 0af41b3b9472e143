/* demand: a node's CPU demand from signals that do not saturate. Pure: numbers in, numbers out.
 *
 * The kernel's CPU "some" counts the time at least one task waits. bench/psi-kernel measured
 * it at 68-88 % at full load, 90 % and more from 1.1-1.2 x capacity and 100 % from 1.5 x on
 * (bench/README.md, "The kernel's PSI"): past capacity it says nothing about how much demand
 * goes unserved, and demand inferred from it (usage / (1 - stall)) grows without bound, 50 x
 * the usage at 100 %. Usage itself follows demand within 2 % up to 0.9 x capacity.
 *
 * So a node is saturated when its pressure reads DEMAND_NEAR_FULL (90 %) or more, or its usage
 * is DEMAND_BUSY (95 %) of its CPUs or more. Then its demand comes from what does not saturate,
 * each an upper bound on what its tasks can want:
 *   - the workloads' vCPU counts and their own usage: under the CFS fair share a workload whose
 *     usage per vCPU is below the highest one's (by DEMAND_SHARE_TOLERANCE) got what it wanted;
 *     one at the highest share may want more, at most its vCPUs, and counts at its vCPUs
 *     (what a destination must be able to take); usage outside the workloads counts as it is;
 *   - schedstat (node_exporter's rate(node_schedstat_waiting_seconds_total) summed over the
 *     CPUs: tasks waiting for a CPU, on average): usage + waiting;
 *   - the run-queue length (node_load1: runnable tasks, on average).
 * A waiting or runnable task wants one core at most. The demand is the least of these and of
 * the planner's own inference from pressure (rebalance_node_demand_scaled: the kernel curve
 * inverted) where that is below the curve's flat part (there it is only the least load the
 * reading says, and is left out), never below the usage, and at most DEMAND_MAX_LOAD x the
 * CPUs when none of them is known. Below saturation the demand is the
 * usage when known (the kernel serves every demand there), else the planner's inference. */
#ifndef PSI_RECONCILE_DEMAND_H
#define PSI_RECONCILE_DEMAND_H

#include <stdbool.h>
#include <stddef.h>

/* Pressure (percent) from which a CPU reading counts as near 100 %: the kernel reads it from
 * 1.1-1.2 x capacity on, with 1-5 points between repetitions. */
#define DEMAND_NEAR_FULL 90.0
/* Usage over CPUs from which a node is saturated: the kernel serves 91-98 % at full load. */
#define DEMAND_BUSY 0.95
/* A workload's usage per vCPU within this share of the highest counts as throttled. */
#define DEMAND_SHARE_TOLERANCE 0.1
/* A saturated node's demand without any bounding signal: at most this many times its CPUs
 * (the largest load bench/psi-kernel measured). */
#define DEMAND_MAX_LOAD 2.5

/* Where a node's demand came from. */
enum demand_source {
    DEMAND_UNKNOWN = 0, /* no usage, no pressure */
    DEMAND_USAGE,       /* below saturation: its usage */
    DEMAND_PRESSURE,    /* the planner's inference from pressure (bounded when saturated) */
    DEMAND_VCPUS,       /* saturated: its workloads' vCPUs and usage */
    DEMAND_SCHEDSTAT,   /* saturated: usage + tasks waiting (schedstat) */
    DEMAND_RUNQUEUE,    /* saturated: runnable tasks (node_load1) */
};

/* The name of a source as status.nodes[].demandSource says it ("Usage", "Pressure", "VCPUs",
 * "Schedstat", "RunQueue"; "" for DEMAND_UNKNOWN). */
const char *demand_source_name(enum demand_source s);

/* A workload on the node: its CPU usage and vCPUs (cores; vcpus <= 0 or NAN: unknown). */
struct demand_workload {
    double usage, vcpus;
};

/* What is read of a node; NAN where unknown. */
struct demand_cpu_in {
    double cpus;                     /* capacity, cores */
    double usage;                    /* cores used (node_cpu_seconds_total, the kubelet's usageNanoCores) */
    double pressure;                 /* CPU some, percent */
    double from_pressure;            /* the planner's demand inferred from usage and pressure, cores */
    double load1;                    /* node_load1 */
    double waiting;                  /* rate(node_schedstat_waiting_seconds_total), summed over the CPUs */
    const struct demand_workload *w; /* the workloads on the node (may be NULL) */
    size_t nw;
};

struct demand_cpu_out {
    double demand; /* cores; NAN when unknown */
    enum demand_source source;
    bool saturated;
};

/* The node's CPU demand, as above. */
void demand_cpu(const struct demand_cpu_in *in, struct demand_cpu_out *out);

#endif
