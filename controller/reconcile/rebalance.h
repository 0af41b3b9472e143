/* rebalance: which workload to move off which pressured node, and whether a cooler node can
 * take it. Pure: plain structs (and the pods' and nodes' JSON as the informers keep it) in, a
 * plan out; the edge (rebalancer) gathers the inputs and makes the evictions.
 *
 * Trigger on pressure, predict with usage. A node is a source when it is selected and its
 * pressure (spec.pressure.resource) stayed above evictAbovePercent for the sustain window.
 * PSI says *that* it suffers; CPU usage says how much each workload contributes. Usage
 * understates what a workload wants on a saturated node (it gets only what is not stalled),
 * so the caller turns both into demand with the stall share the node's CPU PSI reports
 * (rebalance_demand):
 *     demand = usage / (1 - cpu_some)          (cpu_some capped at REBALANCE_MAX_STALL)
 * and a node's load is L = D / C (demand over its CPUs). A move of a workload of demand d
 * from s to t is judged on the loads after it, as DESIGN.md says,
 *     L_s' = (D_s - d) / C_s,   L_t' = (D_t + d) / C_t,
 * and on the pressure predicted from a load: the share of demand that cannot be served,
 *     P(L) = 100 * max(0, 1 - 1/L)   (percent; a lower bound of what PSI will show).
 *
 * A move is made only when a destination exists: a selected, schedulable node without our
 * taint, whose pressure is known and below untaintBelowPercent, that is no source, is not
 * settling, has known usage and known requests, where the workload fits (requests against
 * allocatable minus what is placed, node selector, required node affinity, NoSchedule and
 * NoExecute taints it does not tolerate) and where P(L_t') stays below taintAbovePercent.
 * The scheduler still picks the node (the taints on hot nodes steer it); this makes sure it
 * has somewhere good to go. Each destination takes at most one move per cycle, because
 * evicted workloads all land on the emptiest node (seed 003). With targeted live migration
 * (params.targeted, eviction.method Migrate) a VM goes to the very destination chosen, so a
 * destination may take several VM moves in a cycle, each predicted on top of the ones before;
 * other pods are still evicted, and an evicted pod never goes to a destination already used.
 *
 * Convergence. Every move must lower the predicted maximum load of the two nodes involved by
 * at least the margin:
 *     max(L_s', L_t') <= max(L_s, L_t) - margin.
 * Both new loads are then below the old maximum of the pair, so the vector of node loads
 * sorted in decreasing order strictly decreases (lexicographically) with every move. Under a
 * static load there are finitely many placements of the workloads, and a strictly decreasing
 * sequence over a finite set ends: rebalancing converges in a finite number of moves and can
 * never ping-pong a workload between two nodes (moving it back would have to raise the
 * vector). The margin keeps moves of negligible gain (and prediction noise) out.
 *
 * Choice: sources hottest first; on a source, candidates by expected relief, the part of
 * their demand that relieves the node's excess (demand beyond its CPUs):
 *     relief = min(d, D_s - C_s)   (just d when the node is not over its CPUs: bursts)
 * ties broken by how close d is to the excess, then by smaller memory request (a cheaper
 * migration), then by name; for each the destination that gives the lowest maximum of the
 * pair, then the lowest destination load, then by name. Limits per cycle: maxPerNode moves
 * off a node, maxPerNamespace per namespace, maxTotal in all; a VM move (a live migration)
 * also needs room under maxInFlightMigrations and KubeVirt's parallel limits (5 per cluster,
 * 2 outbound per node), counting every migration in flight, whoever started it. After a
 * move the source's pressure is predicted anew (reduced by P(L_s) - P(L_s')) and it stays a
 * source only while that is above evictAbovePercent. */
#ifndef PSI_RECONCILE_REBALANCE_H
#define PSI_RECONCILE_REBALANCE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "selector.h"

