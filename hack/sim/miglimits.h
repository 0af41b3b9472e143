/* miglimits: KubeVirt's parallel live-migration limits (parallelMigrationsPerCluster,
 * default 5; parallelOutboundMigrationsPerNode, default 2), counted as KubeVirt counts
 * them: a migration is running from the moment its target pod is created (phase
 * Scheduling) until it ends; Pending migrations wait and do not count. Pure. */
#ifndef PSI_SIM_MIGLIMITS_H
#define PSI_SIM_MIGLIMITS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* KubeVirt's defaults, used for a setting the KubeVirt CR leaves unset. */
#define MIGLIMITS_DEFAULT_PER_CLUSTER 5
#define MIGLIMITS_DEFAULT_PER_NODE 2

/* Migration phases, as KubeVirt spells them. */
#define MIGLIMITS_PENDING "Pending"
#define MIGLIMITS_SCHEDULING "Scheduling"
#define MIGLIMITS_SCHEDULED "Scheduled"
#define MIGLIMITS_PREPARING "PreparingTarget"
#define MIGLIMITS_TARGET_READY "TargetReady"
#define MIGLIMITS_RUNNING "Running"
#define MIGLIMITS_SUCCEEDED "Succeeded"
#define MIGLIMITS_FAILED "Failed"

/* The limits a KubeVirt CR sets: spec.configuration.migrations.parallelMigrationsPerCluster
 * and .parallelOutboundMigrationsPerNode, each KubeVirt's default when unset or not a
 * positive integer. */
void miglimits_from_kubevirt(const cJSON *kubevirt, int *per_cluster, int *per_node);

/* Whether a migration in phase counts against the limits (not unset, Pending or final). */
bool miglimits_phase_running(const char *phase);

/* Whether phase is final (Succeeded or Failed). */
bool miglimits_phase_final(const char *phase);

/* Migration priorities (spec.priority), as KubeVirt spells them
 * (staging/src/kubevirt.io/api/core/v1/types.go, MigrationPriority). */
#define MIGLIMITS_SYSTEM_CRITICAL "system-critical"
#define MIGLIMITS_USER_TRIGGERED "user-triggered"
#define MIGLIMITS_SYSTEM_MAINTENANCE "system-maintenance"

/* The queue priority of a migration whose spec.priority is priority (NULL: unset), as
 * PriorityFromMigration gives it (pkg/util/migrations/migrations.go): system-critical 100,
 * user-triggered 50, system-maintenance 20, anything else or unset 0 (a migration a user
 * creates: the migration admitter refuses one that sets spec.priority). */
int miglimits_queue_priority(const char *priority);

/* qsort order of migrations (const cJSON **) as virt-controller's migration queue takes the
 * waiting ones: higher miglimits_queue_priority first (reEnqueueHighestPriorityPendingMigrations
 * in pkg/virt-controller/watch/migration/migration.go, a controller-runtime priority queue),
 * first come first within a priority (metadata.creationTimestamp, then the name). */
int miglimits_queue_order(const void *a, const void *b);

struct miglimits_node {
    char *node;
    int running;
};

/* Running migrations, in total and per source node. */
struct miglimits {
    int per_cluster, per_node;
    int total;
    struct miglimits_node *nodes;
    size_t n_nodes, nodes_cap;
};

/* Start counting with the given limits. */
void miglimits_init(struct miglimits *l, int per_cluster, int per_node);

/* Free what counting allocated. */
void miglimits_clear(struct miglimits *l);

/* Count one running migration from source (NULL or "": counts in the total only). Returns 0,
 * -1 when out of memory. */
int miglimits_add(struct miglimits *l, const char *source);

/* Running migrations from source. */
int miglimits_running_from(const struct miglimits *l, const char *source);

/* How many more migrations from source may start now: min(cluster room, node room), >= 0. */
int miglimits_room(const struct miglimits *l, const char *source);

#endif
