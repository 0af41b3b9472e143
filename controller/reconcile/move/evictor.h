/* evictor: may this pod go? The one place that answers it, apart from the planner that picks
 * (plan.h), as the descheduler keeps its evictor apart from its strategies. Pure: the
 * pod's JSON and plain facts in, a reason out.
 *
 * Three questions, asked in this order:
 *   1. eligibility and protections of the pod itself (evictor_pod_check): running, not a
 *      mirror, static or DaemonSet pod, has a controller, not system-critical, not in an
 *      excluded namespace, selected by spec.eviction.podSelector, not annotated
 *      prefer-no-eviction or eviction-in-progress (evictor_eviction_in_progress);
 *   2. what this operator and KubeVirt are doing with its workload (evictor_check): the pod
 *      a live migration's target the VMI does not run on yet (evictor_migration_target), its
 *      VMI being evacuated or migrated, a move of ours under way, its cooldown, a refused
 *      eviction recently;
 *      and for a VM moved by eviction, whether KubeVirt would restart it instead of migrating
 *      it (evictor_vm_restarts), and for one moved by a targeted migration, whether its
 *      owner chose None (evictor_vm_migration_overrides); the caller skips either unless
 *      spec.eviction.allowVMRestart;
 *   3. room under the limits for one more move (evictor_room): maxTotal, maxPerNode and
 *      maxPerNamespace per cycle, and for a VM maxInFlightMigrations and KubeVirt's parallel
 *      limits (the planner, plan.c, asks it before each move it plans).
 * Every answer is NULL (it may go) or a short static reason the Rebalancing condition counts
 * ("cooling down", "DaemonSet pod", ...). And once asked, what the Eviction API's answer
 * means (evictor_outcome). See docs/architecture.md for where the other rules
 * live. */
#ifndef PSI_RECONCILE_EVICTOR_H
#define PSI_RECONCILE_EVICTOR_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/selector.h"
#include "reconcile/move/moves.h"

/* Which pods may move (spec.eviction): podSelector and excludedNamespaces (borrowed). */
struct evictor_filter {
    const struct api_selector *selector; /* NULL: every pod */
    char *const *excluded;               /* globs of namespaces */
    size_t nexcluded;
};

/* Why pod (a Pod, or a projection that keeps metadata.{namespace, labels, annotations,
 * ownerReferences, deletionTimestamp}, spec.{nodeName, priority, priorityClassName},
 * status.phase) may not move, or NULL when it may (question 1 above). f may be NULL. */
const char *evictor_pod_check(const cJSON *pod, const struct evictor_filter *f);

/* The workload a pod belongs to, what is remembered across its moves: a KubeVirt VM is its
 * VMI ("VirtualMachineInstance", the VMI's name: it keeps name and UID through a live
 * migration); another pod is its controller (kind and name). *kind and *name point into pod;
 * both NULL when the pod has no controller. */
void evictor_pod_workload(const cJSON *pod, const char **kind, const char **name);

/* Whether pod is under an eviction another component runs: it carries
 * descheduler.alpha.kubernetes.io/eviction-in-progress, whatever its value (the descheduler
 * checks only its presence; virt-controller sets it to "true" while the pod's VMI is marked
 * for evacuation and removes it after, pkg/virt-controller/watch/vmi/lifecycle.go and
 * watch/descheduler/descheduler.go). */
bool evictor_eviction_in_progress(const cJSON *pod);

/* Whether VMI ns/name is being evacuated (vmi, its informer projection or NULL, carries
 * status.evacuationNodeName) or migrated (an unfinished migration of migs names it), by
 * anyone: "in evacuation", "migrating", or NULL. */
const char *evictor_vmi_busy(const cJSON *vmi, const struct moves_migration *migs, size_t nmigs, const char *ns,
                             const char *name);

/* A VM's effective eviction strategy: the VMI's spec.evictionStrategy, else the cluster-wide
 * spec.configuration.evictionStrategy of the KubeVirt CR kubevirt (may be NULL), else
 * KubeVirt's default "None". Points into vmi or kubevirt, or is static. */
const char *evictor_vm_strategy(const cJSON *vmi, const cJSON *kubevirt);

