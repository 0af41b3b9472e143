/* taintfsm: the per-node taint state machine of one PsiRebalance, and the maxTaintedPercent
 * cap across its selected nodes. Pure: it takes what the controller remembers of each node,
 * this cycle's pressure samples and the time, and returns the new states and the taint writes
 * to make (taintpatch.h builds them). It never calls the API.
 *
 * States (enum api_node_state, as status.nodes[].state shows them) and transitions:
 *
 *   from       this cycle's sample   to         when
 *   Normal     above                 Pressured  at once
 *   Pressured  not above             Normal     at once (the level did not hold)
 *   Pressured  above                 Tainted    once now - since >= sustain, if the cap allows
 *   Tainted    below                 Cooling    at once
 *   Cooling    not below             Tainted    at once (the level did not hold)
 *   Cooling    below                 Normal     once now - since >= sustain
 *   anything else: no change. A transition sets since = now.
 *
 *   "above" = effective pressure  > taintAbovePercent   (strictly)
 *   "below" = effective pressure  < untaintBelowPercent (strictly)
 *   Between the two levels nothing changes: Normal stays Normal, Tainted stays Tainted; a
 *   Pressured node falls back to Normal and a Cooling node goes back to Tainted, since their
 *   level did not hold. Each state records `since`, when the node entered it; a transition
 *   that needs the sustain window fires at the first cycle where now - since >= sustain, and
 *   every sample in between was on the same side. So the taint is added only after the
 *   pressure stayed above the taint level for the whole window, and removed only after it
 *   stayed below the untaint level for the whole window: pressure oscillating between the
 *   two levels (or across one of them faster than sustain) never moves the taint.
 *   With sustain 0 a node may pass Normal -> Pressured -> Tainted in one cycle.
 *
 *   The taint is on in Tainted and Cooling, off in Normal and Pressured.
 *
 * Effective pressure: the sample of spec.pressure.resource, in percent. With
 * utilizationFloorPercent set, a sample counts only when the node's CPU utilisation is also
 * above the floor: at or below it the pressure counts as 0 (throttling, not contention), and
 * an unknown utilisation makes the reading unknown. NaN or infinite samples are unknown.
 *
 * Unknown (no usable sample this cycle): the node is reported Unknown and its taint is left
 * exactly as it is on the node (held, neither added nor removed). When readings return, the
 * node starts again from its taint: tainted -> Tainted, untainted -> Normal, with since = now,
 * so a gap in the readings restarts any sustain window (no transition counts time it did not
 * see). The same holds for a node seen for the first time (has_prev false, e.g. after an
 * operator restart without a record): its state is adopted from the taint on the node.
 *
 * Record and node disagree: the record (has_prev, a state other than Unknown) is what the
 * state machine decided, and the node is brought to it: a Tainted/Cooling node without the
 * taint gets it again (TAINTFSM_WHY_RESTORE), a Normal/Pressured node with our taint loses it
 * (TAINTFSM_WHY_RESTORE). Such a write happens when an earlier write failed, when the
 * controller's cache lagged, or when someone edited the taint by hand; the taint is ours, and
 * a user who wants it gone changes the PsiRebalance. A controller that restarts without its
 * record should pass has_prev = false (adopt), or rebuild the record from status.nodes.
 *
 * The cap: at most taintfsm_cap(N, maxTaintedPercent) of the N selected nodes carry the
 * taint at once, counting every node that holds it (Unknown ones included):
 *   cap = floor(N * maxTaintedPercent / 100), and never more than N - 1.
 * So a cluster never has every selected node tainted: one node gets cap 0 (never tainted),
 * two or three nodes at 50% get cap 1; 0% turns tainting off.
 * Who gets the taint when more nodes want it than the cap allows:
 *   1. Incumbents keep it: nodes tainted (Tainted/Cooling, and Unknown nodes holding it).
 *      If they alone exceed the cap (the cap shrank: nodes left, or the spec changed), the
 *      coolest lose it first (Cooling before Tainted, lowest pressure first), Unknown ones last.
 *   2. Free places go to the newcomers (Pressured nodes whose sustain has passed), hottest
 *      first (ties: by name).
 *   3. A newcomer still without a place takes the place of the coolest incumbent with a known
 *      reading when it is hotter by at least swap_margin percentage points (default: the width
 *      of the hysteresis band, taintAbove - untaintBelow, at least 1). The margin keeps two
 *      nodes of about the same pressure from trading the taint every cycle; a Cooling
 *      incumbent (below untaint) always gives way, as any newcomer is above taint.
 *   A node denied the taint stays Pressured with its since unchanged, so it is tainted as soon
 *   as a place frees up. A node that loses its place (TAINTFSM_WHY_CAP) becomes Pressured
 *   (since now) when above the taint level, else Normal: the cap, not pressure, removed it,
 *   and such removals are the only ones that do not wait for a sustain window.
 *
 * Selector: a node that left the selector is passed with selected = false; if it carries our
 * taint, the taint is removed (TAINTFSM_WHY_UNSELECTED) and the node has no state any more.
 * Two PsiRebalances selecting one node: the caller passes only the nodes this one owns.
 */
