/* act: the writes of rebalancing, and the Events and counters that go with them. Evictions
 * (kube_rest_evict) and targeted live migrations (migrate.h) as the plan says, following our
 * moves through the migrations (moves.h) and deleting our targeted migrations that failed or
 * got stuck. What each answer means is decided by evictor_outcome and
 * migrate_create_outcome; what is remembered goes to the history (history.h).
 * Not thread-safe: run it from the event loop's thread. */
#ifndef PSI_RECONCILE_ACT_H
#define PSI_RECONCILE_ACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcile/gather.h"
#include "reconcile/move/history.h"
#include "reconcile/mover.h"
#include "reconcile/move/plan.h"

/* What acting works with for one reconcile; all borrowed. */
struct act {
    const struct mover_deps *d;
    const struct mover_input *in;
    struct history *h;
    struct mover_stats *stats;
};

/* Record an Event about the PsiRebalance (logged when it cannot be recorded). */
void act_event(const struct act *a, const char *type, const char *reason, const char *action, const char *note);

/* Follow the moves through the migrations: phases, counters, Events, cooldown on failures.
 * Returns 0, or -1 on no memory. */
int act_follow(const struct act *a, const struct gather_migrations *migs);

/* Our targeted migrations: delete the failed ones (counted by act_follow) and the ones stuck
 * before their target runs (counted here); count the moves whose migration is gone. */
void act_cleanup(const struct act *a, const struct gather_migrations *migs);

/* One round of moves: the plan made. */
struct act_round {
    const struct rebalance_plan *plan;
    const struct rebalance_node *nodes; /* the plan's nodes */
    struct gather_candidates *cands;    /* a refused or failed move marks its candidate blocked */
    bool dry;                           /* DryRun: dryRun=All, remembered as would-be moves */
    bool targeted;                      /* VM moves are targeted live migrations */
    int64_t settle_ms;
    int refused;    /* out: refusals (added to) */
    bool failed;    /* out: an eviction failed */
    char *fail_msg; /* out: what failed */
    size_t fail_len;
    char *made; /* out: the moves made, described and appended ("; " between) */
    size_t made_len;
};

/* Make the round's moves. Returns the number made. */
size_t act_moves(const struct act *a, struct act_round *r);

#endif
