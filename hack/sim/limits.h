/* limits: KubeVirt's parallel live-migration limits (parallelMigrationsPerCluster,
 * default 5; parallelOutboundMigrationsPerNode, default 2), counted as KubeVirt counts
 * them: a migration is running from the moment its target pod is created (phase
 * Scheduling) until it ends; Pending migrations wait and do not count. Pure. */
#ifndef PSI_SIM_LIMITS_H
#define PSI_SIM_LIMITS_H

#include <stdbool.h>
#include <stddef.h>

/* Migration phases, as KubeVirt spells them. */
#define LIMITS_PENDING "Pending"
#define LIMITS_SCHEDULING "Scheduling"
#define LIMITS_SCHEDULED "Scheduled"
#define LIMITS_PREPARING "PreparingTarget"
#define LIMITS_TARGET_READY "TargetReady"
#define LIMITS_RUNNING "Running"
#define LIMITS_SUCCEEDED "Succeeded"
#define LIMITS_FAILED "Failed"

/* Whether a migration in phase counts against the limits (not unset, Pending or final). */
bool limits_phase_running(const char *phase);

/* Whether phase is final (Succeeded or Failed). */
bool limits_phase_final(const char *phase);

struct limits_node {
    char *node;
    int running;
};

/* Running migrations, in total and per source node. */
struct limits {
    int per_cluster, per_node;
    int total;
    struct limits_node *nodes;
    size_t n_nodes;
};

/* Start counting with the given limits. */
void limits_init(struct limits *l, int per_cluster, int per_node);

/* Free what counting allocated. */
void limits_clear(struct limits *l);

/* Count one running migration from source (NULL or "": counts in the total only). Returns 0,
 * -1 when out of memory. */
int limits_add(struct limits *l, const char *source);

/* Running migrations from source. */
int limits_running_from(const struct limits *l, const char *source);

/* How many more migrations from source may start now: min(cluster room, node room), >= 0. */
int limits_room(const struct limits *l, const char *source);

#endif
