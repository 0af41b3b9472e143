/* Unit tests for psi_metrics: the exact text format (HELP/TYPE, label escaping, sorting,
 * histograms, special values) and the registry's rules. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "httpd/metrics.h"

static void expect_render(struct psi_metrics *m, const char *want)
{
    size_t len = 0;
    char *got = psi_metrics_render(m, &len);
    assert_non_null(got);
    assert_int_equal(len, strlen(got));
    if (strcmp(got, want) != 0)
        fail_msg("rendered:\n%s\nwanted:\n%s", got, want);
    free(got);
}

static void test_counter_gauge_format(void **state)
{
    (void)state;
    struct psi_metrics *m = psi_metrics_new();
    const char *verb_code[] = {"verb", "code", NULL};
    struct psi_metric *req =
        psi_metrics_counter(m, "psi_api_requests_total", "API requests by verb and code.", verb_code);
    struct psi_metric *up = psi_metrics_gauge(m, "psi_up", "1 when up.\nSecond line \\ here.", NULL);
    const char *node[] = {"node", NULL};
    struct psi_metric *pr = psi_metrics_gauge(m, "psi_node_pressure_percent", "Pressure.", node);
    struct psi_metric *empty = psi_metrics_counter(m, "psi_empty_total", "Never set.", node);
    assert_non_null(req);
    assert_non_null(up);
    assert_non_null(pr);
    assert_non_null(empty);
    assert_int_equal(psi_metric_inc(req, (const char *[]){"PATCH", "200"}, 1), 0);
    assert_int_equal(psi_metric_inc(req, (const char *[]){"GET", "200"}, 2), 0);
    assert_int_equal(psi_metric_inc(req, (const char *[]){"PATCH", "200"}, 1), 0);
    assert_int_equal(psi_metric_inc(req, (const char *[]){"GET", "409"}, 0.5), 0);
    assert_int_equal(psi_metric_set(pr, (const char *[]){"we\"ird\\node\nx"}, 31.2), 0);
    assert_int_equal(psi_metric_set(pr, (const char *[]){"a"}, 0.1), 0);
    expect_render(m, "# HELP psi_api_requests_total API requests by verb and code.\n"
                     "# TYPE psi_api_requests_total counter\n"
                     "psi_api_requests_total{verb=\"GET\",code=\"200\"} 2\n"
                     "psi_api_requests_total{verb=\"GET\",code=\"409\"} 0.5\n"
                     "psi_api_requests_total{verb=\"PATCH\",code=\"200\"} 2\n"
                     "# HELP psi_up 1 when up.\\nSecond line \\\\ here.\n"
                     "# TYPE psi_up gauge\n"
                     "psi_up 0\n"
                     "# HELP psi_node_pressure_percent Pressure.\n"
                     "# TYPE psi_node_pressure_percent gauge\n"
                     "psi_node_pressure_percent{node=\"a\"} 0.1\n"
                     "psi_node_pressure_percent{node=\"we\\\"ird\\\\node\\nx\"} 31.2\n");
    assert_float_equal(psi_metric_value(req, (const char *[]){"PATCH", "200"}), 2, 0);
    assert_true(isnan(psi_metric_value(req, (const char *[]){"PUT", "200"})));
    psi_metrics_free(m);
}

static void test_special_values(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(psi_metrics_format_value(NAN, b, sizeof(b)), "NaN");
    assert_string_equal(psi_metrics_format_value(INFINITY, b, sizeof(b)), "+Inf");
    assert_string_equal(psi_metrics_format_value(-INFINITY, b, sizeof(b)), "-Inf");
    assert_string_equal(psi_metrics_format_value(0.1, b, sizeof(b)), "0.1");
    assert_string_equal(psi_metrics_format_value(1e21, b, sizeof(b)), "1e+21");
    assert_string_equal(psi_metrics_format_value(-3, b, sizeof(b)), "-3");
    assert_string_equal(psi_metrics_format_value(1.0 / 3.0, b, sizeof(b)), "0.3333333333333333");
    assert_true(strtod(psi_metrics_format_value(0.1 + 0.2, b, sizeof(b)), NULL) == 0.1 + 0.2);
}

static void test_histogram(void **state)
{
    (void)state;
    struct psi_metrics *m = psi_metrics_new();
    const double buckets[] = {0.005, 0.1, 1, 10};
    const char *res[] = {"resource", NULL};
    struct psi_metric *h =
        psi_metrics_histogram(m, "psi_reconcile_duration_seconds", "Reconcile duration.", buckets, 4, res);
    assert_non_null(h);
    const char *v[] = {"psirebalance"};
    assert_int_equal(psi_metric_observe(h, v, 0.005), 0); /* on a bound: counts in it */
    assert_int_equal(psi_metric_observe(h, v, 0.05), 0);
    assert_int_equal(psi_metric_observe(h, v, 2.5), 0);
    assert_int_equal(psi_metric_observe(h, v, 100), 0);
    assert_int_equal(psi_metric_observe(h, v, NAN), -1);
    expect_render(m, "# HELP psi_reconcile_duration_seconds Reconcile duration.\n"
                     "# TYPE psi_reconcile_duration_seconds histogram\n"
                     "psi_reconcile_duration_seconds_bucket{resource=\"psirebalance\",le=\"0.005\"} 1\n"
                     "psi_reconcile_duration_seconds_bucket{resource=\"psirebalance\",le=\"0.1\"} 2\n"
                     "psi_reconcile_duration_seconds_bucket{resource=\"psirebalance\",le=\"1\"} 2\n"
                     "psi_reconcile_duration_seconds_bucket{resource=\"psirebalance\",le=\"10\"} 3\n"
                     "psi_reconcile_duration_seconds_bucket{resource=\"psirebalance\",le=\"+Inf\"} 4\n"
                     "psi_reconcile_duration_seconds_sum{resource=\"psirebalance\"} 102.555\n"
                     "psi_reconcile_duration_seconds_count{resource=\"psirebalance\"} 4\n");
    assert_float_equal(psi_metric_value(h, v), 4, 0);
    psi_metrics_free(m);

    /* Unlabelled histogram. */
    m = psi_metrics_new();
    h = psi_metrics_histogram(m, "h", "", buckets, 1, NULL);
    expect_render(m, "# HELP h \n# TYPE h histogram\nh_bucket{le=\"0.005\"} 0\nh_bucket{le=\"+Inf\"} 0\n"
                     "h_sum 0\nh_count 0\n");
    psi_metrics_free(m);
}

