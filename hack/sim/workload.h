/* workload: the scenario's VMs as KubeVirt runs them. For every VM of the scenario:
 *   - the VirtualMachine (runStrategy Always) exists;
 *   - it has a VMI (same name, a new UID per start); a VMI that ended (Failed or
 *     Succeeded) is deleted and, after the restart delay, replaced (the VM restarts);
 *   - the VMI has a launcher pod, which the real kube-scheduler places and kwok runs;
 *     the VMI's phase follows it (Pending, Scheduling, Scheduled, Running) and a Running
 *     VMI records its node, its LiveMigratable condition and its active pods;
 *   - a Running VMI left without any live launcher pod (its pod was evicted or deleted,
 *     e.g. strategy None) fails: phase Failed, then the restart above;
 *   - the VM's status (created, ready, printableStatus) follows its VMI.
 * It also runs the scenario's start: with start.node, every other simulated node is
 * cordoned until all VMs run, then uncordoned (as an admin would); nothing starts before the
 * node watch shows the cordons, and the VMs' first launcher pods are bound to start.node (the
 * scheduler's own node cache may still lag). And it holds each VM's
 * current demand (CPU cores, memory and io), which the timeline changes. */
#ifndef PSI_SIM_WORKLOAD_H
#define PSI_SIM_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "hack/sim/sim.h"

struct workload;

/* New workload over s (borrowed); NULL when out of memory. */
struct workload *workload_new(struct sim *s);

/* Free (NULL is fine). Uncordons the nodes the start cordoned, if it is still going. */
void workload_free(struct workload *w);

/* One pass: create, start, follow and restart as described above. */
void workload_sync(struct workload *w);

/* Whether the start is over (every VM Running, the nodes it cordoned uncordoned). */
bool workload_started(const struct workload *w);

/* Whether the start has begun: with start.node, the other nodes are cordoned and the node
 * watch shows it, so that other workloads created from now on start there too. */
bool workload_start_began(const struct workload *w);

/* Hold the start (and its cordons) until ready(ud) is true as well, e.g. until other
 * workloads run (deployments_running). */
void workload_hold_start(struct workload *w, bool (*ready)(void *ud), void *ud);

/* Set the demand of the VM named name (NaN leaves a value as it is). Returns 0, -1 when
 * there is no such VM. */
int workload_set_demand(struct workload *w, const char *name, double cpu, double memory, double io);

/* The current demand of the i-th scenario VM. */
void workload_demand(const struct workload *w, size_t i, double *cpu, double *memory, double *io);

/* The node a Running VMI of the i-th scenario VM is on, or NULL (not running). Points
 * into the cache: valid until the loop runs again. */
const char *workload_node_of(const struct workload *w, size_t i);

/* The UID of the i-th VM's current VMI, or NULL. Same lifetime as workload_node_of. */
const char *workload_vmi_uid(const struct workload *w, size_t i);

/* Number of VMs whose VMI is Running. */
size_t workload_running(const struct workload *w);

#endif
