/* rest_e2e: REST round trips against the test bed through kube_rest.
 *
 * In a fresh namespace: create 7 ConfigMaps, list them with limit=2 (pages followed), label and
 * field selectors; get; update with a stale resourceVersion (409 Conflict) and a fresh one;
 * create twice (409 AlreadyExists); patch with all four types; the status subresource of a
 * Pod; delete and a 404 decoded; evict a Pod (dry run, real, and 429 under a
 * PodDisruptionBudget); a non-JSON reply decoded as "Decode"; writes at the write budget's pace;
 * 30 patches at once whose number in flight follows their time; a list past the reply cap
 * refused, and read in pages. Exits non-zero on any failure.
 * Config comes from $KUBECONFIG (the ctest fixture sets it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/util.h"
#include "e2e_util.h"
#include "kube/config.h"
#include "kube/multiget.h"
#include "kube/rest.h"

static struct kube_client *c;
static char ns[64];

static const char *str_at(const cJSON *o, const char *a, const char *b, const char *d)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    if (d)
        x = cJSON_GetObjectItemCaseSensitive(x, d);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static int streq(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

static cJSON *parse(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    if (!j) {
        fprintf(stderr, "bad test JSON: %s\n", json);
        exit(2);
    }
    return j;
}

static char *path_cm(const char *name)
{
    return kube_path("v1", ns, "configmaps", name, NULL);
}

/* Create the object of the JSON text in the collection at path, as one check "create <what>". */
static void create_checked(const char *path, const char *json, const char *what)
{
    struct kube_err err;
    cJSON *b = parse(json);
    cJSON *r = kube_rest_create(c, path, b, NULL, &err);
    e2e_check(r != NULL, "create %s (%s)", what, r ? "" : err.msg);
    cJSON_Delete(r);
    cJSON_Delete(b);
}

static void test_create_list_paginate(void)
{
    struct kube_err err;
    char *coll = path_cm(NULL);
    int created = 0;
    for (int i = 0; i < 7; i++) {
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-%d\",\"labels\":"
                 "{\"set\":\"%s\",\"idx\":\"%d\"}},\"data\":{\"k\":\"v%d\"}}",
                 i, i < 6 ? "pg" : "other", i, i);
        cJSON *b = parse(body);
        cJSON *res = kube_rest_create(c, coll, b, NULL, &err);
        char want[16];
        snprintf(want, sizeof(want), "cm-%d", i);
        if (res && streq(str_at(res, "metadata", "name", NULL), want))
            created++;
        else if (!res)
            printf("# create cm-%d: %s\n", i, err.msg);
        cJSON_Delete(res);
        cJSON_Delete(b);
    }
    e2e_check(created == 7, "created 7 ConfigMaps (%d)", created);

    /* one page by hand: limit=2 gives 2 items and a continue token */
    const char *q[] = {"limit", "2", NULL};
    char *p1 = kube_path_query(coll, q);
    cJSON *page = kube_rest_get(c, p1, &err);
    e2e_check(page && cJSON_GetArraySize(cJSON_GetObjectItem(page, "items")) == 2 &&
                  str_at(page, "metadata", "continue", NULL),
              "a single GET with limit=2 returns 2 items and a continue token");
    cJSON_Delete(page);
    free(p1);

    /* kube_rest_list follows continue: all 7 (plus kube-root-ca.crt) */
    struct kube_list_opts o = {.limit = 2};
    cJSON *all = kube_rest_list(c, coll, &o, &err);
    int n = all ? cJSON_GetArraySize(cJSON_GetObjectItem(all, "items")) : -1;
    e2e_check(n == 8, "list with limit=2 follows continue over 4 pages: %d items (want 7 + kube-root-ca.crt)", n);
    e2e_check(all && kube_rest_list_rv(all) && *kube_rest_list_rv(all) && !str_at(all, "metadata", "continue", NULL),
              "the merged list has the list resourceVersion (%s) and no continue", all ? kube_rest_list_rv(all) : "?");
    int seen[7] = {0};
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(all, "items")) {
        const char *nm = str_at(it, "metadata", "name", NULL);
        int k;
        if (nm && sscanf(nm, "cm-%d", &k) == 1 && k >= 0 && k < 7)
            seen[k]++;
    }
    int once = 1;
    for (int i = 0; i < 7; i++)
        once &= seen[i] == 1;
    e2e_check(once, "each ConfigMap appears exactly once across the pages");
    cJSON_Delete(all);

    o = (struct kube_list_opts){.label_selector = "set=pg,idx notin (4)", .limit = 2};
    all = kube_rest_list(c, coll, &o, &err);
    n = all ? cJSON_GetArraySize(cJSON_GetObjectItem(all, "items")) : -1;
    e2e_check(n == 5, "label selector 'set=pg,idx notin (4)' (escaped in the URL) selects 5 (%d)", n);
    cJSON_Delete(all);

    o = (struct kube_list_opts){.field_selector = "metadata.name=cm-3"};
    all = kube_rest_list(c, coll, &o, &err);
    n = all ? cJSON_GetArraySize(cJSON_GetObjectItem(all, "items")) : -1;
    e2e_check(
        n == 1 &&
            streq(str_at(cJSON_GetArrayItem(cJSON_GetObjectItem(all, "items"), 0), "metadata", "name", NULL), "cm-3"),
        "field selector metadata.name=cm-3 selects cm-3 only (%d)", n);
    cJSON_Delete(all);
    free(coll);
}

