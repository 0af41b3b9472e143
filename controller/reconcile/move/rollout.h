/* rollout: which nodes rebalancing leaves alone while maintenance moves workloads: a
 * MachineConfigPool rolling out, a node the MachineConfig daemon updates, a node drain's live
 * migration waiting for its turn. Pure: the facts (the pools, the nodes' MachineConfig
 * annotations, the migrations) in, a verdict per node out; the time is the caller's.
 *
 * A held node is neither a source nor a destination this cycle. The rules, in order:
 *   1. ROLLOUT_UPDATING: the node's own annotations say the MachineConfig daemon works on it:
 *      desiredConfig differs from currentConfig (the node controller picked it), or its state
 *      is Working or Rebooting. A node is drained before it is updated, so it is no place to
 *      send a VM, and moving VMs off it is the drain's job.
 *   2. In a pool whose Updating condition is True (the node is in a pool when its currentConfig
 *      or desiredConfig is the pool's spec.configuration.name or status.configuration.name,
 *      the rendered MachineConfigs the node controller hands out):
 *      - ROLLOUT_TO_UPDATE: the node is not done for the pool's target (done: currentConfig
 *        and desiredConfig are spec.configuration.name and the state is Done, as
 *        LayeredNodeState.IsDone in pkg/controller/common/layered_node_state.go has it): the
 *        rollout will drain it, so a VM sent there would be moved again;
 *      - ROLLOUT_BACK: the node is back from its update. It is quiet (no move onto it) until
 *        the rollout has settled, so the drains still to come, which land on it, are not
 *        joined by ours; and the pressure they cause on it is not a reason to move off it.
 *   3. ROLLOUT_SETTLING: its pool stopped Updating (the condition's lastTransitionTime) less
 *      than the settle time ago: the pressure the drains moved around has not settled yet.
 *   4. ROLLOUT_DRAIN_WAITS (targeted moves only): a live migration at drain priority waits on
 *      the node, as its source or as its known target. Drain priority: spec.priority
 *      system-critical (what the evacuation controller gives a node drain's or a plain
 *      eviction's migration, GenerateNewMigration in
 *      pkg/virt-controller/watch/drain/evacuation/evacuation.go), or an evacuation migration
 *      without spec.priority (KubeVirt before the priority queue: it cannot be told from a
 *      drain's). Waiting: not final and not yet counted against the parallel limits
 *      (moves_phase_running). A targeted migration gets the lowest queue priority, yet once
 *      made it takes a parallel slot as soon as one is free: it is not made while a drain's
 *      waits on either of its nodes.
 * Cordoned nodes (spec.unschedulable) are no destination already (plan.h); where the
 * MachineConfig API is absent the pools are none and rules 1 and 4 stand alone. */
#ifndef PSI_RECONCILE_MOVE_ROLLOUT_H
#define PSI_RECONCILE_MOVE_ROLLOUT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcile/move/moves.h"

/* The MachineConfig daemon's states (MachineConfigDaemonState* in the machine-config-operator's
 * pkg/daemon/constants/constants.go). */
#define ROLLOUT_STATE_DONE "Done"
#define ROLLOUT_STATE_WORKING "Working"
#define ROLLOUT_STATE_REBOOTING "Rebooting"

/* KubeVirt's migration priority of a node drain (PrioritySystemCritical,
 * staging/src/kubevirt.io/api/core/v1/types.go). */
#define ROLLOUT_DRAIN_PRIORITY "system-critical"

/* One MachineConfigPool as read (strings borrowed from its JSON). */
struct rollout_pool {
    const char *name;
    const char *target;     /* spec.configuration.name: what its nodes roll out to; NULL unknown */
    const char *current;    /* status.configuration.name: what all its nodes had last; NULL unknown */
    bool updating;          /* the Updating condition is True */
    int64_t since;          /* the Updating condition's lastTransitionTime (Unix s); 0 unknown */
    long machines, updated; /* status.machineCount, status.updatedMachineCount; -1 unknown */
};

/* Read a MachineConfigPool object into *out. Returns 0, or -1 when it has no name. */
int rollout_pool_read(const cJSON *pool, struct rollout_pool *out);

/* A node's facts (strings borrowed). */
struct rollout_node {
    const char *name;
    const char *current, *desired, *state; /* the MachineConfig annotations (nodeproj.h); NULL absent */
};

/* Everything the rules read (borrowed). */
struct rollout_facts {
    const struct rollout_pool *pools;
    size_t npools;
    const struct moves_migration *migs;
    size_t nmigs;
    bool targeted;    /* VM moves are targeted live migrations this cycle */
    int64_t now;      /* Unix s */
    int64_t settle_s; /* the settle time after a move (cycle_settle_ms), seconds */
};

/* A node's verdict, by rule (above). */
enum rollout_hold {
    ROLLOUT_FREE = 0,
    ROLLOUT_UPDATING,
    ROLLOUT_TO_UPDATE,
    ROLLOUT_BACK,
    ROLLOUT_SETTLING,
    ROLLOUT_DRAIN_WAITS,
};

/* Whether migration m is at drain priority and waits (rule 4). */
bool rollout_drain_waiting(const struct moves_migration *m);

/* The pool node n is in (rule 2), or NULL. */
const struct rollout_pool *rollout_node_pool(const struct rollout_facts *f, const struct rollout_node *n);

/* The verdict on n; when held, why (a phrase naming the pool, the configs or the migration) is
 * written to why (len bytes). */
enum rollout_hold rollout_check(const struct rollout_facts *f, const struct rollout_node *n, char *why, size_t len);

#endif
