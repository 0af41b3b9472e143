/* Unit tests of the simulator's workloads that are not VMs: the scenario's `deployments`
 * (hack/sim/scenario_deployments.c) and their pods' use (hack/sim/podusage.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hack/sim/podusage.h"
#include "hack/sim/scenario.h"
#include "hack/sim/scenario_deployments.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#define MiB (1024.0 * 1024)

static struct scenario *parse(const char *text, char *err, size_t errlen)
{
    return scenario_parse(text, strlen(text), err, errlen);
}

static void test_defaults_and_values(void **state)
{
    (void)state;
    char err[512] = "";
    struct scenario *s = parse("name: p\ndeployments:\n- name: idle\n"
                               "- {name: busy, replicas: 2, cpu: 2500m, memoryDemand: 512Mi, io: 3,\n"
                               "   cpuRequest: 500m, memoryRequest: 256Mi, labels: {app: busy}}\n",
                               err, sizeof(err));
    if (!s)
        fail_msg("%s", err);
    assert_int_equal(s->n_vms, 0);
    assert_int_equal(s->n_deployments, 2);
    const struct scenario_deployment *idle = scenario_deployment_find(s, "idle");
    assert_non_null(idle);
    assert_int_equal(idle->replicas, 1);
    assert_near(idle->cpu_demand, 0.1, 1e-12);
    assert_near(idle->memory_demand, 256 * MiB, 0);
    assert_near(idle->io_demand, 1, 0);
    assert_near(idle->cpu_request, 0.1, 1e-12);
    assert_near(idle->memory_request, 128 * MiB, 0);
    assert_int_equal(idle->n_labels, 0);
    const struct scenario_deployment *busy = scenario_deployment_find(s, "busy");
    assert_non_null(busy);
    assert_int_equal(busy->replicas, 2);
    assert_near(busy->cpu_demand, 2.5, 1e-12);
    assert_near(busy->memory_demand, 512 * MiB, 0);
    assert_near(busy->io_demand, 3, 0);
    assert_near(busy->cpu_request, 0.5, 1e-12);
    assert_near(busy->memory_request, 256 * MiB, 0);
    assert_int_equal(busy->n_labels, 1);
    assert_string_equal(busy->labels[0].key, "app");
    assert_string_equal(busy->labels[0].value, "busy");
    assert_null(scenario_deployment_find(s, "other"));
    assert_false(s->node_cpu_seconds);
    scenario_free(s);

    s = parse("name: p\nnodes: {cpuSeconds: true}\ndeployments: [{name: web}]\n", err, sizeof(err));
    assert_non_null(s);
    assert_true(s->node_cpu_seconds);
    scenario_free(s);

    /* VMs and Deployments together */
    s = parse("name: p\nvms: [{name: a}]\ndeployments: [{name: web}]\n", err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(s->n_vms, 1);
    assert_int_equal(s->n_deployments, 1);
    scenario_free(s);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *doc;
        const char *want;
    } cases[] = {
        {"name: x\n", "vms: must be a list of at least one VM (or give deployments)"},
        {"name: x\ndeployments: {name: a}\n", "deployments: must be a list"},
        {"name: x\ndeployments: [a]\n", "deployments[0]: must be a mapping"},
        {"name: x\ndeployments: [{replicas: 1}]\n", "deployments[0].name: required"},
        {"name: x\ndeployments: [{name: Web}]\n", "deployments[0].name: \"Web\" is not a valid Deployment name"},
        {"name: x\ndeployments: [{name: a}, {name: a}]\n", "deployments[1].name: Deployment \"a\" is defined twice"},
        {"name: x\ndeployments: [{name: a, cpus: 1}]\n", "deployments[0].cpus: unknown field"},
        {"name: x\ndeployments: [{name: a, replicas: 1.5}]\n", "deployments[0].replicas: must be an integer"},
        {"name: x\ndeployments: [{name: a, replicas: -1}]\n", "deployments[0].replicas: must be an integer"},
        {"name: x\ndeployments: [{name: a, cpu: 2GB}]\n", "deployments[0].cpu: invalid quantity"},
        {"name: x\ndeployments: [{name: a, memoryDemand: -1}]\n",
         "deployments[0].memoryDemand: must be a non-negative"},
        {"name: x\ndeployments: [{name: a, cpuRequest: 0}]\n", "deployments[0].cpuRequest: must be at least 1m"},
        {"name: x\ndeployments: [{name: a, labels: [x]}]\n", "deployments[0].labels: must be a mapping"},
        {"name: x\ndeployments: [{name: a, labels: {n: 1}}]\n", "deployments[0].labels.n: must be a string"},
        {"name: x\nvms: []\ndeployments: [{name: a}]\n", "vms: must be a list of at least one VM"},
        {"name: x\nnodes: {cpuSeconds: 1}\ndeployments: [{name: a}]\n", "nodes.cpuSeconds: must be true or false"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[512] = "";
        struct scenario *s = parse(cases[i].doc, err, sizeof(err));
        if (s) {
            scenario_free(s);
            fail_msg("case %zu was accepted: %s", i, cases[i].doc);
        }
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: error \"%s\" does not contain \"%s\"", i, err, cases[i].want);
    }
}