static void test_get_update_conflicts(void)
{
    struct kube_err err;
    char *p = path_cm("cm-0");
    cJSON *obj = kube_rest_get(c, p, &err);
    e2e_check(obj && streq(str_at(obj, "data", "k", NULL), "v0"), "get cm-0");
    if (!obj) {
        free(p);
        return;
    }
    cJSON *stale = cJSON_Duplicate(obj, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(obj, "data"), "k", cJSON_CreateString("updated"));
    cJSON *upd = kube_rest_update(c, p, obj, NULL, &err);
    e2e_check(upd && streq(str_at(upd, "data", "k", NULL), "updated"), "update cm-0 with its resourceVersion");
    cJSON_Delete(upd);
    /* the old resourceVersion is stale now: 409 Conflict, decoded */
    cJSON *again = kube_rest_update(c, p, stale, NULL, &err);
    e2e_check(!again && err.status == 409 && !strcmp(err.reason, "Conflict") && strstr(err.msg, "has been modified") &&
                  strstr(err.msg, "/configmaps/cm-0"),
              "stale update: 409 Conflict (%ld %s: %s)", err.status, err.reason, err.msg);
    cJSON_Delete(again);
    /* create an existing name: 409 AlreadyExists */
    char *coll = path_cm(NULL);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(stale, "metadata"), "resourceVersion");
    cJSON *dup = kube_rest_create(c, coll, stale, NULL, &err);
    e2e_check(!dup && err.status == 409 && !strcmp(err.reason, "AlreadyExists"),
              "create twice: 409 AlreadyExists (%ld %s: %s)", err.status, err.reason, err.msg);
    cJSON_Delete(dup);
    /* dry run changes nothing */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(obj, "data"), "k", cJSON_CreateString("dry"));
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(obj, "metadata"), "resourceVersion");
    struct kube_write_opts dry = {.dry_run = 1};
    cJSON *d = kube_rest_update(c, p, obj, &dry, &err);
    cJSON *now = kube_rest_get(c, p, &err);
    e2e_check(d && streq(str_at(d, "data", "k", NULL), "dry") && now &&
                  streq(str_at(now, "data", "k", NULL), "updated"),
              "dry-run update answers the new object and stores nothing");
    cJSON_Delete(d);
    cJSON_Delete(now);
    /* discard_reply: the update is stored, the answer is an empty object; a refusal is still an error */
    cJSON *cur = kube_rest_get(c, p, &err);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cur, "data"), "k", cJSON_CreateString("unread"));
    struct kube_write_opts discard = {.discard_reply = 1};
    cJSON *quiet = kube_rest_update(c, p, cur, &discard, &err);
    now = kube_rest_get(c, p, &err);
    e2e_check(quiet && cJSON_GetArraySize(quiet) == 0 && now && streq(str_at(now, "data", "k", NULL), "unread"),
              "update with discard_reply stores the object and answers an empty object");
    cJSON_Delete(quiet);
    quiet = kube_rest_update(c, p, cur, &discard, &err); /* cur's resourceVersion is stale now */
    e2e_check(!quiet && err.status == 409, "a refused update with discard_reply is still an error (%ld)", err.status);
    cJSON_Delete(quiet);
    cJSON_Delete(cur);
    cJSON_Delete(now);
    cJSON_Delete(stale);
    cJSON_Delete(obj);
    free(coll);
    free(p);
}