/* Whether evicting the launcher pod of a VM with eviction strategy strategy restarts the VM
 * instead of migrating it (KubeVirt lets the eviction through: strategy None, or
 * LiveMigrateIfPossible when the VMI is not migratable, i.e. its LiveMigratable condition is
 * not True): a short static reason naming why, or NULL when it does not. */
const char *evictor_vm_restarts(const char *strategy, bool migratable);

/* Whether a targeted live migration of a VM with effective eviction strategy strategy would
 * override its owner: None says "stop, do not migrate, on eviction", and KubeVirt's migration
 * admitter does not look at the strategy (migration-create-admitter.go), so a targeted
 * migration would move it where an eviction would not. A short static reason, or NULL; the
 * caller skips such a VM unless spec.eviction.allowVMRestart, the same opt-in as for the
 * eviction that would restart it. */
const char *evictor_vm_migration_overrides(const char *strategy);

/* Whether a VMI (or its projection) is migratable as KubeVirt judges it: its LiveMigratable
 * condition is True. */
bool evictor_vmi_migratable(const cJSON *vmi);

/* Whether pod is the target pod of a live migration (label kubevirt.io/migrationJobUID)
 * that its VMI vmi (may be NULL: unknown) does not run on yet (status.nodeName is not the
 * pod's node): "migration target", or NULL. KubeVirt leaves the label on the pod after the
 * migration succeeded, when the pod is the VM's own. */
const char *evictor_migration_target(const cJSON *pod, const cJSON *vmi);

/* What is known of a candidate's workload this cycle (question 2). */
struct evictor_facts {
    const cJSON *pod;     /* the pod (as for evictor_pod_check) */
    const cJSON *vmi;     /* its VMI, NULL: none or unknown */
    bool controller;      /* evictor_pod_workload found its workload */
    const char *vmi_busy; /* evictor_vmi_busy of its VMI; NULL: not busy or no VM */
    bool move_running;    /* a move of ours of this workload is under way */
    bool cooling;         /* its cooldown (DryRun: DryRun's own) runs */
    bool refused;         /* an eviction of it was refused recently (held back as a move) */
};

/* Why the candidate x may not move (questions 1 and 2, the first that applies), or NULL. */
const char *evictor_check(const struct evictor_facts *x, const struct evictor_filter *f);

/* The limits one more move must fit under (question 3). */
struct evictor_limits {
    int max_total;         /* spec.eviction.maxTotal, per cycle */
    int max_per_node;      /* spec.eviction.maxPerNode, per cycle */
    int max_per_namespace; /* spec.eviction.maxPerNamespace, per cycle */
    int max_in_flight;     /* spec.eviction.maxInFlightMigrations */
    int in_flight;         /* migrations not finished in the cluster, any origin */
    int running;           /* migrations running in the cluster (KubeVirt's count) */
    int per_cluster;       /* KubeVirt's parallelMigrationsPerCluster */
    int per_node;          /* KubeVirt's parallelOutboundMigrationsPerNode */
};

/* What this cycle has planned so far, as the limits count it. */
struct evictor_tally {
    int total;        /* moves planned in all */
    const char *node; /* the source node */
    int from_node;    /* moves planned off it */
    const char *ns;   /* the candidate's namespace */
    int in_namespace; /* moves planned in that namespace */
    int outbound;     /* live migrations running or planned from the source */
    int vm_moves;     /* VM moves planned in all */
};

/* Why one more move (vm: a live migration) does not fit under l given t, written to why and
 * returned, or NULL when it fits. */
const char *evictor_room(const struct evictor_limits *l, const struct evictor_tally *t, bool vm, char *why, size_t len);

/* ---- the Eviction API's answer ---- */

enum evictor_outcome {
    EVICTOR_EVICTED,   /* 200/201: the pod goes (it restarts elsewhere) */
    EVICTOR_MIGRATING, /* 429 "Eviction triggered evacuation" / "Evacuation in progress":
                        * KubeVirt accepted it as a live migration */
    EVICTOR_REFUSED,   /* another 429 (a PodDisruptionBudget, a VM that cannot migrate): skip */
    EVICTOR_GONE,      /* 404: the pod is gone already */
    EVICTOR_ERROR,     /* anything else: a failure */
};

/* Classify an eviction's answer: http status (0 for success) and the server's message. */
enum evictor_outcome evictor_outcome(long http_status, const char *message);

#endif
