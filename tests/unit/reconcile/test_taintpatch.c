/* Unit tests of controller/reconcile/taint/taintpatch: race-free JSON Patches for our Node taint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/taint/taintpatch.h"
#include "testutil.h"

static const struct taintpatch_taint ours = {"rebalance.psi.dev/pressure", "PreferNoSchedule", "workers"};

/* Apply patch (test, then replace or add on /spec/taints) to node the way the API server
 * would: fails the test when the test op does not hold. Returns the new taints (borrowed). */
static const cJSON *apply(cJSON *node, const cJSON *patch)
{
    assert_true(cJSON_IsArray(patch));
    assert_int_equal(cJSON_GetArraySize(patch), 2);
    const cJSON *test = cJSON_GetArrayItem(patch, 0), *write = cJSON_GetArrayItem(patch, 1);
    assert_string_equal(cJSON_GetObjectItem(test, "op")->valuestring, "test");
    const char *tpath = cJSON_GetObjectItem(test, "path")->valuestring;
    const cJSON *have = strcmp(tpath, "/spec/taints") == 0
                            ? cJSON_GetObjectItem(cJSON_GetObjectItem(node, "spec"), "taints")
                            : cJSON_GetObjectItem(cJSON_GetObjectItem(node, "metadata"), "resourceVersion");
    assert_non_null(have);
    assert_true(cJSON_Compare(have, cJSON_GetObjectItem(test, "value"), true));
    assert_string_equal(cJSON_GetObjectItem(write, "path")->valuestring, "/spec/taints");
    cJSON *spec = cJSON_GetObjectItem(node, "spec");
    cJSON_DeleteItemFromObject(spec, "taints");
    cJSON_AddItemToObject(spec, "taints", cJSON_Duplicate(cJSON_GetObjectItem(write, "value"), true));
    return cJSON_GetObjectItem(spec, "taints");
}

static const char *node_with_taints =
    "{\"metadata\":{\"name\":\"w1\",\"resourceVersion\":\"42\"},\"spec\":{\"taints\":["
    "{\"key\":\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\",\"timeAdded\":\"2024-05-01T10:00:00Z\"},"
    "{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoExecute\"}]}}";

static cJSON *taints_of(cJSON *node)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(node, "spec"), "taints");
}

static void test_add_keeps_other_taints(void **state)
{
    (void)state;
    cJSON *node = parse(node_with_taints);
    cJSON *before = cJSON_Duplicate(taints_of(node), true);
    cJSON *patch = NULL;
    char err[256];
    assert_int_equal(taintpatch_build(taints_of(node), "42", &ours, TAINTPATCH_ADD, &patch, err, sizeof(err)),
                     TAINTPATCH_PATCH);
    /* The test op guards the very list the patch was computed from. */
    const cJSON *test = cJSON_GetArrayItem(patch, 0);
    assert_string_equal(cJSON_GetObjectItem(test, "op")->valuestring, "test");
    assert_string_equal(cJSON_GetObjectItem(test, "path")->valuestring, "/spec/taints");
    assert_true(cJSON_Compare(cJSON_GetObjectItem(test, "value"), before, true));
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(patch, 1), "op")->valuestring, "replace");
    const cJSON *after = apply(node, patch);
    assert_int_equal(cJSON_GetArraySize(after), 3);
    assert_true(cJSON_Compare(cJSON_GetArrayItem(after, 0), cJSON_GetArrayItem(before, 0), true));
    assert_true(cJSON_Compare(cJSON_GetArrayItem(after, 1), cJSON_GetArrayItem(before, 1), true));
    const cJSON *mine = cJSON_GetArrayItem(after, 2);
    assert_string_equal(cJSON_GetObjectItem(mine, "key")->valuestring, "rebalance.psi.dev/pressure");
    assert_string_equal(cJSON_GetObjectItem(mine, "value")->valuestring, "workers");
    assert_string_equal(cJSON_GetObjectItem(mine, "effect")->valuestring, "PreferNoSchedule");
    assert_true(taintpatch_has(after, &ours));
    assert_string_equal(taintpatch_owner(after, ours.key, ours.effect), "workers");
    cJSON_Delete(patch);
    /* Idempotent: adding again is a no-op. */
    assert_int_equal(taintpatch_build(after, "43", &ours, TAINTPATCH_ADD, &patch, err, sizeof(err)), TAINTPATCH_NOOP);
    assert_null(patch);
    cJSON_Delete(before);
    cJSON_Delete(node);
}