#ifndef PSI_RECONCILE_TAINTFSM_H
#define PSI_RECONCILE_TAINTFSM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/psirebalance.h"
#include "api/status.h"

/* The thresholds of spec.pressure, in the units the state machine works in. */
struct taintfsm_params {
    double taint_above;          /* percent */
    double untaint_below;        /* percent, < taint_above */
    int64_t sustain_ms;          /* >= 0 */
    int64_t max_tainted_percent; /* 0..99 (100 is treated as 99 would: the N - 1 bound holds) */
    double utilization_floor;    /* percent; <= 0: no gate */
    double swap_margin;          /* percentage points a newcomer must beat an incumbent by */
};

/* One node as the controller sees it this cycle. Strings are borrowed. */
struct taintfsm_input {
    const char *name;
    bool selected;             /* matches spec.nodeSelector (and is owned by this PsiRebalance) */
    bool has_prev;             /* a record from the last cycle follows */
    enum api_node_state state; /* the record: state after the last cycle */
    int64_t since_ms;          /* the record: when the node entered state (ms, same clock as now) */
    bool tainted;              /* our taint (owned by this PsiRebalance) is on the node now */
    int64_t tainted_since_ms;  /* the record: when our taint was put on it (0: unknown) */
    double pressure;           /* this cycle's sample of the resource, percent; NAN: none
                                  (from a psi_sample: value.known ? value.percent : NAN) */
    double utilization;        /* CPU utilisation percent; NAN: not measured */
};

/* Why a taint write is made (for Events and logs). */
enum taintfsm_why {
    TAINTFSM_WHY_PRESSURE,   /* add: above the taint level for sustain */
    TAINTFSM_WHY_COOLED,     /* remove: below the untaint level for sustain */
    TAINTFSM_WHY_CAP,        /* remove: the cap gave the place to a hotter node, or shrank */
    TAINTFSM_WHY_UNSELECTED, /* remove: the node left the selector */
    TAINTFSM_WHY_RESTORE,    /* add or remove: the node disagreed with the record */
};

enum taintfsm_op { TAINTFSM_ADD, TAINTFSM_REMOVE };

struct taintfsm_action {
    const char *node; /* borrowed from the input */
    size_t input;     /* index of the node in the input */
    enum taintfsm_op op;
    enum taintfsm_why why;
};

/* The new record of one selected node. */
struct taintfsm_node {
    const char *name;          /* borrowed from the input */
    enum api_node_state state; /* Unknown when there was no usable sample */
    int64_t since_ms;
    bool tainted; /* the taint is on once the actions are applied */
    /* When the taint was put on, while it stays on (0 when it is off): kept through Tainted ->
     * Cooling -> Tainted and through readings missing (Unknown, the taint held), so that
     * "tainted for an hour" means one taint held an hour; a node carrying the taint without a
     * time of it (adopted after a restart) gets now. */
    int64_t tainted_since_ms;
    double pressure; /* the effective pressure used; NAN when Unknown */
    size_t input;    /* index of the node in the input */
};

/* Release with taintfsm_result_free. */
struct taintfsm_result {
    struct taintfsm_node *nodes; /* one per selected input node, in input order */
    size_t nnodes;
    struct taintfsm_action *actions; /* removals first, then additions */
    size_t nactions;
    size_t cap;       /* the cap for this cycle */
    size_t tainted;   /* selected nodes with the taint after the actions */
    size_t pressured; /* selected nodes whose effective pressure is above the taint level */
};

/* Fill *p from spec.pressure (swap_margin: the band width, at least 1 point). */
void taintfsm_params_from_spec(const struct api_spec *spec, struct taintfsm_params *p);

/* The effective pressure of a sample (pressure, CPU utilisation; NAN: none), the one the
 * hysteresis works on and the rebalancer judges sources by: NAN when unusable, 0 at or
 * below the utilisation floor (see above). */
double taintfsm_effective_pressure(const struct taintfsm_params *p, double pressure, double utilization);

/* The number of the n selected nodes that may carry the taint at once (see above). */
size_t taintfsm_cap(size_t n, int64_t max_tainted_percent);

/* One cycle over in[0..n) at now_ms (the clock of every since_ms: Unix milliseconds when the
 * record is kept in status.nodes); fills *out (zeroed or freed before). Returns 0, or -1 on
 * no memory (*out is then empty). */
int taintfsm_step(const struct taintfsm_params *p, const struct taintfsm_input *in, size_t n, int64_t now_ms,
                  struct taintfsm_result *out);

/* Release what r owns and zero it. */
void taintfsm_result_free(struct taintfsm_result *r);

/* "add" or "remove". */
const char *taintfsm_op_name(enum taintfsm_op op);

/* A CamelCase word for why ("Pressure", "Cooled", "Cap", "Unselected", "Restore"), usable as an Event reason. */
const char *taintfsm_why_name(enum taintfsm_why why);

#endif
