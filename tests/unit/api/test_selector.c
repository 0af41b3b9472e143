/* api_selector, api_names, api_wildcard: label selectors and namespace patterns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "api/selector.h"
#include "api/wildcard.h"

static cJSON *parse(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("test JSON does not parse: %s", text);
    return j;
}

/* Decode text as a selector at path "sel" into *sel; returns the decode+validate error count. */
static size_t load(const char *text, struct api_selector *sel, struct api_errors *errs)
{
    cJSON *j = parse(text);
    api_selector_decode(j, "sel", sel, errs, NULL);
    api_selector_validate(sel, "sel", errs);
    cJSON_Delete(j);
    return errs->n;
}

static void test_names(void **state)
{
    (void)state;
    const char *ok_qualified[] = {
        "a", "worker", "node-role.kubernetes.io/worker", "kubevirt.io", "A_b.C-9", "example.com/Name_1", "a.b.c/d"};
    for (size_t i = 0; i < sizeof(ok_qualified) / sizeof(*ok_qualified); i++)
        if (api_names_check_qualified(ok_qualified[i]))
            fail_msg("'%s' refused: %s", ok_qualified[i], api_names_check_qualified(ok_qualified[i]));
    char long_name[80], long_prefix[300];
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    memset(long_prefix, 'a', 254);
    strcpy(long_prefix + 254, "/x");
    const char *bad_qualified[] = {"",       "-a",  "a-",       "a/b/c",   "/a",        "a/",  "Example.com/a",
                                   "a..b/c", "a b", "-x.com/a", long_name, long_prefix, "a/-b"};
    for (size_t i = 0; i < sizeof(bad_qualified) / sizeof(*bad_qualified); i++)
        if (!api_names_check_qualified(bad_qualified[i]))
            fail_msg("'%s' accepted as a qualified name", bad_qualified[i]);
    assert_null(api_names_check_label_value(""));
    assert_null(api_names_check_label_value("virt-launcher"));
    assert_null(api_names_check_label_value("v1.2_3"));
    assert_non_null(api_names_check_label_value("-x"));
    assert_non_null(api_names_check_label_value("a/b"));
    assert_non_null(api_names_check_label_value(long_name));
    assert_null(api_names_check_dns_label("worker"));
    assert_null(api_names_check_dns_label("infra-2"));
    assert_non_null(api_names_check_dns_label("Worker"));
    assert_non_null(api_names_check_dns_label("a.b"));
    assert_non_null(api_names_check_dns_label(""));
    assert_null(api_names_check_dns_subdomain("rebalance.psi.dev"));
    assert_non_null(api_names_check_dns_subdomain("a..b"));
}

static void test_decode_validate_encode_round_trip(void **state)
{
    (void)state;
    const char *text = "{\"matchLabels\":{\"node-role.kubernetes.io/worker\":\"\",\"zone\":\"east\"},"
                       "\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]},"
                       "{\"key\":\"pinned\",\"operator\":\"DoesNotExist\"}]}";
    struct api_selector sel = {0}, back = {0};
    struct api_errors errs = {0};
    assert_int_equal(load(text, &sel, &errs), 0);
    assert_int_equal(sel.nlabels, 2);
    assert_int_equal(sel.nexprs, 2);
    assert_int_equal(sel.exprs[0].op, API_SELECTOR_IN);
    assert_int_equal(sel.exprs[1].op, API_SELECTOR_DOES_NOT_EXIST);

    cJSON *enc = api_selector_encode(&sel), *orig = parse(text);
    assert_true(cJSON_Compare(enc, orig, 1));
    api_selector_decode(enc, "sel", &back, &errs, NULL);
    assert_int_equal(errs.n, 0);
    assert_true(api_selector_equal(&sel, &back));
    back.exprs[0].op = API_SELECTOR_NOT_IN;
    assert_false(api_selector_equal(&sel, &back));
    cJSON_Delete(enc);
    cJSON_Delete(orig);
    api_selector_free(&sel);
    api_selector_free(&back);
    api_errors_free(&errs);
}

