/* Unit tests for sim_exporter: integration of pressure rates into counters and the text
 * rendering (pure: time is given). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hack/sim/exporter.h"

static void test_integration(void **state)
{
    (void)state;
    struct sim_exporter *e = sim_exporter_new();
    assert_int_equal(sim_exporter_add_node(e, "worker-0", 100), 0);
    /* 30 % cpu from t=100 to t=160: 18 s of waiting. */
    assert_int_equal(sim_exporter_set(e, "worker-0", PSI_CPU, PSI_SOME, 30, 100), 0);
    assert_float_equal(sim_exporter_counter(e, "worker-0", PSI_CPU, PSI_SOME, 160), 18, 1e-9);
    /* Then 10 % from t=160: at t=220, 18 + 6. */
    assert_int_equal(sim_exporter_set(e, "worker-0", PSI_CPU, PSI_SOME, 10, 160), 0);
    assert_float_equal(sim_exporter_counter(e, "worker-0", PSI_CPU, PSI_SOME, 220), 24, 1e-9);
    /* The rate of the last minute reads the current pressure back: 100 * 6 / 60 = 10. */
    double d = sim_exporter_counter(e, "worker-0", PSI_CPU, PSI_SOME, 220) -
               sim_exporter_counter(e, "worker-0", PSI_CPU, PSI_SOME, 160);
    assert_float_equal(100 * d / 60, 10, 1e-9);
    /* Other counters are independent and at 0. */
    assert_float_equal(sim_exporter_counter(e, "worker-0", PSI_CPU, PSI_FULL, 220), 0, 0);
    assert_float_equal(sim_exporter_counter(e, "worker-0", PSI_MEMORY, PSI_SOME, 220), 0, 0);
    assert_float_equal(sim_exporter_pressure(e, "worker-0", PSI_CPU, PSI_SOME), 10, 0);
    /* Setting a new node adds it, with counters from 0 at that time. */
    assert_int_equal(sim_exporter_set(e, "worker-1", PSI_IO, PSI_FULL, 100, 200), 0);
    assert_float_equal(sim_exporter_counter(e, "worker-1", PSI_IO, PSI_FULL, 205), 5, 1e-9);
    assert_int_equal(sim_exporter_count(e), 2);
    assert_string_equal(sim_exporter_node(e, 1), "worker-1");
    assert_null(sim_exporter_node(e, 2));
    /* Absent node: NaN. */
    assert_true(isnan(sim_exporter_counter(e, "nope", PSI_CPU, PSI_SOME, 1)));
    assert_true(isnan(sim_exporter_pressure(e, "nope", PSI_CPU, PSI_SOME)));
    sim_exporter_free(e);
}

static void test_rejects(void **state)
{
    (void)state;
    struct sim_exporter *e = sim_exporter_new();
    assert_int_equal(sim_exporter_set(e, "n", PSI_CPU, PSI_SOME, -1, 0), -1);
    assert_int_equal(sim_exporter_set(e, "n", PSI_CPU, PSI_SOME, 100.5, 0), -1);
    assert_int_equal(sim_exporter_set(e, "n", PSI_CPU, PSI_SOME, NAN, 0), -1);
    assert_int_equal(sim_exporter_set(e, "n", PSI_NRESOURCES, PSI_SOME, 1, 0), -1);
    assert_int_equal(sim_exporter_set(e, "", PSI_CPU, PSI_SOME, 1, 0), -1);
    assert_int_equal(sim_exporter_count(e), 0);
    assert_int_equal(sim_exporter_set(e, "n", PSI_CPU, PSI_SOME, 50, 10), 0);
    assert_int_equal(sim_exporter_set(e, "n", PSI_CPU, PSI_SOME, 50, 9), -1); /* time went back */
    assert_float_equal(sim_exporter_counter(e, "n", PSI_CPU, PSI_SOME, 12), 1, 1e-12);
    assert_int_equal(sim_exporter_add_node(e, "n", 50), 0); /* present: counters kept */
    assert_float_equal(sim_exporter_counter(e, "n", PSI_CPU, PSI_SOME, 12), 1, 1e-12);
    assert_int_equal(sim_exporter_remove_node(e, "n"), 0);
    assert_int_equal(sim_exporter_remove_node(e, "n"), -1);
    assert_int_equal(sim_exporter_count(e), 0);
    sim_exporter_free(e);
}

