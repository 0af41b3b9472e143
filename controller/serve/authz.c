#include "serve/authz.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "base/logging.h"
#include "base/util.h"
#include "kube/config.h"
#include "kube/ratelimit.h"
#include "kube/rest.h"
#include "serve/authcache.h"
#include "serve/authqueue.h"
#include "httpd/metrics.h"

#define ALLOW_TTL_MS 60000
#define UNAUTHENTICATED_TTL_MS 10000
#define FORBIDDEN_TTL_MS 30000
#define CACHE_ENTRIES 1024
#define REVIEWS_PER_SECOND 5.0
#define REVIEW_BURST 10
#define REVIEW_TIMEOUT_MS 5000
/* A queued review, or its answer, kept at most this long: the server's default wait for a
 * parked request (psi_serve_limits.later_timeout_ms), after which nobody takes it. */
#define QUEUE_MAX_AGE_MS 10000

struct psi_authz {
    pthread_mutex_t mu; /* guards everything below up to the reviewer's own fields */
    pthread_cond_t work;
    struct psi_authcache *cache;
    struct psi_authqueue *queue;
    struct kube_ratelimit rl;
    struct psi_authz_stats stats;
    int running, stopping;
    pthread_t thread;
    /* set before the thread starts, then read only */
    psi_authz_review_fn review;
    void *review_ud;
    psi_authz_done_fn done;
    void *done_ud;
    struct psi_metric *results, *api_calls;
    /* the reviewer thread's alone (the kube reviews') */
    struct kube_config *cfg;
    struct kube_client *client;
};

static void *reviewer(void *arg);

static struct psi_authz *authz_alloc(struct psi_metrics *metrics, psi_authz_done_fn done, void *done_ud, char *err,
                                     size_t errlen)
{
    struct psi_authz *a = calloc(1, sizeof(*a));
    if (!a || !(a->cache = psi_authcache_new(CACHE_ENTRIES)) || !(a->queue = psi_authqueue_new(PSI_AUTHZ_QUEUE))) {
        snprintf(err, errlen, "out of memory");
        if (a)
            psi_authcache_free(a->cache);
        free(a);
        return NULL;
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->work, NULL);
    a->done = done;
    a->done_ud = done_ud;
    kube_ratelimit_init(&a->rl, REVIEWS_PER_SECOND, REVIEW_BURST, base_mono_ms());
    if (metrics) {
        static const char *const result[] = {"result", NULL};
        a->results = psi_metrics_counter(metrics, "psi_rebalancer_metrics_auth_requests_total",
                                         "Requests to the metrics endpoint by the answer of its authorization: "
                                         "allowed, unauthenticated, forbidden, rate_limited, busy, error.",
                                         result);
        a->api_calls = psi_metrics_counter(metrics, "psi_rebalancer_metrics_auth_api_calls_total",
                                           "TokenReviews and SubjectAccessReviews sent to authorize metrics requests "
                                           "(answers are cached).",
                                           NULL);
    }
    return a;
}

static int start(struct psi_authz *a, char *err, size_t errlen)
{
    if (pthread_create(&a->thread, NULL, reviewer, a) != 0) {
        snprintf(err, errlen, "metrics authorization: cannot start the reviewer thread");
        return -1;
    }
    a->running = 1;
    return 0;
}

static int kube_review(void *ud, const char *token, const char *verb, const char *path, char *why, size_t whylen);

struct psi_authz *psi_authz_new(const char *kubeconfig, const char *context, struct psi_metrics *metrics,
                                psi_authz_done_fn done, void *done_ud, char *err, size_t errlen)
{
    struct psi_authz *a = authz_alloc(metrics, done, done_ud, err, errlen);
    struct kube_err kerr = {0};
    if (!a)
        return NULL;
    if (kube_config_load(kubeconfig, context, &a->cfg, &kerr) < 0 || !(a->client = kube_client_new(a->cfg, &kerr))) {
        snprintf(err, errlen, "metrics authorization: %s", kerr.msg);
        psi_authz_free(a);
        return NULL;
    }
    kube_client_set_timeout(a->client, REVIEW_TIMEOUT_MS);
    a->review = kube_review;
    a->review_ud = a;
    if (start(a, err, errlen) < 0) {
        psi_authz_free(a);
        return NULL;
    }
    return a;
}

struct psi_authz *psi_authz_new_with(psi_authz_review_fn review, void *review_ud, struct psi_metrics *metrics,
                                     psi_authz_done_fn done, void *done_ud, char *err, size_t errlen)
{
    struct psi_authz *a = authz_alloc(metrics, done, done_ud, err, errlen);
    if (!a)
        return NULL;
    a->review = review;
    a->review_ud = review_ud;
    if (start(a, err, errlen) < 0) {
        psi_authz_free(a);
        return NULL;
    }
    return a;
}

void psi_authz_stop(struct psi_authz *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    int running = a->running;
    a->stopping = 1;
    pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->mu);
    if (running)
        pthread_join(a->thread, NULL);
    pthread_mutex_lock(&a->mu);
    a->running = 0;
    pthread_mutex_unlock(&a->mu);
}

