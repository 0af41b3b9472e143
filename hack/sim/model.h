/* model: the simulator's PSI model. Pure: numbers in, numbers out.
 *
 * Each resource has a curve, chosen per scenario (model.<resource>.curve):
 *   - kernel: the kernel's CPU "some" as bench/psi-kernel measured it (model_kernel_cpu_some
 *     below); the default for cpu. The VMs then get min(D, C): each VM receives its demand
 *     times min(1, C / D), since "some" counts the time one task waits, not the unserved share.
 *   - queueing: the normal-fluctuation curve described next; the default for memory and io.
 *
 * Memory was measured too (bench/results/psi-kernel-2026-12-03-full.txt): a v1 memory cgroup
 * whose limit is below its working set reads some = full of 0 % up to overcommit 0.9, 1 % at
 * 1.0 and a plateau of 2-3.4 % from 1.05 to 3.0 (reclaim to swap keeps the task running).
 * That plateau cannot support a fit: the Weibull fit of it has an RMS error of 19.9 points,
 * and one measured point per overcommit on one kernel (no v2 memory.high) says nothing about
 * a node whose VMs thrash. So memory keeps the queueing curve, whose some at overcommit 1.0
 * (10 %) is above the kernel's 1 %: the memory scenarios test the planner's memory path,
 * not the kernel's reclaim. io was not measured on a known demand (35-53 % under the memory
 * runs' swapping) and keeps the queueing curve too.
 *
 * A node has a capacity C for a resource (CPUs for cpu, bytes for memory, an abstract
 * throughput for io) and a mean runnable demand D on it (cores the VMs want, bytes of
 * their working sets, io units). The kernel's "some" pressure is the share of time at
 * least one task waits for the resource. We model it as the share of demand that must
 * wait when the instantaneous demand X fluctuates around its mean:
 *
 *     some = E[(X - C)+] / D,   X ~ Normal(D, (s * D)^2)
 *          = (1 - C/D) * Phi(z) + s * phi(z),   z = (D - C) / (s * D)
 *
 * where s is the burstiness (the coefficient of variation of the demand; 0.25 by default)
 * and Phi / phi the standard normal distribution and density. This is a queueing-like
 * curve with the three properties the kernel's numbers show:
 *   - well below saturation (D <= 0.6 C with s = 0.25) it is practically zero (< 0.1 %);
 *   - it rises steeply as D approaches C: about s * 0.4 at D = C (10 % with s = 0.25);
 *   - above saturation it tends to 1 - C/D, the share of demand that cannot be served
 *     (D = 2 C gives 50 %).
 * It grows monotonically with D. With s = 0 it is exactly max(0, 1 - C/D).
 *
 * "full" (every runnable task waits) is a fixed share of "some" (full_ratio), for memory
 * and io; cpu "full" is 0 at the node level, as the kernel reports it.
 * The CPU time the VMs actually get is D - E[(X - C)+] = D * (1 - some): each VM receives
 * its demand scaled by (1 - cpu some).
 *
 * Every parameter comes from the scenario file, so a test can make the optimum known. */
#ifndef PSI_SIM_MODEL_H
#define PSI_SIM_MODEL_H

/* Defaults. */
#define MODEL_DEFAULT_BURSTINESS 0.25
#define MODEL_DEFAULT_FULL_RATIO 0.5

/* The shape of a resource's curve. */
enum model_shape {
    MODEL_SHAPE_QUEUEING, /* model_pressure with the curve's burstiness */
    MODEL_SHAPE_KERNEL,   /* model_kernel_cpu_some (burstiness ignored) */
};

/* The curve of one resource. */
struct model_curve {
    enum model_shape shape;
    double burstiness; /* s >= 0: coefficient of variation of the instantaneous demand */
    double full_ratio; /* full = some * full_ratio, 0..1 (ignored for cpu) */
};

/* Parameters of the model, one curve per resource. */
struct model_params {
    struct model_curve cpu, memory, io;
};

/* What a node holds: capacities and the summed demand of what runs there. */
struct model_node_in {
    double cpus;          /* CPU capacity (cores) */
    double cpu_demand;    /* runnable demand (cores) */
    double memory;        /* memory capacity (bytes) */
    double memory_demand; /* working sets (bytes) */
    double io;            /* io capacity (abstract units) */
    double io_demand;     /* io demand (same units) */
};

/* Pressures as fractions 0..1, and the CPU share actually served. */
struct model_node_out {
    double cpu_some;
    double memory_some, memory_full;
    double io_some, io_full;
    double cpu_served; /* 1 - cpu_some: each VM receives its CPU demand times this */
};

