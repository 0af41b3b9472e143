/* api_spec / api_psirebalance: decode with defaults, validate, encode, round trips, unknown
 * fields, and the shared table of invalid documents (tests/testdata/api/invalid.json), which
 * tests/e2e/api runs against the API server too. */
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

static const char *const samples[] = {
    "config/samples/rebalance_v1alpha1_psirebalance_minimal.yaml",
    "config/samples/rebalance_v1alpha1_psirebalance_seed.yaml",
    "config/samples/rebalance_v1alpha1_psirebalance_production.yaml",
};

static void fail_with_errors(const char *what, const struct api_errors *errs)
{
    char *all = api_errors_join(errs, "; ");
    fail_msg("%s: %s", what, all ? all : "?");
}

/* Decode and validate the spec text; returns the error count, leaves errs/warns filled. */
static size_t check_spec(const char *text, struct api_spec *spec, struct api_errors *errs, struct api_errors *warns)
{
    cJSON *j = tu_json(text);
    api_spec_decode(j, spec, errs, warns);
    api_spec_validate(spec, errs);
    cJSON_Delete(j);
    return errs->n;
}

static void test_absent_and_empty_spec_get_defaults(void **state)
{
    (void)state;
    struct api_spec defaults = {0}, a = {0}, b = {0};
    struct api_errors errs = {0}, warns = {0};
    assert_int_equal(api_spec_defaults(&defaults), 0);
    assert_int_equal(api_spec_decode(NULL, &a, &errs, &warns), 0);
    assert_int_equal(check_spec("{}", &b, &errs, &warns), 0);
    assert_int_equal(api_spec_validate(&defaults, &errs), 0);
    assert_int_equal(warns.n, 0);
    assert_true(api_spec_equal(&defaults, &a));
    assert_true(api_spec_equal(&defaults, &b));
    /* The documented defaults, as the CRD descriptions and README state them. */
    assert_int_equal(b.pressure.resource, API_RESOURCE_CPU);
    assert_int_equal(b.pressure.taint_above_percent, 25);
    assert_int_equal(b.pressure.untaint_below_percent, 15);
    assert_int_equal(b.eviction.mode, API_MODE_DRY_RUN);
    assert_int_equal(b.eviction.method, API_METHOD_AUTO);
    assert_false(b.eviction.has_relief_target);
    assert_false(b.eviction.allow_vm_restart);
    assert_int_equal(b.eviction.nresources, 0);
    assert_false(b.machine_config.enabled);
    assert_int_equal(b.metrics.interval_ms, 30000);
    assert_int_equal(b.eviction.cooldown.initial_ms, 600000);
    assert_string_equal(b.taint.key, "rebalance.psi.dev/pressure");
    assert_int_equal(b.taint.effect, API_EFFECT_PREFER_NO_SCHEDULE);
    api_spec_free(&defaults);
    api_spec_free(&a);
    api_spec_free(&b);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

static void test_samples_decode_and_validate(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        cJSON *doc = tu_load_yaml(samples[i]);
        struct api_psirebalance p = {0};
        struct api_errors errs = {0}, warns = {0};
        if (api_psirebalance_decode(doc, &p, &errs, &warns) != 0)
            fail_with_errors(samples[i], &errs);
        if (warns.n)
            fail_with_errors(samples[i], &warns);
        assert_non_null(p.name);
        if (i == 1) { /* seed: CPU, 25 %, DryRun, PSI turned on by MachineConfig */
            assert_string_equal(p.name, "vm-rebalance");
            assert_int_equal(p.spec.pressure.resource, API_RESOURCE_CPU);
            assert_int_equal(p.spec.pressure.taint_above_percent, 25);
            assert_int_equal(p.spec.eviction.mode, API_MODE_DRY_RUN);
            assert_true(p.spec.machine_config.enabled);
            assert_true(p.spec.machine_config.schedstats);
        }
        if (i == 2) { /* production: Automatic with limits */
            assert_int_equal(p.spec.eviction.mode, API_MODE_AUTOMATIC);
            assert_true(p.spec.pressure.has_utilization_floor);
            assert_int_equal(p.spec.pressure.utilization_floor_percent, 60);
            assert_int_equal(p.spec.eviction.max_total, 2);
            assert_int_equal(p.spec.eviction.cooldown.max_ms, 4 * 3600000);
            assert_int_equal(p.spec.eviction.nexcluded_namespaces, 3);
            assert_int_equal(p.spec.eviction.pod_selector.nexprs, 1);
        }
        api_psirebalance_free(&p);
        api_errors_free(&errs);
        api_errors_free(&warns);
        cJSON_Delete(doc);
    }
}