static void test_patches(void)
{
    struct kube_err err;
    char *p = path_cm("cm-1");
    cJSON *body = parse("{\"data\":{\"merge\":\"1\"}}");
    cJSON *r = kube_rest_patch(c, p, KUBE_PATCH_MERGE, body, NULL, &err);
    e2e_check(r && streq(str_at(r, "data", "merge", NULL), "1") && streq(str_at(r, "data", "k", NULL), "v1"),
              "merge patch (%s)", r ? "" : err.msg);
    /* without a fieldManager the server names the manager after the User-Agent's first part */
    int ua = 0;
    const cJSON *mf0;
    cJSON_ArrayForEach (mf0, cJSON_GetObjectItem(cJSON_GetObjectItem(r, "metadata"), "managedFields")) {
        if (streq(str_at(mf0, "manager", NULL, NULL), "psi-rebalancer"))
            ua = 1;
    }
    e2e_check(ua, "the User-Agent psi-rebalancer/<version> shows as field manager psi-rebalancer");
    cJSON_Delete(r);
    cJSON_Delete(body);

    body = parse("{\"metadata\":{\"labels\":{\"smp\":\"yes\"}}}");
    r = kube_rest_patch(c, p, KUBE_PATCH_STRATEGIC, body, NULL, &err);
    e2e_check(r && streq(str_at(r, "metadata", "labels", "smp"), "yes") &&
                  streq(str_at(r, "metadata", "labels", "set"), "pg"),
              "strategic merge patch (%s)", r ? "" : err.msg);
    cJSON_Delete(r);
    cJSON_Delete(body);

    body = parse("[{\"op\":\"test\",\"path\":\"/data/merge\",\"value\":\"1\"},"
                 "{\"op\":\"replace\",\"path\":\"/data/merge\",\"value\":\"json\"},"
                 "{\"op\":\"remove\",\"path\":\"/data/k\"}]");
    r = kube_rest_patch(c, p, KUBE_PATCH_JSON, body, NULL, &err);
    e2e_check(r && streq(str_at(r, "data", "merge", NULL), "json") && !str_at(r, "data", "k", NULL),
              "JSON patch (test, replace, remove) (%s)", r ? "" : err.msg);
    cJSON_Delete(r);
    cJSON_Delete(body);
    /* a failing JSON patch test: 422 Invalid, decoded */
    body = parse("[{\"op\":\"test\",\"path\":\"/data/merge\",\"value\":\"nope\"}]");
    r = kube_rest_patch(c, p, KUBE_PATCH_JSON, body, NULL, &err);
    e2e_check(!r && err.status == 422 && !strcmp(err.reason, "Invalid"), "failing JSON patch test op: %ld %s",
              err.status, err.reason);
    cJSON_Delete(r);
    cJSON_Delete(body);

    /* server-side apply: a field manager owns the field; another one conflicts without force */
    char ap[512];
    snprintf(ap, sizeof(ap),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-1\",\"namespace\":\"%s\"},"
             "\"data\":{\"applied\":\"a\"}}",
             ns);
    body = parse(ap);
    struct kube_write_opts mgr_a = {.field_manager = "e2e-a"};
    r = kube_rest_patch(c, p, KUBE_PATCH_APPLY, body, &mgr_a, &err);
    int owned = 0;
    const cJSON *mf;
    cJSON_ArrayForEach (mf, cJSON_GetObjectItem(cJSON_GetObjectItem(r, "metadata"), "managedFields")) {
        if (streq(str_at(mf, "manager", NULL, NULL), "e2e-a") && streq(str_at(mf, "operation", NULL, NULL), "Apply"))
            owned = 1;
    }
    e2e_check(r && streq(str_at(r, "data", "applied", NULL), "a") && owned, "apply with fieldManager e2e-a (%s)",
              r ? "" : err.msg);
    cJSON_Delete(r);
    cJSON_Delete(body);
    snprintf(ap, sizeof(ap),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-1\",\"namespace\":\"%s\"},"
             "\"data\":{\"applied\":\"b\"}}",
             ns);
    body = parse(ap);
    struct kube_write_opts mgr_b = {.field_manager = "e2e-b"};
    r = kube_rest_patch(c, p, KUBE_PATCH_APPLY, body, &mgr_b, &err);
    e2e_check(!r && err.status == 409 && !strcmp(err.reason, "Conflict"),
              "apply by another manager without force: 409 Conflict (%ld %s)", err.status, err.reason);
    cJSON_Delete(r);
    mgr_b.force = 1;
    r = kube_rest_patch(c, p, KUBE_PATCH_APPLY, body, &mgr_b, &err);
    e2e_check(r && streq(str_at(r, "data", "applied", NULL), "b"), "apply with force takes the field (%s)",
              r ? "" : err.msg);
    cJSON_Delete(r);
    cJSON_Delete(body);
    free(p);
}

