/* replay: recorded API server replies as a kube_transport (see replay.h). */
#include "replay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/transport.h"

static cJSON *load(const char *name)
{
    const char *dir = getenv("PSI_TESTDATA");
    char path[512];
    snprintf(path, sizeof(path), "%s/replies/%s.json", dir ? dir : "tests/testdata", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("no recording %s (run tests/record/record_replies.py)", path);
    char buf[1 << 17];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    if (n == sizeof(buf) - 1)
        fail_msg("recording %s is larger than %zu bytes", path, sizeof(buf) - 1);
    buf[n] = 0;
    cJSON *j = cJSON_Parse(buf);
    if (!j)
        fail_msg("recording %s is not JSON", path);
    return j;
}

static const char *str_at(const cJSON *j, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, a), b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The length of path without its query. */
static size_t bare_len(const char *path)
{
    return strcspn(path, "?");
}

static int replay_send(void *ud, const struct kube_transport_request *req, long *status, struct kube_rest_reply *reply,
                       struct kube_err *err)
{
    (void)err;
    struct replay *r = ud;
    size_t i = r->next;
    if (i >= r->nqueued)
        fail_msg("request %zu (%s %s) was not expected: %zu replies queued", i + 1, req->method, req->path, r->nqueued);
    r->sent[i] = (struct replay_sent){strdup(req->method), strdup(req->path), req->body ? strdup(req->body) : NULL};
    r->next++;
    const cJSON *rec = r->queued[i];
    const char *method = str_at(rec, "request", "method"), *path = str_at(rec, "request", "path");
    assert_non_null(method);
    assert_non_null(path);
    assert_string_equal(req->method, method);
    if (bare_len(req->path) != bare_len(path) || strncmp(req->path, path, bare_len(path)) != 0)
        fail_msg("request %zu: sent %s %s, recorded %s %s", i + 1, req->method, req->path, method, path);
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(rec, "reply");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(rep, "status");
    const char *body = str_at(rec, "reply", "body");
    assert_true(cJSON_IsNumber(st));
    *status = (long)st->valuedouble;
    if (body && *body && kube_rest_reply_write((char *)body, 1, strlen(body), reply) != strlen(body))
        fail_msg("request %zu: the recorded reply does not fit the client's cap", i + 1);
    return 0;
}

void replay_init(struct replay *r)
{
    memset(r, 0, sizeof(*r));
    /* .invalid never resolves (RFC 6761): were a request to miss the seam, it would fail */
    r->cfg.server = "https://replay.invalid";
    r->cfg.effective_server = r->cfg.server;
    struct kube_err err;
    r->client = kube_client_new(&r->cfg, &err);
    assert_non_null(r->client);
    kube_client_set_transport(r->client, &(struct kube_transport){replay_send, r});
    kube_client_set_rate_limit(r->client, 0, 0);
}

void replay_expect(struct replay *r, const char *name)
{
    assert_true(r->nqueued < REPLAY_MAX);
    r->queued[r->nqueued++] = load(name);
}

cJSON *replay_reply_body(const char *name)
{
    cJSON *rec = load(name);
    const char *body = str_at(rec, "reply", "body");
    cJSON *j = body ? cJSON_Parse(body) : NULL;
    cJSON_Delete(rec);
    if (!j)
        fail_msg("recording %s has no JSON reply body", name);
    return j;
}

void replay_done(const struct replay *r)
{
    if (r->next != r->nqueued)
        fail_msg("%zu of %zu queued replies were asked for", r->next, r->nqueued);
}

void replay_release(struct replay *r)
{
    kube_client_free(r->client);
    for (size_t i = 0; i < r->nqueued; i++)
        cJSON_Delete(r->queued[i]);
    for (size_t i = 0; i < r->next; i++) {
        free(r->sent[i].method);
        free(r->sent[i].path);
        free(r->sent[i].body);
    }
    memset(r, 0, sizeof(*r));
}
