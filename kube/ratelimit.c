#include "kube/ratelimit.h"

#include <math.h>

void kube_ratelimit_init(struct kube_ratelimit *rl, double qps, int burst, int64_t now_ms)
{
    rl->qps = qps;
    rl->burst = burst < 1 ? 1 : burst;
    rl->tokens = rl->burst;
    rl->last_ms = now_ms;
}

/* Refill the bucket up to now_ms (the clock never runs backwards for the bucket). */
static void refill(struct kube_ratelimit *rl, int64_t now_ms)
{
    if (now_ms <= rl->last_ms)
        return;
    rl->tokens += (double)(now_ms - rl->last_ms) * rl->qps / 1000.0;
    if (rl->tokens > rl->burst)
        rl->tokens = rl->burst;
    rl->last_ms = now_ms;
}

int64_t kube_ratelimit_reserve(struct kube_ratelimit *rl, int64_t now_ms)
{
    if (rl->qps <= 0)
        return 0;
    refill(rl, now_ms);
    rl->tokens -= 1.0;
    int64_t wait = 0;
    if (rl->tokens < 0) {
        double w = -rl->tokens * 1000.0 / rl->qps;
        wait = (int64_t)w;
        if ((double)wait < w)
            wait++; /* round up: never act before the token exists */
    }
    /* a clock behind last_ms (caller passed an older time) waits that much longer */
    if (now_ms < rl->last_ms)
        wait += rl->last_ms - now_ms;
    return wait;
}

int kube_ratelimit_try(struct kube_ratelimit *rl, int64_t now_ms)
{
    if (rl->qps <= 0)
        return 1;
    refill(rl, now_ms);
    if (rl->tokens < 1.0)
        return 0;
    rl->tokens -= 1.0;
    return 1;
}

size_t kube_ratelimit_in_flight(double qps, double latency_ms, size_t least, size_t most)
{
    if (qps <= 0)
        return most;
    double need = latency_ms > 0 ? ceil(qps * latency_ms / 1000.0) : 0;
    if (need <= (double)least)
        return least;
    return need >= (double)most ? most : (size_t)need;
}
