/* Unit tests of tainter_write through the transport seam, answered by the API server's
 * recorded replies (replay.h): a conflict rebuilds the patch from a fresh read and sends it
 * once more, a refusal keeps the server's message, a vanished node or a forbidden write is
 * not retried. The e2e tests (tests/e2e/rebalance) keep what the taint means to the cluster. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "reconcile/status/nodeproj.h"
#include "reconcile/tainter.h"
#include "replay.h"

static const struct taintpatch_taint TAINT = {"rebalance.psi.dev/pressure", "PreferNoSchedule", "record"};

/* The node as the recorded GET shows it, with the resourceVersion the cache holds. */
static struct nodeproj *cached_node(const char *rv)
{
    cJSON *node = replay_reply_body("node_get");
    struct nodeproj *p = nodeproj_project(node, NULL);
    cJSON_Delete(node);
    assert_non_null(p);
    if (rv)
        snprintf(p->rv, sizeof(p->rv), "%s", rv);
    return p;
}

/* The value the patch sent as request i tests /metadata/resourceVersion against. */
static const char *tested_rv(const struct replay *r, size_t i, cJSON **patch)
{
    *patch = cJSON_Parse(r->sent[i].body);
    const cJSON *op;
    cJSON_ArrayForEach (op, *patch) {
        const char *path = jx_str(op, "path");
        if (!strcmp(jx_str(op, "op"), "test") && path && !strcmp(path, "/metadata/resourceVersion"))
            return jx_str(op, "value");
    }
    return NULL;
}

static void test_conflict_rereads_and_retries(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "node_patch_stale"); /* the cache's resourceVersion is stale */
    replay_expect(&r, "node_get");
    replay_expect(&r, "node_patch_taint");
    struct reconciler_counters counters = {0};
    struct tainter tw = {r.client, NULL, &counters};
    struct nodeproj *node = cached_node("1");
    char rv[32];
    struct kube_err err;
    assert_int_equal(tainter_write(&tw, node, &TAINT, TAINTPATCH_ADD, rv, sizeof(rv), &err), 1);
    replay_done(&r);
    cJSON *written = replay_reply_body("node_patch_taint"), *fresh = replay_reply_body("node_get"), *p1, *p2;
    assert_string_equal(rv, jx_str(written, "metadata.resourceVersion"));
    assert_string_equal(tested_rv(&r, 0, &p1), "1");
    assert_string_equal(tested_rv(&r, 2, &p2), jx_str(fresh, "metadata.resourceVersion"));
    cJSON_Delete(p1), cJSON_Delete(p2), cJSON_Delete(written), cJSON_Delete(fresh);
    nodeproj_free(node);
    replay_release(&r);
}

static void test_invalid_keeps_servers_message(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    /* a refusal may be a failed test of the patch: read again, send once more, then give up */
    replay_expect(&r, "node_patch_invalid");
    replay_expect(&r, "node_get");
    replay_expect(&r, "node_patch_invalid");
    struct reconciler_counters counters = {0};
    struct tainter tw = {r.client, NULL, &counters};
    struct nodeproj *node = cached_node(NULL);
    char rv[32];
    struct kube_err err;
    assert_int_equal(tainter_write(&tw, node, &TAINT, TAINTPATCH_ADD, rv, sizeof(rv), &err), -1);
    replay_done(&r);
    assert_int_equal(err.status, 422);
    assert_string_equal(err.reason, "Invalid");
    cJSON *status = replay_reply_body("node_patch_invalid");
    assert_non_null(strstr(err.msg, jx_str(status, "message"))); /* what the log line says */
    cJSON_Delete(status);
    nodeproj_free(node);
    replay_release(&r);
}

static void test_vanished_node_is_not_retried(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "node_patch_missing");
    struct reconciler_counters counters = {0};
    struct tainter tw = {r.client, NULL, &counters};
    /* the cache still holds a node the server has deleted */
    cJSON *obj = cJSON_Parse("{\"metadata\": {\"name\": \"worker-gone\", \"resourceVersion\": \"5\"}}");
    struct nodeproj *gone = nodeproj_project(obj, NULL);
    cJSON_Delete(obj);
    assert_non_null(gone);
    char rv[32];
    struct kube_err err;
    assert_int_equal(tainter_write(&tw, gone, &TAINT, TAINTPATCH_ADD, rv, sizeof(rv), &err), -1);
    replay_done(&r);
    assert_int_equal(err.status, 404);
    assert_string_equal(err.reason, "NotFound");
    nodeproj_free(gone);
    replay_release(&r);
}

static void test_forbidden_is_not_retried(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "node_patch_forbidden");
    struct reconciler_counters counters = {0};
    struct tainter tw = {r.client, NULL, &counters};
    struct nodeproj *node = cached_node(NULL);
    char rv[32];
    struct kube_err err;
    assert_int_equal(tainter_write(&tw, node, &TAINT, TAINTPATCH_ADD, rv, sizeof(rv), &err), -1);
    replay_done(&r);
    assert_int_equal(err.status, 403);
    assert_string_equal(err.reason, "Forbidden");
    nodeproj_free(node);
    replay_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conflict_rereads_and_retries),
        cmocka_unit_test(test_invalid_keeps_servers_message),
        cmocka_unit_test(test_vanished_node_is_not_retried),
        cmocka_unit_test(test_forbidden_is_not_retried),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}
