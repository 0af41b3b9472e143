/* Unit tests for psi_kubelet's Summary parsing and window rule, on JSON fixtures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "psi/kubelet.h"
#include "testutil.h"

static cJSON *load(const char *name)
{
    char *t = read_testdata(name, NULL);
    assert_non_null(t);
    cJSON *j = cJSON_Parse(t);
    free(t);
    assert_non_null(j);
    return j;
}

static void test_window_rule(void **state)
{
    (void)state;
    assert_int_equal(psi_kubelet_avg_for_window(0), PSI_AVG10);
    assert_int_equal(psi_kubelet_avg_for_window(10), PSI_AVG10);
    assert_int_equal(psi_kubelet_avg_for_window(59), PSI_AVG10);
    assert_int_equal(psi_kubelet_avg_for_window(60), PSI_AVG60);
    assert_int_equal(psi_kubelet_avg_for_window(299), PSI_AVG60);
    assert_int_equal(psi_kubelet_avg_for_window(300), PSI_AVG300);
    assert_int_equal(psi_kubelet_avg_for_window(3600), PSI_AVG300);
    assert_string_equal(psi_kubelet_avg_name(PSI_AVG60), "avg60");
}

static void test_node_psi(void **state)
{
    (void)state;
    cJSON *j = load("summary_psi.json");
    struct psi_value v[PSI_NRESOURCES];
    char err[256] = "";
    /* 1m window: avg60 of node-level "some"; pod and system container PSI are not read. */
    assert_int_equal(psi_kubelet_parse_summary(j, 0, 0, 60, v, err, sizeof(err)), 0);
    assert_true(v[PSI_CPU].known);
    assert_float_equal(v[PSI_CPU].percent, 31.2, 1e-9);
    assert_float_equal(v[PSI_MEMORY].percent, 0.1, 1e-9);
    assert_float_equal(v[PSI_IO].percent, 1.1, 1e-9);
    /* 30 s: avg10 */
    assert_int_equal(psi_kubelet_parse_summary(j, 0, 0, 30, v, err, sizeof(err)), 0);
    assert_float_equal(v[PSI_CPU].percent, 42.17, 1e-9);
    assert_float_equal(v[PSI_IO].percent, 2.5, 1e-9);
    /* 5m, full */
    assert_int_equal(psi_kubelet_parse_summary(j, 0, PSI_RES_ALL, 300, v, err, sizeof(err)), 0);
    assert_float_equal(v[PSI_CPU].percent, 0.25, 1e-9);
    assert_float_equal(v[PSI_IO].percent, 0.3, 1e-9);
    assert_true(v[PSI_MEMORY].known);
    assert_float_equal(v[PSI_MEMORY].percent, 0, 1e-12);
    /* full for io only, some for the others */
    assert_int_equal(psi_kubelet_parse_summary(j, 0, PSI_RES_BIT(PSI_IO), 60, v, err, sizeof(err)), 0);
    assert_float_equal(v[PSI_CPU].percent, 31.2, 1e-9);
    assert_float_equal(v[PSI_IO].percent, 0.6, 1e-9);
    /* only io asked */
    assert_int_equal(psi_kubelet_parse_summary(j, PSI_RES_BIT(PSI_IO), 0, 60, v, err, sizeof(err)), 0);
    assert_false(v[PSI_CPU].known);
    assert_false(v[PSI_MEMORY].known);
    assert_true(v[PSI_IO].known);
    cJSON_Delete(j);
}

static void test_utilization(void **state)
{
    (void)state;
    cJSON *j = load("summary_psi.json");
    struct psi_value u;
    /* node.cpu.usageNanoCores 3.512e9 on 16 CPUs; the pods' and system containers' are not read */
    psi_kubelet_parse_utilization(j, 16, &u);
    assert_true(u.known);
    assert_float_equal(u.percent, 21.95, 1e-9);
    psi_kubelet_parse_utilization(j, 2, &u); /* more usage than CPUs: clamped */
    assert_float_equal(u.percent, 100, 0);
    psi_kubelet_parse_utilization(j, 0, &u); /* CPUs unknown */
    assert_false(u.known);
    cJSON_Delete(j);
    j = cJSON_Parse("{\"node\":{\"cpu\":{\"usageNanoCores\":\"many\"}}}");
    psi_kubelet_parse_utilization(j, 16, &u);
    assert_false(u.known);
    cJSON_Delete(j);
}

