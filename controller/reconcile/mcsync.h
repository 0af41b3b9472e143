/* mcsync: the MachineConfigs of one PsiRebalance on the API. With spec.machineConfig.enabled
 * (and the MachineConfig API served) the plan for the pools of its nodes (mcplan.h) is made
 * so: each planned role's MachineConfig is created or brought to what machineconfig.h builds
 * (one not ours is left alone), and each pool is evaluated into the PSIEnabled condition and
 * status.machineConfigs (at most 16 pools listed there). Nothing is ever deleted: deleting a
 * MachineConfig reboots its pool, and the admission policy holds the operator's token to
 * creating each one and adding schedstats=enable to it (machineconfig.h). Events for every
 * write. Not thread-safe.
 * MachineConfig mode is refused (nothing planned or written; PSIEnabled False, reason
 * AdmissionPolicyMissing or AdmissionPolicyUnverified, the message naming what is missing and
 * the command that applies it) unless the admission policy psi-rebalancer-machineconfigs and its
 * binding are in force (policyguard.h): without them the operator's token could write any
 * MachineConfig, root on every machine of a pool. Asked of the API each cycle. */
#ifndef PSI_RECONCILE_MCSYNC_H
#define PSI_RECONCILE_MCSYNC_H

#include <stdint.h>

#include "api/psirebalance.h"
#include "api/status.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/rest.h"
#include "reconcile/status/ownership.h"

/* What it works with; all borrowed. */
struct mcsync {
    struct kube_client *client;
    struct kube_events *events;                 /* may be NULL */
    const struct kube_informer *machineconfigs; /* NULL: the MachineConfig API does not exist */
    const struct kube_informer *pools;
};

/* One PsiRebalance's cycle. */
struct mcsync_in {
    const cJSON *obj; /* the PsiRebalance */
    const struct api_spec *spec;
    const struct ownership_nodes *nodes; /* the nodes, its own marked owned (ensure only) */
    int64_t generation;
    int64_t now_ms;
};

/* Make sure each planned role's MachineConfig exists as wanted and fill next's PSIEnabled
 * condition and machineConfigs entries. Returns 0, or -1 when a write failed (logged). */
int mcsync_ensure(const struct mcsync *m, const struct mcsync_in *in, struct api_status *next);

#endif