static void test_status_subresource(void)
{
    struct kube_err err;
    char *coll = kube_path("v1", ns, "pods", NULL, NULL);
    /* bound to a node that does not exist: nobody else writes its status */
    create_checked(coll,
                   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"status-pod\"},"
                   "\"spec\":{\"nodeName\":\"no-such-node\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                   "pod status-pod");
    char *sp = kube_path("v1", ns, "pods", "status-pod", "status");
    cJSON *patch = parse("{\"status\":{\"conditions\":[{\"type\":\"psi.dev/Probe\",\"status\":\"True\"}]},"
                         "\"spec\":{\"activeDeadlineSeconds\":30}}");
    cJSON *r = kube_rest_patch(c, sp, KUBE_PATCH_MERGE, patch, NULL, &err);
    int cond = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(cJSON_GetObjectItem(r, "status"), "conditions")) {
        if (streq(str_at(it, "type", NULL, NULL), "psi.dev/Probe"))
            cond = 1;
    }
    e2e_check(r && cond, "patch of pods/status sets a condition (%s)", r ? "" : err.msg);
    /* the status endpoint ignores spec changes */
    e2e_check(r && !cJSON_GetObjectItem(cJSON_GetObjectItem(r, "spec"), "activeDeadlineSeconds"),
              "the status subresource leaves spec alone");
    cJSON_Delete(r);
    cJSON_Delete(patch);
    free(sp);
    free(coll);
}

static void test_delete_and_404(void)
{
    struct kube_err err;
    char *p = path_cm("cm-2");
    cJSON *r = kube_rest_delete(c, p, NULL, NULL, &err);
    e2e_check(r != NULL, "delete cm-2 (%s)", r ? "" : err.msg);
    cJSON_Delete(r);
    r = kube_rest_get(c, p, &err);
    e2e_check(!r && err.status == 404 && !strcmp(err.reason, "NotFound") && strstr(err.msg, "\"cm-2\" not found") &&
                  strstr(err.msg, "GET https://"),
              "get after delete: 404 NotFound naming the URL (%s)", err.msg);
    cJSON_Delete(r);
    r = kube_rest_delete(c, p, NULL, NULL, &err);
    e2e_check(!r && err.status == 404, "delete again: 404 (%ld)", err.status);
    cJSON_Delete(r);
    /* delete with DeleteOptions (preconditions): a wrong uid is a 409 Conflict */
    char *p3 = path_cm("cm-3");
    cJSON *opts = parse("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":\"wrong\"}}");
    r = kube_rest_delete(c, p3, opts, NULL, &err);
    e2e_check(!r && err.status == 409, "delete with a failing uid precondition: 409 (%ld %s)", err.status, err.reason);
    cJSON_Delete(r);
    cJSON_Delete(opts);
    free(p3);
    free(p);
}

static int pod_gone_or_deleting(const char *name)
{
    struct kube_err err;
    char *p = kube_path("v1", ns, "pods", name, NULL);
    cJSON *r = kube_rest_get(c, p, &err);
    free(p);
    int gone = !r ? err.status == 404 : str_at(r, "metadata", "deletionTimestamp", NULL) != NULL;
    cJSON_Delete(r);
    return gone;
}

static void create_worker_pod(const char *name, const char *app)
{
    char *coll = kube_path("v1", ns, "pods", NULL, NULL);
    char body[512], what[128];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"%s\"}},"
             "\"spec\":{\"nodeName\":\"worker-0\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}],"
             "\"tolerations\":[{\"operator\":\"Exists\"}]}}",
             name, app);
    snprintf(what, sizeof(what), "pod %s on worker-0", name);
    create_checked(coll, body, what);
    free(coll);
}

