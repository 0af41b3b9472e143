/* mcopool: the MachineConfig operator's bookkeeping, pure: which MachineConfigs a pool
 * selects, the rendered configuration they make (name and merged kernel arguments), and
 * the pool status its machines add up to, as the real operator writes it.
 *
 * Node annotations (written by the machine-config daemon on each node):
 *   machineconfiguration.openshift.io/currentConfig   the rendered config it runs
 *   machineconfiguration.openshift.io/desiredConfig   the one it is told to run
 *   machineconfiguration.openshift.io/state           Done | Working | Degraded
 * Pool status: configuration (name and source: the MachineConfigs rendered) once every
 * machine runs the target, machineCount, updatedMachineCount (current = desired = target,
 * state Done), readyMachineCount (updated and schedulable), unavailableMachineCount
 * (updating, degraded or cordoned), degradedMachineCount, observedGeneration, and the
 * conditions Updated, Updating, NodeDegraded, RenderDegraded, Degraded. A paused pool
 * (spec.paused) with machines behind its target is Updated=False and Updating=False,
 * "Pool is paused; will not update to <target>". */
#ifndef PSI_SIM_MCOPOOL_H
#define PSI_SIM_MCOPOOL_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define MCO_ROLE_LABEL "machineconfiguration.openshift.io/role"
#define MCO_CURRENT "machineconfiguration.openshift.io/currentConfig"
#define MCO_DESIRED "machineconfiguration.openshift.io/desiredConfig"
#define MCO_STATE "machineconfiguration.openshift.io/state"
#define MCO_REASON "machineconfiguration.openshift.io/reason"

/* Whether mc (a MachineConfig) is selected by pool's spec.machineConfigSelector
 * (matchLabels and matchExpressions, as custom pools select role In (worker, <pool>); a
 * rendered config, owned by a pool, is never selected). */
bool mcopool_selects(const cJSON *pool, const cJSON *mc);

/* Whether node matches pool's spec.nodeSelector (matchLabels and matchExpressions; an
 * empty selector matches nothing). */
bool mcopool_has_node(const cJSON *pool, const cJSON *node);

/* The pool node belongs to among pools (n of them), as the MachineConfig operator decides
 * it: NULL when several custom pools match (the operator refuses the node), else master when
 * its selector matches (a compact cluster's masters carry the worker role too, and stay the
 * master pool's), else the one custom pool that matches (it wins over worker), else worker
 * (NULL when none matches). The name points into the pool. */
const char *mcopool_primary(const cJSON *const *pools, size_t n, const cJSON *node);

/* The rendered configuration of pool from the selected MachineConfigs mcs (n of them, any
 * order): they are taken in name order, kernel arguments concatenated without duplicates.
 * Returns a new MachineConfig object named rendered-<pool>-<md5 of the content>, owned by
 * the pool (caller frees), with spec.kernelArguments and the annotation
 * machineconfiguration.openshift.io/source listing the names; NULL when out of memory.
 * source (may be NULL) gets a new array of {apiVersion, kind, name} references. */
cJSON *mcopool_render(const cJSON *pool, const cJSON *const *mcs, size_t n, cJSON **source);

/* Whether the MachineConfig has the kernel argument arg. */
bool mcopool_has_karg(const cJSON *mc, const char *arg);

/* What a pool's machines add up to. */
struct mcopool_counts {
    int machines, updated, ready, unavailable, degraded;
    char degraded_reason[256]; /* the first degraded node's reason */
};

/* Count the nodes (n of them, the pool's) against the target rendered config: updated as the
 * machine-config-operator's LayeredNodeState.IsDone has it (currentConfig == desiredConfig ==
 * the pool's target, state Done; pkg/controller/common/layered_node_state.go), the counts as
 * GetMachinesByState gives them (pkg/controller/common/helpers.go). */
void mcopool_count(const cJSON *const *nodes, size_t n, const char *target, struct mcopool_counts *c);

/* The pool status for target (with its source) and the counts; old is the pool's
 * current status (transition times are kept for conditions that keep their status).
 * now is an RFC 3339 time. Returns a new object (caller frees). */
cJSON *mcopool_status(const cJSON *pool, const char *target, const cJSON *source, const struct mcopool_counts *c,
                      const char *now);

/* Whether two status objects say the same (ignoring transition times). */
bool mcopool_status_equal(const cJSON *a, const cJSON *b);

#endif