/* KubeVirt's default parallel limits (parallelMigrationsPerCluster, ...PerNode). */
#define REBALANCE_KUBEVIRT_PER_CLUSTER 5
#define REBALANCE_KUBEVIRT_PER_NODE 2
/* Default margin: a move must lower the pair's maximum load by 5 % of a node's CPUs. */
#define REBALANCE_MARGIN 0.05
/* The largest stall share used to turn usage into demand (a factor of 10 at most). */
#define REBALANCE_MAX_STALL 0.9
/* A node using this share of its CPUs or more is saturated (rebalance_node_demand). */
#define REBALANCE_SATURATED 0.9

/* Reasons of a plan, fit for the Rebalancing condition. */
#define REBALANCE_MOVING "Moving"                 /* moves planned */
#define REBALANCE_NO_PRESSURE "NoPressuredNode"   /* no source: nothing to do */
#define REBALANCE_SETTLING "Settling"             /* sources wait for the signal to settle */
#define REBALANCE_USAGE_UNKNOWN "UsageUnknown"    /* no usage reading for the sources */
#define REBALANCE_NO_CANDIDATE "NoCandidate"      /* nothing on the sources may move */
#define REBALANCE_NO_DESTINATION "NoDestination"  /* no node could take anything */
#define REBALANCE_NO_IMPROVEMENT "NoImprovingMove" /* nodes could, but no move lowers the maximum */
#define REBALANCE_LIMITED "LimitReached"          /* the limits left no room */

/* ---- prediction ---- */

/* Demand (cores) from usage (cores) and the CPU "some" pressure (percent; NAN as 0) of the
 * node it runs on: usage / (1 - min(pressure/100, REBALANCE_MAX_STALL)). */
double rebalance_demand(double usage, double cpu_pressure);

/* Demand (cores) of a node from its usage, CPUs and CPU "some" pressure: rebalance_demand,
 * except that a node using at least REBALANCE_SATURATED of its CPUs counts as using all of
 * them (it is saturated; what usage misses there, such as system load outside the measured
 * workloads, waits too). NAN when usage or cpus is unknown. */
double rebalance_node_demand(double usage, double cpus, double cpu_pressure);

/* Predicted pressure (percent) of a node at load L: 100 * max(0, 1 - 1/L). */
double rebalance_predicted_pressure(double load);

/* ---- plan ---- */

/* A node, as the plan sees it. */
struct rebalance_node {
    const char *name;
    bool selected;        /* owned by this PsiRebalance */
    bool tainted;         /* carries our pressure taint */
    bool unschedulable;   /* spec.unschedulable (cordoned) */
    const cJSON *labels;  /* metadata.labels (may be NULL) */
    const cJSON *taints;  /* spec.taints (may be NULL) */
    double pressure;      /* percent of spec.pressure.resource, NAN when unknown */
    bool sustained;       /* above evictAbovePercent for the whole sustain window */
    bool settling;        /* a move touched it less than the settle time ago, or one runs */
    double cpus;          /* CPU capacity (cores) the load is relative to; <= 0 or NAN: unknown */
    double demand;        /* cores wanted (rebalance_demand of its usage); NAN: unknown */
    double alloc_cpu, alloc_memory, alloc_pods; /* allocatable; NAN: not checked */
    double req_cpu, req_memory, req_pods;       /* requested by the pods placed there; NAN: unknown */
    int outbound;         /* live migrations running from it (any origin) */
};

/* A workload that might move: one pod on a node. */
struct rebalance_candidate {
    const char *ns, *name;   /* the pod */
    const char *workload;    /* cooldown and report key, e.g. "VirtualMachineInstance ns/vm" */
    size_t node;             /* index of the node it runs on */
    double req_cpu, req_memory;
    double demand;           /* cores wanted (rebalance_demand of its usage); NAN: unknown */
    bool vm;                 /* a KubeVirt VM: the eviction becomes a live migration */
    const cJSON *node_selector; /* spec.nodeSelector (may be NULL) */
    const cJSON *affinity;      /* spec.affinity (may be NULL) */
    const cJSON *tolerations;   /* spec.tolerations (may be NULL) */
    const char *blocked;     /* NULL: it may move; else why not (evictor.h) */
};

