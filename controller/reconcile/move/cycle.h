/* cycle: the decisions of one rebalancing cycle that surround the plan (plan.h). Pure:
 * plain structs in, decisions out; the edge (mover) gathers and acts.
 *
 *   - the gate: an eviction mode, resource or metrics state under which nothing is decided;
 *   - the sustain tracker: a node is a source only after its pressure stayed above
 *     evictAbovePercent for spec.pressure.sustain;
 *   - the settling rules: a node a move touched is not judged until the settle time
 *     (metrics.window plus two intervals, standing in for two scrape intervals) has passed
 *     since the move finished; a node a live migration runs from or to, whoever started it,
 *     neither; nor the nodes of our moves under way;
 *   - DryRun's overlay: the moves DryRun would have made, applied to the nodes' demand,
 *     pressure and requests as if made, so that it reports the sequence Automatic would make;
 *   - which destinations' pods are worth listing (the coolest first);
 *   - what a round of moves changes for the next round of planning;
 *   - which condition reason wins: the plan's, the moves made, refusals, moves in flight, the
 *     Migrate fallback; which reasons raise a RebalanceBlocked Event; and which decisions that
 *     moved nothing stand until the settle time. */
#ifndef PSI_RECONCILE_CYCLE_H
#define PSI_RECONCILE_CYCLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/psirebalance.h"
#include "reconcile/move/history.h"
#include "reconcile/move/moves.h"
#include "reconcile/move/plan.h"

/* The Rebalancing condition a cycle decides. */
struct cycle_verdict {
    enum api_condition_status status;
    const char *reason; /* static */
    char message[2048];
};

/* Set *v (message printf-formatted). */
void cycle_verdict_set(struct cycle_verdict *v, enum api_condition_status st, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Whether nothing is to be decided this cycle whatever the nodes show (eviction.mode
 * Disabled; no resource to balance (cycle_resources); pressure not readable): then *v says
 * why. */
bool cycle_gate(const struct api_spec *spec, bool metrics_ok, struct cycle_verdict *v);

/* The settle time: metrics.window plus two intervals. */
int64_t cycle_settle_ms(const struct api_spec *spec);

/* The planner's thresholds and limits as spec sets them; what the cluster says (moves in
 * flight, running migrations, KubeVirt's limits, history) and how VMs move are left for the
 * caller. */
struct rebalance_params cycle_params(const struct api_spec *spec);

/* The sustain tracker of one node: *above_since_ms (0: not above) follows pressure against
 * evict_above at now_ms. Returns whether it has been above for sustain_ms at least. */
bool cycle_sustain(int64_t *above_since_ms, double pressure, double evict_above, int64_t sustain_ms, int64_t now_ms);

/* What the settling rules look at. */
struct cycle_settle_facts {
    const struct moves_migration *migs; /* every migration in the cluster */
    size_t nmigs;
    const struct api_move *moves; /* our moves */
    size_t nmoves;
    int64_t now_ms, settle_ms;
};

/* Mark settling[i] for each of the n nodes named names[i] (settle_until_ms[i]: the history's
 * settle time of the node, 0 none) under the rules above. settling is not cleared first. */
void cycle_settling(const struct cycle_settle_facts *f, const char *const *names, const int64_t *settle_until_ms,
                    size_t n, bool *settling);

/* DryRun: apply the virtual moves to the nodes' demand and, by the predicted change of
 * pressure, to their pressure (a node no longer above evict_above is no longer sustained,
 * and dropped[i] is set: its sustain tracker starts anew). */
void cycle_overlay_load(const struct history_virtual *v, size_t nv, struct rebalance_node *nodes, size_t n,
                        double evict_above, bool *dropped);

/* DryRun: add the virtual moves' requests to their destinations (where requests are known). */
void cycle_overlay_requests(const struct history_virtual *v, size_t nv, struct rebalance_node *nodes, size_t n);

/* The nodes whose pods are worth listing for their requests, in order (nodes that may be
 * destinations, coolest first: lowest pressure, then most free CPU, never name order), into
 * order (n entries at most). Returns how many; 0 when no candidate may move at all (nothing to list for). */
size_t cycle_listing(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t n,
                     const struct rebalance_candidate *cands, size_t nc, size_t *order);

/* After a round of moves: append the moves made (those whose candidate their outcome did not
 * block) to made (n so far, cap at most) for the next round's rebalance_params.made, which
 * counts them against every limit. Returns the new count. */
size_t cycle_made(const struct rebalance_plan *plan, const struct rebalance_candidate *cands,
                  struct rebalance_move *made, size_t n, size_t cap);

/* What a move's prediction is checked against: once move m that was predicted has ended (a
 * live migration Succeeded, or an eviction) and settled (settle_ms since its end), its
 * observed pressures are the nodes' now (source_now; destination_now, of where it went).
 * Returns whether it was observed just now. */
bool cycle_observe(struct api_move *m, int64_t now_ms, int64_t settle_ms, double source_now, double destination_now);

/* The resources moves balance (REBALANCE_RES_*): eviction.resources, else pressure.resource
 * (cpu or memory); 0 with io alone (no per-workload io demand). */
unsigned cycle_resources(const struct api_spec *spec);

/* The pressure a node is judged on, by the planner and the tainter alike: the highest of the
 * resources balanced on (resources: cycle_resources, when eviction.resources is given), else
 * spec.pressure.resource's; NAN when none is known. pressure: API_RESOURCES readings. */
double cycle_judged_pressure(const struct api_spec *spec, unsigned resources, const double *pressure);

/* The verdict after the rounds: done moves made (made describes them), else the plan's
 * reason, else the evictions were refused. */
void cycle_outcome(struct cycle_verdict *v, bool dry, size_t done, const char *made, const struct rebalance_plan *plan);

/* The final word: with eviction.method Migrate falling back to eviction (fallback_why, NULL
 * otherwise) the message says so; in Automatic mode, running moves under way make the
 * condition True (MigrationsInFlight) whatever the cycle found. */
void cycle_finish(struct cycle_verdict *v, size_t running, bool automatic, const char *fallback_why);

/* Whether reason means moves are wanted but blocked (a RebalanceBlocked Warning Event). */
bool cycle_blocked(const char *reason);

/* Whether a decision that made no move, for the plan's reason, stands until the settle time has
 * passed (the cycles between keep it without looking again): the readings it was made on change
 * only as moves settle. Not for REBALANCE_LIMITED: with no move made this cycle, the limits it
 * can have reached are those on migrations in flight (maxInFlightMigrations, KubeVirt's parallel
 * limits; the per-cycle ones count this cycle's moves), which lift when a migration ends, and the
 * next cycle sees that at once. */
bool cycle_decision_stands(const char *reason);

#endif