/* NULL when every field set in given has the same value in got, else the name of one that differs. */
static const char *json_subset(const cJSON *given, const cJSON *got)
{
    if (!cJSON_IsObject(given))
        return cJSON_Compare(given, got, 1) ? NULL : "(value)";
    const cJSON *f;
    cJSON_ArrayForEach (f, given) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(got, f->string);
        if (!g || json_subset(f, g))
            return f->string;
    }
    return NULL;
}

/* decode -> encode -> decode gives the same spec, and encoding is stable. */
static void test_encode_decode_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        cJSON *doc = tu_load_yaml(samples[i]);
        struct api_spec a = {0}, b = {0};
        struct api_errors errs = {0};
        api_spec_decode(cJSON_GetObjectItem(doc, "spec"), &a, &errs, NULL);
        cJSON *enc = api_spec_encode(&a);
        assert_non_null(enc);
        api_spec_decode(enc, &b, &errs, NULL);
        assert_int_equal(errs.n, 0);
        assert_true(api_spec_equal(&a, &b));
        cJSON *enc2 = api_spec_encode(&b);
        assert_true(cJSON_Compare(enc, enc2, 1));
        /* What the sample says survives encoding: every field it sets has the same value. */
        const char *where = json_subset(cJSON_GetObjectItem(doc, "spec"), enc);
        if (where)
            fail_msg("%s: spec field %s changed by the round trip", samples[i], where);
        cJSON_Delete(enc);
        cJSON_Delete(enc2);
        api_spec_free(&a);
        api_spec_free(&b);
        api_errors_free(&errs);
        cJSON_Delete(doc);
    }
}

