/* plan: which workloads to move off which pressured nodes, and which cooler nodes take
 * them. Pure: plain structs (and the pods' and nodes' JSON as the informers keep it) in, a
 * plan out; the edge (mover.h) gathers the inputs, keeps the history and makes the moves.
 * Prediction is predict.h's, the fit of one workload on one node fit.h's.
 *
 * The rules (sources and the target, destinations, convergence and oscillation, the limits
 * per cycle) and the model behind them: docs/architecture.md, "Rebalancing: the model". */
#ifndef PSI_RECONCILE_MOVE_PLAN_H
#define PSI_RECONCILE_MOVE_PLAN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/reasons.h"
#include "api/selector.h"
#include "reconcile/move/fit.h"
#include "reconcile/move/predict.h"

/* KubeVirt's default parallel limits (parallelMigrationsPerCluster, ...PerNode). */
#define REBALANCE_KUBEVIRT_PER_CLUSTER 5
#define REBALANCE_KUBEVIRT_PER_NODE 2
/* Default margin: a move must lower the pair's maximum load by 1 % of a node's capacity (or
 * its maximum predicted pressure by REBALANCE_MIN_RELIEF: docs/architecture.md, Convergence). */
#define REBALANCE_MARGIN 0.01
/* The least relief (percentage points) a source's set of moves must bring to be made, and a
 * move judged on predicted pressure must bring the pair. */
#define REBALANCE_MIN_RELIEF 5.0
/* How many sources left with no move, or with moves that stop short of the target, a cycle plans
 * again first, at most (plan.c, promote_left_sources): a cycle costs at most one plan more than
 * this. */
#define REBALANCE_PROMOTIONS 2
/* Percentage points within which two predictions count as equal. */
#define REBALANCE_NOISE 1.0

/* Reasons of a plan, fit for the Rebalancing condition (api/reasons.h). */
#define REBALANCE_MOVING API_REASON_MOVING                    /* moves planned */
#define REBALANCE_NO_PRESSURE API_REASON_NO_PRESSURED_NODE    /* no source: nothing to do */
#define REBALANCE_SETTLING API_REASON_SETTLING                /* sources wait for the signal to settle */
#define REBALANCE_USAGE_UNKNOWN API_REASON_USAGE_UNAVAILABLE  /* no usage reading for the sources */
#define REBALANCE_NO_CANDIDATE API_REASON_NO_CANDIDATE        /* nothing on the sources may move */
#define REBALANCE_NO_DESTINATION API_REASON_NO_DESTINATION    /* no node could take anything */
#define REBALANCE_NO_IMPROVEMENT API_REASON_NO_IMPROVING_MOVE /* nodes could, but no set of moves relieves a source */
#define REBALANCE_LIMITED API_REASON_LIMIT_REACHED            /* the limits left no room */
#define REBALANCE_OSCILLATION API_REASON_OSCILLATION_HELD     /* the only moves left would undo recent ones */

/* ---- plan ---- */

/* One move within the history window, most recent last (what oscillation is judged on). */
struct rebalance_recent {
    const char *workload;             /* rebalance_candidate.workload */
    const char *source, *destination; /* node names */
};

struct rebalance_move;

struct rebalance_params {
    double evict_above, taint_above, untaint_below; /* percent */
    double target;                                  /* percent: relieve a source below this; <= 0 takes untaint_below */
    double margin;                                  /* load; 0 takes REBALANCE_MARGIN */
    unsigned resources; /* REBALANCE_RES_* balanced on; 0: CPU alone, read from `pressure` */
    int max_per_node, max_per_namespace, max_total; /* per cycle */
    int max_in_flight;                              /* spec.eviction.maxInFlightMigrations */
    int in_flight;            /* migrations not finished in the cluster, any origin, before this cycle */
    int kubevirt_per_cluster; /* 0 takes REBALANCE_KUBEVIRT_PER_CLUSTER */
    int kubevirt_per_node;    /* 0 takes REBALANCE_KUBEVIRT_PER_NODE */
    int running;              /* migrations running in the cluster (KubeVirt's count) before this cycle */
    bool targeted;            /* VM moves are targeted live migrations (the VM goes where it is sent) */
    /* moves made in earlier planning rounds of this cycle (borrowed; their candidates index the
     * same candidates). The nodes are as measured: the planner applies these first, and they
     * count against every limit. */
    const struct rebalance_move *made;
    size_t nmade;
    const struct rebalance_recent *recent; /* moves within the history window (borrowed) */
    size_t nrecent;
};

/* One planned move. */
struct rebalance_move {
    size_t candidate;           /* index into the candidates */
    size_t source, destination; /* node indexes: the coolest destination (a prediction with
                                 * eviction, the target of a targeted live migration) */
    double demand;              /* cores, estimated */
    double mem;                 /* bytes in use, estimated */
    double relief;              /* percentage points the source is predicted to lose */
    double src_load, src_load_after, dst_load, dst_load_after; /* on the resource driving it */
    double src_pressure_after;                                 /* predicted, percent (the highest of the resources) */
    double dst_pressure_after;                                 /* predicted, percent (the highest of the resources) */
    enum rebalance_resource resource;                          /* the resource the source was relieved on */
};

struct rebalance_plan {
    struct rebalance_move *moves;
    size_t nmoves, moves_cap; /* moves_cap: allocated (base/grow) */
    const char *reason;       /* one of REBALANCE_* */
    char message[2048];       /* what a person should know, without times (stable) */
    size_t held;              /* moves history held (oscillation) */
    char held_message[512];   /* the first ones: which workload, which nodes, why */
    char blocked[512];        /* NoCandidate, NoImprovingMove: why the sources' pods did not move,
                               * counted ("of 5 pods there: 1 prefer-no-eviction, ...") */
};

/* The target of p: target, or untaint_below when it is unset. */
double rebalance_target(const struct rebalance_params *p);

/* Whether a predicted drop of a source from hot_now to hot_end (percent) is one to act on:
 * REBALANCE_MIN_RELIEF points at least, and, off a source read on the curve's flat part
 * (REBALANCE_FLAT and more, where a reading bounds the node's scale only from below), still
 * that much with the end predicted REBALANCE_SAFETY times higher: a set that leaves a VM too
 * big to go, or a scale read too low, keeps such a source saturated. */
bool rebalance_trusted_drop(double hot_now, double hot_end);

/* Whether node n is a source now: selected, not held (rollout.h), known pressure, and either above evict_above and
 * sustained, or tainted and above taint_above, or relieving and not below the target. The edge
 * keeps `relieving` for the next cycle with this very answer. */
bool rebalance_is_source(const struct rebalance_params *p, const struct rebalance_node *n);

/* Why node n may not be a destination before any workload is looked at (written to why and
 * returned), or NULL when it may be one. */
const char *rebalance_destination_check(const struct rebalance_params *p, const struct rebalance_node *n, char *why,
                                        size_t len);

/* Plan this cycle's moves (rules above) into *out (free with rebalance_plan_free). Returns 0,
 * or -1 on no memory. */
int rebalance_plan(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nnodes,
                   const struct rebalance_candidate *cands, size_t ncands, struct rebalance_plan *out);

/* Release what a plan owns. */
void rebalance_plan_free(struct rebalance_plan *plan);

#endif
