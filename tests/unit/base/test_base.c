/* Unit tests of base/: the string builder (appends, formatting, take, failure), growable
 * arrays (growth by a factor, contents kept), the JSON accessors ("" and NULL, literal keys,
 * paths), JSON's escapes and numbers (lengths, code points, faults) and the helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/grow.h"
#include "base/jsonlex.h"
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

static void test_jsonlex(void **state)
{
    (void)state;
    struct {
        const char *s;
        size_t n; /* 0: strlen */
        size_t len;
        unsigned cp;
        enum jsonlex_fault fault;
    } esc[] = {
        {"\\n", 0, 2, '\n', JSONLEX_OK},
        {"\\/x", 0, 2, '/', JSONLEX_OK},
        {"\\u00e9\"", 0, 6, 0xE9, JSONLEX_OK},
        {"\\u0000", 0, 6, 0, JSONLEX_OK}, /* a NUL is JSON; whether a reader takes it is its own */
        {"\\uD83D\\uDE00", 0, 12, 0x1F600, JSONLEX_OK},
        {"\\udbff\\udfff", 0, 12, 0x10FFFF, JSONLEX_OK},
        {"\\", 0, 0, 0, JSONLEX_ESCAPE_CUT},
        {"\\u12", 0, 0, 0, JSONLEX_ESCAPE_CUT},
        {"\\u1234", 5, 0, 0, JSONLEX_ESCAPE_CUT}, /* the string ends before the last digit */
        {"\\ud83d\\ude0", 0, 0, 0, JSONLEX_ESCAPE_CUT},
        {"\\x", 0, 0, 0, JSONLEX_ESCAPE_UNKNOWN},
        {"\\U0041", 0, 0, 0, JSONLEX_ESCAPE_UNKNOWN},
        {"\\u00g0", 0, 0, 0, JSONLEX_ESCAPE_NOT_HEX},
        {"\\ud83d\\uzz00", 0, 0, 0, JSONLEX_ESCAPE_NOT_HEX},
        {"\\udc00", 0, 0, 0, JSONLEX_LONE_LOW},
        {"\\ud83dx", 0, 0, 0, JSONLEX_HIGH_WITHOUT_LOW},
        {"\\ud83d\\n", 0, 0, 0, JSONLEX_HIGH_WITHOUT_LOW},
        {"\\ud83d\\u0041", 0, 0, 0, JSONLEX_HIGH_WITHOUT_LOW},
        {"\\ud83d\\ud83d", 0, 0, 0, JSONLEX_HIGH_WITHOUT_LOW},
    };
    for (size_t i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
        unsigned cp = 0xFFFFFFFF;
        enum jsonlex_fault fault = JSONLEX_NO_DIGIT;
        size_t n = esc[i].n ? esc[i].n : strlen(esc[i].s);
        size_t len = jsonlex_escape(esc[i].s, n, &cp, &fault);
        if (len != esc[i].len || fault != esc[i].fault || (len && cp != esc[i].cp))
            fail_msg("escape %zu (%s): length %zu, code point %x, fault %d", i, esc[i].s, len, cp, (int)fault);
        assert_int_equal(jsonlex_escape(esc[i].s, n, NULL, &fault), esc[i].len);
    }
    struct {
        const char *s;
        size_t len;
        enum jsonlex_fault fault;
    } num[] = {
        {"0", 1, JSONLEX_OK},
        {"-0", 2, JSONLEX_OK},
        {"01", 1, JSONLEX_OK}, /* "0", then what follows is the caller's */
        {"12.5e+3,", 7, JSONLEX_OK},
        {"1.5E-07]", 7, JSONLEX_OK},
        {"1756720000.123}", 14, JSONLEX_OK},
        {"", 0, JSONLEX_NO_DIGIT},
        {"-", 0, JSONLEX_NO_DIGIT},
        {"+1", 0, JSONLEX_NO_DIGIT},
        {".5", 0, JSONLEX_NO_DIGIT},
        {"-a", 0, JSONLEX_NO_DIGIT},
        {"1.", 0, JSONLEX_NO_FRACTION},
        {"1.e3", 0, JSONLEX_NO_FRACTION},
        {"1e", 0, JSONLEX_NO_EXPONENT},
        {"1e+", 0, JSONLEX_NO_EXPONENT},
        {"2E-x", 0, JSONLEX_NO_EXPONENT},
    };
    for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++) {
        enum jsonlex_fault fault = JSONLEX_ESCAPE_CUT;
        size_t len = jsonlex_number(num[i].s, strlen(num[i].s), &fault);
        if (len != num[i].len || fault != num[i].fault)
            fail_msg("number %zu (%s): length %zu, fault %d", i, num[i].s, len, (int)fault);
    }
    assert_int_equal(jsonlex_number("123", 2, &(enum jsonlex_fault){0}), 2); /* n bounds it */
    assert_int_equal(jsonlex_hex4("fF09"), 0xFF09);
    assert_int_equal(jsonlex_hex4("12 4"), -1);
    assert_string_equal(jsonlex_fault_text(JSONLEX_OK), "");
    for (int f = JSONLEX_ESCAPE_CUT; f <= JSONLEX_NO_EXPONENT; f++)
        assert_true(strlen(jsonlex_fault_text((enum jsonlex_fault)f)) > 10);
    assert_non_null(strstr(jsonlex_fault_text(JSONLEX_LONE_LOW), "lone low surrogate"));
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
        cmocka_unit_test(test_strbuf),  cmocka_unit_test(test_grow), cmocka_unit_test(test_jx),
        cmocka_unit_test(test_jsonlex), cmocka_unit_test(test_util),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
