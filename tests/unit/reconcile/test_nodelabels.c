/* Unit tests for nodelabels: a node's labels as shared strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/errors.h"
#include "api/selector.h"
#include "reconcile/status/nodelabels.h"

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);
    assert_non_null(j);
    return j;
}

static struct nodelabels *labels_of(const char *json)
{
    cJSON *j = parse(json);
    bool oom = true;
    struct nodelabels *l = nodelabels_new(j, &oom);
    assert_false(oom);
    cJSON_Delete(j);
    return l;
}

/* Only string labels are kept, in order; lookups by key; none is NULL. */
static void test_new_and_get(void **state)
{
    (void)state;
    struct nodelabels *l = labels_of("{\"zone\":\"a\",\"n\":1,\"os\":\"linux\",\"empty\":\"\"}");
    assert_non_null(l);
    assert_int_equal(l->n, 3);
    assert_string_equal(l->v[0].key, "zone");
    assert_string_equal(l->v[2].key, "empty");
    assert_string_equal(nodelabels_get(l, "os"), "linux");
    assert_string_equal(nodelabels_get(l, "empty"), "");
    assert_null(nodelabels_get(l, "n"));
    assert_null(nodelabels_get(l, "missing"));
    assert_null(nodelabels_get(NULL, "zone"));
    assert_null(nodelabels_get(l, NULL));
    nodelabels_free(l);

    bool oom = true;
    assert_null(nodelabels_new(NULL, &oom));
    assert_false(oom);
    assert_null(labels_of("{}"));
    assert_null(labels_of("{\"n\":1}"));
    assert_null(labels_of("[\"a\"]"));
}

/* The same strings are shared between nodes and freed with the last reference; equal label
 * sets compare equal, a changed value or order does not. */
static void test_shared_and_equal(void **state)
{
    (void)state;
    size_t shared0 = nodelabels_shared_strings();
    struct nodelabels *a = labels_of("{\"os\":\"linux\",\"host\":\"w0\"}");
    struct nodelabels *b = labels_of("{\"os\":\"linux\",\"host\":\"w1\"}");
    struct nodelabels *a2 = labels_of("{\"os\":\"linux\",\"host\":\"w0\"}");
    struct nodelabels *swapped = labels_of("{\"host\":\"w0\",\"os\":\"linux\"}");
    assert_int_equal(nodelabels_shared_strings(), shared0 + 5); /* os, linux, host, w0, w1 */
    assert_ptr_equal(nodelabels_get(a, "os"), nodelabels_get(b, "os"));
    assert_true(nodelabels_equal(a, a2));
    assert_false(nodelabels_equal(a, b));
    assert_false(nodelabels_equal(a, swapped));
    assert_false(nodelabels_equal(a, NULL));
    assert_true(nodelabels_equal(NULL, NULL));
    nodelabels_free(b);
    assert_int_equal(nodelabels_shared_strings(), shared0 + 4);
    nodelabels_free(a);
    nodelabels_free(a2);
    nodelabels_free(swapped);
    assert_int_equal(nodelabels_shared_strings(), shared0);
}

/* As JSON (what mcplan reads) the object refers to the shared strings and frees only itself. */
static void test_json(void **state)
{
    (void)state;
    struct nodelabels *l = labels_of("{\"role\":\"worker\",\"os\":\"linux\"}");
    cJSON *j = nodelabels_json(l);
    assert_non_null(j);
    char *text = cJSON_PrintUnformatted(j);
    assert_string_equal(text, "{\"role\":\"worker\",\"os\":\"linux\"}");
    cJSON_free(text);
    cJSON_Delete(j);
    assert_string_equal(nodelabels_get(l, "role"), "worker");
    nodelabels_free(l);
    j = nodelabels_json(NULL);
    assert_non_null(j);
    assert_null(j->child);
    cJSON_Delete(j);
}

/* A label selector reads them through nodelabels_lookup as it reads a JSON object. */
static void test_selector(void **state)
{
    (void)state;
    cJSON *sj = parse("{\"matchLabels\":{\"os\":\"linux\"},"
                      "\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]},"
                      "{\"key\":\"gpu\",\"operator\":\"DoesNotExist\"}]}");
    struct api_selector sel = {0};
    struct api_errors errs = {0};
    assert_int_equal(api_selector_decode(sj, "sel", &sel, &errs, NULL), 0);
    static const char *const cases[][2] = {
        {"{\"os\":\"linux\",\"zone\":\"b\"}", "yes"},
        {"{\"os\":\"linux\",\"zone\":\"c\"}", "no"},
        {"{\"os\":\"linux\",\"zone\":\"a\",\"gpu\":\"1\"}", "no"},
        {"{\"zone\":\"a\"}", "no"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *j = parse(cases[i][0]);
        struct nodelabels *l = labels_of(cases[i][0]);
        bool want = strcmp(cases[i][1], "yes") == 0;
        assert_int_equal(api_selector_matches_with(&sel, nodelabels_lookup, l), want);
        assert_int_equal(api_selector_matches(&sel, j), want);
        nodelabels_free(l);
        cJSON_Delete(j);
    }
    assert_false(api_selector_matches_with(&sel, nodelabels_lookup, NULL));
    api_selector_free(&sel);
    api_errors_free(&errs);
    cJSON_Delete(sj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_get),
        cmocka_unit_test(test_shared_and_equal),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_selector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
