/* deployment: the scenario's Deployments (scenario_deployments.h), workloads that are not VMs.
 * The simulator only creates each Deployment (apps/v1, in the scenario's namespace); the real
 * kube-controller-manager of the test bed makes its ReplicaSet and pods and replaces a pod
 * that is evicted or deleted, the real kube-scheduler places them and kwok runs them, so an
 * evicted pod comes back elsewhere as it would on a real cluster.
 *
 * Every pod has the label sim.psi.dev/deployment=<name>, the scenario's label, the entry's
 * labels, one container "app" with the entry's requests, and the nodeSelector
 * kubevirt.io/schedulable=true (the simulated nodes; nodes.h). Each running pod (bound,
 * Running and Ready, not being deleted) has its Deployment's demand, which telemetry adds to
 * its node's in the PSI model; its use (the demand times the share of CPU its node serves)
 * is kept by podusage (podusage.h): exported as cAdvisor's container_* series on the node's
 * metrics target and listed in the node's kubelet Summary. */
#ifndef PSI_SIM_DEPLOYMENT_H
#define PSI_SIM_DEPLOYMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "hack/sim/podusage.h"
#include "hack/sim/sim.h"
#include "hack/sim/summary.h"

/* The label on every pod of a scenario Deployment: its name. */
#define DEPLOYMENT_LABEL "sim.psi.dev/deployment"

struct deployments;

/* New Deployments of s's scenario (borrowed); pods is an informer of the namespace's pods
 * with the label DEPLOYMENT_LABEL (borrowed). NULL when out of memory. */
struct deployments *deployments_new(struct sim *s, struct kube_informer *pods);

/* Free (NULL is fine). The Deployments stay (the namespace's cleanup deletes them). */
void deployments_free(struct deployments *d);

/* One pass: create the Deployments not created yet. */
void deployments_sync(struct deployments *d);

/* Whether every Deployment has as many running pods as it has replicas (a workload start
 * gate: workload_hold_start). ud is the struct deployments. */
bool deployments_running(void *ud);

/* Call add for each running pod with its node and demand (cores, bytes, io units). */
void deployments_demand(const struct deployments *d,
                        void (*add)(const char *node, double cpu, double memory, double io, void *ud), void *ud);

/* What its node gives a running pod of cpu cores and memory bytes of demand over a tick:
 * fills p->cores (its demand times the share of CPU the node serves) and, where the node
 * serves per-pod PSI, p->psi and p->pressure (the pod's own, model_pod). */
typedef void (*deployments_use_fn)(const char *node, double cpu, double memory, struct podusage_pod *p, void *ud);

/* Update each running pod's use at now as use(node, ..., ud) gives it, and its working set;
 * pods no longer running are forgotten. Call under the lock that guards the readers below. */
void deployments_account(struct deployments *d, deployments_use_fn use, void *ud, double now);

/* Append the pods' container_* series (of node; every pod when NULL) to text (*len bytes);
 * returns the new text (text itself when there is nothing to add or no memory). */
char *deployments_render(const struct deployments *d, const char *node, double now, char *text, size_t *len);

/* The pods on node for its kubelet Summary (podusage_summary). */
size_t deployments_summary(const struct deployments *d, const char *node, double now, struct summary_pod *out,
                           size_t max);

#endif