static void test_evict(void)
{
    struct kube_err err;
    create_worker_pod("evict-me", "evict");
    int rc = kube_rest_evict(c, ns, "evict-me", 1, NULL, &err);
    e2e_check(rc == 0, "dry-run eviction accepted (%s)", rc ? err.msg : "");
    e2e_check(!pod_gone_or_deleting("evict-me"), "after a dry run the pod is untouched");
    rc = kube_rest_evict(c, ns, "evict-me", 0, NULL, &err);
    e2e_check(rc == 0, "eviction accepted (%s)", rc ? err.msg : "");
    int gone = 0;
    for (int i = 0; i < 120 && !gone; i++) {
        gone = pod_gone_or_deleting("evict-me");
        if (!gone)
            usleep(250000);
    }
    e2e_check(gone, "the evicted pod is being deleted or gone");
    rc = kube_rest_evict(c, ns, "no-such-pod", 0, NULL, &err);
    e2e_check(rc == -1 && err.status == 404, "evicting a missing pod: 404 (%ld %s)", err.status, err.reason);

    /* a PodDisruptionBudget that allows no disruption: 429 TooManyRequests */
    create_worker_pod("guarded", "guarded");
    char *pdbs = kube_path("policy/v1", ns, "poddisruptionbudgets", NULL, NULL);
    create_checked(pdbs,
                   "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":\"g\"},"
                   "\"spec\":{\"maxUnavailable\":0,\"selector\":{\"matchLabels\":{\"app\":\"guarded\"}}}}",
                   "PodDisruptionBudget maxUnavailable=0");
    /* wait until the disruption controller counts the pod as healthy: the API server lets a
     * Pending pod be evicted whatever its budget says, and kwok makes it Running a moment after
     * it is created */
    char *pp = kube_path("policy/v1", ns, "poddisruptionbudgets", "g", NULL);
    int observed = 0;
    for (int i = 0; i < 480 && !observed; i++) {
        cJSON *g = kube_rest_get(c, pp, &err);
        const cJSON *st = cJSON_GetObjectItem(g, "status");
        const cJSON *og = cJSON_GetObjectItem(st, "observedGeneration");
        const cJSON *healthy = cJSON_GetObjectItem(st, "currentHealthy");
        observed = cJSON_IsNumber(og) && og->valuedouble >= 1 && cJSON_IsNumber(healthy) && healthy->valuedouble == 1;
        cJSON_Delete(g);
        if (!observed)
            usleep(250000);
    }
    e2e_check(observed, "the disruption controller observed the budget and counts the guarded pod healthy");
    rc = kube_rest_evict(c, ns, "guarded", 0, NULL, &err);
    e2e_check(rc == -1 && err.status == 429 && !strcmp(err.reason, "TooManyRequests") &&
                  strstr(err.msg, "disruption budget"),
              "eviction refused by the budget: 429 TooManyRequests, distinguishable (%ld %s: %s)", err.status,
              err.reason, err.msg);
    e2e_check(!pod_gone_or_deleting("guarded"), "the guarded pod stays");
    free(pp);
    free(pdbs);
}

static void test_not_json(void)
{
    struct kube_err err;
    cJSON *r = kube_rest_get(c, "/healthz", &err); /* the apiserver answers "ok" as text/plain */
    e2e_check(!r && !strcmp(err.reason, "Decode") && strstr(err.msg, "/healthz") && strstr(err.msg, "not JSON"),
              "a non-JSON reply is a Decode error naming the URL (%s)", err.msg);
    cJSON_Delete(r);
}

static void test_rate_limit_applies_to_writes(void)
{
    struct kube_err err;
    /* 10 writes at 20 qps with burst 1: at least 9 waits of 50 ms; reads are not limited */
    kube_client_set_rate_limit(c, 20, 1);
    char *p = path_cm("cm-4");
    cJSON *patch = parse("{\"data\":{\"n\":\"x\"}}");
    int64_t t0 = base_mono_ms();
    int ok = 1;
    for (int i = 0; i < 10; i++) {
        cJSON *r = kube_rest_patch(c, p, KUBE_PATCH_MERGE, patch, NULL, &err);
        ok &= r != NULL;
        cJSON_Delete(r);
    }
    long ms = (long)(base_mono_ms() - t0);
    /* a lower bound only: the limiter must have made us wait (no upper bound is asserted) */
    e2e_check(ok && ms >= 450, "10 writes at 20 QPS, burst 1 took >= 450 ms (%ld ms)", ms);
    kube_client_set_rate_limit(c, 5, 10);
    cJSON_Delete(patch);
    free(p);
}

/* kube_multiget_fn: each reply counted once, with the index it answers. */
static void count_reply(size_t i, const cJSON *obj, const struct kube_err *err, void *ud)
{
    int *seen = ud;
    if (obj)
        seen[i]++;
    else
        fprintf(stderr, "patch %zu: %s\n", i, err->msg);
}

/* 30 merge patches of one ConfigMap sent at once, from 1 in flight up to 30 as their time
 * asks (at 200 writes a second, more than one as soon as a patch takes over 5 ms): each is
 * answered once, every key lands, and the budget's pace is kept (a lower bound only). */
