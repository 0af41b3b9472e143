/* The CRD and the C code cannot drift apart: the defaults the API server applies (computed
 * here from the CRD's schema the way the server does it) are the documented defaults
 * (tests/testdata/api/defaults.json, which tests/e2e/api compares with a real server's) and
 * the C decoder's; the CRD's enums and integer bounds are the C validator's; every field has
 * a description, which states the default where there is one; the printer columns point
 * at fields that exist. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/psirebalance.h"
#include "testutil.h"

#define CRD "crds/rebalance.psi.dev_psirebalances.yaml"

static cJSON *crd_version(cJSON *crd)
{
    cJSON *versions = cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "spec"), "versions");
    assert_int_equal(cJSON_GetArraySize(versions), 1);
    cJSON *v = cJSON_GetArrayItem(versions, 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(v, "name")), API_VERSION);
    return v;
}

static cJSON *root_schema(cJSON *crd)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(crd_version(crd), "schema"), "openAPIV3Schema");
}

static cJSON *prop(cJSON *schema, const char *name)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(schema, "properties"), name);
}

/* Structural defaulting as kube-apiserver does it: a missing property with a default gets a
 * copy of it, then defaulting goes on inside every property (defaulted ones included), array
 * items and additionalProperties. */
static void apply_defaults(cJSON *value, cJSON *schema)
{
    if (!schema)
        return;
    if (cJSON_IsObject(value)) {
        cJSON *props = cJSON_GetObjectItem(schema, "properties"), *p;
        cJSON_ArrayForEach (p, props) {
            cJSON *def = cJSON_GetObjectItem(p, "default");
            if (def && !cJSON_GetObjectItem(value, p->string))
                cJSON_AddItemToObject(value, p->string, cJSON_Duplicate(def, 1));
        }
        cJSON *v;
        cJSON *additional = cJSON_GetObjectItem(schema, "additionalProperties");
        cJSON_ArrayForEach (v, value) {
            cJSON *ps = cJSON_GetObjectItem(props, v->string);
            apply_defaults(v, ps ? ps : (cJSON_IsObject(additional) ? additional : NULL));
        }
    } else if (cJSON_IsArray(value)) {
        cJSON *v;
        cJSON_ArrayForEach (v, value)
            apply_defaults(v, cJSON_GetObjectItem(schema, "items"));
    }
}

static void assert_json_equal(const char *what, cJSON *got, cJSON *want)
{
    if (!cJSON_Compare(got, want, 1)) {
        char *g = cJSON_Print(got), *w = cJSON_Print(want);
        fail_msg("%s differ:\n--- got\n%s\n--- want\n%s", what, g, w);
    }
}

static void test_crd_defaults_are_the_documented_defaults(void **state)
{
    (void)state;
    cJSON *crd = tu_load_yaml(CRD), *documented = tu_load_json("tests/testdata/api/defaults.json");
    cJSON *obj = cJSON_CreateObject(); /* a PsiRebalance that says nothing, not even spec */
    apply_defaults(obj, root_schema(crd));
    assert_json_equal("CRD defaults and tests/testdata/api/defaults.json", cJSON_GetObjectItem(obj, "spec"),
                      documented);
    cJSON_Delete(obj);
    cJSON_Delete(crd);
    cJSON_Delete(documented);
}