/* podusage_set of pod uid (named name in namespace "ns", on node), without PSI. */
static int set_pod(struct podusage *u, const char *uid, const char *name, const char *node, double cores, double memory,
                   double now)
{
    return podusage_set(
        u, &(struct podusage_pod){.uid = uid, .ns = "ns", .name = name, .node = node, .cores = cores, .memory = memory},
        now);
}

/* Counters integrate each tick's rate; a pod not set in a tick is dropped, and one that comes
 * back (a new pod) starts from 0. */
static void test_podusage_counters(void **state)
{
    (void)state;
    struct podusage *u = podusage_new();
    assert_non_null(u);
    podusage_begin(u);
    assert_int_equal(set_pod(u, "uid-a", "busy-1", "worker-0", 2, 512 * MiB, 100), 0);
    assert_int_equal(set_pod(u, "uid-b", "busy-2", "worker-0", 1, 256 * MiB, 100), 0);
    podusage_end(u);
    assert_int_equal(podusage_count(u), 2);
    assert_near(podusage_seconds(u, "uid-a", 110), 20, 1e-9);
    podusage_begin(u);
    assert_int_equal(set_pod(u, "uid-a", "busy-1", "worker-0", 0.5, 512 * MiB, 110), 0);
    podusage_end(u);
    assert_int_equal(podusage_count(u), 1);
    assert_near(podusage_seconds(u, "uid-a", 120), 20 + 5, 1e-9);
    assert_near(podusage_seconds(u, "uid-b", 120), -1, 0);
    podusage_begin(u);
    assert_int_equal(set_pod(u, "uid-b", "busy-2", "worker-1", 1, 256 * MiB, 120), 0);
    assert_int_equal(set_pod(u, "uid-a", "busy-1", "worker-0", 0.5, 512 * MiB, 120), 0);
    podusage_end(u);
    assert_near(podusage_seconds(u, "uid-b", 130), 10, 1e-9);
    /* bad values are refused */
    assert_int_equal(set_pod(u, "uid-c", "x", "worker-0", NAN, 0, 130), -1);
    assert_int_equal(set_pod(u, "uid-c", "x", "worker-0", -1, 0, 130), -1);
    assert_int_equal(set_pod(u, "", "x", "worker-0", 1, 0, 130), -1);
    assert_int_equal(set_pod(u, "uid-c", "x", NULL, 1, 0, 130), -1);
    podusage_free(u);
}

/* Rendered with cAdvisor's names and labels, per node or all; listed per node for the kubelet. */
static void test_podusage_render(void **state)
{
    (void)state;
    struct podusage *u = podusage_new();
    podusage_begin(u);
    set_pod(u, "uid-a", "busy-1", "worker-0", 2, 1024, 0);
    set_pod(u, "uid-b", "busy-2", "worker-1", 1, 2048, 0);
    podusage_end(u);
    size_t len = 3;
    char *text = strdup("x\n\n");
    text = podusage_render(u, "worker-0", 5, text, &len);
    assert_int_equal(len, strlen(text));
    assert_memory_equal(text, "x\n\n", 3);
    assert_non_null(strstr(text, "# TYPE container_cpu_usage_seconds_total counter\n"));
    assert_non_null(strstr(text,
                           "container_cpu_usage_seconds_total{container=\"app\",namespace=\"ns\",node=\"worker-0\","
                           "pod=\"busy-1\"} 10\n"));
    assert_non_null(strstr(text, "# TYPE container_memory_working_set_bytes gauge\n"));
    assert_non_null(strstr(text, "container_memory_working_set_bytes{container=\"app\",namespace=\"ns\","
                                 "node=\"worker-0\",pod=\"busy-1\"} 1024\n"));
    assert_null(strstr(text, "busy-2"));
    free(text);
    len = 0;
    text = podusage_render(u, NULL, 5, NULL, &len);
    assert_non_null(strstr(text, "pod=\"busy-1\"} 10\n"));
    assert_non_null(strstr(text, "node=\"worker-1\",pod=\"busy-2\"} 5\n"));
    free(text);
    len = 2;
    text = strdup("y\n");
    char *same = podusage_render(u, "worker-2", 5, text, &len); /* nothing there: unchanged */
    assert_ptr_equal(same, text);
    assert_int_equal(len, 2);
    free(text);

    struct summary_pod pods[2];
    assert_int_equal(podusage_summary(u, "worker-1", 5, pods, 2), 1);
    assert_string_equal(pods[0].name, "busy-2");
    assert_string_equal(pods[0].ns, "ns");
    assert_string_equal(pods[0].uid, "uid-b");
    assert_near(pods[0].cpu_cores, 1, 0);
    assert_near(pods[0].cpu_seconds, 5, 1e-9);
    assert_near(pods[0].memory_bytes, 2048, 0);
    assert_int_equal(podusage_summary(u, "worker-0", 5, NULL, 0), 1);
    assert_int_equal(podusage_summary(u, "worker-2", 5, pods, 2), 0);
    podusage_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_values),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_podusage_counters),
        cmocka_unit_test(test_podusage_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
