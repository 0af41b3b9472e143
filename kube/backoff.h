/* kube_backoff: jittered exponential backoff for watch reconnects.
 *
 * The n-th consecutive failure waits min(max, initial * 2^n) scaled down by a random
 * share of up to `jitter` (defaults: 800 ms doubling to 30 s, jitter 25 %), so a fleet of
 * clients that lost the same API server does not come back in lockstep, and no delay
 * exceeds max. After a connection has stayed up for reset_after (default 2 min), or
 * when the previous failure is that long ago, the next failure starts again from
 * initial. Pure: the caller injects the clock (ms) and the random number. */
#ifndef PSI_KUBE_BACKOFF_H
#define PSI_KUBE_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#define KUBE_BACKOFF_INITIAL_MS 800
#define KUBE_BACKOFF_MAX_MS 30000
#define KUBE_BACKOFF_RESET_MS 120000

struct kube_backoff {
    uint64_t initial_ms;
    uint64_t max_ms;
    uint64_t reset_after_ms;
    double jitter;     /* 0..1: share of the delay that may be taken off at random */
    unsigned failures; /* consecutive failures counted so far */
    bool up;           /* a connection is established (kube_backoff_up) */
    uint64_t up_since_ms;
    uint64_t last_failure_ms;
};

/* Initialise with the defaults above. */
void kube_backoff_init(struct kube_backoff *b);

/* Record that a connection was established at now_ms (a stream started). */
void kube_backoff_up(struct kube_backoff *b, uint64_t now_ms);

/* Record a failure at now_ms and return the delay (ms) before the next attempt;
 * rnd is a uniform random number in [0, 1). */
uint64_t kube_backoff_next(struct kube_backoff *b, uint64_t now_ms, double rnd);

/* Forget all failures (e.g. after a deliberate, clean reconnect). */
void kube_backoff_reset(struct kube_backoff *b);

#endif