static void test_c_defaults_are_the_documented_defaults(void **state)
{
    (void)state;
    cJSON *documented = tu_load_json("tests/testdata/api/defaults.json"), *empty = tu_json("{}");
    struct api_spec s = {0}, from_doc = {0};
    struct api_errors errs = {0}, warns = {0};
    assert_int_equal(api_spec_decode(empty, &s, &errs, &warns), 0);
    cJSON *enc = api_spec_encode(&s);
    assert_json_equal("C defaults (api_spec_encode of an empty spec) and tests/testdata/api/defaults.json", enc,
                      documented);
    /* and the documented defaults, decoded, are the C defaults field by field */
    assert_int_equal(api_spec_decode(documented, &from_doc, &errs, &warns), 0);
    assert_int_equal(warns.n, 0);
    assert_true(api_spec_equal(&s, &from_doc));
    cJSON_Delete(enc);
    cJSON_Delete(documented);
    cJSON_Delete(empty);
    api_spec_free(&s);
    api_spec_free(&from_doc);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

/* Build {"a":{"b":value}} for the path "spec.a.b" (the leading "spec." is dropped). */
static cJSON *spec_with(const char *path, cJSON *value)
{
    cJSON *root = cJSON_CreateObject(), *cur = root;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path + strlen("spec."));
    char *save = NULL, *tok = strtok_r(buf, ".", &save);
    while (tok) {
        char *next = strtok_r(NULL, ".", &save);
        if (next) {
            cJSON *o = cJSON_GetObjectItem(cur, tok);
            if (!o)
                o = cJSON_AddObjectToObject(cur, tok);
            cur = o;
        } else {
            cJSON_AddItemToObject(cur, tok, value);
        }
        tok = next;
    }
    return root;
}

/* Run the C decoder and validator on a spec with one field set; returns the errors on that field. */
static struct api_errors errors_for(const char *path, cJSON *value)
{
    cJSON *spec = spec_with(path, value);
    struct api_spec s = {0};
    struct api_errors errs = {0}, mine = {0};
    api_spec_decode(spec, &s, &errs, NULL);
    api_spec_validate(&s, &errs);
    for (size_t i = 0; i < errs.n; i++)
        if (strcmp(errs.v[i].field, path) == 0)
            api_errors_add(&mine, errs.v[i].field, "%s", errs.v[i].msg);
    api_spec_free(&s);
    api_errors_free(&errs);
    cJSON_Delete(spec);
    return mine;
}

struct walk {
    int integers, enums, described, strings_with_pattern;
};

static void check_integer(const char *path, cJSON *schema, struct walk *w)
{
    cJSON *min = cJSON_GetObjectItem(schema, "minimum"), *max = cJSON_GetObjectItem(schema, "maximum");
    if (!min || !max)
        fail_msg("%s: integer field without minimum and maximum", path);
    w->integers++;
    int64_t lo = (int64_t)min->valuedouble, hi = (int64_t)max->valuedouble;
    const int64_t outside[] = {lo - 1, hi + 1};
    for (int i = 0; i < 2; i++) {
        struct api_errors e = errors_for(path, cJSON_CreateNumber((double)outside[i]));
        if (e.n == 0)
            fail_msg("%s: the CRD refuses %lld (bounds %lld..%lld), the C validator accepts it", path,
                     (long long)outside[i], (long long)lo, (long long)hi);
        api_errors_free(&e);
    }
    const int64_t inside[] = {lo, hi};
    for (int i = 0; i < 2; i++) {
        struct api_errors e = errors_for(path, cJSON_CreateNumber((double)inside[i]));
        /* a cross-field rule may object to an extreme value; a range error must not */
        for (size_t k = 0; k < e.n; k++)
            if (strncmp(e.v[k].msg, "must be between", 15) == 0)
                fail_msg("%s: the CRD accepts %lld, the C validator says: %s", path, (long long)inside[i], e.v[k].msg);
        api_errors_free(&e);
    }
}

static void check_enum(const char *path, cJSON *schema, struct walk *w)
{
    cJSON *values = cJSON_GetObjectItem(schema, "enum"), *v;
    w->enums++;
    cJSON_ArrayForEach (v, values) {
        struct api_errors e = errors_for(path, cJSON_CreateString(v->valuestring));
        /* a cross-field rule may object to a value next to the defaults; the enum must not */
        for (size_t k = 0; k < e.n; k++)
            if (strncmp(e.v[k].msg, "unsupported value", 17) == 0)
                fail_msg("%s: the CRD allows '%s', the C decoder says: %s", path, v->valuestring, e.v[k].msg);
        api_errors_free(&e);
    }
    struct api_errors e = errors_for(path, cJSON_CreateString("NotInTheEnum"));
    if (e.n == 0)
        fail_msg("%s: the C decoder accepts a value outside the CRD's enum", path);
    api_errors_free(&e);
}