static void test_invalid_selectors_name_their_field(void **state)
{
    (void)state;
    static const struct {
        const char *json, *field;
    } cases[] = {
        {"{\"matchLabels\":{\"-x\":\"a\"}}", "sel.matchLabels"},
        {"{\"matchLabels\":{\"x\":\"a b\"}}", "sel.matchLabels.x"},
        {"{\"matchLabels\":{\"x\":1}}", "sel.matchLabels.x"},
        {"{\"matchLabels\":[]}", "sel.matchLabels"},
        {"{\"matchExpressions\":{}}", "sel.matchExpressions"},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}", "sel.matchExpressions[0].values"},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[]}]}",
         "sel.matchExpressions[0].values"},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
         "sel.matchExpressions[0].values"},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
         "sel.matchExpressions[0].operator"},
        {"{\"matchExpressions\":[{\"key\":\"a\"}]}", "sel.matchExpressions[0].operator"},
        {"{\"matchExpressions\":[{\"operator\":\"Exists\"}]}", "sel.matchExpressions[0].key"},
        {"{\"matchExpressions\":[{\"key\":\"a/b/c\",\"operator\":\"Exists\"}]}", "sel.matchExpressions[0].key"},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"ok\",\"-no\"]}]}",
         "sel.matchExpressions[0].values[1]"},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"ok\",2]}]}",
         "sel.matchExpressions[0].values[1]"},
        {"{\"matchExpressions\":[\"a\"]}", "sel.matchExpressions[0]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct api_selector sel = {0};
        struct api_errors errs = {0};
        load(cases[i].json, &sel, &errs);
        if (!api_errors_find(&errs, cases[i].field)) {
            char *all = api_errors_join(&errs, "; ");
            fail_msg("%s: no error for %s (got: %s)", cases[i].json, cases[i].field, all);
        }
        api_selector_free(&sel);
        api_errors_free(&errs);
    }
}

