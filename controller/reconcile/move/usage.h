/* usage: CPU usage (cores) and memory in use (bytes) of nodes and of the workloads that might
 * move, which the predictions of rebalance need. Pure: builds the queries and reads the
 * answers (gather.c fetches them).
 *
 * Prometheus: one instant query, run only on cycles where some node is a source (so the
 * steady state keeps to the one pressure query per cycle). Its parts are tagged with a label
 * psi_usage by label_replace and joined with `or`, as the pressure query is:
 *   node    sum by (node, instance) (rate(node_cpu_seconds_total{mode!~"idle|iowait|steal"}[w]))
 *   vmnode  sum by (node) (rate(kubevirt_vmi_cpu_usage_seconds_total[w]))
 *   vmi     sum by (namespace, name) (rate(kubevirt_vmi_cpu_usage_seconds_total{name=~"..."}[w]))
 *   pod     sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{container!="",
 *                                      container!="POD",pod=~"..."}[w]))
 * The name filters list the workloads asked about (up to USAGE_MAX_FILTERED; beyond that the
 * parts are unfiltered). A node's usage is its node series (matched to the node as the
 * pressure series are: node label, instance name, or instance address); where the Prometheus
 * has no node_cpu_seconds_total at all but has KubeVirt's VM metrics, it is the sum of its
 * VMs' usage (0 for a node without VMs). A workload's usage is its VMI series for a VM, else
 * its pod series (a VM's launcher pod series stands in when there is no VMI series).
 *
 * The same query also asks what the demand of a saturated node is bounded by (demand.h),
 * where node_exporter serves it:
 *   load1   max by (node, instance) (node_load1): the run-queue length
 *   waiting sum by (node, instance) (rate(node_schedstat_waiting_seconds_total[w])): tasks
 *           waiting for a CPU, on average (the schedstat collector, with schedstats=enable)
 *
 * Memory in use, asked only when moves balance memory, is a second query of the same shape,
 * read by usage_fill as well (bytes instead of cores):
 *   node    sum by (node, instance) (node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes)
 *   vmnode  sum by (node) (kubevirt_vmi_memory_resident_bytes)
 *   vmi     sum by (namespace, name) (kubevirt_vmi_memory_resident_bytes{name=~"..."})
 *   pod     sum by (namespace, pod) (container_memory_working_set_bytes{container!="",
 *                                      container!="POD",pod=~"..."})
 *
 * The same query also asks for the workloads' own pressure, where the kubelet serves it
 * (Kubernetes 1.34 and later, the KubeletPSI gate; cAdvisor's PSI counters of each container):
 *   podcpustall  100 * max by (namespace, pod) (rate(container_pressure_cpu_waiting_seconds_total
 *                {container!="",container!="POD",pod=~"..."}[w]))
 *   podmemstall  the same of container_pressure_memory_waiting_seconds_total
 * "waiting" is the kernel's "some" (the time at least one task waited); the pod's stall is its
 * most stalled container's (a virt-launcher pod's: its compute container, which runs QEMU). A
 * kubelet before 1.34 has no such series: the stall is then unknown (NAN).
 *
 * And, for the cost of a VM's live migration (cost.h), the rate its memory is dirtied at, where
 * KubeVirt exports it (1.6 and later, VMs that are not migrating):
 *   vmidirty     max by (namespace, name) (kubevirt_vmi_dirty_rate_bytes_per_second{name=~"..."})
 *
 * Kubelet: the Summary API of each node gives node.cpu.usageNanoCores and, per pod,
 * pods[].cpu.usageNanoCores (a VM's: its virt-launcher pod's), and node.memory.workingSetBytes
 * and pods[].memory.workingSetBytes, every node fetched at once (psi_kubelet_fetch), so no
 * Prometheus is needed; and, from Kubernetes 1.34, pods[].cpu.psi and pods[].memory.psi, whose
 * "some" at the window's average (psi/kubelet.h's rule) is the pod's own stall. */
#ifndef PSI_RECONCILE_USAGE_H
#define PSI_RECONCILE_USAGE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "psi/prom.h"

/* Most workloads named in the query's filters. */
#define USAGE_MAX_FILTERED 200

/* A workload whose usage is wanted (strings borrowed). */
struct usage_ref {
    const char *ns;
    const char *pod;
    const char *vmi; /* the VMI's name for a VM, else NULL */
};

/* The usage query for window_s seconds and refs (rule above). Caller frees; NULL on no memory. */
char *usage_query(long window_s, const struct usage_ref *refs, size_t nrefs);

/* The memory query for refs (rule above). Caller frees; NULL on no memory. */
char *usage_memory_query(const struct usage_ref *refs, size_t nrefs);

/* Read the load1 and waiting series of usage_query's reply v into load1[i] and waiting[i] for
 * nodes[i] (NAN where there is none). */
void usage_fill_runqueue(const struct psi_prom_vector *v, const struct psi_node_desc *nodes, size_t nnodes,
                         double *load1, double *waiting);

/* Read the reply v of usage_query or usage_memory_query: node_usage[i] for nodes[i] and ref_usage[j] for refs[j]
 * (cores; NAN where there is no reading). */
void usage_fill(const struct psi_prom_vector *v, const struct psi_node_desc *nodes, size_t nnodes, double *node_usage,
                const struct usage_ref *refs, size_t nrefs, double *ref_usage);

/* Read the workloads' own stall of usage_query's reply v into cpu_stall[j] and mem_stall[j] for
 * refs[j] (percent, 0..100; NAN where there is none). */
void usage_fill_stall(const struct psi_prom_vector *v, const struct usage_ref *refs, size_t nrefs, double *cpu_stall,
                      double *mem_stall);

/* Read the VMs' dirty rates of usage_query's reply v into dirty_bps[j] for refs[j] (bytes per
 * second; NAN where there is none or the ref is not a VM). */
void usage_fill_dirty(const struct psi_prom_vector *v, const struct usage_ref *refs, size_t nrefs, double *dirty_bps);

/* Read one node's kubelet Summary: the own stall of the refs whose pod it lists, pods[].cpu.psi
 * and pods[].memory.psi "some" at avg ("avg10", "avg60", "avg300"), into cpu_stall[j] and
 * mem_stall[j] (percent; NAN where the pod has none or it is not a number in 0..100; refs not
 * listed untouched). */
void usage_stall_from_summary(const cJSON *summary, const char *avg, const struct usage_ref *refs, size_t nrefs,
                              double *cpu_stall, double *mem_stall);

/* Read one node's kubelet Summary: its usage into *node_usage (NAN when absent) and, for the
 * refs whose pod it lists, ref_usage[j] (others untouched). */
void usage_from_summary(const cJSON *summary, double *node_usage, const struct usage_ref *refs, size_t nrefs,
                        double *ref_usage);

/* The same for memory in use (bytes, the working sets). */
void usage_memory_from_summary(const cJSON *summary, double *node_used, const struct usage_ref *refs, size_t nrefs,
                               double *ref_used);

#endif
