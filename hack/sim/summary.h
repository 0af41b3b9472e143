/* summary: a node's kubelet Summary API reply (GET /stats/summary, stats/v1alpha1 as a
 * Kubernetes 1.34 kubelet shapes it) rendered from the simulator's numbers, and the kernel's
 * PSI running averages. Pure: numbers in, JSON text out.
 *
 * Rendered: node.nodeName, node.startTime, node.cpu {time, usageNanoCores,
 * usageCoreNanoSeconds, psi}, node.memory {time, availableBytes, usageBytes,
 * workingSetBytes, psi}, node.io {time, psi}, and per pod podRef {name, namespace, uid},
 * startTime, cpu {time, usageNanoCores, usageCoreNanoSeconds, psi}, memory {time,
 * workingSetBytes, psi}. Each psi is {"full": {...}, "some": {...}} with avg10, avg60, avg300
 * (percent) and total (the kernel's cumulative stall time, microseconds). A node without
 * PSI (KubeletPSI off, or a kernel booted without psi=1) has no psi fields at all, as such a
 * kubelet answers. The pods' psi is the pod cgroup's cpu.pressure and memory.pressure, as the
 * kubelet's pkg/kubelet/stats/cri_stats_provider.go and cadvisor_stats_provider.go fill
 * PodStats.CPU.PSI and PodStats.Memory.PSI (k8s.io/kubelet/pkg/apis/stats/v1alpha1/types.go:
 * CPUStats.PSI, MemoryStats.PSI, the same PSIStats as the node's); a node with pod_psi false
 * (a kubelet before 1.34) lists its pods without it. */
#ifndef PSI_SIM_SUMMARY_H
#define PSI_SIM_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "api/pressure.h"

/* One line of /proc/pressure/<resource> ("some" or "full"): the kernel's running averages
 * over 10 s, 60 s and 300 s (percent) and the total stall time (microseconds). */
struct summary_psi {
    double avg10, avg60, avg300;
    double total_us;
};

/* A pod's usage. Strings borrowed. */
struct summary_pod {
    const char *name, *ns, *uid;
    double cpu_cores;    /* CPU used now (cores) */
    double cpu_seconds;  /* CPU used since the pod started (core-seconds) */
    double memory_bytes; /* working set */
    /* its own pressure, [PSI_CPU or PSI_MEMORY][PSI_SOME, PSI_FULL]; rendered when the node's
     * psi and pod_psi are */
    struct summary_psi pressure[2][2];
};

/* A node's numbers. Strings and pods borrowed. */
struct summary_node {
    const char *name;
    const char *start_time;                         /* RFC 3339: the node's and every pod's startTime */
    const char *time;                               /* RFC 3339: when the stats were taken */
    bool psi;                                       /* false: the reply carries no psi */
    bool pod_psi;                                   /* false: the pods carry no psi */
    struct summary_psi pressure[PSI_NRESOURCES][2]; /* [resource][PSI_SOME, PSI_FULL] */
    double cpu_cores, cpu_seconds;
    double memory_capacity, memory_working_set;
    const struct summary_pod *pods;
    size_t npods;
};

/* Advance p by dt seconds during which the pressure was percent (0..100): the averages decay
 * towards it exponentially with their periods (as the kernel's, which are updated every
 * 2 s), the total grows by percent/100 of dt. dt <= 0 changes nothing. */
void summary_psi_advance(struct summary_psi *p, double percent, double dt);

/* The Summary JSON of n (unformatted). Caller frees; NULL when out of memory. */
char *summary_render(const struct summary_node *n);

#endif
