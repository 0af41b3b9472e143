/* Unit tests of base/: the string builder (appends, formatting, take, failure), growable
 * arrays (growth by a factor, contents kept), the JSON accessors ("" and NULL, literal keys,
 * paths) and the helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/grow.h"
#include "base/jx.h"
#include "base/strbuf.h"
#include "base/util.h"

static void test_strbuf(void **state)
{
    (void)state;
    struct strbuf b = STRBUF_INIT;
    assert_string_equal(strbuf_str(&b), "");
    strbuf_add(&b, "node");
    strbuf_add(&b, NULL);
    strbuf_addf(&b, "-%d/%s", 42, "x");
    strbuf_addn(&b, "abcdef", 3);
    assert_string_equal(strbuf_str(&b), "node-42/xabc");
    assert_int_equal(b.len, 12);
    for (int i = 0; i < 1000; i++) /* past several doublings */
        strbuf_addf(&b, "%03d", i % 1000);
    assert_int_equal(b.len, 12 + 3000);
    assert_memory_equal(b.s + 12 + 3 * 999, "999", 4);
    assert_false(strbuf_failed(&b));
    char *s = strbuf_take(&b);
    assert_non_null(s);
    assert_int_equal(strlen(s), 3012);
    assert_null(b.s);
    assert_int_equal(b.len, 0);
    free(s);
    s = strbuf_take(&b); /* nothing appended: "" */
    assert_string_equal(s, "");
    free(s);
    b.failed = true; /* as after an allocation failure */
    strbuf_add(&b, "ignored");
    assert_int_equal(b.len, 0);
    assert_null(strbuf_take(&b));
    assert_false(b.failed);
    strbuf_add(&b, "again");
    strbuf_release(&b);
    assert_null(b.s);
}

static void test_grow(void **state)
{
    (void)state;
    int *v = NULL;
    size_t n = 0, cap = 0, reallocs = 0;
    for (int i = 0; i < 1000; i++) {
        size_t before = cap;
        assert_int_equal(BASE_GROW(v, n + 1, cap), 0);
        reallocs += cap != before;
        v[n++] = i;
    }
    assert_true(cap >= 1000 && cap < 2000);
    assert_true(reallocs <= 8); /* 8, 16, ..., 1024: by a factor, not one by one */
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v[i], i);
    size_t keep = cap;
    assert_int_equal(BASE_GROW(v, 10, cap), 0); /* room already */
    assert_int_equal(cap, keep);
    assert_int_equal(base_grow(&v, SIZE_MAX, &cap, sizeof(*v)), -1); /* overflow: nothing changed */
    assert_int_equal(cap, keep);
    assert_int_equal(v[999], 999);
    free(v);
}

static void test_jx(void **state)
{
    (void)state;
    cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"a\",\"namespace\":\"\",\"labels\":{\"kubernetes.io/os\":"
                           "\"linux\",\"empty\":\"\"}},\"spec\":{\"n\":3,\"on\":true},\"list\":[1]}");
    assert_non_null(o);
    assert_string_equal(jx_str(o, "metadata.name"), "a");
    assert_string_equal(jx_str(o, "metadata.namespace"), ""); /* "" is a string */
    assert_null(jx_nonempty(o, "metadata.namespace"));        /* unless "" counts as missing */
    assert_string_equal(jx_nonempty(o, "metadata.name"), "a");
    assert_null(jx_str(o, "metadata.uid"));
    assert_null(jx_str(o, "spec.n")); /* not a string */
    assert_string_equal(jx_str0(o, "metadata.uid"), "");
    assert_float_equal(jx_num(o, "spec.n", -1), 3, 0);
    assert_float_equal(jx_num(o, "spec.missing", -1), -1, 0);
    assert_true(jx_bool(o, "spec.on", false));
    assert_null(jx_get(o, "list.x")); /* through a non-object */
    assert_null(jx_get(NULL, "a"));
    const cJSON *labels = jx_get(o, "metadata.labels");
    assert_null(jx_get(labels, "kubernetes.io/os"));                     /* a path splits at dots */
    assert_string_equal(jx_at_str(labels, "kubernetes.io/os"), "linux"); /* a key does not */
    assert_string_equal(jx_label(o, "kubernetes.io/os"), "linux");
    assert_string_equal(jx_label(o, "empty"), "");
    assert_non_null(jx_at(o, "spec"));
    assert_null(jx_at(jx_at(o, "list"), "x"));
    assert_true(jx_eq(NULL, ""));
    assert_false(jx_eq("a", NULL));
    cJSON_Delete(o);
}

static void test_util(void **state)
{
    (void)state;
    assert_true(base_same("a", "a"));
    assert_false(base_same(NULL, NULL)); /* unlike jx_eq: NULL equals nothing */
    assert_false(base_same("", NULL));
    assert_null(base_nonempty(""));
    assert_null(base_nonempty(NULL));
    assert_string_equal(base_nonempty("x"), "x");
    assert_string_equal(base_or_empty(NULL), "");
    char *d = base_strdup_or_null("v");
    assert_string_equal(d, "v");
    free(d);
    assert_null(base_strdup_or_null(NULL));
    int64_t t0 = base_mono_ms(), t1 = base_mono_ms();
    assert_true(t0 > 0 && t1 >= t0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strbuf),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_jx),
        cmocka_unit_test(test_util),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
