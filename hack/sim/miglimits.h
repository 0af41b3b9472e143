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