static void test_remove_keeps_other_taints(void **state)
{
    (void)state;
    cJSON *node =
        parse("{\"metadata\":{\"resourceVersion\":\"7\"},\"spec\":{\"taints\":["
              "{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
              "{\"key\":\"rebalance.psi.dev/pressure\",\"value\":\"workers\",\"effect\":\"PreferNoSchedule\"},"
              "{\"key\":\"b\",\"value\":\"x\",\"effect\":\"PreferNoSchedule\"}]}}");
    cJSON *patch = NULL;
    char err[256];
    assert_true(taintpatch_has(taints_of(node), &ours));
    assert_int_equal(taintpatch_build(taints_of(node), "7", &ours, TAINTPATCH_REMOVE, &patch, err, sizeof(err)),
                     TAINTPATCH_PATCH);
    const cJSON *after = apply(node, patch);
    assert_int_equal(cJSON_GetArraySize(after), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(after, 0), "key")->valuestring, "a");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(after, 1), "key")->valuestring, "b");
    assert_false(taintpatch_has(after, &ours));
    cJSON_Delete(patch);
    /* Removing when absent: nothing to do. */
    assert_int_equal(taintpatch_build(after, "8", &ours, TAINTPATCH_REMOVE, &patch, err, sizeof(err)), TAINTPATCH_NOOP);
    assert_null(patch);
    assert_int_equal(taintpatch_build(NULL, "8", &ours, TAINTPATCH_REMOVE, &patch, err, sizeof(err)), TAINTPATCH_NOOP);
    cJSON_Delete(node);
}

static void test_remove_last_taint_leaves_empty_list(void **state)
{
    (void)state;
    cJSON *node =
        parse("{\"metadata\":{\"resourceVersion\":\"7\"},\"spec\":{\"taints\":["
              "{\"key\":\"rebalance.psi.dev/pressure\",\"value\":\"workers\",\"effect\":\"PreferNoSchedule\"}]}}");
    cJSON *patch = NULL;
    assert_int_equal(taintpatch_build(taints_of(node), NULL, &ours, TAINTPATCH_REMOVE, &patch, NULL, 0),
                     TAINTPATCH_PATCH);
    const cJSON *after = apply(node, patch);
    assert_true(cJSON_IsArray(after));
    assert_int_equal(cJSON_GetArraySize(after), 0);
    cJSON_Delete(patch);
    cJSON_Delete(node);
}

static void test_node_without_taints_tests_resource_version(void **state)
{
    (void)state;
    cJSON *node = parse("{\"metadata\":{\"name\":\"w1\",\"resourceVersion\":\"42\"},\"spec\":{}}");
    cJSON *patch = NULL;
    char err[256] = "";
    assert_int_equal(taintpatch_build(NULL, "42", &ours, TAINTPATCH_ADD, &patch, err, sizeof(err)), TAINTPATCH_PATCH);
    const cJSON *test = cJSON_GetArrayItem(patch, 0), *write = cJSON_GetArrayItem(patch, 1);
    assert_string_equal(cJSON_GetObjectItem(test, "op")->valuestring, "test");
    assert_string_equal(cJSON_GetObjectItem(test, "path")->valuestring, "/metadata/resourceVersion");
    assert_string_equal(cJSON_GetObjectItem(test, "value")->valuestring, "42");
    assert_string_equal(cJSON_GetObjectItem(write, "op")->valuestring, "add");
    const cJSON *after = apply(node, patch);
    assert_int_equal(cJSON_GetArraySize(after), 1);
    assert_true(taintpatch_has(after, &ours));
    cJSON_Delete(patch);
    /* JSON null counts as no taints too; without a resourceVersion there is nothing to guard with. */
    cJSON *null = cJSON_CreateNull();
    assert_int_equal(taintpatch_build(null, NULL, &ours, TAINTPATCH_ADD, &patch, err, sizeof(err)), TAINTPATCH_ERROR);
    assert_null(patch);
    assert_non_null(strstr(err, "resourceVersion"));
    cJSON_Delete(null);
    cJSON_Delete(node);
}

static void test_stale_read_fails_the_test_op(void **state)
{
    (void)state;
    cJSON *node = parse(node_with_taints);
    cJSON *patch = NULL;
    assert_int_equal(taintpatch_build(taints_of(node), "42", &ours, TAINTPATCH_ADD, &patch, NULL, 0), TAINTPATCH_PATCH);
    /* Another writer adds a taint after we read: our test value no longer matches. */
    cJSON_AddItemToArray(taints_of(node), parse("{\"key\":\"late\",\"effect\":\"NoSchedule\"}"));
    const cJSON *test = cJSON_GetArrayItem(patch, 0);
    assert_false(cJSON_Compare(taints_of(node), cJSON_GetObjectItem(test, "value"), true));
    cJSON_Delete(patch);
    cJSON_Delete(node);
}

static void test_foreign_owner(void **state)
{
    (void)state;
    cJSON *taints =
        parse("[{\"key\":\"rebalance.psi.dev/pressure\",\"value\":\"older\",\"effect\":\"PreferNoSchedule\"}]");
    cJSON *patch = NULL;
    assert_string_equal(taintpatch_owner(taints, ours.key, ours.effect), "older");
    assert_false(taintpatch_has(taints, &ours));
    assert_false(taintpatch_has_any(taints, &ours));
    assert_int_equal(taintpatch_build(taints, "1", &ours, TAINTPATCH_ADD, &patch, NULL, 0), TAINTPATCH_FOREIGN);
    assert_null(patch);
    /* Removing ours never takes another owner's taint. */
    assert_int_equal(taintpatch_build(taints, "1", &ours, TAINTPATCH_REMOVE, &patch, NULL, 0), TAINTPATCH_NOOP);
    assert_null(patch);
    assert_null(taintpatch_owner(taints, ours.key, "NoSchedule"));
    assert_null(taintpatch_owner(NULL, ours.key, ours.effect));
    cJSON_Delete(taints);
    /* A taint with our key and no value: owned by "" (someone by hand), also foreign. */
    taints = parse("[{\"key\":\"rebalance.psi.dev/pressure\",\"effect\":\"PreferNoSchedule\"}]");
    assert_string_equal(taintpatch_owner(taints, ours.key, ours.effect), "");
    assert_int_equal(taintpatch_build(taints, "1", &ours, TAINTPATCH_ADD, &patch, NULL, 0), TAINTPATCH_FOREIGN);
    cJSON_Delete(taints);
}