static void test_rules(void **state)
{
    (void)state;
    struct psi_metrics *m = psi_metrics_new();
    const double good[] = {1, 2};
    const double unsorted[] = {2, 1};
    const double inf[] = {1, INFINITY};
    assert_null(psi_metrics_counter(m, "1abc", "", NULL));
    assert_null(psi_metrics_counter(m, "a-b", "", NULL));
    assert_null(psi_metrics_counter(m, "", "", NULL));
    assert_null(psi_metrics_gauge(m, "g", "", (const char *[]){"__reserved", NULL}));
    assert_null(psi_metrics_gauge(m, "g", "", (const char *[]){"a:b", NULL}));
    assert_null(psi_metrics_gauge(m, "g", "", (const char *[]){"x", "x", NULL}));
    assert_null(psi_metrics_histogram(m, "h", "", good, 2, (const char *[]){"le", NULL}));
    assert_null(psi_metrics_histogram(m, "h", "", unsorted, 2, NULL));
    assert_null(psi_metrics_histogram(m, "h", "", inf, 2, NULL));
    struct psi_metric *c = psi_metrics_counter(m, "ns:c_total", "", NULL);
    assert_non_null(c);
    assert_null(psi_metrics_gauge(m, "ns:c_total", "", NULL)); /* taken */
    assert_int_equal(psi_metric_inc(c, NULL, -1), -1);         /* counters only go up */
    assert_int_equal(psi_metric_inc(c, NULL, NAN), -1);
    assert_int_equal(psi_metric_set(c, NULL, 3), -1); /* not a gauge */
    assert_int_equal(psi_metric_observe(c, NULL, 3), -1);
    psi_metrics_free(m);
}