/* C's name of value k of the enum at path (section.field). */
static const char *enum_name(const char *path, int k)
{
    if (strcmp(path, "metrics.source") == 0)
        return api_source_name((enum api_source)k);
    if (strcmp(path, "pressure.resource") == 0)
        return api_resource_name((enum api_resource)k);
    if (strcmp(path, "pressure.stall") == 0)
        return api_stall_name((enum api_stall)k);
    if (strcmp(path, "machineConfig.deletionPolicy") == 0)
        return api_deletion_policy_name((enum api_deletion_policy)k);
    if (strcmp(path, "taint.effect") == 0)
        return api_taint_effect_name((enum api_taint_effect)k);
    if (strcmp(path, "eviction.mode") == 0)
        return api_eviction_mode_name((enum api_eviction_mode)k);
    return api_eviction_method_name((enum api_eviction_method)k);
}

/* C's names of each enum, which must be exactly the CRD's enum. */
static void check_enum_names(cJSON *spec_schema)
{
    static const struct {
        const char *path;
        int n;
    } enums[] = {
        {"metrics.source", 2}, {"pressure.resource", 3}, {"pressure.stall", 2},  {"machineConfig.deletionPolicy", 2},
        {"taint.effect", 2},   {"eviction.mode", 3},     {"eviction.method", 3},
    };
    for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]); i++) {
        char buf[64];
        snprintf(buf, sizeof(buf), "%s", enums[i].path);
        char *dot = strchr(buf, '.');
        *dot = '\0';
        cJSON *values = cJSON_GetObjectItem(prop(prop(spec_schema, buf), dot + 1), "enum");
        assert_int_equal(cJSON_GetArraySize(values), enums[i].n);
        for (int k = 0; k < enums[i].n; k++)
            assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(values, k)), enum_name(enums[i].path, k));
    }
}

/* Walk the spec schema: every field described; integer bounds and enums agree with C. */
static void walk_spec(const char *path, cJSON *schema, struct walk *w)
{
    const char *desc = cJSON_GetStringValue(cJSON_GetObjectItem(schema, "description"));
    if (!desc || strlen(desc) < 8)
        fail_msg("%s: no description (kubectl explain would show nothing)", path);
    w->described++;
    /* kubectl explain does not show defaults, so the description must say it */
    cJSON *def = cJSON_GetObjectItem(schema, "default");
    if (def && !(cJSON_IsObject(def) && !def->child) && !strcasestr(desc, "default"))
        fail_msg("%s: has a default, but its description does not say it", path);
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(schema, "type"));
    bool in_selector = strstr(path, "Selector") != NULL; /* tested with the selector module */
    if (type && strcmp(type, "integer") == 0 && !in_selector)
        check_integer(path, schema, w);
    if (cJSON_GetObjectItem(schema, "enum") && !in_selector)
        check_enum(path, schema, w);
    if (type && strcmp(type, "string") == 0 && !cJSON_GetObjectItem(schema, "enum") &&
        !cJSON_GetObjectItem(schema, "pattern"))
        fail_msg("%s: a string field without a pattern or enum", path);
    cJSON *p;
    cJSON_ArrayForEach (p, cJSON_GetObjectItem(schema, "properties")) {
        char sub[512];
        snprintf(sub, sizeof(sub), "%s.%s", path, p->string);
        walk_spec(sub, p, w);
    }
    cJSON *items = cJSON_GetObjectItem(schema, "items");
    if (items && cJSON_GetObjectItem(items, "properties")) {
        char sub[512];
        snprintf(sub, sizeof(sub), "%s[0]", path);
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(items, "properties")) {
            char sub2[600];
            snprintf(sub2, sizeof(sub2), "%s.%s", sub, p->string);
            walk_spec(sub2, p, w);
        }
    }
}