struct rebalance_params {
    double evict_above, taint_above, untaint_below; /* percent */
    double margin;                                  /* load; 0 takes REBALANCE_MARGIN */
    int max_per_node, max_per_namespace, max_total; /* per cycle */
    int max_in_flight;        /* spec.eviction.maxInFlightMigrations */
    int in_flight;            /* migrations not finished in the cluster, any origin */
    int kubevirt_per_cluster; /* 0 takes REBALANCE_KUBEVIRT_PER_CLUSTER */
    int kubevirt_per_node;    /* 0 takes REBALANCE_KUBEVIRT_PER_NODE */
    int running;              /* migrations running in the cluster (KubeVirt's count) */
    bool targeted;            /* VM moves are targeted live migrations (eviction.method Migrate) */
};

/* One planned move. */
struct rebalance_move {
    size_t candidate;        /* index into the candidates */
    size_t source, destination; /* node indexes: the best destination by predicted load after
                                 * the move (a prediction with Evict, the target with Migrate) */
    double demand;           /* cores, estimated */
    double relief;
    double src_load, src_load_after, dst_load, dst_load_after;
    double src_pressure_after; /* predicted */
};

struct rebalance_plan {
    struct rebalance_move *moves;
    size_t nmoves;
    const char *reason;     /* one of REBALANCE_* */
    char message[2048];     /* what a person should know, without times (stable) */
};

/* Why c cannot run on node n (written to why, and returned), or NULL when it fits:
 * requests against allocatable minus requested, spec.unschedulable, node selector, required
 * node affinity, NoSchedule/NoExecute taints it does not tolerate. */
const char *rebalance_fit(const struct rebalance_candidate *c, const struct rebalance_node *n, char *why,
                          size_t len);

/* Whether tolerations (a JSON array, may be NULL) tolerate taint (a JSON object). */
bool rebalance_tolerates(const cJSON *tolerations, const cJSON *taint);

/* Whether a required node affinity (spec.affinity, may be NULL) lets the pod on a node with
 * these labels and name. */
bool rebalance_affinity_matches(const cJSON *affinity, const cJSON *labels, const char *node_name);

/* Whether node n may be a source now (selected, known pressure above evict_above, sustained). */
bool rebalance_is_source(const struct rebalance_params *p, const struct rebalance_node *n);

/* Why node n may not be a destination before any workload is looked at (written to why and
 * returned), or NULL when it may be one. */
const char *rebalance_destination_check(const struct rebalance_params *p, const struct rebalance_node *n, char *why,
                                        size_t len);

/* Whether moving demand d from s to t passes the convergence rule and keeps t below the
 * taint level (their demands as s->demand and t->demand); the loads after go to *s_after and
 * *t_after (may be NULL). */
bool rebalance_move_ok(const struct rebalance_params *p, const struct rebalance_node *s,
                       const struct rebalance_node *t, double d, double *s_after, double *t_after);

/* Plan this cycle's moves (rules above) into *out (free with rebalance_plan_free). Returns 0,
 * or -1 on no memory. */
int rebalance_plan(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nnodes,
                   const struct rebalance_candidate *cands, size_t ncands, struct rebalance_plan *out);

/* Release what a plan owns. */
void rebalance_plan_free(struct rebalance_plan *plan);

/* ---- the Eviction API's answer ---- */

enum rebalance_evict_outcome {
    REBALANCE_EVICTED,     /* 200/201: the pod goes (it restarts elsewhere) */
    REBALANCE_MIGRATING,   /* 429 "Eviction triggered evacuation" / "Evacuation in progress":
                            * KubeVirt accepted it as a live migration */
    REBALANCE_REFUSED,     /* another 429 (a PodDisruptionBudget, a VM that cannot migrate): skip */
    REBALANCE_GONE,        /* 404: the pod is gone already */
    REBALANCE_ERROR,       /* anything else: a failure */
};

/* Classify an eviction's answer: http status (0 for success) and the server's message. */
enum rebalance_evict_outcome rebalance_evict_outcome(long http_status, const char *message);

#endif
