/* podusage: the CPU and memory use of plain pods (pods that are not VMs), as the kubelet's
 * cAdvisor reports them. Pure: time is passed in (seconds on a clock that does not go back).
 *
 * Each pod has a CPU counter that grows by its rate (cores) per second, and a working set.
 * podusage_set is called every tick for each running pod; a pod not set since the last
 * podusage_begin is dropped by podusage_end (a new pod of the same name starts from 0, as a
 * new container's counter does). Rendered in the Prometheus text format with cAdvisor's names
 * and labels, one container "app" per pod:
 *   container_cpu_usage_seconds_total{container="app",namespace,node,pod}   counter, seconds
 *   container_memory_working_set_bytes{container="app",namespace,node,pod}  gauge, bytes
 * which the operator's usage query reads for pods that are not VMs, and, for a pod whose node
 * serves per-pod PSI, its container's pressure stall counters (seconds, the PSI totals), as
 * cAdvisor's metrics/prometheus.go names them:
 *   container_pressure_cpu_waiting_seconds_total      cpu "some"
 *   container_pressure_cpu_stalled_seconds_total      cpu "full"
 *   container_pressure_memory_waiting_seconds_total   memory "some"
 *   container_pressure_memory_stalled_seconds_total   memory "full"
 * with the same labels. The same totals and the kernel's running averages go to the pod's
 * kubelet Summary (podusage_summary): one cgroup file feeds both in a real kubelet. A set of
 * VMs' launcher pods (podusage_new_launchers) renders only these four, container "compute". */
#ifndef PSI_SIM_PODUSAGE_H
#define PSI_SIM_PODUSAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "hack/sim/summary.h"

struct podusage;

/* A new, empty set; NULL when out of memory. */
struct podusage *podusage_new(void);

/* A new, empty set of VMs' launcher pods: their container is "compute" (KubeVirt's), and only
 * the pressure counters are rendered (a VM's use goes out as KubeVirt's kubevirt_vmi_* series,
 * which the operator reads first). NULL when out of memory. */
struct podusage *podusage_new_launchers(void);

/* Free (NULL is fine). */
void podusage_free(struct podusage *u);

/* Start a tick: every pod is unmarked. */
void podusage_begin(struct podusage *u);

/* A pod's use as of a tick: pod uid (named ns/name, on node) uses cores and memory bytes
 * (strings borrowed); with psi (its node serves per-pod PSI) it is under pressure percent
 * (0..100), [PSI_CPU or PSI_MEMORY][PSI_SOME, PSI_FULL]. */
struct podusage_pod {
    const char *uid, *ns, *name, *node;
    double cores, memory;
    bool psi;
    double pressure[2][2];
};

/* Pod p uses p->cores from now on, and p->memory bytes, under p->pressure; its counters first
 * integrate the previous rate and pressure up to now. Marks the pod. Returns 0, -1 on a bad
 * value (NaN, negative, a pressure above 100), an empty string or no memory. */
int podusage_set(struct podusage *u, const struct podusage_pod *p, double now);

/* End a tick: pods not marked since podusage_begin are dropped. */
void podusage_end(struct podusage *u);

/* Number of pods. */
size_t podusage_count(const struct podusage *u);

/* The CPU counter (core-seconds) of pod uid at now, or -1 when absent. */
double podusage_seconds(const struct podusage *u, const char *uid, double now);

/* Pod uid's pressure (averages and totals) as of its last podusage_set into out,
 * [PSI_CPU or PSI_MEMORY][PSI_SOME, PSI_FULL]; -1 when absent. */
int podusage_pressure(const struct podusage *u, const char *uid, struct summary_psi out[2][2]);

/* Append the series of the pods on node (every pod when NULL) to text (*len bytes; text may
 * be NULL) at now; returns the new text (the old one on no memory, unchanged). */
char *podusage_render(const struct podusage *u, const char *node, double now, char *text, size_t *len);

/* The pods on node as the kubelet Summary lists them (with their pressure as of their last
 * podusage_set), into out (at most max); returns how many are on node (may exceed max).
 * Strings point into u: valid until it changes. */
size_t podusage_summary(const struct podusage *u, const char *node, double now, struct summary_pod *out, size_t max);

#endif
