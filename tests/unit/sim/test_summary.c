/* Unit tests of the simulated kubelet's Summary (hack/sim/summary.c): the kernel's running
 * averages, the reply's shape, and that the operator's own parsers read it back. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hack/sim/summary.h"
#include "psi/kubelet.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static void test_psi_advance(void **state)
{
    (void)state;
    struct summary_psi p = {0};
    summary_psi_advance(&p, 50, 0);
    assert_near(p.avg10, 0, 0);
    summary_psi_advance(&p, 50, -1);
    assert_near(p.total_us, 0, 0);
    /* one period of avg10: 1 - 1/e of the way there; the longer ones move less */
    summary_psi_advance(&p, 50, 10);
    assert_near(p.avg10, 50 * (1 - exp(-1)), 1e-9);
    assert_near(p.avg60, 50 * (1 - exp(-10.0 / 60)), 1e-9);
    assert_near(p.avg300, 50 * (1 - exp(-10.0 / 300)), 1e-9);
    assert_near(p.total_us, 5e6, 1e-3); /* half of 10 s stalled */
    /* in small steps the same as one step */
    struct summary_psi q = {0};
    for (int i = 0; i < 10; i++)
        summary_psi_advance(&q, 50, 1);
    assert_near(q.avg10, p.avg10, 1e-9);
    assert_near(q.total_us, p.total_us, 1e-3);
    /* a long steady pressure: every average reaches it */
    summary_psi_advance(&p, 20, 3600);
    assert_near(p.avg10, 20, 1e-6);
    assert_near(p.avg300, 20, 1e-3);
}

static struct summary_node node_fixture(bool psi, const struct summary_pod *pods, size_t np)
{
    struct summary_node n = {
        .name = "worker-1",
        .start_time = "2026-01-01T00:00:00Z",
        .time = "2026-01-01T00:10:00Z",
        .psi = psi,
        .cpu_cores = 1.5,
        .cpu_seconds = 900,
        .memory_capacity = 64e9,
        .memory_working_set = 8e9,
        .pods = pods,
        .npods = np,
    };
    for (int r = 0; r < PSI_NRESOURCES; r++) {
        n.pressure[r][PSI_SOME] = (struct summary_psi){10 + r, 20 + r, 30 + r, 1234567};
        n.pressure[r][PSI_FULL] = (struct summary_psi){1 + r, 2 + r, 3 + r, 7654};
    }
    return n;
}

static void test_render_shape(void **state)
{
    (void)state;
    struct summary_pod pods[] = {{.name = "virt-launcher-hot-0-abcde",
                                  .ns = "ns1",
                                  .uid = "uid-1",
                                  .cpu_cores = 1.25,
                                  .cpu_seconds = 30,
                                  .memory_bytes = 2e9}};
    struct summary_node n = node_fixture(true, pods, 1);
    char *text = summary_render(&n);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    const cJSON *node = cJSON_GetObjectItem(j, "node");
    assert_string_equal(cJSON_GetObjectItem(node, "nodeName")->valuestring, "worker-1");
    const cJSON *cpu = cJSON_GetObjectItem(node, "cpu");
    assert_near(cJSON_GetObjectItem(cpu, "usageNanoCores")->valuedouble, 1.5e9, 1);
    const cJSON *some = cJSON_GetObjectItem(cJSON_GetObjectItem(cpu, "psi"), "some");
    assert_near(cJSON_GetObjectItem(some, "avg10")->valuedouble, 10, 1e-9);
    assert_near(cJSON_GetObjectItem(some, "avg300")->valuedouble, 30, 1e-9);
    assert_near(cJSON_GetObjectItem(some, "total")->valuedouble, 1234567, 0);
    const cJSON *mem = cJSON_GetObjectItem(node, "memory");
    assert_near(cJSON_GetObjectItem(mem, "workingSetBytes")->valuedouble, 8e9, 1);
    assert_near(cJSON_GetObjectItem(mem, "availableBytes")->valuedouble, 56e9, 1);
    const cJSON *io_full = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(node, "io"), "psi"), "full");
    assert_near(cJSON_GetObjectItem(io_full, "avg60")->valuedouble, 4, 1e-9);
    const cJSON *pod = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "pods"), 0);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "podRef"), "name")->valuestring,
                        "virt-launcher-hot-0-abcde");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "podRef"), "namespace")->valuestring, "ns1");
    assert_near(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "cpu"), "usageNanoCores")->valuedouble, 1.25e9, 1);
    cJSON_Delete(j);
    free(text);
}

/* What the operator's kubelet source reads of it: avg60 for a 1m window, "full" when asked. */
static void test_operator_reads_it(void **state)
{
    (void)state;
    struct summary_node n = node_fixture(true, NULL, 0);
    char *text = summary_render(&n);
    cJSON *j = cJSON_Parse(text);
    struct psi_value v[PSI_NRESOURCES];
    char err[256];
    assert_int_equal(psi_kubelet_parse_summary(j, PSI_RES_ALL, PSI_RES_BIT(PSI_MEMORY), 60, v, err, sizeof(err)), 0);
    assert_true(v[PSI_CPU].known);
    assert_near(v[PSI_CPU].percent, 20, 1e-9);   /* some avg60 */
    assert_near(v[PSI_MEMORY].percent, 3, 1e-9); /* full avg60 */
    assert_near(v[PSI_IO].percent, 22, 1e-9);
    struct psi_value u;
    psi_kubelet_parse_utilization(j, 3, &u);
    assert_true(u.known);
    assert_near(u.percent, 50, 1e-6);
    cJSON_Delete(j);
    free(text);
}

/* Without PSI the reply has no psi anywhere, and the operator finds every resource Unknown. */
static void test_no_psi(void **state)
{
    (void)state;
    struct summary_node n = node_fixture(false, NULL, 0);
    char *text = summary_render(&n);
    assert_null(strstr(text, "psi"));
    assert_non_null(strstr(text, "usageNanoCores"));
    cJSON *j = cJSON_Parse(text);
    struct psi_value v[PSI_NRESOURCES];
    char err[256];
    assert_int_equal(psi_kubelet_parse_summary(j, PSI_RES_ALL, 0, 60, v, err, sizeof(err)), 0);
    for (int r = 0; r < PSI_NRESOURCES; r++)
        assert_false(v[r].known);
    cJSON_Delete(j);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psi_advance),
        cmocka_unit_test(test_render_shape),
        cmocka_unit_test(test_operator_reads_it),
        cmocka_unit_test(test_no_psi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