static void test_no_psi_is_unknown(void **state)
{
    (void)state;
    cJSON *j = load("summary_no_psi.json");
    struct psi_value v[PSI_NRESOURCES];
    char err[256] = "";
    assert_int_equal(psi_kubelet_parse_summary(j, 0, 0, 60, v, err, sizeof(err)), 0);
    for (int r = 0; r < PSI_NRESOURCES; r++)
        assert_false(v[r].known);
    cJSON_Delete(j);

    j = load("summary_partial.json");
    assert_int_equal(psi_kubelet_parse_summary(j, 0, 0, 60, v, err, sizeof(err)), 0);
    assert_true(v[PSI_CPU].known);
    assert_float_equal(v[PSI_CPU].percent, 4, 1e-12);
    assert_false(v[PSI_MEMORY].known); /* "psi": null */
    assert_false(v[PSI_IO].known);     /* no io at all */
    cJSON_Delete(j);
}

static void test_bad_summaries(void **state)
{
    (void)state;
    struct psi_value v[PSI_NRESOURCES];
    char err[256] = "";
    cJSON *j = load("summary_bad_value.json");
    assert_int_equal(psi_kubelet_parse_summary(j, 0, 0, 60, v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "node.cpu.psi.some.avg60"));
    assert_non_null(strstr(err, "outside 0..100"));
    assert_false(v[PSI_CPU].known);
    /* avg10 of the same summary is fine */
    assert_int_equal(psi_kubelet_parse_summary(j, 0, 0, 10, v, err, sizeof(err)), 0);
    assert_float_equal(v[PSI_CPU].percent, 1, 1e-12);
    cJSON_Delete(j);

    j = load("summary_bad_type.json");
    assert_int_equal(psi_kubelet_parse_summary(j, 0, 0, 60, v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is not a number"));
    cJSON_Delete(j);

    const char *others[] = {"[]",
                            "{}",
                            "{\"node\": 3}",
                            "{\"node\": {\"cpu\": []}}",
                            "{\"node\": {\"cpu\": {\"psi\": 1}}}",
                            "{\"node\": {\"io\": {\"psi\": {\"some\": \"x\"}}}}"};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        j = cJSON_Parse(others[i]);
        assert_non_null(j);
        if (psi_kubelet_parse_summary(j, 0, 0, 60, v, err, sizeof(err)) != -1)
            fail_msg("summary %s was accepted", others[i]);
        cJSON_Delete(j);
    }
    assert_int_equal(psi_kubelet_parse_summary(NULL, 0, 0, 60, v, err, sizeof(err)), -1);
}

static void test_summary_path(void **state)
{
    (void)state;
    char *p = psi_kubelet_summary_path("worker-0");
    assert_string_equal(p, "/api/v1/nodes/worker-0/proxy/stats/summary");
    free(p);
    p = psi_kubelet_summary_path("a b/c");
    assert_null(strstr(p, "a b/c"));
    free(p);
}

/* The source wraps the client it is given (borrowed: freeing the source leaves it alone). */
static void test_source_new(void **state)
{
    (void)state;
    struct kube_err st;
    int client_stand_in; /* never dereferenced: nothing is sampled */
    struct psi_source *src = psi_kubelet_source_new((struct kube_client *)&client_stand_in, &st);
    assert_non_null(src);
    assert_false(kube_err_failed(&st));
    assert_string_equal(src->name, "Kubelet");
    assert_ptr_equal(src->impl, &client_stand_in);
    assert_non_null(src->sample);
    assert_null(src->free);
    psi_source_free(src);
}

/* The unread nodes of a sample, as the MetricsAvailable message lists them. */
static void test_unread_text(void **state)
{
    (void)state;
    struct psi_node_desc nodes[] = {{"w-0", NULL, 0, 4}, {"w-1", NULL, 0, 4}, {"w-2", NULL, 0, 4}};
    struct psi_request req = {nodes, 3, PSI_RES_ALL, 0, 60, 0};
    struct psi_sample s;
    assert_int_equal(psi_sample_init(&s, &req), 0);
    char buf[128];
    assert_string_equal(psi_sample_unread_text(&s, buf, sizeof(buf)), "");
    psi_sample_node_unread(&s, 1, PSI_REASON_NO_PSI, "node %s: no psi", "w-1");
    psi_sample_node_unread(&s, 2, PSI_REASON_TIMEOUT, "node %s: slow", "w-2");
    assert_int_equal(s.n_node_errors, 2);
    assert_string_equal(s.node_error, "node w-1: no psi");
    assert_null(s.nodes[0].unread);
    assert_string_equal(psi_sample_unread_text(&s, buf, sizeof(buf)), "2 unread: w-1 (PSIUnavailable), w-2 (Timeout)");
    /* too small for both: the first, then an ellipsis */
    char small[40];
    assert_string_equal(psi_sample_unread_text(&s, small, sizeof(small)), "2 unread: w-1 (PSIUnavailable), ...");
    psi_sample_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_rule),   cmocka_unit_test(test_node_psi),
        cmocka_unit_test(test_utilization),   cmocka_unit_test(test_no_psi_is_unknown),
        cmocka_unit_test(test_bad_summaries), cmocka_unit_test(test_summary_path),
        cmocka_unit_test(test_source_new),    cmocka_unit_test(test_unread_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