static void test_remove_and_clear(void **state)
{
    (void)state;
    struct psi_metrics *m = psi_metrics_new();
    const char *node[] = {"node", NULL};
    struct psi_metric *g = psi_metrics_gauge(m, "p", "P.", node);
    char name[32];
    /* enough series to grow the table a few times */
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "worker-%03d", i);
        assert_int_equal(psi_metric_set(g, (const char *[]){name}, i), 0);
    }
    for (int i = 0; i < 300; i += 2) {
        snprintf(name, sizeof(name), "worker-%03d", i);
        assert_int_equal(psi_metric_remove(g, (const char *[]){name}), 0);
    }
    assert_int_equal(psi_metric_remove(g, (const char *[]){"worker-000"}), -1);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "worker-%03d", i);
        double v = psi_metric_value(g, (const char *[]){name});
        if (i % 2 == 0)
            assert_true(isnan(v));
        else
            assert_float_equal(v, i, 0);
    }
    psi_metric_begin(g);
    psi_metric_sweep(g);
    expect_render(m, "");
    struct psi_metric *u = psi_metrics_gauge(m, "u", "U.", NULL);
    psi_metric_set(u, NULL, 5);
    psi_metric_begin(u);
    psi_metric_sweep(u);
    expect_render(m, "# HELP u U.\n# TYPE u gauge\nu 0\n");
    psi_metrics_free(m);
}

/* A family rebuilt each cycle: the series set again stay with their new value, those not
 * set go, new ones come; an update of any kind keeps its series, a read does not. */
static void test_begin_sweep(void **state)
{
    (void)state;
    struct psi_metrics *m = psi_metrics_new();
    const char *node[] = {"node", NULL};
    struct psi_metric *g = psi_metrics_gauge(m, "p", "P.", node);
    struct psi_metric *c = psi_metrics_counter(m, "c", "C.", node);
    char name[32];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "worker-%03d", i);
        assert_int_equal(psi_metric_set(g, (const char *[]){name}, i), 0);
    }
    psi_metric_inc(c, (const char *[]){"a"}, 1);
    psi_metric_inc(c, (const char *[]){"b"}, 1);
    psi_metric_begin(g);
    psi_metric_begin(c);
    for (int i = 50; i < 150; i++) { /* 0..49 leave, 50..99 stay, 100..149 come */
        snprintf(name, sizeof(name), "worker-%03d", i);
        assert_int_equal(psi_metric_set(g, (const char *[]){name}, 1000 + i), 0);
    }
    psi_metric_inc(c, (const char *[]){"b"}, 0);
    psi_metric_sweep(g);
    psi_metric_sweep(c);
    for (int i = 0; i < 150; i++) {
        snprintf(name, sizeof(name), "worker-%03d", i);
        double v = psi_metric_value(g, (const char *[]){name});
        if (i < 50)
            assert_true(isnan(v));
        else
            assert_float_equal(v, 1000 + i, 0);
    }
    assert_true(isnan(psi_metric_value(c, (const char *[]){"a"})));
    assert_float_equal(psi_metric_value(c, (const char *[]){"b"}), 1, 0);
    /* reading is no update: a series only read is still swept */
    psi_metric_begin(c);
    (void)psi_metric_value(c, (const char *[]){"b"});
    psi_metric_sweep(c);
    assert_true(isnan(psi_metric_value(c, (const char *[]){"b"})));
    psi_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_gauge_format),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_begin_sweep),
        cmocka_unit_test(test_remove_and_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
