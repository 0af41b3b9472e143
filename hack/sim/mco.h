/* mco: the MachineConfig operator stand-in (render controller, node controller, the
 * machine-config daemons and the pool status), driving the real API server.
 *
 *   - pools: the scenario's pools (mco.pools) are created when absent, selecting
 *     MachineConfigs by machineconfiguration.openshift.io/role=<pool> (a custom pool, neither
 *     master nor worker, by role In (worker, <pool>): it inherits the worker MachineConfigs
 *     as OpenShift's custom pools do) and nodes by node-role.kubernetes.io/<pool>, with a
 *     base MachineConfig 00-<pool>; a node is in the pool mcopool_primary says;
 *   - render: the MachineConfigs a pool selects make a rendered config
 *     rendered-<pool>-<hash> (mcopool.h), created as a MachineConfig and set as the
 *     pool's spec.configuration; machines that never ran anything start on it;
 *   - rollout: one machine at a time (maxUnavailable 1), in name order: desiredConfig
 *     set, state Working, then the daemon's part: cordon, drain through evictions (which
 *     KubeVirt turns into live migrations), the reboot delay, currentConfig = desired,
 *     state Done, uncordon. A drain longer than mco.drainTimeout marks the machine
 *     Degraded (and the pool with it) while it keeps trying;
 *   - status: machine counts, configuration and the Updated / Updating / Degraded
 *     conditions, written when they change.
 * A node has PSI once the rendered config it runs carries the psi=1 kernel argument. */
#ifndef PSI_SIM_MCO_H
#define PSI_SIM_MCO_H

#include <stdbool.h>
#include <stddef.h>

#include "hack/sim/sim.h"

struct mco;

/* New stand-in over s (borrowed; s->mcs and s->mcps must be set). NULL when out of memory. */
struct mco *mco_new(struct sim *s);

/* Free; a rollout in progress leaves its node cordoned (NULL is fine). */
void mco_free(struct mco *m);

/* One pass: pools, render, rollout, status. */
void mco_sync(struct mco *m);

/* Whether node runs a rendered config with psi=1 (a telemetry_psi_fn; ud is the mco). */
bool mco_node_psi(const char *node, void *ud);

/* Create a MachineConfig for role with the kernel arguments (as an admin would). Returns 0,
 * or -1 (logged); an existing one of that name is left as it is. */
int mco_create_machine_config(struct mco *m, const char *name, const char *role, char *const *kargs, size_t n);

/* Whether every pool of the scenario is Updated (its status says so). */
bool mco_pools_updated(const struct mco *m);

#endif