void psi_authz_free(struct psi_authz *a)
{
    if (!a)
        return;
    psi_authz_stop(a);
    kube_client_free(a->client);
    kube_config_free(a->cfg);
    psi_authcache_free(a->cache);
    psi_authqueue_free(a->queue);
    pthread_cond_destroy(&a->work);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

struct psi_authz_stats psi_authz_stats(struct psi_authz *a)
{
    pthread_mutex_lock(&a->mu);
    struct psi_authz_stats st = a->stats;
    pthread_mutex_unlock(&a->mu);
    return st;
}

static void digest(const char *token, const char *verb, const char *path, unsigned char out[PSI_AUTHCACHE_KEY])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int n = 0;
    memset(out, 0, PSI_AUTHCACHE_KEY);
    if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && EVP_DigestUpdate(ctx, token, strlen(token)) &&
        EVP_DigestUpdate(ctx, "\n", 1) && EVP_DigestUpdate(ctx, verb, strlen(verb)) && EVP_DigestUpdate(ctx, "\n", 1) &&
        EVP_DigestUpdate(ctx, path, strlen(path)))
        EVP_DigestFinal_ex(ctx, out, &n);
    EVP_MD_CTX_free(ctx);
}

/* POST a review; the reply's status object (caller frees the reply), or NULL with why. */
static cJSON *review(struct psi_authz *a, const char *resource, cJSON *body, char *why, size_t whylen)
{
    char path[128];
    const char *group = strcmp(resource, "tokenreviews") == 0 ? "authentication.k8s.io" : "authorization.k8s.io";
    snprintf(path, sizeof(path), "/apis/%s/v1/%s", group, resource);
    char *text = cJSON_PrintUnformatted(body);
    struct kube_err err = {0};
    pthread_mutex_lock(&a->mu);
    a->stats.api_calls++;
    pthread_mutex_unlock(&a->mu);
    if (a->api_calls)
        psi_metric_inc(a->api_calls, NULL, 1);
    cJSON *reply = text ? kube_rest_request(a->client, "POST", path, "application/json", text, 0, &err) : NULL;
    free(text);
    if (!reply)
        snprintf(why, whylen, "authorization failed: %s: %s\n", resource, err.msg[0] ? err.msg : "out of memory");
    return reply;
}

/* The TokenReview of token: 1 authenticated (*user set, from reply, which the caller
 * frees), 0 not, -1 the review failed. */
static int token_review(struct psi_authz *a, const char *token, cJSON **reply, const cJSON **user, char *why,
                        size_t whylen)
{
    cJSON *body = cJSON_CreateObject();
    cJSON *spec = cJSON_AddObjectToObject(body, "spec");
    cJSON_AddStringToObject(body, "apiVersion", "authentication.k8s.io/v1");
    cJSON_AddStringToObject(body, "kind", "TokenReview");
    cJSON_AddStringToObject(spec, "token", token);
    *reply = review(a, "tokenreviews", body, why, whylen);
    cJSON_Delete(body);
    if (!*reply)
        return -1;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(*reply, "status");
    *user = cJSON_GetObjectItemCaseSensitive(status, "user");
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "authenticated")) && cJSON_IsObject(*user) ? 1 : 0;
}

/* The SubjectAccessReview of user for verb on path: 1 allowed, 0 not, -1 it failed. */
static int access_review(struct psi_authz *a, const cJSON *user, const char *verb, const char *path, char *why,
                         size_t whylen)
{
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "apiVersion", "authorization.k8s.io/v1");
    cJSON_AddStringToObject(body, "kind", "SubjectAccessReview");
    cJSON *spec = cJSON_AddObjectToObject(body, "spec");
    static const char *const copied[][2] = {
        {"username", "user"}, {"uid", "uid"}, {"groups", "groups"}, {"extra", "extra"}};
    for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(user, copied[i][0]);
        if (v)
            cJSON_AddItemToObject(spec, copied[i][1], cJSON_Duplicate(v, 1));
    }
    cJSON *nr = cJSON_AddObjectToObject(spec, "nonResourceAttributes");
    cJSON_AddStringToObject(nr, "path", path);
    cJSON_AddStringToObject(nr, "verb", verb);
    cJSON *reply = review(a, "subjectaccessreviews", body, why, whylen);
    cJSON_Delete(body);
    if (!reply)
        return -1;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(reply, "status");
    int allowed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "allowed"));
    cJSON_Delete(reply);
    return allowed;
}

/* The kube reviewer: a TokenReview, then a SubjectAccessReview of its user. */
static int kube_review(void *ud, const char *token, const char *verb, const char *path, char *why, size_t whylen)
{
    struct psi_authz *a = ud;
    cJSON *reply = NULL;
    const cJSON *user = NULL;
    int authn = token_review(a, token, &reply, &user, why, whylen);
    int status = -1;
    if (authn == 0) {
        status = 401;
    } else if (authn == 1) {
        int allowed = access_review(a, user, verb, path, why, whylen);
        if (allowed >= 0)
            status = allowed ? 200 : 403;
    }
    cJSON_Delete(reply);
    return status;
}

