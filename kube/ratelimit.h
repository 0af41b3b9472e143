/* kube_ratelimit: a token bucket (QPS refill, burst capacity) over an injected clock. Pure. */
#ifndef PSI_KUBE_RATELIMIT_H
#define PSI_KUBE_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

/* The bucket; plain data, initialise with kube_ratelimit_init. */
struct kube_ratelimit {
    double qps;      /* tokens added per second; <= 0 means unlimited */
    double burst;    /* capacity (at least 1 when limited) */
    double tokens;   /* tokens available at `last` (negative: reserved ahead) */
    int64_t last_ms; /* time tokens was computed for */
};

/* Start a full bucket at now_ms. */
void kube_ratelimit_init(struct kube_ratelimit *rl, double qps, int burst, int64_t now_ms);

/* Take one token at now_ms; returns how many ms the caller must wait before acting
 * (0: go now). The token is reserved either way, as client-go's Reserve does. */
int64_t kube_ratelimit_reserve(struct kube_ratelimit *rl, int64_t now_ms);

/* Take one token only if available now; returns 1 if taken, 0 otherwise. */
int kube_ratelimit_try(struct kube_ratelimit *rl, int64_t now_ms);

/* Requests to keep in flight so that qps of them a second go out when each takes latency_ms
 * (Little's law: qps x latency, rounded up), between least and most; most when qps <= 0
 * (unlimited), least before any latency is known (latency_ms <= 0). */
size_t kube_ratelimit_in_flight(double qps, double latency_ms, size_t least, size_t most);

#endif
