/* placement: whether a pressured node can be brought below taintAbovePercent by any set of
 * moves at all, and when it cannot, the capacity it lacks ("worker-3 needs about 9 more CPUs
 * free on some node"). Pure: the plan's inputs in (plan.h), a verdict per source out. The edge
 * (mover.c) asks it when a plan made no move for want of a destination or of an improving move
 * (REBALANCE_NO_DESTINATION, REBALANCE_NO_IMPROVEMENT); when every source is unplaceable, the
 * Rebalancing condition says NoPlacement.
 *
 * The answer is a certificate under the planner's own model (docs/architecture.md,
 * "Rebalancing: the model"), of a relaxation of it, so that "unplaceable" is never said of a
 * node some set of the planner's moves could relieve:
 *   - the source's prediction is its reading moved along its curve with its own calibrated
 *     scale (as the planner's), and it must fall below taintAbovePercent on every resource
 *     balanced on: `need` cores (bytes) must leave it, at least;
 *   - a destination is a node rebalance_destination_check accepts that is no source; it may be
 *     filled up to the load where it would itself predict taintAbovePercent (its calibrated
 *     scale, else REBALANCE_SAFETY), its `room`, on every resource balanced on;
 *   - a candidate may move when it is not blocked and its demand is known on every resource
 *     balanced on; it fits a destination alone when rebalance_fits accepts it there (requests,
 *     selectors, taints) and its demand is below the destination's room;
 *   - the convergence margin, history (oscillation), the per-cycle limits and the other
 *     sources' moves are left out: each only forbids moves, so leaving them out only makes a
 *     placement easier to find.
 * Necessary conditions for a placement, each checked per resource balanced on (CPU, and memory
 * where params.resources includes it):
 *   1. the candidates that may move sum to `need` at least (PLACEMENT_TOO_LITTLE: moving all
 *      of them would not do);
 *   2. the candidates that fit alone in some destination sum to `need` at least
 *      (PLACEMENT_ON_SOME_NODE: what lacks is the least extra room on one destination, or one
 *      free node, that would let enough of the others go);
 *   3. over the destinations, the least of each one's room and the sum of the candidates that
 *      fit it alone sums to `need` at least (PLACEMENT_ACROSS_NODES: what lacks is the
 *      difference).
 * Each is a sum bound, so the answer errs only one way: a node judged placeable may still have
 * no placement (the unit test measures how often, against a brute force on small clusters).
 *
 * Nothing is certified (PLACEMENT_UNKNOWN) where what is known may change the answer without
 * the cluster changing: the source's demand or capacity unknown; a candidate on it that may
 * move but has no CPU demand reading; another selected node that is no destination only for a
 * passing reason (held by maintenance, settling after a move, its pressure, usage, memory or
 * requests not read); or a reading its load does not explain (no amount leaving brings it
 * below the level: the lacking capacity cannot be told). A node tainted, cordoned or at or
 * above untaintBelowPercent is no destination, as the planner has it. */
#ifndef PSI_RECONCILE_MOVE_PLACEMENT_H
#define PSI_RECONCILE_MOVE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "reconcile/move/plan.h"

/* What a source's verdict says. */
enum placement_kind {
    PLACEMENT_UNKNOWN = 0,  /* a placement may exist, or it cannot be told */
    PLACEMENT_TOO_LITTLE,   /* moving every candidate that may move would not do */
    PLACEMENT_ON_SOME_NODE, /* the candidates that would have to move fit no destination alone */
    PLACEMENT_ACROSS_NODES, /* the destinations' room, all told, is short */
};

/* One source's verdict. */
struct placement_verdict {
    enum placement_kind kind;
    enum rebalance_resource resource; /* the resource judged short (kind not PLACEMENT_UNKNOWN) */
    double need;                      /* cores (bytes) that must leave the source, at least */
    double movable;                   /* what the candidates that may move sum to */
    double lacking;                   /* cores (bytes): the capacity it lacks, as the kind says */
};

/* Whether a verdict certifies that no set of moves brings its source below taintAbovePercent. */
static inline bool placement_unplaceable(const struct placement_verdict *v)
{
    return v->kind != PLACEMENT_UNKNOWN;
}

/* What placement judges: the plan's inputs (plan.h's rebalance_plan), borrowed. */
struct placement_cluster {
    const struct rebalance_params *p;
    const struct rebalance_node *nodes;
    size_t nn;
    const struct rebalance_candidate *cands; /* every candidate, each on its node */
    size_t nc;
};

/* Judge each of the nsrc nodes sources[k] (indexes into the nodes) into out[k], under the
 * model above (a candidate on a node of no source plays no part but its cap on its node's
 * demand, as in the planner). Returns 0, or -1 on no memory (out untouched). */
int placement_judge(const struct placement_cluster *c, const size_t *sources, size_t nsrc,
                    struct placement_verdict *out);

/* What a certified verdict of node `name` says, without readings (stable while the situation
 * is), into buf: "worker-3 needs about 9 more CPUs free on some node", "... free across the
 * nodes that could take its workloads", or, when moving all would not do, "worker-3 cannot get
 * below it by moving what may move: about 9 CPUs must leave, what may move wants 4.0"; the figures rounded up
 * (memory in GiB). */
void placement_describe(const struct placement_verdict *v, const char *name, char *buf, size_t len);

/* The NoPlacement message for the n sources names[k], verdicts v[k] (all certified): the first
 * PLACEMENT_SHOWN described, then "and N more", and the level (taint_above, percent). */
void placement_message(const struct placement_verdict *v, const char *const *names, size_t n, double taint_above,
                       char *buf, size_t len);

/* Sources described by name in the NoPlacement message; the others are counted. */
#define PLACEMENT_SHOWN 3

#endif