static void test_render(void **state)
{
    (void)state;
    struct sim_exporter *e = sim_exporter_new();
    sim_exporter_add_node(e, "worker-0", 0);
    sim_exporter_set(e, "worker-1", PSI_CPU, PSI_SOME, 25, 0);
    sim_exporter_set(e, "worker-1", PSI_MEMORY, PSI_FULL, 2, 0);
    size_t len = 0;
    char *all = sim_exporter_render(e, 10, NULL, &len);
    assert_non_null(all);
    assert_int_equal(len, strlen(all));
    const char *want_head =
        "# HELP node_pressure_cpu_waiting_seconds_total Total time in seconds that processes have waited for CPU time\n"
        "# TYPE node_pressure_cpu_waiting_seconds_total counter\n"
        "node_pressure_cpu_waiting_seconds_total{instance=\"worker-0\"} 0\n"
        "node_pressure_cpu_waiting_seconds_total{instance=\"worker-1\"} 2.5\n"
        "# HELP node_pressure_cpu_stalled_seconds_total ";
    assert_memory_equal(all, want_head, strlen(want_head));
    assert_non_null(strstr(all, "\nnode_pressure_memory_stalled_seconds_total{instance=\"worker-1\"} 0.2\n"));
    assert_non_null(strstr(all, "# TYPE node_pressure_io_stalled_seconds_total counter\n"));
    /* six families, two nodes each */
    int samples = 0;
    for (const char *p = all; (p = strstr(p, "{instance=\"")); p++)
        samples++;
    assert_int_equal(samples, 12);
    free(all);

    char *one = sim_exporter_render(e, 10, "worker-1", &len);
    assert_non_null(one);
    assert_null(strstr(one, "instance="));
    assert_non_null(strstr(one, "\nnode_pressure_cpu_waiting_seconds_total 2.5\n"));
    assert_non_null(strstr(one, "\nnode_pressure_memory_stalled_seconds_total 0.2\n"));
    assert_null(strstr(one, "worker-0"));
    assert_null(strstr(one, "node_cpu_seconds_total"));
    free(one);
    assert_null(sim_exporter_render(e, 10, "worker-9", &len));
    /* utilisation, once set, as a single CPU's idle counter: 1 - rate reads it back */
    assert_int_equal(sim_exporter_set_utilization(e, "worker-1", 80, 10), 0);
    assert_int_equal(sim_exporter_set_utilization(e, "worker-1", 101, 10), -1);
    assert_int_equal(sim_exporter_set_utilization(e, "worker-1", 50, 5), -1); /* time went back */
    one = sim_exporter_render(e, 20, "worker-1", &len);
    assert_non_null(strstr(one, "\nnode_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 2\n"));
    free(one);
    all = sim_exporter_render(e, 20, NULL, &len);
    assert_non_null(strstr(all, "\nnode_cpu_seconds_total{cpu=\"0\",mode=\"idle\",instance=\"worker-1\"} 2\n"));
    assert_null(strstr(all, "mode=\"idle\",instance=\"worker-0\""));
    free(all);
    /* busy cores, once set, as CPU 0's user-mode counter beside its idle one */
    assert_int_equal(sim_exporter_set_cpu_busy(e, "worker-1", -1, 20), -1);
    assert_int_equal(sim_exporter_set_cpu_busy(e, "worker-1", 2.5, 20), 0);
    one = sim_exporter_render(e, 24, "worker-1", &len);
    assert_non_null(strstr(one, "\nnode_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 2.8"));
    assert_non_null(strstr(one, "\nnode_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 10\n"));
    assert_int_equal(sim_exporter_set_cpu_busy(e, "worker-1", 0.5, 24), 0);
    all = sim_exporter_render(e, 26, NULL, &len);
    assert_non_null(strstr(all, "\nnode_cpu_seconds_total{cpu=\"0\",mode=\"user\",instance=\"worker-1\"} 11\n"));
    assert_null(strstr(all, "mode=\"user\",instance=\"worker-0\""));
    free(one);
    free(all);
    /* the run queue, once set, as node_exporter's node_load1 and schedstat waiting counter */
    assert_int_equal(sim_exporter_set_runqueue(e, "worker-1", -1, 0, 20), -1);
    assert_int_equal(sim_exporter_set_runqueue(e, "worker-1", 6, 1.5, 20), 0);
    one = sim_exporter_render(e, 24, "worker-1", &len);
    assert_non_null(strstr(one, "\nnode_load1 6\n"));
    assert_non_null(strstr(one, "\nnode_schedstat_waiting_seconds_total{cpu=\"0\"} 6\n"));
    all = sim_exporter_render(e, 24, NULL, &len);
    assert_non_null(strstr(all, "\nnode_load1{instance=\"worker-1\"} 6\n"));
    assert_non_null(strstr(all, "\nnode_schedstat_waiting_seconds_total{cpu=\"0\",instance=\"worker-1\"} 6\n"));
    assert_null(strstr(all, "node_load1{instance=\"worker-0\"}"));
    free(one);
    free(all);
    /* memory, once set, as node_exporter's MemTotal and MemAvailable gauges */
    assert_int_equal(sim_exporter_set_memory(e, "worker-1", 64, 70, 20), -1); /* more available than there is */
    assert_int_equal(sim_exporter_set_memory(e, "worker-1", 64, 24, 20), 0);
    one = sim_exporter_render(e, 20, "worker-1", &len);
    assert_non_null(strstr(one, "\nnode_memory_MemTotal_bytes 64\n"));
    assert_non_null(strstr(one, "\nnode_memory_MemAvailable_bytes 24\n"));
    free(one);
    all = sim_exporter_render(e, 20, NULL, &len);
    assert_non_null(strstr(all, "\nnode_memory_MemAvailable_bytes{instance=\"worker-1\"} 24\n"));
    assert_null(strstr(all, "node_memory_MemTotal_bytes{instance=\"worker-0\"}"));
    free(all);
    assert_string_equal(sim_exporter_metric_name(PSI_IO, PSI_FULL), "node_pressure_io_stalled_seconds_total");
    assert_string_equal(sim_exporter_metric_name(PSI_MEMORY, PSI_SOME), "node_pressure_memory_waiting_seconds_total");
    sim_exporter_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integration),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