static void test_matches(void **state)
{
    (void)state;
    struct api_selector sel = {0};
    struct api_errors errs = {0};
    assert_int_equal(load("{\"matchLabels\":{\"role\":\"worker\"},\"matchExpressions\":["
                          "{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]},"
                          "{\"key\":\"tier\",\"operator\":\"NotIn\",\"values\":[\"gold\"]},"
                          "{\"key\":\"kvm\",\"operator\":\"Exists\"},"
                          "{\"key\":\"pinned\",\"operator\":\"DoesNotExist\"}]}",
                          &sel, &errs),
                     0);
    static const struct {
        const char *labels;
        bool match;
    } cases[] = {
        {"{\"role\":\"worker\",\"zone\":\"a\",\"kvm\":\"\"}", true},
        {"{\"role\":\"worker\",\"zone\":\"b\",\"kvm\":\"1\",\"tier\":\"silver\"}", true},
        {"{\"role\":\"master\",\"zone\":\"a\",\"kvm\":\"\"}", false},
        {"{\"zone\":\"a\",\"kvm\":\"\"}", false},
        {"{\"role\":\"worker\",\"zone\":\"c\",\"kvm\":\"\"}", false},
        {"{\"role\":\"worker\",\"kvm\":\"\"}", false},
        {"{\"role\":\"worker\",\"zone\":\"a\",\"kvm\":\"\",\"tier\":\"gold\"}", false},
        {"{\"role\":\"worker\",\"zone\":\"a\"}", false},
        {"{\"role\":\"worker\",\"zone\":\"a\",\"kvm\":\"\",\"pinned\":\"\"}", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *l = parse(cases[i].labels);
        if (api_selector_matches(&sel, l) != cases[i].match)
            fail_msg("labels %s: expected %s", cases[i].labels, cases[i].match ? "match" : "no match");
        cJSON_Delete(l);
    }
    assert_false(api_selector_matches(&sel, NULL));
    api_selector_free(&sel);

    struct api_selector empty = {0};
    cJSON *l = parse("{\"anything\":\"x\"}");
    assert_true(api_selector_matches(&empty, l));
    assert_true(api_selector_matches(&empty, NULL));
    cJSON_Delete(l);
    api_errors_free(&errs);
}

static void test_to_query(void **state)
{
    (void)state;
    struct api_selector sel = {0};
    struct api_errors errs = {0};
    load("{\"matchLabels\":{\"node-role.kubernetes.io/worker\":\"\",\"a\":\"b\"},\"matchExpressions\":["
         "{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"x\",\"y\"]},"
         "{\"key\":\"tier\",\"operator\":\"NotIn\",\"values\":[\"gold\"]},"
         "{\"key\":\"kvm\",\"operator\":\"Exists\"},{\"key\":\"pinned\",\"operator\":\"DoesNotExist\"}]}",
         &sel, &errs);
    char *q = api_selector_to_query(&sel);
    assert_string_equal(q, "node-role.kubernetes.io/worker=,a=b,zone in (x,y),tier notin (gold),kvm,!pinned");
    free(q);
    api_selector_free(&sel);
    q = api_selector_to_query(&sel);
    assert_string_equal(q, "");
    free(q);
    api_errors_free(&errs);
}

static void test_unknown_selector_field_warns(void **state)
{
    (void)state;
    struct api_selector sel = {0};
    struct api_errors errs = {0}, warns = {0};
    cJSON *j = parse("{\"matchLabel\":{\"a\":\"b\"},\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\","
                     "\"value\":\"x\"}]}");
    api_selector_decode(j, "sel", &sel, &errs, &warns);
    assert_int_equal(errs.n, 0);
    assert_int_equal(warns.n, 2);
    assert_non_null(api_errors_find(&warns, "sel.matchLabel"));
    assert_non_null(api_errors_find(&warns, "sel.matchExpressions[0].value"));
    cJSON_Delete(j);
    api_selector_free(&sel);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

static void test_glob(void **state)
{
    (void)state;
    assert_null(api_wildcard_check("kube-system"));
    assert_null(api_wildcard_check("openshift-*"));
    assert_null(api_wildcard_check("*"));
    assert_null(api_wildcard_check("team-?-*"));
    assert_non_null(api_wildcard_check(""));
    assert_non_null(api_wildcard_check("Kube-System"));
    assert_non_null(api_wildcard_check("-*"));
    assert_non_null(api_wildcard_check("*-"));
    assert_non_null(api_wildcard_check("a.b"));
    assert_non_null(api_wildcard_check("[ab]"));
    assert_non_null(api_wildcard_check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));

    static const struct {
        const char *p, *s;
        bool m;
    } cases[] = {
        {"kube-system", "kube-system", true},
        {"kube-system", "kube-system2", false},
        {"kube-*", "kube-system", true},
        {"kube-*", "kube-", true},
        {"kube-*", "kubevirt", false},
        {"openshift-*", "openshift-cnv", true},
        {"openshift-*", "openshift", false},
        {"*", "anything", true},
        {"*-prod", "shop-prod", true},
        {"*-prod", "shop-prod-2", false},
        {"a*b*c", "abc", true},
        {"a*b*c", "axxbyyc", true},
        {"a*b*c", "axxbyy", false},
        {"team-?", "team-a", true},
        {"team-?", "team-ab", false},
        {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (api_wildcard_match(cases[i].p, cases[i].s) != cases[i].m)
            fail_msg("'%s' vs '%s': expected %s", cases[i].p, cases[i].s, cases[i].m ? "match" : "no match");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_decode_validate_encode_round_trip),
        cmocka_unit_test(test_invalid_selectors_name_their_field),
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_to_query),
        cmocka_unit_test(test_unknown_selector_field_warns),
        cmocka_unit_test(test_glob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