/* The kernel's CPU "some" (0..1) at demand over capacity, as bench/psi-kernel measured it
 * (bench/README.md, "The kernel's PSI"): a Weibull curve of the load L = demand / capacity,
 *
 *     some(L) = 1 - exp(-(L / MODEL_KERNEL_CPU_SCALE) ^ MODEL_KERNEL_CPU_SHAPE)
 *
 * fitted by least squares (bench/psi-kernel/fit.py) to the node groups' readings of every
 * shape on 1 and 2 CPUs (180 readings, loads 0.1-2.5): RMS error 8.6 points, worst 28.5 (two
 * 40 ms tasks locked in phase at 0.7). It reads 9 % at L = 0.5, 29 % at 0.7, 60 % at 0.9,
 * 75 % at 1.0, 92 % at 1.17 and 99 % at 1.4. The 1-CPU fit alone is scale 0.909, shape 3.53 (RMS 9.0), the
 * 2-CPU fit 0.938, 4.57 (RMS 7.3); larger nodes were not measured. It is the scenarios'
 * default cpu curve. A demand <= 0 or NaN gives 0; a capacity <= 0
 * with a positive demand gives 1. */
#define MODEL_KERNEL_CPU_SCALE 0.922
#define MODEL_KERNEL_CPU_SHAPE 3.913
double model_kernel_cpu_some(double demand, double capacity);

/* Fill p with the defaults: cpu the kernel curve, memory and io the queueing curve; burstiness
 * 0.25 and full_ratio 0.5 for every resource. */
void model_params_default(struct model_params *p);

/* The "some" pressure (0..1) of demand on capacity with the given burstiness. A demand
 * <= 0 gives 0; a capacity <= 0 with a positive demand gives 1; NaN inputs give 0. */
double model_pressure(double demand, double capacity, double burstiness);

/* The shape named s ("kernel", "queueing"); -1 for another name. */
int model_shape_parse(const char *s, enum model_shape *out);

/* The pressures of one node. */
void model_node(const struct model_params *p, const struct model_node_in *in, struct model_node_out *out);

/* A workload's own CPU "some" (0..1): the share of time at least one of its threads waits, as
 * its own cgroup's cpu.pressure reads (the kubelet's per-pod psi, cAdvisor's per-container
 * counters). bench/psi-kernel measured it per child group: its "noisy" shape
 * (bench/results/psi-kernel-2026-12-06-noisy.csv: a 4-vCPU VM carrying the load beside a
 * 1-vCPU VM at a fixed 0.1 cores, loads 0.3-2.5 on 1 and 2 CPUs) and the w0/w1 and vm4/vm2
 * groups of psi-kernel-2026-12-03-full.csv (equal and 2:1 splits). A workload stalls only
 * while its node does, and the more of the node's CPUs it wants, the more of the node's stall
 * is its own:
 *
 *     own = node_some * (1 - exp(-pod_demand / (MODEL_POD_CPU_SCALE * capacity)))
 *
 * fitted by bench/psi-kernel/fit.py (least squares, 494 group readings): RMS error 9.3 points
 * (worst 34) against the node group's own reading, 13.1 through the node curve (the noisy run
 * shared the machine with other work, which raised its node readings above the curve). The
 * workload's share of the node's demand fits worse (share ** 0.47: RMS 12.9 / 15.3): the
 * victim's own stall grows with the load while its share falls. The victim reads 30 % on a
 * saturated CPU whatever the noisy VM wants (the fit: 19 %) and 8-9 % on 2 CPUs (the fit: 9 %);
 * the noisy VM reads the node's stall. Nodes of more than 2 CPUs were not measured. node_some
 * is the node's "some" from whichever curve the scenario chose; bad or non-positive inputs
 * give 0. */
#define MODEL_POD_CPU_SCALE 0.48
double model_pod_cpu_some(double node_some, double pod_demand, double capacity);

/* A workload's own CPU "full" (0..1), all its threads waiting at once: its "some" times
 * MODEL_POD_CPU_FULL_RATIO, fitted to the same readings (RMS 16 points: one thread reads
 * full = some, the 4-vCPU VM a tenth of it). */
#define MODEL_POD_CPU_FULL_RATIO 0.45

/* A workload's own memory "some" or "full" (0..1): the node's times the workload's share of
 * the working sets. Not measured (bench/psi-kernel has one memory group): reclaim takes pages
 * from every group in proportion to what it holds, as two single tasks on 1 CPU share the
 * node's CPU stall by their demand. Bad inputs give 0. */
double model_pod_memory_pressure(double node_pressure, double pod_working_set, double node_working_sets);

/* A workload's own pressures (fractions 0..1). */
struct model_pod_out {
    double cpu_some, cpu_full;
    double memory_some, memory_full;
};

/* The own pressures of a workload of cpu_demand cores and a memory_demand working set on the
 * node described by in, whose pressures are node. */
void model_pod(const struct model_node_in *in, const struct model_node_out *node, double cpu_demand,
               double memory_demand, struct model_pod_out *out);

#endif