static void test_every_field_round_trips(void **state)
{
    (void)state;
    /* Every field set to a value other than its default. */
    const char *full =
        "{\"nodeSelector\":{\"matchLabels\":{\"a\":\"b\"},\"matchExpressions\":[{\"key\":\"c\","
        "\"operator\":\"NotIn\",\"values\":[\"d\"]}]},"
        "\"machineConfig\":{\"enabled\":true,\"roles\":[\"worker\",\"infra\"],\"schedstats\":true,"
        "\"deletionPolicy\":\"Delete\"},"
        "\"metrics\":{\"source\":\"Kubelet\",\"prometheus\":{\"url\":\"http://prometheus:9090/p\","
        "\"bearerTokenFile\":\"\",\"caFile\":\"/etc/ca.pem\",\"sendTokenOverPlainHTTP\":true},\"interval\":\"1m\",\"window\":\"5m\"},"
        "\"pressure\":{\"resource\":\"memory\",\"stall\":\"full\",\"taintAbovePercent\":10,\"untaintBelowPercent\":2,"
        "\"sustain\":\"0s\",\"maxTaintedPercent\":0},"
        "\"taint\":{\"key\":\"example.com/hot\",\"effect\":\"NoSchedule\"},"
        "\"eviction\":{\"mode\":\"Automatic\",\"method\":\"Migrate\",\"evictAbovePercent\":100,"
        "\"reliefTargetPercent\":5,\"resources\":[\"cpu\",\"memory\"],\"podSelector\":{},\"excludedNamespaces\":[],\"maxPerNode\":3,\"maxPerNamespace\":4,"
        "\"maxTotal\":5,\"maxInFlightMigrations\":6,\"maxMovesPerWorkload\":7,\"maxMovesPerHour\":8,"
        "\"allowVMRestart\":true,\"cooldown\":{\"initial\":\"1m\",\"max\":\"1m\",\"history\":\"1m\"}}}";
    struct api_spec s = {0}, defaults = {0};
    struct api_errors errs = {0}, warns = {0};
    if (check_spec(full, &s, &errs, &warns))
        fail_with_errors("full spec", &errs);
    assert_int_equal(warns.n, 0);
    cJSON *enc = api_spec_encode(&s), *want = tu_json(full);
    if (!cJSON_Compare(enc, want, 1)) {
        char *got = cJSON_PrintUnformatted(enc);
        fail_msg("encoded: %s", got);
    }
    api_spec_defaults(&defaults);
    assert_false(api_spec_equal(&s, &defaults));
    /* The empty podSelector stays empty (it selects every pod), not the default. */
    assert_int_equal(s.eviction.pod_selector.nlabels, 0);
    assert_int_equal(s.eviction.nexcluded_namespaces, 0);
    cJSON_Delete(enc);
    cJSON_Delete(want);
    api_spec_free(&s);
    api_spec_free(&defaults);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

/* bearerTokenFile naming the operator's own token (the old default, stored in old objects)
 * decodes as unset, with a warning: that token is never sent to Prometheus. */
static void test_legacy_token_file_is_unset(void **state)
{
    (void)state;
    struct api_spec s = {0};
    struct api_errors errs = {0}, warns = {0};
    assert_int_equal(check_spec("{\"metrics\":{\"prometheus\":{\"bearerTokenFile\":"
                                "\"/var/run/secrets/kubernetes.io/serviceaccount/token\"}}}",
                                &s, &errs, &warns),
                     0);
    assert_null(s.metrics.prometheus.bearer_token_file);
    assert_non_null(api_errors_find(&warns, "spec.metrics.prometheus.bearerTokenFile"));
    api_spec_free(&s);
    api_errors_free(&warns);
    /* another file stays as it is */
    assert_int_equal(
        check_spec("{\"metrics\":{\"prometheus\":{\"bearerTokenFile\":\"/etc/reader/token\"}}}", &s, &errs, &warns), 0);
    assert_string_equal(s.metrics.prometheus.bearer_token_file, "/etc/reader/token");
    assert_int_equal(warns.n, 0);
    api_spec_free(&s);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

/* Partial objects: what is given replaces the default, what is not keeps it. */
static void test_partial_sections_keep_other_defaults(void **state)
{
    (void)state;
    struct api_spec s = {0};
    struct api_errors errs = {0};
    assert_int_equal(
        check_spec("{\"metrics\":{\"prometheus\":{\"url\":\"http://p:9090\"}},"
                   "\"eviction\":{\"cooldown\":{\"initial\":\"20m\"}},\"pressure\":{\"taintAbovePercent\":30}}",
                   &s, &errs, NULL),
        0);
    assert_string_equal(s.metrics.prometheus.url, "http://p:9090");
    assert_null(s.metrics.prometheus.bearer_token_file); /* the metrics-reading ServiceAccount's token */
    assert_false(s.metrics.prometheus.send_token_over_plain_http);
    assert_int_equal(s.eviction.cooldown.initial_ms, 20 * 60000);
    assert_int_equal(s.eviction.cooldown.max_ms, 2 * 3600000);
    assert_int_equal(s.pressure.taint_above_percent, 30);
    assert_int_equal(s.pressure.untaint_below_percent, 15);
    /* null is absent, as the API server treats it */
    api_spec_free(&s);
    assert_int_equal(check_spec("{\"taint\":null,\"pressure\":{\"sustain\":null}}", &s, &errs, NULL), 0);
    assert_string_equal(s.taint.key, "rebalance.psi.dev/pressure");
    assert_int_equal(s.pressure.sustain_ms, 60000);
    api_spec_free(&s);
    api_errors_free(&errs);
}

static void test_unknown_fields_are_warnings(void **state)
{
    (void)state;
    struct api_spec s = {0};
    struct api_errors errs = {0}, warns = {0};
    assert_int_equal(check_spec("{\"futureFeature\":{\"on\":true},\"pressure\":{\"taintAbovePercent\":30,"
                                "\"hysteresis\":5},\"eviction\":{\"cooldown\":{\"jitter\":\"1m\"},"
                                "\"podSelector\":{\"matchLabel\":{}}}}",
                                &s, &errs, &warns),
                     0);
    assert_int_equal(s.pressure.taint_above_percent, 30); /* known fields beside them still count */
    assert_int_equal(warns.n, 4);
    assert_non_null(api_errors_find(&warns, "spec.futureFeature"));
    assert_non_null(api_errors_find(&warns, "spec.pressure.hysteresis"));
    assert_non_null(api_errors_find(&warns, "spec.eviction.cooldown.jitter"));
    assert_non_null(api_errors_find(&warns, "spec.eviction.podSelector.matchLabel"));
    assert_string_equal(api_errors_find(&warns, "spec.futureFeature")->msg, "unknown field, ignored");
    api_spec_free(&s);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

/* Every problem is reported, each with its field; the message says why with the other value. */
static void test_every_error_is_returned(void **state)
{
    (void)state;
    struct api_spec s = {0};
    struct api_errors errs = {0};
    check_spec("{\"pressure\":{\"untaintBelowPercent\":30},\"taint\":{\"effect\":\"NoExecute\"},"
               "\"metrics\":{\"interval\":\"30\"},\"eviction\":{\"maxPerNode\":5,\"excludedNamespaces\":[\"A\"]},"
               "\"machineConfig\":{\"roles\":[\"a_b\"]}}",
               &s, &errs, NULL);
    assert_int_equal(errs.n, 6);
    const struct api_error *e = api_errors_find(&errs, "spec.pressure.untaintBelowPercent");
    assert_non_null(e);
    assert_string_equal(e->msg, "must be less than taintAbovePercent (25)");
    assert_non_null(api_errors_find(&errs, "spec.taint.effect"));
    assert_non_null(api_errors_find(&errs, "spec.metrics.interval"));
    assert_non_null(api_errors_find(&errs, "spec.eviction.maxPerNode"));
    assert_non_null(api_errors_find(&errs, "spec.eviction.excludedNamespaces[0]"));
    assert_non_null(api_errors_find(&errs, "spec.machineConfig.roles[0]"));
    char *all = api_errors_join(&errs, "\n");
    assert_non_null(strstr(all, "spec.pressure.untaintBelowPercent: must be less than taintAbovePercent (25)"));
    assert_non_null(strstr(all, "spec.eviction.maxPerNode: must not exceed maxTotal (2)"));
    free(all);
    api_spec_free(&s);
    api_errors_free(&errs);
}

/* 0 for a level a pressure must fall below can never be met (a pressure is never below 0):
 * untaintBelowPercent 0 would never untaint, reliefTargetPercent 0 was taken for "unset". Both
 * are refused with the reason; 1 is the least each takes. */
static void test_levels_below_zero_refused(void **state)
{
    (void)state;
    static const char *const specs[][2] = {
        {"{\"pressure\":{\"untaintBelowPercent\":0}}", "spec.pressure.untaintBelowPercent"},
        {"{\"eviction\":{\"reliefTargetPercent\":0}}", "spec.eviction.reliefTargetPercent"},
    };
    for (size_t i = 0; i < 2; i++) {
        struct api_spec s = {0};
        struct api_errors errs = {0};
        check_spec(specs[i][0], &s, &errs, NULL);
        const struct api_error *e = api_errors_find(&errs, specs[i][1]);
        assert_non_null(e);
        assert_non_null(strstr(e->msg, "never below 0"));
        api_spec_free(&s);
        api_errors_free(&errs);
    }
    struct api_spec s = {0};
    struct api_errors errs = {0};
    check_spec("{\"pressure\":{\"untaintBelowPercent\":1},\"eviction\":{\"reliefTargetPercent\":1}}", &s, &errs, NULL);
    assert_int_equal(errs.n, 0);
    assert_true(s.eviction.has_relief_target);
    assert_int_equal(s.eviction.relief_target_percent, 1);
    api_spec_free(&s);
    api_errors_free(&errs);
}

/* A field with the wrong type keeps its default and does not drag cross-field rules in. */
static void test_type_error_does_not_cascade(void **state)
{
    (void)state;
    struct api_spec s = {0};
    struct api_errors errs = {0};
    check_spec("{\"pressure\":{\"taintAbovePercent\":\"high\",\"untaintBelowPercent\":30}}", &s, &errs, NULL);
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.v[0].field, "spec.pressure.taintAbovePercent");
    assert_int_equal(s.pressure.taint_above_percent, 25);
    api_spec_free(&s);
    api_errors_free(&errs);

    check_spec("\"not an object\"", &s, &errs, NULL);
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.v[0].field, "spec");
    api_spec_free(&s);
    api_errors_free(&errs);
}

/* A spec built in code without defaults is refused where it lacks what the server requires. */
static void test_spec_built_in_code(void **state)
{
    (void)state;
    struct api_spec s = {0};
    struct api_errors errs = {0};
    assert_int_equal(api_spec_validate(&s, &errs), -1);
    assert_non_null(api_errors_find(&errs, "spec.metrics.prometheus"));
    assert_non_null(api_errors_find(&errs, "spec.taint.key"));
    assert_non_null(api_errors_find(&errs, "spec.pressure.taintAbovePercent"));
    api_errors_free(&errs);
    api_spec_defaults(&s);
    s.metrics.source = API_SOURCE_KUBELET;
    free(s.metrics.prometheus.url);
    s.metrics.prometheus.url = NULL; /* not needed for Kubelet */
    assert_int_equal(api_spec_validate(&s, &errs), 0);
    api_spec_free(&s);
}

static void test_whole_object(void **state)
{
    (void)state;
    cJSON *j = tu_json("{\"apiVersion\":\"rebalance.psi.dev/v1alpha1\",\"kind\":\"PsiRebalance\","
                       "\"metadata\":{\"name\":\"w\",\"uid\":\"u-1\",\"resourceVersion\":\"42\",\"generation\":3,"
                       "\"labels\":{\"a\":\"b\"}},"
                       "\"spec\":{\"pressure\":{\"resource\":\"io\"}},"
                       "\"status\":{\"observedGeneration\":2,\"summary\":{\"nodes\":\"three\"}}}");
    struct api_psirebalance p = {0};
    struct api_errors errs = {0}, warns = {0};
    assert_int_equal(api_psirebalance_decode(j, &p, &errs, &warns), 0);
    assert_string_equal(p.name, "w");
    assert_string_equal(p.uid, "u-1");
    assert_string_equal(p.resource_version, "42");
    assert_int_equal(p.generation, 3);
    assert_int_equal(p.spec.pressure.resource, API_RESOURCE_IO);
    assert_true(p.has_status);
    assert_int_equal(p.status.observed_generation, 2);
    /* a bad status is the operator's own to overwrite: a warning, not a refusal */
    assert_non_null(api_errors_find(&warns, "status.summary.nodes"));
    cJSON_Delete(j);
    api_errors_free(&warns);

    j = tu_json("{\"apiVersion\":\"rebalance.psi.dev/v1beta9\",\"kind\":\"Other\",\"spec\":{}}");
    assert_int_equal(api_psirebalance_decode(j, &p, &errs, NULL), -1);
    assert_non_null(api_errors_find(&errs, "apiVersion"));
    assert_non_null(api_errors_find(&errs, "kind"));
    assert_null(p.name);
    cJSON_Delete(j);
    api_psirebalance_free(&p);
    api_errors_free(&errs);
}

/* The shared table: every case the C validator is meant to catch is caught, naming exactly the
 * field the API server names; the server-only cases are decoded with a warning on that field. */
static void test_invalid_document_table(void **state)
{
    (void)state;
    cJSON *table = tu_load_json("tests/testdata/api/invalid.json");
    cJSON *cases = cJSON_GetObjectItem(table, "cases"), *c;
    assert_true(cJSON_GetArraySize(cases) >= 20);
    int both = 0, server = 0;
    cJSON_ArrayForEach (c, cases) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
        const char *field = cJSON_GetStringValue(cJSON_GetObjectItem(c, "field"));
        const char *guard = cJSON_GetStringValue(cJSON_GetObjectItem(c, "guard"));
        assert_non_null(name);
        assert_non_null(field);
        assert_non_null(guard);
        struct api_spec s = {0};
        struct api_errors errs = {0}, warns = {0};
        api_spec_decode(cJSON_GetObjectItem(c, "spec"), &s, &errs, &warns);
        api_spec_validate(&s, &errs);
        if (strcmp(guard, "both") == 0) {
            both++;
            if (!api_errors_find(&errs, field)) {
                char *all = api_errors_join(&errs, "; ");
                fail_msg("%s: the C validator does not refuse %s (errors: %s)", name, field, all[0] ? all : "none");
            }
            for (size_t i = 0; i < errs.n; i++)
                if (strcmp(errs.v[i].field, field) != 0)
                    fail_msg("%s: unexpected error besides %s: %s: %s", name, field, errs.v[i].field, errs.v[i].msg);
        } else if (strcmp(guard, "server") == 0) {
            server++;
            if (errs.n)
                fail_with_errors(name, &errs);
            if (!api_errors_find(&warns, field))
                fail_msg("%s: no warning for %s", name, field);
        } else {
            fail_msg("%s: unknown guard '%s'", name, guard);
        }
        api_spec_free(&s);
        api_errors_free(&errs);
        api_errors_free(&warns);
    }
    print_message("invalid table: %d cases refused by C and server, %d by the server only\n", both, server);
    assert_true(both >= 20);
    cJSON_Delete(table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absent_and_empty_spec_get_defaults),
        cmocka_unit_test(test_legacy_token_file_is_unset),
        cmocka_unit_test(test_samples_decode_and_validate),
        cmocka_unit_test(test_encode_decode_round_trip),
        cmocka_unit_test(test_every_field_round_trips),
        cmocka_unit_test(test_partial_sections_keep_other_defaults),
        cmocka_unit_test(test_unknown_fields_are_warnings),
        cmocka_unit_test(test_every_error_is_returned),
        cmocka_unit_test(test_levels_below_zero_refused),
        cmocka_unit_test(test_type_error_does_not_cascade),
        cmocka_unit_test(test_spec_built_in_code),
        cmocka_unit_test(test_whole_object),
        cmocka_unit_test(test_invalid_document_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
