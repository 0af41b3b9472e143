/* cooldown: how long a moved workload stays put (spec.eviction.cooldown). Pure: time comes
 * from an injected clock.
 *
 * Each workload (a key such as "VirtualMachineInstance ns/name") has a history of moves.
 * With k moves inside the history window (the last one included), it may not move again
 * before
 *     last move + min(max, initial * 2^(k-1))
 * so the first move holds it for initial, each repeat within history doubles the hold, up to
 * max. A failed live migration of a workload we moved counts as a repeat (it is recorded like
 * a move), so a workload whose migrations keep failing is asked less and less often: no
 * retry storm. Moves older than the history window are forgotten (cooldown_prune). */
#ifndef PSI_RECONCILE_COOLDOWN_H
#define PSI_RECONCILE_COOLDOWN_H

#include <stddef.h>
#include <stdint.h>

/* The clock: now_ms returns milliseconds on any clock that does not go back (the reconciler
 * gives it the wall clock of the cycle; tests a counter they move). */
struct cooldown_clock {
    int64_t (*now_ms)(void *ud);
    void *ud;
};

/* spec.eviction.cooldown, in milliseconds (initial <= max <= history). */
struct cooldown_params {
    int64_t initial_ms, max_ms, history_ms;
};

/* Most moves remembered per workload (more add nothing: the hold is long capped by then). */
#define COOLDOWN_MAX_HISTORY 32

struct cooldown;

/* New, empty, with params and clock (both copied). NULL on no memory. */
struct cooldown *cooldown_new(const struct cooldown_params *p, const struct cooldown_clock *clock);

/* Free (NULL is fine). */
void cooldown_free(struct cooldown *c);

/* Change the params (the spec changed); histories are kept. */
void cooldown_set_params(struct cooldown *c, const struct cooldown_params *p);

/* The hold after the k-th move inside the history window (k >= 1): min(max, initial * 2^(k-1)). */
int64_t cooldown_hold_ms(const struct cooldown_params *p, int k);

/* Record a move of key now. Returns 0, or -1 on no memory. */
int cooldown_record(struct cooldown *c, const char *key);

/* Record a move of key at at_ms (a past move, e.g. read back from status after a restart);
 * kept in time order. Returns 0, or -1 on no memory. */
int cooldown_record_at(struct cooldown *c, const char *key, int64_t at_ms);

/* Moves of key inside the history window now. */
int cooldown_moves(const struct cooldown *c, const char *key);

/* When key may move again (clock ms), or 0 when it may move now. */
int64_t cooldown_until(const struct cooldown *c, const char *key);

/* Forget moves older than the history window, and workloads left without any. */
void cooldown_prune(struct cooldown *c);

/* Number of workloads with a remembered move. */
size_t cooldown_size(const struct cooldown *c);

#endif
