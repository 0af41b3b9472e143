/* Unit tests of controller/reconcile/status/ownership: which nodes a PsiRebalance owns when several
 * select them (the oldest wins), and the age order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/status/ownership.h"
#include "testutil.h"

static void test_older(void **state)
{
    (void)state;
    assert_true(ownership_older("2024-01-01T00:00:00Z", "b", "2024-01-02T00:00:00Z", "a"));
    assert_false(ownership_older("2024-01-02T00:00:00Z", "a", "2024-01-01T00:00:00Z", "b"));
    assert_true(ownership_older("2024-01-01T00:00:00Z", "a", "2024-01-01T00:00:00Z", "b")); /* then by name */
    assert_false(ownership_older("2024-01-01T00:00:00Z", "a", "2024-01-01T00:00:00Z", "a"));
    assert_true(ownership_older(NULL, "z", "2024-01-01T00:00:00Z", "a")); /* unknown counts as oldest */
}

static void test_mark(void **state)
{
    (void)state;
    cJSON *nodes = parse("["
                         "{\"metadata\":{\"name\":\"w2\",\"labels\":{\"role\":\"worker\",\"zone\":\"b\"}}},"
                         "{\"metadata\":{\"name\":\"w1\",\"labels\":{\"role\":\"worker\",\"zone\":\"a\"}}},"
                         "{\"metadata\":{\"name\":\"m0\",\"labels\":{\"role\":\"master\"}}},"
                         "{\"metadata\":{\"labels\":{\"role\":\"worker\"}}}]");
    cJSON *prs = parse("["
                       "{\"metadata\":{\"name\":\"self\",\"creationTimestamp\":\"2024-01-02T00:00:00Z\"}},"
                       "{\"metadata\":{\"name\":\"old\",\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},"
                       "\"spec\":{\"nodeSelector\":{\"matchLabels\":{\"zone\":\"b\"}}}},"
                       "{\"metadata\":{\"name\":\"young\",\"creationTimestamp\":\"2024-01-03T00:00:00Z\"},"
                       "\"spec\":{\"nodeSelector\":{\"matchLabels\":{\"zone\":\"a\"}}}}]");
    struct ownership_nodes all = {0};
    void *kept[4];
    size_t nkept = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, nodes) {
        void *p = nodeproj_project(it, NULL);
        if (p)
            assert_int_equal(ownership_add_node(&all, kept[nkept++] = p), 0);
    }
    assert_int_equal(all.n, 3); /* a node without a name is no node */
    struct ownership_rivals rivals = {0};
    cJSON_ArrayForEach (it, prs)
        assert_int_equal(ownership_add_rival(&rivals, it, "self", "2024-01-02T00:00:00Z"), 0);
    assert_int_equal(rivals.n, 1); /* itself and the younger one are no rivals */
    assert_string_equal(rivals.v[0].name, "old");

    struct api_selector sel = {0};
    assert_int_equal(api_selector_add_label(&sel, "role", "worker"), 0);
    const char *owner;
    assert_int_equal(ownership_mark(&all, &sel, &rivals, &owner), 1);
    assert_string_equal(owner, "old");
    assert_string_equal(all.v[0].name, "m0"); /* sorted by name */
    assert_false(all.v[0].owned);             /* not selected */
    assert_string_equal(all.v[1].name, "w1");
    assert_true(all.v[1].owned);
    assert_string_equal(all.v[2].name, "w2");
    assert_false(all.v[2].owned); /* the older one has it */

    ownership_rivals_free(&rivals);
    assert_int_equal(ownership_mark(&all, &sel, &rivals, &owner), 0);
    assert_null(owner);
    assert_true(all.v[2].owned);
    api_selector_free(&sel);
    free(all.v);
    for (size_t i = 0; i < nkept; i++)
        nodeproj_free(kept[i]);
    cJSON_Delete(nodes);
    cJSON_Delete(prs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_older),
        cmocka_unit_test(test_mark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
