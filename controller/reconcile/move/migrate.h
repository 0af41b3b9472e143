/* migrate: targeted live migration (spec.eviction.method Migrate). Instead of asking the
 * Eviction API and leaving the target to the scheduler, the operator creates a KubeVirt
 * VirtualMachineInstanceMigration for the VMI with spec.addedNodeSelector naming the node the
 * plan chose (its kubernetes.io/hostname label), so the VM lands where the prediction says the
 * move helps. addedNodeSelector only narrows the VM's own constraints, never bypasses them.
 * Pure: the objects to create, how to read KubeVirt's CRD and answers, and what to do with
 * our migrations; the rebalancer makes the calls.
 *
 * Our migrations are named MIGRATE_NAME_PREFIX<vmi>- plus a suffix the API server generates,
 * labelled app.kubernetes.io/managed-by: psi-rebalancer and rebalance.psi.dev/psirebalance:
 * <the PsiRebalance>, and annotated with the source, the destination and the predicted loads,
 * so users and the operator tell them apart from KubeVirt's evacuations
 * (kubevirt.io/evacuationMigration) and from other tools' migrations. The labels, not the
 * operator's memory, say which migrations are ours: the cleanup below survives a restart.
 *
 * Cleanup: KubeVirt does not retry a migration it was asked for (only evacuations), so one of
 * ours that failed is deleted once its failure is counted; one that has not got past
 * Pending/Scheduling (no phase, waiting for a slot, or its target pod not scheduled)
 * MIGRATE_STUCK_S after its creation is deleted and counted as failed (KubeVirt itself fails a
 * target pod unschedulable for 5 minutes; this catches every other way of waiting forever).
 * None of ours is left pending forever. */
#ifndef PSI_RECONCILE_MIGRATE_H
#define PSI_RECONCILE_MIGRATE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/status.h"
#include "reconcile/move/moves.h"
#include "reconcile/move/evictor.h"
#include "reconcile/status/nodelabels.h"

#define MIGRATE_NAME_PREFIX MOVES_TARGETED_PREFIX
#define MIGRATE_MANAGED_BY_LABEL MOVES_MANAGED_BY_LABEL
#define MIGRATE_MANAGED_BY MOVES_MANAGED_BY
#define MIGRATE_OWNER_LABEL MOVES_OWNER_LABEL
#define MIGRATE_SOURCE_ANNOTATION "rebalance.psi.dev/source-node"
#define MIGRATE_DESTINATION_ANNOTATION "rebalance.psi.dev/destination-node"
#define MIGRATE_PREDICTION_ANNOTATION "rebalance.psi.dev/predicted-load"
#define MIGRATE_HOSTNAME_LABEL "kubernetes.io/hostname"
/* The CRD whose schema tells whether KubeVirt knows spec.addedNodeSelector (newer releases). */
#define MIGRATE_CRD_NAME "virtualmachineinstancemigrations.kubevirt.io"
/* A migration of ours still Pending/Scheduling (or without a phase) this long after its
 * creation is deleted and counted as failed. */
#define MIGRATE_STUCK_S 300
/* A move whose migration of ours is not seen this long after it was asked is counted lost
 * (deleted by someone else, or never stored). */
#define MIGRATE_LOST_S 120

/* The value for addedNodeSelector's kubernetes.io/hostname of node name whose metadata.labels
 * are labels (may be NULL): its hostname label, else name. Borrowed. */
const char *migrate_hostname(const struct nodelabels *labels, const char *name);

/* What a targeted migration is made of (strings borrowed). Loads are shares of the node's
 * CPUs (1.0 = all of them). */
struct migrate_request {
    const char *ns, *vmi;
    const char *owner;                /* the PsiRebalance's name */
    const char *source, *destination; /* node names */
    const char *hostname;             /* the destination's hostname label (migrate_hostname) */
    double src_load, src_load_after, dst_load, dst_load_after;
};

/* The VirtualMachineInstanceMigration (kubevirt.io/v1) for r: generateName
 * MIGRATE_NAME_PREFIX<vmi>-, our labels and annotations, spec.vmiName and
 * spec.addedNodeSelector {kubernetes.io/hostname: hostname}. Caller frees (cJSON_Delete);
 * NULL on no memory or missing fields. */
cJSON *migrate_vmim_new(const struct migrate_request *r);

/* Whether KubeVirt takes addedNodeSelector. */
enum migrate_support {
    MIGRATE_SUPPORTED,   /* the served version's schema has spec.properties.addedNodeSelector */
    MIGRATE_UNSUPPORTED, /* it has not (an older KubeVirt): fall back to eviction */
    MIGRATE_UNKNOWN,     /* the CRD could not be read: fall back to eviction too */
};

/* Read the VirtualMachineInstanceMigration CRD (the object; NULL: not there) and say whether
 * its v1 schema (the served version kubevirt.io/v1) declares spec.addedNodeSelector; why gets a
 * sentence for the condition when it does not. */
enum migrate_support migrate_crd_support(const cJSON *crd, char *why, size_t len);

/* Whether move m was made by a targeted migration (its migration is named with our prefix). */
bool migrate_move_targeted(const struct api_move *m);

/* What to do with a migration of ours (g->owner set). */
enum migrate_action {
    MIGRATE_KEEP,          /* it runs, or it succeeded: nothing */
    MIGRATE_DELETE_FAILED, /* it failed (counted by moves_follow): delete it */
    MIGRATE_DELETE_STUCK,  /* it waited past MIGRATE_STUCK_S: delete it, count a failure */
};

/* The action for migration g at now_s, stuck after stuck_s (0 takes MIGRATE_STUCK_S). */
enum migrate_action migrate_cleanup_action(const struct moves_migration *g, int64_t now_s, int64_t stuck_s);

/* Whether targeted move m (MigrationRequested or Migrating) lost its migration: no migration
 * among migs[0..nm) bears its name although it was asked more than MIGRATE_LOST_S ago. */
bool migrate_move_lost(const struct api_move *m, const struct moves_migration *migs, size_t nm, int64_t now_s);

/* Classify the answer to creating a migration: 0 (created), or the HTTP status. 400 from
 * KubeVirt's migration admitter (the VMI cannot migrate, a migration of it is in flight, or it
 * is in a final state), a conflict (409), 422 and 429 are refusals (a skip with a cooldown);
 * 404 (the VMI is gone) is GONE; anything else an error. */
enum evictor_outcome migrate_create_outcome(long http_status);

#endif
