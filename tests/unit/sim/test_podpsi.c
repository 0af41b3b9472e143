/* Unit tests of the simulator's per-pod PSI: the per-workload model (hack/sim/model.c,
 * model_pod_*), the pods' psi in the kubelet Summary (summary.c), the pods' cAdvisor pressure
 * counters and averages (podusage.c), and the scenario key kubelet.podPsi (scenario.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "hack/sim/model.h"
#include "hack/sim/podusage.h"
#include "hack/sim/scenario.h"
#include "hack/sim/summary.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* The own "some" of a workload of pod cores beside others cores on cpus, on the kernel curve. */
static double own(double pod, double others, double cpus)
{
    return model_pod_cpu_some(model_kernel_cpu_some(pod + others, cpus), pod, cpus);
}

/* No stall on an idle node; bad inputs give 0. */
static void test_idle_and_bad_inputs(void **state)
{
    (void)state;
    assert_near(own(0.1, 0, 4), model_pod_cpu_some(model_kernel_cpu_some(0.1, 4), 0.1, 4), 0);
    assert_true(own(0.1, 0, 4) < 1e-6);
    assert_near(model_pod_cpu_some(0, 2, 1), 0, 0);
    assert_near(model_pod_cpu_some(0.9, 0, 1), 0, 0);
    assert_near(model_pod_cpu_some(0.9, -1, 1), 0, 0);
    assert_near(model_pod_cpu_some(0.9, NAN, 1), 0, 0);
    assert_near(model_pod_cpu_some(0.9, INFINITY, 1), 0, 0);
    assert_near(model_pod_cpu_some(0.9, 1, 0), 0, 0);
    assert_near(model_pod_cpu_some(NAN, 1, 1), 0, 0);
    assert_near(model_pod_memory_pressure(0.5, 1, 0), 0, 0);
    assert_near(model_pod_memory_pressure(0.5, NAN, 10), 0, 0);
}

/* The victim (0.1 cores) beside a noisy VM: its stall rises with the noisy VM's load; on a
 * saturated node it reads less than the noisy VM but not nothing; the noisy VM reads near the
 * node's stall. */
static void test_victim_and_noisy(void **state)
{
    (void)state;
    for (int cpus = 1; cpus <= 8; cpus *= 2) {
        double prev = 0;
        for (double load = 0.3; load <= 2.5; load += 0.1) {
            double noisy = load * cpus - 0.1, v = own(0.1, noisy, cpus);
            assert_true(v >= prev);
            prev = v;
        }
        double noisy = 1.5 * cpus - 0.1;
        double v = own(0.1, noisy, cpus), n = own(noisy, 0.1, cpus);
        double node = model_kernel_cpu_some(1.5 * cpus, cpus);
        assert_true(v > 0.01);
        assert_true(v < n);
        assert_true(n <= node);
        assert_true(n > 0.9 * node);
    }
    /* as measured on 1 CPU: the victim reads tens of percent when saturated (30 %; the fit 19 %) */
    assert_true(own(0.1, 2.4, 1) > 0.15 && own(0.1, 2.4, 1) < 0.35);
}

/* Bounded by the node's stall and 0..1; monotone in the pod's demand and in the node's stall. */
static void test_bounded_and_monotone(void **state)
{
    (void)state;
    for (double node = 0; node <= 1.0001; node += 0.05) {
        double prev = 0;
        for (double d = 0; d <= 16; d += 0.25) {
            double o = model_pod_cpu_some(node, d, 4);
            assert_true(o >= 0 && o <= 1);
            assert_true(o <= node + 1e-12);
            assert_true(o >= prev);
            assert_true(o <= model_pod_cpu_some(node + 0.05, d, 4) + 1e-12);
            prev = o;
        }
    }
    assert_true(model_pod_cpu_some(1.7, 100, 1) <= 1);
}

/* model_pod: CPU full a fixed share of the own some; memory the node's by the working-set share. */
static void test_model_pod(void **state)
{
    (void)state;
    struct model_params p;
    model_params_default(&p);
    struct model_node_in in = {.cpus = 2, .cpu_demand = 3, .memory = 10, .memory_demand = 12, .io = 1};
    struct model_node_out out;
    model_node(&p, &in, &out);
    struct model_pod_out po;
    model_pod(&in, &out, 1, 3, &po);
    assert_near(po.cpu_some, model_pod_cpu_some(out.cpu_some, 1, 2), 1e-12);
    assert_near(po.cpu_full, po.cpu_some * MODEL_POD_CPU_FULL_RATIO, 1e-12);
    assert_true(po.cpu_some > 0 && po.cpu_some < out.cpu_some);
    assert_near(po.memory_some, out.memory_some * 0.25, 1e-12);
    assert_near(po.memory_full, out.memory_full * 0.25, 1e-12);
    model_pod(&in, &out, 0, 0, &po);
    assert_near(po.cpu_some + po.cpu_full + po.memory_some + po.memory_full, 0, 0);
}

