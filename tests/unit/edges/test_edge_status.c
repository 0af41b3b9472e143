/* Unit tests of the API server's answers to the status writer and to a watch, recorded from a
 * real server (replay.h): a stale status write is a 409 Conflict (the writer in reconciler.c
 * reads again and retries once on that status only), a status the schema refuses is a 422
 * whose message names the field (what the log line shows), and a watch from a
 * resourceVersion the server no longer holds answers an ERROR event with code 410, which
 * kube_watch turns into a relist. The e2e tests keep the status as the operator writes it
 * and the informer's relist against a real compaction (informer_410). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "kube/watch.h"
#include "replay.h"

#define STATUS_PATH "/apis/rebalance.psi.dev/v1alpha1/psirebalances/record/status"

/* PUT the recorded PsiRebalance as its status through r's client. */
static cJSON *put_status(struct replay *r, struct kube_err *err)
{
    cJSON *obj = replay_reply_body("psirebalance_get");
    cJSON *res = kube_rest_update(r->client, STATUS_PATH, obj, &(struct kube_write_opts){.discard_reply = 1}, err);
    cJSON_Delete(obj);
    return res;
}

static void test_status_write_and_conflict(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "psirebalance_status_update");
    replay_expect(&r, "psirebalance_status_conflict");
    struct kube_err err;
    cJSON *res = put_status(&r, &err);
    assert_non_null(res);
    assert_null(res->child); /* discard_reply: nothing parsed */
    cJSON_Delete(res);
    assert_null(put_status(&r, &err));
    assert_int_equal(err.status, 409); /* the one status write_status retries on */
    assert_string_equal(err.reason, "Conflict");
    assert_non_null(strstr(err.msg, "the object has been modified"));
    replay_done(&r);
    replay_release(&r);
}

static void test_invalid_status_names_the_field(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "psirebalance_status_invalid");
    struct kube_err err;
    assert_null(put_status(&r, &err));
    assert_int_equal(err.status, 422);
    assert_string_equal(err.reason, "Invalid");
    assert_non_null(strstr(err.msg, "status.conditions[0]"));
    replay_done(&r);
    replay_release(&r);
}

static void test_finalizer_patch(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "psirebalance_finalizer_patch");
    cJSON *patch = cJSON_Parse("[{\"op\": \"add\", \"path\": \"/metadata/finalizers\", \"value\": [\"x\"]}]");
    struct kube_err err;
    cJSON *res = kube_rest_patch(r.client, "/apis/rebalance.psi.dev/v1alpha1/psirebalances/record", KUBE_PATCH_JSON,
                                 patch, NULL, &err);
    assert_non_null(res);
    assert_non_null(jx_get(res, "metadata.finalizers"));
    assert_string_equal(r.sent[0].path, "/apis/rebalance.psi.dev/v1alpha1/psirebalances/record");
    cJSON_Delete(res), cJSON_Delete(patch);
    replay_done(&r);
    replay_release(&r);
}

static void test_watch_from_a_compacted_version_is_gone(void **state)
{
    (void)state;
    cJSON *rec = NULL;
    {
        struct replay r;
        replay_init(&r);
        replay_expect(&r, "node_watch_gone");
        rec = cJSON_Duplicate(r.queued[0], 1);
        replay_release(&r);
    }
    assert_int_equal((long)jx_get(rec, "reply.status")->valuedouble, 200); /* the error comes as an event */
    const char *body = jx_str(rec, "reply.body");
    assert_non_null(body);
    size_t errors = 0;
    for (const char *line = body; *line;) {
        size_t n = strcspn(line, "\n");
        cJSON *ev = cJSON_ParseWithLength(line, n);
        struct kube_watch_event e;
        char why[128];
        if (ev && kube_watch_event_decode(ev, &e, why, sizeof(why)) == 0 && e.error) {
            assert_int_equal(e.code, 410); /* watch_error_event: a relist */
            assert_non_null(e.message);
            errors++;
        }
        cJSON_Delete(ev);
        line += n + (line[n] == '\n');
    }
    assert_int_equal(errors, 1);
    cJSON_Delete(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_write_and_conflict),
        cmocka_unit_test(test_invalid_status_names_the_field),
        cmocka_unit_test(test_finalizer_patch),
        cmocka_unit_test(test_watch_from_a_compacted_version_is_gone),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}