static void test_multirequest_writes(void)
{
    struct kube_err err;
    char *coll = path_cm(NULL), *p = path_cm("multi");
    create_checked(coll, "{\"metadata\":{\"name\":\"multi\"}}", "ConfigMap multi");
    enum { N = 30 };
    struct kube_multi_req reqs[N];
    char bodies[N][64];
    int seen[N] = {0};
    for (int i = 0; i < N; i++) {
        snprintf(bodies[i], sizeof(bodies[i]), "{\"data\":{\"k%02d\":\"v\"}}", i);
        reqs[i] = (struct kube_multi_req){"PATCH", p, "application/merge-patch+json", bodies[i]};
    }
    kube_client_set_rate_limit(c, 200, 1);
    struct kube_multiget_opts o = {.max_in_flight = N, .min_in_flight = 1};
    int64_t t0 = base_mono_ms();
    int rc = kube_multirequest(c, reqs, N, &o, count_reply, seen, &err);
    long ms = (long)(base_mono_ms() - t0);
    kube_client_set_rate_limit(c, 0, 0);
    int once = 0;
    for (int i = 0; i < N; i++)
        once += seen[i] == 1;
    e2e_check(rc == 0 && once == N, "30 patches at once: each answered once (%d of 30; %s)", once,
              rc ? err.msg : "ran");
    cJSON *cm = kube_rest_get(c, p, &err);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(cm, "data");
    e2e_check(cJSON_GetArraySize(data) == N, "every patch landed: %d keys of 30", cJSON_GetArraySize(data));
    e2e_check(ms >= 140, "30 writes at 200 a second, burst 1, took >= 140 ms (%ld ms)", ms);
    cJSON_Delete(cm);
    free(coll);
    free(p);
}

/* The reply cap (32 MiB): a list of 36 ConfigMaps of 0.95 MiB each in one reply is refused
 * with an error naming the cap; the same list in pages of 4 is read whole. */
static void test_reply_cap(void)
{
    struct kube_err err;
    char *coll = path_cm(NULL);
    size_t vlen = 950 * 1024;
    char *big = malloc(vlen + 256);
    if (!big || !coll) {
        e2e_check(0, "reply cap: out of memory");
        free(big);
        free(coll);
        return;
    }
    int created = 0;
    for (int i = 0; i < 36; i++) {
        int n = snprintf(big, 256,
                         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"big-%d\","
                         "\"labels\":{\"set\":\"big\"}},\"data\":{\"k\":\"",
                         i);
        memset(big + n, 'x', vlen);
        snprintf(big + n + vlen, 256, "\"}}");
        cJSON *b = parse(big);
        cJSON *r = kube_rest_create(c, coll, b, &(struct kube_write_opts){.discard_reply = 1}, &err);
        created += r != NULL;
        cJSON_Delete(r);
        cJSON_Delete(b);
    }
    e2e_check(created == 36, "create 36 ConfigMaps of 0.95 MiB (%d)", created);
    struct kube_list_opts whole = {.label_selector = "set=big"};
    cJSON *all = kube_rest_list(c, coll, &whole, &err);
    e2e_check(!all && err.status == 0 && strstr(err.msg, "larger than 33554432 bytes"),
              "a 34 MiB list in one reply is refused at the 32 MiB cap (%s)", all ? "read whole" : err.msg);
    cJSON_Delete(all);
    struct kube_list_opts paged = {.label_selector = "set=big", .limit = 4};
    all = kube_rest_list(c, coll, &paged, &err);
    e2e_check(all && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(all, "items")) == 36,
              "the same list in pages of 4 is read whole (%s)", all ? "36 items" : err.msg);
    cJSON_Delete(all);
    free(big);
    free(coll);
}

int main(void)
{
    struct kube_config *cfg = NULL;
    c = e2e_kube_client("rest_e2e", NULL, &cfg);
    if (!c)
        return 2;
    kube_client_set_rate_limit(c, 0, 0);
    e2e_namespace_create(c, "rest-e2e", ns, sizeof(ns));
    test_create_list_paginate();
    test_get_update_conflicts();
    test_patches();
    test_status_subresource();
    test_delete_and_404();
    test_evict();
    test_not_json();
    test_rate_limit_applies_to_writes();
    test_multirequest_writes();
    test_reply_cap();

    e2e_namespace_delete(c, ns);
    kube_client_free(c);
    kube_config_free(cfg);
    return e2e_report();
}
