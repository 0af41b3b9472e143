/* mcplan: which MachineConfigs turn PSI on for the nodes a PsiRebalance selects. Pure: the
 * MachineConfigPools and the selected nodes in, a plan out; mcsync makes it so on the API.
 *
 * A node's pool is the one the MachineConfig operator manages it with (mcplan_node_pool):
 * among the pools whose spec.nodeSelector matches the node (an absent or empty selector
 * matches nothing), master when it is one of them (compact and single-node clusters keep
 * their masters, which carry the worker role too, in the master pool), else the one custom
 * pool (a custom pool wins over worker), else worker. A node in several custom pools, or in
 * none, is in no pool: the operator refuses it, and so does the plan (mcplan.orphans).
 *
 * The pools of the selected nodes are the plan's pools. Each needs one of our MachineConfigs
 * that its spec.machineConfigSelector picks up. Our MachineConfig for a role carries the
 * label machineconfiguration.openshift.io/role=<role> (machineconfig.h); the roles tried are
 * the pools' names and the role values their selectors name (matchLabels, and the values of
 * an In expression on that label). PSI must not reach a pool without a selected node (its
 * machines would reboot for nothing), with one exception OpenShift builds in: custom pools
 * inherit the worker MachineConfigs (machineConfigSelector role In (worker, <custom>)), so
 * the worker pool's own role reaches them too. Roles are chosen so:
 *   1. a plan pool that no role reaching only plan pools covers gets its own role (named
 *      after it) when it picks that up: the worker pool, when some custom pool has no
 *      selected node; what that role reaches is covered too;
 *   2. then, greedily, roles reaching only plan pools, the one covering most pools not yet
 *      covered first (ties: a role named after one of them, then by name): a custom pool
 *      shares the worker MachineConfig when the worker pool is in the plan, and gets one of
 *      its own role when it is not;
 *   3. a pool still not covered has no role (PSIEnabled says PoolNotCovered). */
#ifndef PSI_RECONCILE_MCPLAN_H
#define PSI_RECONCILE_MCPLAN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Node names kept for the message about nodes in no pool. */
#define MCPLAN_MAX_ORPHAN_NAMES 5

/* One pool of the selected nodes. */
struct mcplan_pool {
    const cJSON *pool; /* borrowed */
    const char *name;  /* the pool's name (borrowed from pool) */
    const char *role;  /* the role of our MachineConfig it picks up (into mcplan.roles); NULL: none may */
    size_t nodes;      /* selected nodes in it */
};

/* The plan. Free with mcplan_free. */
struct mcplan {
    struct mcplan_pool *pools; /* by name */
    size_t npools;
    char **roles; /* one MachineConfig per role, in the order chosen */
    size_t nroles;
    const char *orphans[MCPLAN_MAX_ORPHAN_NAMES]; /* selected nodes in no pool (borrowed names) */
    size_t norphans;                              /* how many there are in all */
};

/* The pool node is in among pools[0..n) (rule above), or NULL. */
const cJSON *mcplan_node_pool(const cJSON *const *pools, size_t n, const cJSON *node);

/* Whether pool's machineConfigSelector picks up our MachineConfig of role (absent: none). */
bool mcplan_pool_selects_role(const cJSON *pool, const char *role);

/* Plan for the selected nodes[0..nnodes) among pools[0..npools) into *out (zeroed first).
 * Returns 0, or -1 on no memory (*out then empty). */
int mcplan_build(const cJSON *const *pools, size_t npools, const cJSON *const *nodes, size_t nnodes,
                 struct mcplan *out);

/* Whether role is one of plan's roles. */
bool mcplan_has_role(const struct mcplan *plan, const char *role);

/* Release what plan owns. */
void mcplan_free(struct mcplan *plan);

#endif