static const cJSON *pod_psi(const cJSON *root, const char *resource)
{
    const cJSON *pod = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "pods"), 0);
    return cJSON_GetObjectItem(cJSON_GetObjectItem(pod, resource), "psi");
}

static cJSON *render(bool psi, bool pod_psi, const struct summary_pod *pod)
{
    struct summary_node n = {.name = "worker-0",
                             .start_time = "2026-01-01T00:00:00Z",
                             .time = "2026-01-01T00:10:00Z",
                             .psi = psi,
                             .pod_psi = pod_psi,
                             .memory_capacity = 8e9,
                             .pods = pod,
                             .npods = 1};
    char *text = summary_render(&n);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

/* pods[].cpu.psi and pods[].memory.psi as node.cpu.psi: present with PSI and per-pod PSI on,
 * absent when either is off. */
static void test_summary_pod_psi(void **state)
{
    (void)state;
    struct summary_pod pod = {.name = "virt-launcher-a-x", .ns = "ns", .uid = "u1", .cpu_cores = 1};
    pod.pressure[PSI_CPU][PSI_SOME] = (struct summary_psi){12.345, 6, 3, 4500000};
    pod.pressure[PSI_CPU][PSI_FULL] = (struct summary_psi){5, 2.5, 1, 2000000};
    pod.pressure[PSI_MEMORY][PSI_SOME] = (struct summary_psi){1, 0.5, 0.25, 10000};
    cJSON *j = render(true, true, &pod);
    const cJSON *some = cJSON_GetObjectItem(pod_psi(j, "cpu"), "some");
    assert_near(cJSON_GetObjectItem(some, "avg10")->valuedouble, 12.35, 1e-9);
    assert_near(cJSON_GetObjectItem(some, "avg300")->valuedouble, 3, 1e-9);
    assert_near(cJSON_GetObjectItem(some, "total")->valuedouble, 4500000, 0);
    const cJSON *full = cJSON_GetObjectItem(pod_psi(j, "cpu"), "full");
    assert_near(cJSON_GetObjectItem(full, "avg60")->valuedouble, 2.5, 1e-9);
    const cJSON *msome = cJSON_GetObjectItem(pod_psi(j, "memory"), "some");
    assert_near(cJSON_GetObjectItem(msome, "total")->valuedouble, 10000, 0);
    assert_non_null(cJSON_GetObjectItem(pod_psi(j, "memory"), "full"));
    cJSON_Delete(j);
    j = render(true, false, &pod); /* a kubelet before 1.34: the node's psi only */
    assert_null(pod_psi(j, "cpu"));
    assert_null(pod_psi(j, "memory"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "cpu"), "psi"));
    cJSON_Delete(j);
    j = render(false, true, &pod); /* no PSI on the node: none on its pods */
    assert_null(pod_psi(j, "cpu"));
    assert_null(pod_psi(j, "memory"));
    cJSON_Delete(j);
}

/* One pod's use at now, with pressure cpu some/full and memory some/full (percent) when psi. */
static void set_pod(struct podusage *u, const char *uid, bool psi, double cpu_some, double mem_some, double now)
{
    struct podusage_pod p = {
        .uid = uid, .ns = "ns", .name = uid, .node = "worker-0", .cores = 1, .memory = 1024, .psi = psi};
    p.pressure[PSI_CPU][PSI_SOME] = cpu_some;
    p.pressure[PSI_CPU][PSI_FULL] = cpu_some / 2;
    p.pressure[PSI_MEMORY][PSI_SOME] = mem_some;
    p.pressure[PSI_MEMORY][PSI_FULL] = mem_some / 2;
    assert_int_equal(podusage_set(u, &p, now), 0);
}

static double counter(const char *text, const char *metric, const char *pod)
{
    char key[256];
    snprintf(key, sizeof(key), "%s{container=\"app\",namespace=\"ns\",node=\"worker-0\",pod=\"%s\"} ", metric, pod);
    const char *at = strstr(text, key);
    return at ? strtod(at + strlen(key), NULL) : -1;
}

/* The four counters beside container_cpu_usage_seconds_total for a pod with PSI, none for one
 * without; they grow by the pressure over time (seconds = total_us / 1e6). */
