/* Unit tests of controller/reconcile/status/bodies: the finalizer patch and the status body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/status/bodies.h"
#include "testutil.h"

static void assert_json(const cJSON *j, const char *want)
{
    char *got = cJSON_PrintUnformatted(j);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_finalizer(void **state)
{
    (void)state;
    cJSON *none = parse("{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"7\"}}");
    cJSON *other = parse("{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"8\",\"finalizers\":[\"x/y\","
                         "\"rebalance.psi.dev/taint-cleanup\"]}}");
    assert_false(bodies_has_finalizer(none));
    assert_true(bodies_has_finalizer(other));
    cJSON *p = bodies_finalizer_patch(none, true);
    assert_json(p,
                "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"7\"},"
                "{\"op\":\"add\",\"path\":\"/metadata/finalizers\",\"value\":[\"rebalance.psi.dev/taint-cleanup\"]}]");
    cJSON_Delete(p);
    p = bodies_finalizer_patch(other, false); /* others' finalizers stay */
    assert_json(p, "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"8\"},"
                   "{\"op\":\"replace\",\"path\":\"/metadata/finalizers\",\"value\":[\"x/y\"]}]");
    cJSON_Delete(p);
    p = bodies_finalizer_patch(other, true); /* present once */
    assert_json(p, "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"8\"},"
                   "{\"op\":\"replace\",\"path\":\"/metadata/finalizers\",\"value\":[\"x/y\","
                   "\"rebalance.psi.dev/taint-cleanup\"]}]");
    cJSON_Delete(p);
    cJSON_Delete(none);
    cJSON_Delete(other);
}

static void test_status_body(void **state)
{
    (void)state;
    cJSON *obj = parse("{\"apiVersion\":\"rebalance.psi.dev/v1alpha1\",\"kind\":\"PsiRebalance\",\"metadata\":"
                       "{\"name\":\"a\",\"resourceVersion\":\"9\",\"managedFields\":[{}]},\"spec\":{\"x\":1},"
                       "\"status\":{\"y\":2}}");
    cJSON *b = bodies_status(obj);
    assert_json(b, "{\"apiVersion\":\"rebalance.psi.dev/v1alpha1\",\"kind\":\"PsiRebalance\",\"metadata\":"
                   "{\"name\":\"a\",\"resourceVersion\":\"9\"}}");
    cJSON_Delete(b);
    cJSON_Delete(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finalizer),
        cmocka_unit_test(test_status_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
