/* psi_promtoken: TokenRequest-backed bearer token of the pressure-reading ServiceAccount. */
#include "psi/promtoken.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"

#define MAX_TOKEN_LEN (16 * 1024)

struct psi_promtoken {
    struct kube_client *client;
    char *ns, *name;
    char identity[320];
    char *token;
    int64_t expires_ms, renew_ms;
    int64_t next_try_ms;  /* after a failed request: not before this */
    struct kube_err last; /* the last failure, repeated until the next try */
};

struct psi_promtoken *psi_promtoken_new(struct kube_client *client, const char *ns, const char *name)
{
    struct psi_promtoken *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->client = client;
    t->ns = strdup(ns);
    t->name = strdup(name);
    if (!t->ns || !t->name) {
        psi_promtoken_free(t);
        return NULL;
    }
    snprintf(t->identity, sizeof(t->identity), "ServiceAccount %s/%s", ns, name);
    return t;
}

static void drop_token(struct psi_promtoken *t)
{
    if (t->token) {
        memset(t->token, 0, strlen(t->token));
        free(t->token);
        t->token = NULL;
    }
}

void psi_promtoken_free(struct psi_promtoken *t)
{
    if (!t)
        return;
    drop_token(t);
    free(t->ns);
    free(t->name);
    free(t);
}

int64_t psi_promtoken_renew_at(int64_t issued_ms, int64_t expires_ms)
{
    if (expires_ms <= issued_ms)
        return issued_ms;
    return issued_ms + (expires_ms - issued_ms) / 5 * 4;
}

int psi_promtoken_parse(const cJSON *reply, char **token, int64_t *expires_ms, char *errbuf, size_t errlen)
{
    *token = NULL;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(reply, "status");
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(status, "token");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(status, "expirationTimestamp");
    if (!cJSON_IsString(tok) || !cJSON_IsString(exp))
        return psi_errbuf_fail(errbuf, errlen, "the reply has no status.token and status.expirationTimestamp");
    size_t n = strlen(tok->valuestring);
    if (n == 0 || n > MAX_TOKEN_LEN)
        return psi_errbuf_fail(errbuf, errlen, "status.token is %s", n ? "too long" : "empty");
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)tok->valuestring[i]))
            return psi_errbuf_fail(errbuf, errlen, "status.token holds a character that cannot go in a header");
    int64_t s;
    if (api_json_parse_time(exp->valuestring, &s) < 0 || s <= 0 || s > INT64_MAX / 1000)
        return psi_errbuf_fail(errbuf, errlen, "status.expirationTimestamp is not an RFC 3339 time");
    *token = strdup(tok->valuestring);
    if (!*token)
        return psi_errbuf_fail(errbuf, errlen, "out of memory");
    *expires_ms = s * 1000;
    return 0;
}

/* What to check when the request failed with HTTP status. */
static const char *hint(long status)
{
    switch (status) {
    case 403:
        return "the operator's Role psi-rebalancer-pressure-token (config/rbac) must allow create on "
               "serviceaccounts/token for this ServiceAccount";
    case 404:
        return "the ServiceAccount does not exist: config/rbac (or the OLM bundle) creates it beside the operator";
    case 0: return "the API server did not answer";
    default: return "the API server refused the request";
    }
}

/* Request a token; on success it replaces the one held. */
static int request(struct psi_promtoken *t, int64_t now_ms, struct kube_err *err)
{
    char *path = kube_path("v1", t->ns, "serviceaccounts", t->name, "token");
    cJSON *body = cJSON_CreateObject();
    cJSON *spec = body ? cJSON_AddObjectToObject(body, "spec") : NULL;
    if (!path || !spec || !cJSON_AddStringToObject(body, "apiVersion", "authentication.k8s.io/v1") ||
        !cJSON_AddStringToObject(body, "kind", "TokenRequest") ||
        !cJSON_AddNumberToObject(spec, "expirationSeconds", PSI_PROMTOKEN_LIFETIME_S)) {
        free(path);
        cJSON_Delete(body);
        return kube_err_set(err, 0, "NoMemory", "out of memory");
    }
    cJSON *reply = kube_rest_create(t->client, path, body, NULL, err);
    free(path);
    cJSON_Delete(body);
    if (!reply)
        return -1;
    char *tok = NULL, why[256];
    int64_t expires_ms = 0;
    int rc = psi_promtoken_parse(reply, &tok, &expires_ms, why, sizeof(why));
    cJSON_Delete(reply);
    if (rc < 0)
        return kube_err_set(err, 200, "Decode", "%s", why);
    drop_token(t);
    t->token = tok;
    t->expires_ms = expires_ms;
    t->renew_ms = psi_promtoken_renew_at(now_ms, expires_ms);
    return 0;
}

const char *psi_promtoken_get(struct psi_promtoken *t, int64_t now_ms, struct kube_err *st)
{
    kube_err_clear(st);
    int held = t->token && now_ms < t->expires_ms;
    if (held && now_ms < t->renew_ms)
        return t->token;
    if (now_ms >= t->next_try_ms) {
        if (request(t, now_ms, &t->last) == 0) {
            t->next_try_ms = 0;
            return t->token;
        }
        t->next_try_ms = now_ms + PSI_PROMTOKEN_RETRY_S * 1000;
    }
    if (held)
        return t->token; /* renewal failed; the token in hand is still valid */
    drop_token(t);
    psi_fail(st, PSI_REASON_CREDENTIAL, "no token for %s (TokenRequest: HTTP %ld %s: %s): %s", t->identity,
             t->last.status, t->last.reason, t->last.msg, hint(t->last.status));
    return NULL;
}