static void test_podusage_counters(void **state)
{
    (void)state;
    struct podusage *u = podusage_new();
    podusage_begin(u);
    set_pod(u, "on", true, 50, 20, 0);
    set_pod(u, "off", false, 50, 20, 0);
    podusage_end(u);
    podusage_begin(u);
    set_pod(u, "on", true, 10, 20, 10);
    set_pod(u, "off", false, 50, 20, 10);
    podusage_end(u);
    size_t len = 0;
    char *text = podusage_render(u, "worker-0", 20, NULL, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "# TYPE container_pressure_cpu_waiting_seconds_total counter\n"));
    assert_non_null(strstr(text, "# TYPE container_pressure_memory_stalled_seconds_total counter\n"));
    /* 10 s at 50 %, then 10 s at 10 % */
    assert_near(counter(text, "container_pressure_cpu_waiting_seconds_total", "on"), 6, 1e-6);
    assert_near(counter(text, "container_pressure_cpu_stalled_seconds_total", "on"), 3, 1e-6);
    assert_near(counter(text, "container_pressure_memory_waiting_seconds_total", "on"), 4, 1e-6);
    assert_near(counter(text, "container_pressure_memory_stalled_seconds_total", "on"), 2, 1e-6);
    assert_near(counter(text, "container_cpu_usage_seconds_total", "off"), 20, 1e-6);
    assert_near(counter(text, "container_pressure_cpu_waiting_seconds_total", "off"), -1, 0);
    free(text);
    len = 0;
    text = podusage_render(u, "worker-0", 30, NULL, &len);
    assert_near(counter(text, "container_pressure_cpu_waiting_seconds_total", "on"), 7, 1e-6);
    free(text);

    /* the Summary gets the averages and totals as of the last set */
    struct summary_psi p[2][2];
    assert_int_equal(podusage_pressure(u, "on", p), 0);
    assert_near(p[PSI_CPU][PSI_SOME].total_us, 5e6, 1e-3);
    assert_near(p[PSI_CPU][PSI_SOME].avg10, 50 * (1 - exp(-1)), 1e-9);
    assert_int_equal(podusage_pressure(u, "gone", p), -1);
    struct summary_pod pods[2];
    assert_int_equal(podusage_summary(u, "worker-0", 10, pods, 2), 2);
    const struct summary_pod *on = strcmp(pods[0].uid, "on") == 0 ? &pods[0] : &pods[1];
    assert_near(on->pressure[PSI_MEMORY][PSI_FULL].total_us, 1e6, 1e-3);

    /* pressure out of 0..100 is refused */
    struct podusage_pod bad = {.uid = "b", .ns = "ns", .name = "b", .node = "worker-0", .psi = true};
    bad.pressure[PSI_CPU][PSI_SOME] = 101;
    assert_int_equal(podusage_set(u, &bad, 30), -1);
    bad.pressure[PSI_CPU][PSI_SOME] = NAN;
    assert_int_equal(podusage_set(u, &bad, 30), -1);
    podusage_free(u);
}

/* The launcher pods' set: container "compute", the pressure counters only. */
static void test_launcher_counters(void **state)
{
    (void)state;
    struct podusage *u = podusage_new_launchers();
    podusage_begin(u);
    struct podusage_pod p = {.uid = "l1",
                             .ns = "ns",
                             .name = "virt-launcher-a-x",
                             .node = "worker-0",
                             .cores = 1,
                             .memory = 1024,
                             .psi = true};
    p.pressure[PSI_CPU][PSI_SOME] = 20;
    assert_int_equal(podusage_set(u, &p, 0), 0);
    podusage_end(u);
    size_t len = 0;
    char *text = podusage_render(u, NULL, 10, NULL, &len);
    assert_non_null(strstr(text, "container_pressure_cpu_waiting_seconds_total{container=\"compute\",namespace=\"ns\","
                                 "node=\"worker-0\",pod=\"virt-launcher-a-x\"} 2\n"));
    assert_null(strstr(text, "container_cpu_usage_seconds_total"));
    assert_null(strstr(text, "container_memory_working_set_bytes"));
    free(text);
    podusage_free(u);
}

/* kubelet.podPsi: on by default, false as a kubelet before 1.34 answers, a boolean. */
static void test_scenario_key(void **state)
{
    (void)state;
    char err[512];
    const char *on = "name: k\nvms: [{name: a}]\n";
    struct scenario *s = scenario_parse(on, strlen(on), err, sizeof(err));
    assert_non_null(s);
    assert_true(s->kubelet_pod_psi);
    scenario_free(s);
    const char *off = "name: k\nvms: [{name: a}]\nkubelet: {podPsi: false}\n";
    s = scenario_parse(off, strlen(off), err, sizeof(err));
    assert_non_null(s);
    assert_false(s->kubelet_pod_psi);
    scenario_free(s);
    const char *bad = "name: k\nvms: [{name: a}]\nkubelet: {podPsi: 1}\n";
    assert_null(scenario_parse(bad, strlen(bad), err, sizeof(err)));
    assert_non_null(strstr(err, "kubelet.podPsi"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_and_bad_inputs),  cmocka_unit_test(test_victim_and_noisy),
        cmocka_unit_test(test_bounded_and_monotone), cmocka_unit_test(test_model_pod),
        cmocka_unit_test(test_summary_pod_psi),      cmocka_unit_test(test_podusage_counters),
        cmocka_unit_test(test_launcher_counters),    cmocka_unit_test(test_scenario_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
