/* Unit tests of the moves' API answers through the transport seam, answered by the API
 * server's recorded replies (replay.h): what act does with an Eviction's or a migration's
 * answer (kube_rest_evict / kube_rest_create, then evictor_outcome / migrate_create_outcome,
 * as act.c's move_one does). The e2e tests (tests/e2e/rebalance) keep KubeVirt's own answer
 * (429 "Eviction triggered evacuation") and what a move does to the cluster. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "base/jx.h"
#include "reconcile/move/evictor.h"
#include "reconcile/move/migrate.h"
#include "replay.h"

#define NS "psi-record"

/* Evict ns/pod through a client answered by recording name; the outcome act would see. */
static enum evictor_outcome evict(const char *name, const char *pod, int dry, struct kube_err *err)
{
    struct replay r;
    replay_init(&r);
    replay_expect(&r, name);
    enum evictor_outcome out = EVICTOR_EVICTED;
    if (kube_rest_evict(r.client, NS, pod, dry, "psi-rebalancer", err) != 0)
        out = evictor_outcome(err->status, err->msg);
    replay_done(&r);
    cJSON *sent = cJSON_Parse(r.sent[0].body);
    assert_string_equal(jx_str(sent, "kind"), "Eviction");
    assert_string_equal(jx_str(sent, "metadata.name"), pod);
    assert_int_equal(dry, strstr(r.sent[0].path, "dryRun=All") != NULL);
    cJSON_Delete(sent);
    replay_release(&r);
    return out;
}

static void test_pdb_refusal_is_refused(void **state)
{
    (void)state;
    struct kube_err err;
    assert_int_equal(evict("pod_evict_refused", "guarded", 0, &err), EVICTOR_REFUSED);
    assert_int_equal(err.status, 429);
    assert_string_equal(err.reason, "TooManyRequests");
    assert_non_null(strstr(err.msg, "disruption budget"));
}

static void test_accepted_eviction(void **state)
{
    (void)state;
    struct kube_err err;
    assert_int_equal(evict("pod_evict", "free", 0, &err), EVICTOR_EVICTED);
    assert_int_equal(evict("pod_evict_dry_run", "free", 1, &err), EVICTOR_EVICTED);
}

static void test_vanished_pod_is_gone(void **state)
{
    (void)state;
    struct kube_err err;
    assert_int_equal(evict("pod_evict_missing", "gone", 0, &err), EVICTOR_GONE);
    assert_int_equal(err.status, 404);
}

/* Create the recorded migration through a client answered by recording name. */
static enum evictor_outcome create_migration(const char *name, struct kube_err *err)
{
    struct replay r;
    replay_init(&r);
    replay_expect(&r, name);
    cJSON *rec = replay_reply_body("vmim_create");
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "apiVersion", "kubevirt.io/v1");
    cJSON_AddStringToObject(body, "kind", "VirtualMachineInstanceMigration");
    cJSON_AddItemToObject(body, "spec", cJSON_Duplicate(jx_get(rec, "spec"), 1));
    cJSON *made = kube_rest_create(r.client, "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachineinstancemigrations",
                                   body, NULL, err);
    enum evictor_outcome out = migrate_create_outcome(made ? 0 : err->status);
    replay_done(&r);
    cJSON_Delete(made), cJSON_Delete(body), cJSON_Delete(rec);
    replay_release(&r);
    return out;
}

static void test_migration_created_and_conflict(void **state)
{
    (void)state;
    struct kube_err err;
    assert_int_equal(create_migration("vmim_create", &err), EVICTOR_MIGRATING);
    assert_int_equal(create_migration("vmim_create_exists", &err), EVICTOR_REFUSED);
    assert_int_equal(err.status, 409);
    assert_string_equal(err.reason, "AlreadyExists");
}

static void test_deleting_a_vanished_migration(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "vmim_delete");
    replay_expect(&r, "vmim_delete_missing");
    const char *path = "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachineinstancemigrations/psi-vm-a";
    struct kube_err err;
    cJSON *res = kube_rest_delete(r.client, path, NULL, NULL, &err);
    assert_non_null(res);
    cJSON_Delete(res);
    assert_null(kube_rest_delete(r.client, path, NULL, NULL, &err));
    assert_int_equal(err.status, 404); /* act.c's delete_migration: gone already, not a failure */
    assert_string_equal(err.reason, "NotFound");
    replay_done(&r);
    replay_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pdb_refusal_is_refused),        cmocka_unit_test(test_accepted_eviction),
        cmocka_unit_test(test_vanished_pod_is_gone),          cmocka_unit_test(test_migration_created_and_conflict),
        cmocka_unit_test(test_deleting_a_vanished_migration),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}
