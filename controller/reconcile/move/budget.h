/* budget: the rules that bound how often workloads move, read from what status.moveHistory
 * remembers (api/movehistory.h). Pure: the time is the caller's.
 *
 *   - per workload: at most spec.eviction.maxMovesPerWorkload moves within cooldown.history;
 *     a workload that used them is not moved (BUDGET_WORKLOAD_USED);
 *   - per hour: at most spec.eviction.maxMovesPerHour moves in the last hour, over all the
 *     PsiRebalance's nodes; budget_hour_room says how many are left, and none left means no
 *     move;
 *   - moves that did not help: a move is judged once it settled (cycle_observe), on the judged
 *     pressure of its source: before the move (prediction.sourceBefore), predicted after it
 *     and observed. It did not help when the relief observed (before - observed) is less than
 *     BUDGET_RELIEF_SHARE of the relief predicted (before - predicted) and short of it by at
 *     least BUDGET_RELIEF_SHORTFALL points (so that noise on a small prediction does not
 *     count). Such a workload is not moved within cooldown.history of that judgement
 *     (BUDGET_UNHELPFUL): its moves do not do what the model says, as when the scheduler sends
 *     an evicted VM straight back, or its load follows it.
 * A move counts whatever became of it (a failed live migration too): it was asked for.
 * "Within the window" is at or after now - window, the same as the oscillation hold's. */
#ifndef PSI_RECONCILE_MOVE_BUDGET_H
#define PSI_RECONCILE_MOVE_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "api/movehistory.h"

#define BUDGET_HOUR_S 3600
/* A move helped when it brought at least this share of the relief predicted ... */
#define BUDGET_RELIEF_SHARE 0.5
/* ... or fell short of it by less than this many percentage points. */
#define BUDGET_RELIEF_SHORTFALL 2.0

/* Why a workload may not move (stable strings: the Rebalancing message counts candidates by them). */
#define BUDGET_WORKLOAD_USED "move budget used (maxMovesPerWorkload within cooldown.history)"
#define BUDGET_UNHELPFUL "its last move did not relieve its source as predicted"

struct budget_params {
    int64_t per_workload; /* spec.eviction.maxMovesPerWorkload */
    int64_t per_hour;     /* spec.eviction.maxMovesPerHour */
    int64_t history_s;    /* spec.eviction.cooldown.history, seconds */
};

/* Why workload key may not move at now_s (BUDGET_WORKLOAD_USED, BUDGET_UNHELPFUL), or NULL
 * when the budget lets it. */
const char *budget_workload(const struct api_move_history *mh, const char *key, const struct budget_params *p,
                            int64_t now_s);

/* Moves left in the hour ending at now_s: per_hour minus the moves of the last hour, at least 0. */
int64_t budget_hour_room(const struct api_move_history *mh, const struct budget_params *p, int64_t now_s);

/* When the hour's budget has room again: an hour after the move that fills it, or 0 when it has room now. */
int64_t budget_hour_until(const struct api_move_history *mh, const struct budget_params *p, int64_t now_s);

/* Whether a move whose source was at before percent, predicted after it at predicted and
 * observed at observed did not help (the rule above). False when any is not a number. */
bool budget_move_unhelpful(double before, double predicted, double observed);

#endif
