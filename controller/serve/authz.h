/* psi_authz: who may read the metrics. The caller's bearer token is checked with a
 * TokenReview and its user's right to the verb on the non-resource path (`get` on
 * `/metrics`) with a SubjectAccessReview, as controller-runtime's secure metrics filter and
 * kube-rbac-proxy do: 401 without a token or with one the API server does not accept, 403
 * when the user may not, 200 when it may.
 *
 * Answers are cached (psi_authcache) by a digest of the token: allowed for a minute (the
 * TokenReview cache of controller-runtime's filter), refused for 10 s (unauthenticated)
 * or 30 s (forbidden), so a scrape costs no API call in steady state and a bad token
 * repeated costs one review per period. Reviews not answered from the cache are rate
 * limited (5 a second, bursts of 10): beyond that the answer is 429 and nothing is asked,
 * so a crowd of made-up tokens cannot turn into a flood of API calls. A review that fails
 * (API server unreachable, the operator not allowed to create reviews) gives 500, with a
 * fixed text (the detail is logged), and is not cached.
 *
 * The reviews go through a client of its own (its own kubeconfig load: kube clients and
 * configs are not thread-safe), blocking, in the thread that calls psi_authz_check: the
 * metrics server's, which serves nothing else. */
#ifndef PSI_SERVE_AUTHZ_H
#define PSI_SERVE_AUTHZ_H

#include <stddef.h>
#include <stdint.h>

struct psi_metrics;

/* Counts kept since start. */
struct psi_authz_stats {
    uint64_t checks;       /* psi_authz_check calls */
    uint64_t cache_hits;   /* answered from the cache */
    uint64_t api_calls;    /* TokenReviews and SubjectAccessReviews sent */
    uint64_t rate_limited; /* answered 429 */
};

struct psi_authz;

/* A checker using the kubeconfig and context the operator uses (NULL: the same lookup
 * order). metrics (may be NULL) gets psi_rebalancer_metrics_auth_requests_total{result}
 * and psi_rebalancer_metrics_auth_api_calls_total. NULL with a message in err. */
struct psi_authz *psi_authz_new(const char *kubeconfig, const char *context, struct psi_metrics *metrics, char *err,
                                size_t errlen);

/* May the bearer token (may be "" or NULL) do verb ("get") on path ("/metrics")? Returns
 * 200, 401, 403, 429 or 500, with a short reason for the client in why: a fixed text for
 * each status (a 500's detail, which names the API server, goes to the log only). */
int psi_authz_check(struct psi_authz *a, const char *token, const char *verb, const char *path, char *why,
                    size_t whylen);

/* The counts so far (from the thread that checks). */
struct psi_authz_stats psi_authz_stats(const struct psi_authz *a);

/* Free (NULL is fine). */
void psi_authz_free(struct psi_authz *a);

#endif