static void test_effect_change_replaces_ours(void **state)
{
    (void)state;
    cJSON *node = parse("{\"metadata\":{\"resourceVersion\":\"3\"},\"spec\":{\"taints\":["
                        "{\"key\":\"rebalance.psi.dev/pressure\",\"value\":\"workers\",\"effect\":\"NoSchedule\"},"
                        "{\"key\":\"z\",\"effect\":\"NoSchedule\"}]}}");
    cJSON *patch = NULL;
    assert_false(taintpatch_has(taints_of(node), &ours));
    assert_true(taintpatch_has_any(taints_of(node), &ours));
    assert_int_equal(taintpatch_build(taints_of(node), "3", &ours, TAINTPATCH_ADD, &patch, NULL, 0), TAINTPATCH_PATCH);
    const cJSON *after = apply(node, patch);
    assert_int_equal(cJSON_GetArraySize(after), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(after, 0), "key")->valuestring, "z");
    assert_true(taintpatch_has(after, &ours));
    assert_null(taintpatch_owner(after, ours.key, "NoSchedule"));
    cJSON_Delete(patch);
    /* Present under our effect but a stale copy under another: still rewritten. */
    cJSON *both =
        parse("[{\"key\":\"rebalance.psi.dev/pressure\",\"value\":\"workers\",\"effect\":\"PreferNoSchedule\"},"
              "{\"key\":\"rebalance.psi.dev/pressure\",\"value\":\"workers\",\"effect\":\"NoSchedule\"}]");
    assert_int_equal(taintpatch_build(both, "3", &ours, TAINTPATCH_ADD, &patch, NULL, 0), TAINTPATCH_PATCH);
    const cJSON *value = cJSON_GetObjectItem(cJSON_GetArrayItem(patch, 1), "value");
    assert_int_equal(cJSON_GetArraySize(value), 1);
    cJSON_Delete(patch);
    /* Removal takes ours off under every effect. */
    assert_int_equal(taintpatch_build(both, "3", &ours, TAINTPATCH_REMOVE, &patch, NULL, 0), TAINTPATCH_PATCH);
    value = cJSON_GetObjectItem(cJSON_GetArrayItem(patch, 1), "value");
    assert_int_equal(cJSON_GetArraySize(value), 0);
    cJSON_Delete(patch);
    cJSON_Delete(both);
    cJSON_Delete(node);
}

static void test_bad_input(void **state)
{
    (void)state;
    cJSON *obj = parse("{\"key\":\"a\"}");
    cJSON *patch = NULL;
    char err[256] = "";
    assert_int_equal(taintpatch_build(obj, "1", &ours, TAINTPATCH_ADD, &patch, err, sizeof(err)), TAINTPATCH_ERROR);
    assert_non_null(strstr(err, "not a list"));
    struct taintpatch_taint bad = {NULL, "NoSchedule", "x"};
    assert_int_equal(taintpatch_build(NULL, "1", &bad, TAINTPATCH_ADD, &patch, err, sizeof(err)), TAINTPATCH_ERROR);
    assert_null(patch);
    cJSON_Delete(obj);
}

static void test_taint_from_spec(void **state)
{
    (void)state;
    struct api_spec spec;
    memset(&spec, 0, sizeof(spec));
    spec.taint.key = "rebalance.psi.dev/pressure";
    spec.taint.effect = API_EFFECT_NO_SCHEDULE;
    struct taintpatch_taint t;
    char err[256] = "";
    assert_int_equal(taintpatch_taint_from_spec(&spec, "workers", &t, err, sizeof(err)), 0);
    assert_string_equal(t.key, "rebalance.psi.dev/pressure");
    assert_string_equal(t.effect, "NoSchedule");
    assert_string_equal(t.owner, "workers");
    /* A name that is no label value (longer than 63) cannot own a taint. */
    char longname[80];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(taintpatch_taint_from_spec(&spec, longname, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "63"));
    assert_int_equal(taintpatch_taint_from_spec(&spec, "", &t, err, sizeof(err)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_keeps_other_taints),
        cmocka_unit_test(test_remove_keeps_other_taints),
        cmocka_unit_test(test_remove_last_taint_leaves_empty_list),
        cmocka_unit_test(test_node_without_taints_tests_resource_version),
        cmocka_unit_test(test_stale_read_fails_the_test_op),
        cmocka_unit_test(test_foreign_owner),
        cmocka_unit_test(test_effect_change_replaces_ours),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_taint_from_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
