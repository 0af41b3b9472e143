#include "kube/backoff.h"

void kube_backoff_init(struct kube_backoff *b)
{
    *b = (struct kube_backoff){
        .initial_ms = KUBE_BACKOFF_INITIAL_MS,
        .max_ms = KUBE_BACKOFF_MAX_MS,
        .reset_after_ms = KUBE_BACKOFF_RESET_MS,
        .jitter = 0.25,
    };
}

void kube_backoff_up(struct kube_backoff *b, uint64_t now_ms)
{
    b->up = true;
    b->up_since_ms = now_ms;
}

void kube_backoff_reset(struct kube_backoff *b)
{
    b->failures = 0;
    b->up = false;
}

uint64_t kube_backoff_next(struct kube_backoff *b, uint64_t now_ms, double rnd)
{
    /* A connection that held for reset_after, or a quiet spell as long since the last
     * failure, means the trouble is over: start from the bottom again. */
    if (b->failures > 0) {
        bool stable = b->up && now_ms >= b->up_since_ms && now_ms - b->up_since_ms >= b->reset_after_ms;
        bool quiet = now_ms >= b->last_failure_ms && now_ms - b->last_failure_ms >= b->reset_after_ms;
        if (stable || quiet)
            b->failures = 0;
    }
    uint64_t base = b->initial_ms;
    for (unsigned i = 0; i < b->failures && base < b->max_ms; i++)
        base *= 2;
    if (base > b->max_ms)
        base = b->max_ms;
    if (rnd < 0)
        rnd = 0;
    if (rnd >= 1)
        rnd = 0.999999;
    double jitter = b->jitter < 0 ? 0 : b->jitter > 1 ? 1 : b->jitter;
    uint64_t delay = (uint64_t)((double)base * (1.0 - jitter * rnd));
    if (b->failures < 64)
        b->failures++;
    b->up = false;
    b->last_failure_ms = now_ms;
    return delay;
}
