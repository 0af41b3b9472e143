/* telemetry: the PSI model fed by the workload, exported for Prometheus.
 *
 * Every tick (the scenario's, 1 s by default), for each simulated node: the demand of
 * the VMs whose VMI runs there (plus the node's base CPU load) against the node's
 * capacity gives its pressures (model.h); they go to the node_exporter-named counters of
 * sim_exporter (exporter.h) once the node has PSI (the scenario says so, or its pool
 * rolled out psi=1: the psi_on callback). Each running VM's CPU usage (its demand times
 * the share its node serves) accumulates in kubevirt_vmi_cpu_usage_seconds_total
 * {name, namespace, node}, its working set in kubevirt_vmi_memory_resident_bytes and its
 * vms[].dirtyRate in kubevirt_vmi_dirty_rate_bytes_per_second (the same labels), as
 * virt-handler exports them.
 *
 * HTTP (psi_serve, its own thread):
 *   GET /metrics               every node (instance="<node>") and every VM
 *   GET /metrics/node/<node>   one node as its own node_exporter would answer (no
 *                              instance label: the scrape target sets it) and its VMs
 *   GET /healthz               ok
 * With a targets directory ($PSI_PROMETHEUS_TARGETS of the test bed), it keeps a file_sd
 * file psi-sim-<namespace>.json there with one target per simulated node, labels
 * instance=<node> and __metrics_path__=/metrics/node/<node>, so the bed's Prometheus
 * scrapes each node as a separate node_exporter. The file is removed at the end.
 * With a kubeletd, each tick also gives every node's kubelet its pressures, CPU and memory
 * use, and the launcher pods running there with their VM's usage (the Summary API).
 * The running pods of the scenario's Deployments (deployment.h) count on their nodes as VMs
 * do; their use is exported as cAdvisor's container_* series and listed by the kubelets.
 * Where a node has PSI and the scenario's kubelet.podPsi is on (and the node is not in
 * kubelet.noPsi), every pod there, launcher or not, also has its own CPU and memory pressure
 * (model_pod): cAdvisor's container_pressure_* counters on the node's target (container
 * "compute" for a launcher, "app" for a Deployment's pod) and psi in its kubelet Summary. */
#ifndef PSI_SIM_TELEMETRY_H
#define PSI_SIM_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>

#include "hack/sim/deployment.h"
#include "hack/sim/kubeletd.h"
#include "hack/sim/nodes.h"
#include "hack/sim/sim.h"
#include "hack/sim/workload.h"

struct telemetry;

/* Whether node exports PSI now. */
typedef bool (*telemetry_psi_fn)(const char *node, void *ud);

struct telemetry_opts {
    const char *bind;        /* metrics address, e.g. "127.0.0.1:0" */
    const char *targets_dir; /* file_sd directory, or NULL */
    telemetry_psi_fn psi_on; /* NULL: the scenario's nodes.psi decides alone */
    void *psi_ud;
    struct kubeletd *kubelet;        /* fed every tick when not NULL (borrowed) */
    struct deployments *deployments; /* the scenario's Deployments' pods, or NULL (borrowed) */
};

/* Start serving. s, w and n are borrowed. NULL with why in err. */
struct telemetry *telemetry_start(struct sim *s, struct workload *w, struct nodes *n, const struct telemetry_opts *opts,
                                  char *err, size_t errlen);

/* The metrics port. */
int telemetry_port(const struct telemetry *t);

/* Run the model for the time since the last tick and update every series. */
void telemetry_tick(struct telemetry *t);

/* The CPU "some" pressure (percent) the model gave node at the last tick, or -1 when the
 * node is not simulated. Whether it is exported depends on PSI being on. */
double telemetry_cpu_pressure(const struct telemetry *t, const char *node);

/* Stop serving, remove the targets file, free (NULL is fine). */
void telemetry_free(struct telemetry *t);

#endif
