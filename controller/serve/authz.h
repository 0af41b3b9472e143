/* psi_authz: who may read the metrics. The caller's bearer token is checked with a
 * TokenReview and its user's right to the verb on the non-resource path (`get` on
 * `/metrics`) with a SubjectAccessReview, as controller-runtime's secure metrics filter and
 * kube-rbac-proxy do: 401 without a token or with one the API server does not accept, 403
 * when the user may not, 200 when it may.
 *
 * Answers are cached (psi_authcache) by a digest of the token: allowed for a minute (the
 * TokenReview cache of controller-runtime's filter), refused for 10 s (unauthenticated)
 * or 30 s (forbidden), so a scrape costs no API call in steady state and a bad token
 * repeated costs one review per period. A refusal never pushes an allowance out of the
 * cache.
 *
 * Threads (decided here): the reviews run in a reviewer thread of the checker's own, one at
 * a time, never in the thread that checks (the metrics server's), so a slow API server or a
 * crowd of made-up tokens never holds up a request whose answer is cached: psi_authz_check
 * answers from the cache at once, and otherwise queues the review (psi_authqueue) and
 * returns PSI_AUTHZ_LATER; when the review is answered the reviewer calls the done
 * callback with the request's ticket, and the server runs the handler again, which then
 * takes the answer. The queue has PSI_AUTHZ_QUEUE slots: beyond them the answer is 503 and
 * nothing is queued. Reviews not answered from the cache are also rate limited (5 a
 * second, bursts of 10): beyond that the answer is 429 and nothing is asked, so a crowd of
 * made-up tokens cannot turn into a flood of API calls. A review that fails (API server
 * unreachable, the operator not allowed to create reviews) gives 500, with a fixed text
 * (the detail is logged), and is not cached.
 *
 * The kube reviews go through a client of their own (its own kubeconfig load: kube clients
 * and configs are not thread-safe), used by the reviewer thread alone. The cache, the
 * queue, the rate limit and the counts are shared by the two threads under the checker's
 * mutex, never held during a review. */
#ifndef PSI_SERVE_AUTHZ_H
#define PSI_SERVE_AUTHZ_H

#include <stddef.h>
#include <stdint.h>

#include "httpd/serve.h"

struct psi_metrics;

/* psi_authz_check's answer "queued: ask again after the done callback" (the server's). */
#define PSI_AUTHZ_LATER PSI_SERVE_LATER
/* Reviews waiting or answered but not yet taken, at most. */
#define PSI_AUTHZ_QUEUE 64

/* Counts kept since start. */
struct psi_authz_stats {
    uint64_t checks;       /* psi_authz_check calls */
    uint64_t cache_hits;   /* answered from the cache */
    uint64_t api_calls;    /* TokenReviews and SubjectAccessReviews sent */
    uint64_t rate_limited; /* answered 429 */
    uint64_t queued;       /* reviews queued for the reviewer thread */
    uint64_t queue_full;   /* answered 503: no queue slot free (or no reviewer) */
    uint64_t reviews;      /* reviews the reviewer thread ran (answered from the cache or not) */
};

/* A reviewer: may token do verb on path? 200, 401 or 403, or -1 when the review failed,
 * with the detail (for the log) in why. Runs in the reviewer thread only. */
typedef int (*psi_authz_review_fn)(void *ud, const char *token, const char *verb, const char *path, char *why,
                                   size_t whylen);

/* Told, from the reviewer thread and without the checker's mutex held, that the review
 * asked with ticket has its answer (the server's psi_serve_resume). */
typedef void (*psi_authz_done_fn)(void *ud, unsigned long long ticket);

struct psi_authz;

/* A checker using the kubeconfig and context the operator uses (NULL: the same lookup
 * order) for TokenReviews and SubjectAccessReviews; done (may be NULL) is told of each
 * answered review. metrics (may be NULL) gets
 * psi_rebalancer_metrics_auth_requests_total{result} and
 * psi_rebalancer_metrics_auth_api_calls_total. Starts the reviewer thread. NULL with a
 * message in err. */
struct psi_authz *psi_authz_new(const char *kubeconfig, const char *context, struct psi_metrics *metrics,
                                psi_authz_done_fn done, void *done_ud, char *err, size_t errlen);

/* The same with review (called with review_ud) in place of the API server's reviews: the
 * seam for tests. */
struct psi_authz *psi_authz_new_with(psi_authz_review_fn review, void *review_ud, struct psi_metrics *metrics,
                                     psi_authz_done_fn done, void *done_ud, char *err, size_t errlen);

/* May the bearer token (may be "" or NULL) do verb ("get") on path ("/metrics")? ticket:
 * the request's (psi_serve_request.ticket). Returns 200, 401, 403, 429, 500 or 503 with a
 * short reason for the client in why (a fixed text for each status; a 500's detail, which
 * names the API server, goes to the log only), or PSI_AUTHZ_LATER when the answer is not
 * cached and its review is queued: ask again with the same ticket once done was called
 * for it. From one thread at a time (the server's). */
int psi_authz_check(struct psi_authz *a, const char *token, const char *verb, const char *path,
                    unsigned long long ticket, char *why, size_t whylen);

/* Stop the reviewer thread (waiting for the review under way); afterwards a check not
 * answered from the cache gets 503. Call before freeing what done reaches. Idempotent;
 * NULL is fine. */
void psi_authz_stop(struct psi_authz *a);

/* The counts so far (from any thread). */
struct psi_authz_stats psi_authz_stats(struct psi_authz *a);

/* Stop (psi_authz_stop) and free (NULL is fine). */
void psi_authz_free(struct psi_authz *a);

#endif