static int64_t ttl_of(int status)
{
    return status == 200 ? ALLOW_TTL_MS : status == 401 ? UNAUTHENTICATED_TTL_MS : FORBIDDEN_TTL_MS;
}

/* The reviewer thread: the oldest queued review, one at a time; the cache first (another
 * request may have had the same answer meanwhile), the review without the mutex held. */
static void *reviewer(void *arg)
{
    struct psi_authz *a = arg;
    pthread_mutex_lock(&a->mu);
    while (!a->stopping) {
        struct psi_authreview r;
        psi_authqueue_expire(a->queue, base_mono_ms(), QUEUE_MAX_AGE_MS);
        if (!psi_authqueue_next(a->queue, &r)) {
            pthread_cond_wait(&a->work, &a->mu);
            continue;
        }
        a->stats.reviews++;
        int status = psi_authcache_get(a->cache, r.key, base_mono_ms());
        if (!status) {
            char why[512] = "";
            pthread_mutex_unlock(&a->mu);
            status = a->review(a->review_ud, r.token, r.verb, r.path, why, sizeof(why));
            if (status < 0)
                log_warn("metrics authorization failed", "error", why);
            pthread_mutex_lock(&a->mu);
            int64_t now = base_mono_ms();
            if (status > 0)
                psi_authcache_put(a->cache, r.key, status, now, now + ttl_of(status));
        }
        psi_authqueue_answer(a->queue, r.ticket, status > 0 ? status : 500, base_mono_ms());
        free(r.token);
        if (a->done) {
            pthread_mutex_unlock(&a->mu);
            a->done(a->done_ud, r.ticket);
            pthread_mutex_lock(&a->mu);
        }
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Count the answer and write the client's text for status into why. */
static int answer(struct psi_authz *a, int status, char *why, size_t whylen)
{
    const char *result = status == 200   ? "allowed"
                         : status == 401 ? "unauthenticated"
                         : status == 403 ? "forbidden"
                         : status == 429 ? "rate_limited"
                         : status == 503 ? "busy"
                                         : "error";
    if (a->results) {
        const char *v[] = {result};
        psi_metric_inc(a->results, v, 1);
    }
    if (status == 200)
        snprintf(why, whylen, "ok\n");
    else if (status == 401)
        snprintf(why, whylen, "Unauthorized: a bearer token the API server accepts is required\n");
    else if (status == 403)
        snprintf(why, whylen, "Forbidden: the token's user may not get this path\n");
    else if (status == 429)
        snprintf(why, whylen, "too many token reviews at once; try again\n");
    else if (status == 503)
        snprintf(why, whylen, "too many token reviews waiting; try again\n");
    else /* the review's error names the API server: the log has it (reviewer) */
        snprintf(why, whylen, "metrics authorization unavailable; see the operator's log\n");
    return status;
}

/* psi_authz_check with the mutex held. */
static int check_locked(struct psi_authz *a, const char *token, const char *verb, const char *path,
                        unsigned long long ticket, char *why, size_t whylen)
{
    a->stats.checks++;
    if (!token || !*token)
        return answer(a, 401, why, whylen);
    int taken = ticket ? psi_authqueue_take(a->queue, ticket) : -1;
    if (taken > 0)
        return answer(a, taken, why, whylen);
    if (taken == 0)
        return PSI_AUTHZ_LATER; /* still queued or under review */
    unsigned char key[PSI_AUTHCACHE_KEY];
    digest(token, verb, path, key);
    int64_t now = base_mono_ms();
    int cached = psi_authcache_get(a->cache, key, now);
    if (cached) {
        a->stats.cache_hits++;
        return answer(a, cached, why, whylen);
    }
    if (!a->running || a->stopping || !ticket) {
        a->stats.queue_full++;
        return answer(a, 503, why, whylen);
    }
    if (!kube_ratelimit_try(&a->rl, now)) {
        a->stats.rate_limited++;
        return answer(a, 429, why, whylen);
    }
    psi_authqueue_expire(a->queue, now, QUEUE_MAX_AGE_MS);
    if (psi_authqueue_push(a->queue, ticket, key, token, verb, path, now) < 0) {
        a->stats.queue_full++;
        return answer(a, 503, why, whylen);
    }
    a->stats.queued++;
    pthread_cond_signal(&a->work);
    return PSI_AUTHZ_LATER;
}

int psi_authz_check(struct psi_authz *a, const char *token, const char *verb, const char *path,
                    unsigned long long ticket, char *why, size_t whylen)
{
    pthread_mutex_lock(&a->mu);
    int status = check_locked(a, token, verb, path, ticket, why, whylen);
    pthread_mutex_unlock(&a->mu);
    return status;
}
