/* moves: the moves a PsiRebalance made (status.moves, struct api_move), followed to their end
 * through the VirtualMachineInstanceMigrations KubeVirt creates for them, and the counts of
 * live migrations in the cluster that the limits need. Pure.
 *
 * When KubeVirt answers an eviction with 429 "Eviction triggered evacuation of VMI ...", it
 * marks the VMI and its evacuation controller creates a migration (kubevirt-evacuation-*,
 * annotated kubevirt.io/evacuationMigration: <source node>): at once since KubeVirt 1.7's
 * priority queue, which holds it to the parallel limits, before that once the limits allow;
 * a failed one is retried with a backoff while the VMI stays marked. So a move in
 * phase MigrationRequested, Migrating or Failed is matched with the evacuation migrations of
 * its VMI created since it was asked (5 s of clock skew allowed), oldest first:
 *   - each failed one not counted yet is a failure (moves_event MOVES_FAILED);
 *   - the newest decides the phase: unfinished -> Migrating, Succeeded -> Succeeded (final,
 *     MOVES_SUCCEEDED; the time it took, its migrationState's start to end, into cost),
 *     Failed -> Failed (KubeVirt may try again: it is followed on).
 * A targeted move (spec.eviction.method Migrate: the operator created the migration itself,
 * named MOVES_TARGETED_PREFIX..., see migrate.h) is matched with that migration alone, by
 * name; KubeVirt does not retry it, so Failed is its end.
 * A move whose migration objects were deleted keeps what was last seen. */
#ifndef PSI_RECONCILE_MOVES_H
#define PSI_RECONCILE_MOVES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/status.h"

/* The annotation KubeVirt puts on evacuation migrations (value: the source node). */
#define MOVES_EVACUATION_ANNOTATION "kubevirt.io/evacuationMigration"

/* The labels of our own (targeted) migrations (see migrate.h), and the name prefix. */
#define MOVES_MANAGED_BY_LABEL "app.kubernetes.io/managed-by"
#define MOVES_MANAGED_BY "psi-rebalancer"
#define MOVES_OWNER_LABEL "rebalance.psi.dev/psirebalance"
#define MOVES_TARGETED_PREFIX "psi-rebalancer-"

/* Clock skew allowed between the operator and the API server when matching (seconds). */
#define MOVES_SKEW_S 5

/* One VirtualMachineInstanceMigration as read. Strings are borrowed from its JSON. */
struct moves_migration {
    const char *ns, *name, *vmi;
    const char *phase;    /* KubeVirt's phase; "" before the first */
    const char *source;   /* source node: the annotation, else status.migrationState; NULL: unknown */
    const char *target;   /* target node once known, else NULL */
    const char *reason;   /* status.migrationState.failureReason (why it failed), else NULL */
    const char *priority; /* spec.priority (KubeVirt >= 1.7: system-critical, user-triggered,
                           * system-maintenance), else NULL */
    bool evacuation;      /* annotated kubevirt.io/evacuationMigration */
    const char *owner;    /* a targeted migration of ours: the PsiRebalance named by its
                           * MOVES_OWNER_LABEL (with MOVES_MANAGED_BY_LABEL ours); else NULL */
    int64_t created, end; /* Unix s; end 0 while unfinished or unknown */
    int64_t start;        /* status.migrationState.startTimestamp, Unix s; 0: not started or unknown */
};

/* Whether a KubeVirt migration phase is final (Succeeded, Failed). */
bool moves_phase_final(const char *phase);

/* Whether a phase counts against KubeVirt's parallel limits: from the target pod's creation
 * (Scheduling) until the end; Pending and unset do not. */
bool moves_phase_running(const char *phase);

/* Read a migration (the object or a projection keeping metadata.{namespace, name,
 * creationTimestamp, annotations, labels}, spec.vmiName, status.{phase, migrationState,
 * phaseTransitionTimestamps}, spec.priority) into *m. The end time is status.migrationState.endTimestamp,
 * else the final phase's transition time; the reason migrationState.failureReason. Returns
 * 0, or -1 when it names no VMI. */
int moves_migration_read(const cJSON *vmim, struct moves_migration *m);

/* The migration counts KubeVirt's limits need, over every migration (whoever started it);
 * what counts against maxInFlightMigrations is inflight.h's. */
struct moves_counts {
    int running; /* moves_phase_running */
};

/* Count migs into *c and, per node, the running ones whose source is nodes[i] into
 * outbound[i] (nodes and outbound of nnodes entries; outbound zeroed first). */
void moves_count(const struct moves_migration *migs, size_t nm, const char *const *nodes, size_t nnodes,
                 struct moves_counts *c, int *outbound);

/* The parallel limits a KubeVirt CR sets (spec.configuration.migrations, which HyperConverged
 * writes from its liveMigrationConfig): parallelMigrationsPerCluster into *per_cluster and
 * parallelOutboundMigrationsPerNode into *per_node, each 0 (KubeVirt's default) when kubevirt
 * is NULL or the setting is unset or not a positive integer. */
void moves_kubevirt_limits(const cJSON *kubevirt, int *per_cluster, int *per_node);

/* What moves_follow found. */
enum moves_event_kind { MOVES_STARTED, MOVES_SUCCEEDED, MOVES_FAILED };

struct moves_event {
    size_t move; /* index into the moves */
    enum moves_event_kind kind;
    const char *migration; /* its name (borrowed from the migrations) */
    const char *reason;    /* MOVES_FAILED: why, when KubeVirt said (borrowed), else NULL */
};

/* Whether a move is still followed (MigrationRequested, Migrating, Failed). */
bool moves_followed(const struct api_move *m);

/* Follow moves[0..n) (rule above) against migs[0..nm): updates each move's phase, migration,
 * target node, end time and failures, and appends one event per transition to *events (a
 * vector the caller frees; *nevents its length). Returns 0, or -1 on no memory. */
int moves_follow(struct api_move *moves, size_t n, const struct moves_migration *migs, size_t nm,
                 struct moves_event **events, size_t *nevents);

/* Drop moves that ended (or were asked) more than history_s ago, unless their migration still
 * runs, then the oldest beyond API_STATUS_MAX_MOVES. */
void moves_prune(struct api_status *st, int64_t now_s, int64_t history_s);

#endif
