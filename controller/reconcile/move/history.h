/* history: what rebalancing remembers of one PsiRebalance between cycles, and the status it
 * fills from that. Pure: no API call; time comes from the cycle (history_begin).
 *
 * It holds
 *   - the moves (status.moves, oldest first) and the summary counters, read back once from
 *     the status after a restart (history_load) so that cooldowns and counts survive it;
 *   - the memory of every move within cooldown.history that the oscillation hold and the
 *     budgets read (status.moveHistory, api/movehistory.h), read back the same way: the
 *     hold (history_recent) and the budgets (budget.h) read it, never the 50 moves of
 *     status.moves; it keeps the window, and the last hour at least (the hour's budget);
 *   - per node: since when it is above evictAbovePercent (the sustain tracker), until when
 *     it settles after a move, whether it is being relieved (a source not yet below the
 *     relief target), its calibrated CPU curve scale (rebalance_calibrate), and its eviction
 *     and migration counters;
 *   - the cooldowns: of real moves, of DryRun's would-be moves (kept apart, so that DryRun
 *     reports the sequence Automatic would make), and of refused evictions (held back as a
 *     move would be: cooldown.initial, doubling while refusals repeat);
 *   - DryRun's virtual moves: the moves it would have made, applied to the nodes as if made
 *     (cycle_overlay_*), until their DryRun cooldown ends.
 * Not thread-safe. */
#ifndef PSI_RECONCILE_HISTORY_H
#define PSI_RECONCILE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/status.h"
#include "reconcile/move/cooldown.h"
#include "reconcile/move/plan.h"

/* A move asked and not answered with a migration within this long stops counting as in
 * flight (KubeVirt may have dropped the evacuation). */
#define HISTORY_REQUESTED_IN_FLIGHT_MS (10 * 60 * 1000)

/* Per node. */
struct history_node {
    char *name;
    int64_t above_since_ms; /* 0: not above evictAbovePercent */
    int64_t settle_until_ms;
    bool relieving;   /* a source, not yet seen below the relief target */
    double scale_cpu; /* its CPU curve's calibrated scale; 0: none yet */
    int64_t evictions, succeeded, failed;
};

/* DryRun: a move it would have made. */
struct history_virtual {
    char *key, *source, *destination;
    double demand, req_cpu, req_memory;
};

/* All owned; read freely, change through the functions below. */
struct history {
    bool loaded;                /* the status was read back */
    struct api_status status;   /* moves (oldest first) and summary counters: what status shows */
    struct history_node *nodes; /* sorted by name */
    size_t nnodes, nodes_cap;
    struct history_virtual *virt;
    size_t nvirt, virt_cap;
    struct cooldown *cool, *dry_cool, *refusals;
    struct cooldown_params params; /* the spec's, as of the last history_begin */
    int64_t clock_ms;              /* the cycle's time, the cooldowns' clock */
};

/* A move decided, for history_record. Strings are copied. */
struct history_entry {
    const char *key;  /* workload key (history_key) */
    const char *kind; /* workload kind; NULL: "Pod" */
    const char *ns;
    const char *workload; /* workload name */
    const char *pod;
    const char *source, *destination;
    enum api_move_phase phase; /* Evicted, MigrationRequested, or WouldMove (DryRun) */
};

/* What the planner's oscillation hold needs of the moves since since_s (Unix seconds), from
 * the memory: one entry {workload, node left, NULL} per node a workload left, and one entry
 * {"", source, destination} per pair of nodes load went between. Every string of *out's n
 * entries is allocated (history_recent_free). Returns 0, or -1 on no memory (*out NULL, *n 0). */
int history_recent(const struct history *h, int64_t since_s, struct rebalance_recent **out, size_t *n);

/* Release what history_recent returned. */
void history_recent_free(struct rebalance_recent *v, size_t n);

/* New and empty; NULL on no memory. */
struct history *history_new(void);

/* Free (NULL is fine). */
void history_free(struct history *h);

/* Start a cycle at now_ms with the spec's cooldown params: sets the clock, reads back once
 * the moves (and with them the cooldowns) and counters st holds, and forgets moves older than
 * the cooldown history. */
void history_begin(struct history *h, const struct cooldown_params *cp, int64_t now_ms, const struct api_status *st);

/* Forget DryRun's picture: its cooldowns, virtual moves and every settle time (the mode
 * changed). */
void history_forget_dry_run(struct history *h);

/* The state of node name, made when new (NULL on no memory). A new entry moves the ones
 * after it, so a pointer returned before is stale then. */
struct history_node *history_node(struct history *h, const char *name);

/* "kind ns/name" (kind NULL: "Pod"), the key of a workload's cooldown; caller frees; NULL on
 * no memory. */
char *history_key(const char *kind, const char *ns, const char *name);

/* Whether move m is still under way at now_ms: its migration runs, or it was asked for (and
 * answered with a live migration) less than HISTORY_REQUESTED_IN_FLIGHT_MS ago. */
bool history_under_way(const struct api_move *m, int64_t now_ms);

/* The moves under way at now_ms. */
size_t history_running(const struct history *h, int64_t now_ms);

/* Whether a move of workload key is under way. */
bool history_move_running(const struct history *h, const char *key, int64_t now_ms);

/* Whether workload key is in its cooldown (dry: DryRun's own). */
bool history_cooling(const struct history *h, const char *key, bool dry);

/* Whether an eviction of workload key was refused within its refusal hold. */
bool history_refused(const struct history *h, const char *key);

/* Hold workload key back after a refused eviction. */
void history_refusal(struct history *h, const char *key);

/* Record move e at now: the move, its cooldown, the counters. Returns the move (owned by h),
 * or NULL on no memory (nothing recorded but the cooldown). */
struct api_move *history_record(struct history *h, const struct history_entry *e, int64_t now_ms);

/* Nodes a finished move touched settle until until_ms. */
void history_settle(struct history *h, const char *source, const char *destination, int64_t until_ms);

/* Count the success of move m's live migration. */
void history_succeeded(struct history *h, const struct api_move *m);

/* Count the failure of move m's live migration: counters, and a repeat move in the
 * workload's cooldown (m->cooldown_until follows). */
void history_failed(struct history *h, struct api_move *m);

/* Keep a DryRun move of workload key from source to destination as if made (demand in cores,
 * its requests). Returns 0, or -1 on no memory. */
int history_add_virtual(struct history *h, const char *key, const char *source, const char *destination, double demand,
                        const double requests[2]);

/* Drop the virtual moves whose DryRun cooldown ended. */
void history_prune_virtual(struct history *h);

/* Judge move m, observed once it settled, by budget_move_unhelpful: when it did not help, its
 * workload is marked in the memory at now_ms (budget.h holds it). Returns whether it did not. */
bool history_judge(struct history *h, const struct api_move *m, int64_t now_ms);

/* Fill next (the status being built, its nodes already there) from the history: moves
 * (pruned to history_ms), the memory (pruned to history_ms, bounded at
 * API_MOVE_HISTORY_MAX_BYTES), summary counters and per-node counters. */
void history_fill_status(struct history *h, int64_t now_ms, int64_t history_ms, struct api_status *next);

#endif
