#include "serve/authz.h"

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
#include "serve/metrics.h"

#define ALLOW_TTL_MS 60000
#define UNAUTHENTICATED_TTL_MS 10000
#define FORBIDDEN_TTL_MS 30000
#define CACHE_ENTRIES 1024
#define REVIEWS_PER_SECOND 5.0
#define REVIEW_BURST 10
#define REVIEW_TIMEOUT_MS 5000

struct psi_authz {
    struct kube_config *cfg;
    struct kube_client *client;
    struct psi_authcache *cache;
    struct kube_ratelimit rl;
    struct psi_authz_stats stats;
    struct psi_metric *results, *api_calls;
};

struct psi_authz *psi_authz_new(const char *kubeconfig, const char *context, struct psi_metrics *metrics, char *err,
                                size_t errlen)
{
    struct psi_authz *a = calloc(1, sizeof(*a));
    struct kube_err kerr = {0};
    if (!a || !(a->cache = psi_authcache_new(CACHE_ENTRIES))) {
        snprintf(err, errlen, "out of memory");
        psi_authz_free(a);
        return NULL;
    }
    if (kube_config_load(kubeconfig, context, &a->cfg, &kerr) < 0 || !(a->client = kube_client_new(a->cfg, &kerr))) {
        snprintf(err, errlen, "metrics authorization: %s", kerr.msg);
        psi_authz_free(a);
        return NULL;
    }
    kube_client_set_timeout(a->client, REVIEW_TIMEOUT_MS);
    kube_ratelimit_init(&a->rl, REVIEWS_PER_SECOND, REVIEW_BURST, base_mono_ms());
    if (metrics) {
        static const char *const result[] = {"result", NULL};
        a->results = psi_metrics_counter(metrics, "psi_rebalancer_metrics_auth_requests_total",
                                         "Requests to the metrics endpoint by the answer of its authorization: "
                                         "allowed, unauthenticated, forbidden, rate_limited, error.",
                                         result);
        a->api_calls = psi_metrics_counter(metrics, "psi_rebalancer_metrics_auth_api_calls_total",
                                           "TokenReviews and SubjectAccessReviews sent to authorize metrics requests "
                                           "(answers are cached).",
                                           NULL);
    }
    return a;
}

void psi_authz_free(struct psi_authz *a)
{
    if (!a)
        return;
    kube_client_free(a->client);
    kube_config_free(a->cfg);
    psi_authcache_free(a->cache);
    free(a);
}

struct psi_authz_stats psi_authz_stats(const struct psi_authz *a)
{
    return a->stats;
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
    a->stats.api_calls++;
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

static int answer(struct psi_authz *a, int status, char *why, size_t whylen)
{
    const char *result = status == 200   ? "allowed"
                         : status == 401 ? "unauthenticated"
                         : status == 403 ? "forbidden"
                         : status == 429 ? "rate_limited"
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
    else {
        /* The review's error names the API server and what it said: the operator's log
         * gets it, the caller (not authenticated) a fixed text. */
        log_warn("metrics authorization failed", "error", why);
        snprintf(why, whylen, "metrics authorization unavailable; see the operator's log\n");
    }
    return status;
}

int psi_authz_check(struct psi_authz *a, const char *token, const char *verb, const char *path, char *why,
                    size_t whylen)
{
    a->stats.checks++;
    if (!token || !*token)
        return answer(a, 401, why, whylen);
    unsigned char key[PSI_AUTHCACHE_KEY];
    digest(token, verb, path, key);
    int64_t now = base_mono_ms();
    int cached = psi_authcache_get(a->cache, key, now);
    if (cached) {
        a->stats.cache_hits++;
        return answer(a, cached, why, whylen);
    }
    if (!kube_ratelimit_try(&a->rl, now)) {
        a->stats.rate_limited++;
        return answer(a, 429, why, whylen);
    }
    cJSON *reply = NULL;
    const cJSON *user = NULL;
    int authn = token_review(a, token, &reply, &user, why, whylen);
    int status = 500;
    if (authn == 0) {
        status = 401;
        psi_authcache_put(a->cache, key, status, now, now + UNAUTHENTICATED_TTL_MS);
    } else if (authn == 1) {
        int allowed = access_review(a, user, verb, path, why, whylen);
        if (allowed >= 0) {
            status = allowed ? 200 : 403;
            psi_authcache_put(a->cache, key, status, now, now + (allowed ? ALLOW_TTL_MS : FORBIDDEN_TTL_MS));
        }
    }
    cJSON_Delete(reply);
    return answer(a, status, why, whylen);
}