static void test_crd_rules_agree_with_c(void **state)
{
    (void)state;
    cJSON *crd = tu_load_yaml(CRD);
    cJSON *spec = prop(root_schema(crd), "spec");
    struct walk w = {0};
    walk_spec("spec", spec, &w);
    check_enum_names(spec);
    print_message("checked %d described fields, %d integer bounds, %d enums\n", w.described, w.integers, w.enums);
    assert_true(w.integers >= 9);
    assert_true(w.enums >= 5);
    cJSON_Delete(crd);
}

/* Status fields are described too (kubectl explain psirebalance.status). */
static void describe_all(const char *path, cJSON *schema)
{
    const char *desc = cJSON_GetStringValue(cJSON_GetObjectItem(schema, "description"));
    if (!desc || !*desc)
        fail_msg("%s: no description", path);
    cJSON *p;
    cJSON_ArrayForEach (p, cJSON_GetObjectItem(schema, "properties")) {
        char sub[512];
        snprintf(sub, sizeof(sub), "%s.%s", path, p->string);
        describe_all(sub, p);
    }
    cJSON *items = cJSON_GetObjectItem(schema, "items");
    if (items) {
        char sub[512];
        snprintf(sub, sizeof(sub), "%s[]", path);
        describe_all(sub, items);
    }
}

static void test_status_fields_described(void **state)
{
    (void)state;
    cJSON *crd = tu_load_yaml(CRD);
    describe_all("status", prop(root_schema(crd), "status"));
    cJSON_Delete(crd);
}

/* Resolve a simple JSONPath (.a.b, .a[?(...)].c) against the schema; true when it exists. */
static bool schema_has(cJSON *root, const char *jsonpath)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", jsonpath);
    cJSON *s = root;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        char *filter = strchr(tok, '[');
        bool closed = filter && strchr(filter, ']');
        if (filter)
            *filter = '\0';
        if (strcmp(tok, "metadata") == 0)
            return true;
        s = prop(s, tok);
        if (!s)
            return false;
        if (filter) {
            s = cJSON_GetObjectItem(s, "items");
            if (!s)
                return false;
            /* skip the rest of a filter that contains dots: [?(@.type=="Ready")] */
            while (!closed && (tok = strtok_r(NULL, ".", &save)))
                closed = strchr(tok, ']') != NULL;
        }
    }
    return true;
}

static void test_printer_columns(void **state)
{
    (void)state;
    cJSON *crd = tu_load_yaml(CRD);
    cJSON *v = crd_version(crd);
    static const char *const want[] = {"Nodes", "Pressured", "Tainted", "Evictions", "Migrations",
                                       "Ready", "Age",       "Mode",    "Source",    "Resource"};
    cJSON *cols = cJSON_GetObjectItem(v, "additionalPrinterColumns");
    assert_int_equal(cJSON_GetArraySize(cols), 10);
    for (int i = 0; i < 10; i++) {
        cJSON *c = cJSON_GetArrayItem(cols, i);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), want[i]);
        cJSON *prio = cJSON_GetObjectItem(c, "priority");
        assert_int_equal(prio ? prio->valueint : 0, i >= 7 ? 1 : 0);
        const char *jp = cJSON_GetStringValue(cJSON_GetObjectItem(c, "jsonPath"));
        if (!schema_has(root_schema(crd), jp))
            fail_msg("printer column %s: %s is not in the schema", want[i], jp);
    }
    cJSON *names = cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "spec"), "names");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(names, "shortNames"), 0)), "psir");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "spec"), "scope")),
                        "Cluster");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "spec"), "group")),
                        API_GROUP);
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "subresources"), "status"));
    cJSON_Delete(crd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crd_defaults_are_the_documented_defaults),
        cmocka_unit_test(test_c_defaults_are_the_documented_defaults),
        cmocka_unit_test(test_crd_rules_agree_with_c),
        cmocka_unit_test(test_status_fields_described),
        cmocka_unit_test(test_printer_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
