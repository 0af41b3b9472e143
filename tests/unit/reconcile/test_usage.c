/* Unit tests of controller/reconcile/move/usage: the usage query and reading its answers and the
 * kubelet Summary's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/move/usage.h"

static void test_query(void **state)
{
    (void)state;
    struct usage_ref refs[] = {{"vms", "virt-launcher-vm.a-x", "vm.a"}, {"apps", "web-1", NULL}};
    char *q = usage_query(60, refs, 2);
    assert_non_null(q);
    assert_non_null(strstr(q, "label_replace(sum by (node, instance) (rate(node_cpu_seconds_total{mode!~\"idle|iowait|"
                              "steal\"}[60s])), \"psi_usage\", \"node\", \"\", \"\")"));
    assert_non_null(strstr(q, " or label_replace(sum by (node) (rate(kubevirt_vmi_cpu_usage_seconds_total[60s]))"));
    /* the names as exact alternatives, '.' escaped for the regex and the escape for PromQL */
    assert_non_null(strstr(q, "kubevirt_vmi_cpu_usage_seconds_total{name=~\"vm\\\\.a\"}[60s]"));
    assert_non_null(strstr(q, "container!=\"POD\",pod=~\"virt-launcher-vm\\\\.a-x|web-1\"}[60s]"));
    /* the run queue in the same query */
    assert_non_null(strstr(q, " or label_replace(max by (node, instance) (node_load1), \"psi_usage\", \"load1\""));
    assert_non_null(strstr(q, "(rate(node_schedstat_waiting_seconds_total[60s])), \"psi_usage\", \"waiting\""));
    /* the pods' own pressure, filtered as their usage */
    assert_non_null(strstr(q,
                           " or label_replace(100 * max by (namespace, pod) (rate(container_pressure_cpu_waiting_"
                           "seconds_total{container!=\"\",container!=\"POD\",pod=~\"virt-launcher-vm\\\\.a-x|web-1\"}"
                           "[60s])), \"psi_usage\", \"podcpustall\""));
    assert_non_null(
        strstr(q, "container_pressure_memory_waiting_seconds_total{container!=\"\",container!=\"POD\",pod=~"));
    assert_non_null(strstr(q, "\"psi_usage\", \"podmemstall\""));
    /* the VMs' dirty rate, filtered by VMI name */
    assert_non_null(strstr(q, " or label_replace(max by (namespace, name) (kubevirt_vmi_dirty_rate_bytes_per_second{"
                              "name=~\"vm\\\\.a\"}), \"psi_usage\", \"vmidirty\""));
    free(q);
    /* no VM asked about: that part matches nothing */
    struct usage_ref pods_only[] = {{"apps", "web-1", NULL}};
    q = usage_query(0, pods_only, 1);
    assert_non_null(strstr(q, "kubevirt_vmi_cpu_usage_seconds_total{name=\"\"}[1s]"));
    free(q);
    /* too many to list: unfiltered */
    struct usage_ref *many = calloc(USAGE_MAX_FILTERED + 1, sizeof(*many));
    for (size_t i = 0; i <= USAGE_MAX_FILTERED; i++)
        many[i] = (struct usage_ref){"ns", "p", "v"};
    q = usage_query(30, many, USAGE_MAX_FILTERED + 1);
    assert_non_null(strstr(q, "kubevirt_vmi_cpu_usage_seconds_total{}[30s]"));
    assert_non_null(strstr(q, "container!=\"POD\"}[30s]"));
    free(q);
    free(many);
}

static struct psi_prom_series series(struct psi_prom_label *l, size_t n, double v)
{
    return (struct psi_prom_series){l, n, v, 0};
}

/* load1 and waiting series land on their nodes; the others are not read as them. */
static void test_fill_runqueue(void **state)
{
    (void)state;
    const char *ip0[] = {"10.0.0.10"};
    struct psi_node_desc nodes[2] = {{"worker-0", ip0, 1, 0}, {"worker-1", NULL, 0, 0}};
    struct psi_prom_label l0[] = {{"psi_usage", "load1"}, {"instance", "10.0.0.10:9100"}};
    struct psi_prom_label w0[] = {{"psi_usage", "waiting"}, {"node", "worker-0"}};
    struct psi_prom_label n1[] = {{"psi_usage", "node"}, {"node", "worker-1"}};
    struct psi_prom_series s[] = {series(l0, 2, 7.5), series(w0, 2, 2.25), series(n1, 2, 3)};
    struct psi_prom_vector v = {s, 3, NULL};
    double load1[2], waiting[2];
    usage_fill_runqueue(&v, nodes, 2, load1, waiting);
    assert_true(load1[0] == 7.5 && waiting[0] == 2.25);
    assert_true(isnan(load1[1]) && isnan(waiting[1]));
}

static void test_fill(void **state)
{
    (void)state;
    const char *ip0[] = {"10.0.0.10"}, *ip1[] = {"10.0.0.11"};
    struct psi_node_desc nodes[3] = {{"worker-0", ip0, 1, 0}, {"worker-1", ip1, 1, 0}, {"worker-2", NULL, 0, 0}};
    struct usage_ref refs[3] = {
        {"vms", "virt-launcher-a-x", "a"}, {"vms", "virt-launcher-b-y", "b"}, {"apps", "web", NULL}};
    struct psi_prom_label n0[] = {{"psi_usage", "node"}, {"instance", "10.0.0.10:9100"}};
    struct psi_prom_label n1[] = {{"psi_usage", "node"}, {"node", "worker-1"}};
    struct psi_prom_label va[] = {{"psi_usage", "vmi"}, {"namespace", "vms"}, {"name", "a"}};
    struct psi_prom_label pb[] = {{"psi_usage", "pod"}, {"namespace", "vms"}, {"pod", "virt-launcher-b-y"}};
    struct psi_prom_label pw[] = {{"psi_usage", "pod"}, {"namespace", "apps"}, {"pod", "web"}};
    struct psi_prom_label pa[] = {{"psi_usage", "pod"}, {"namespace", "vms"}, {"pod", "virt-launcher-a-x"}};
    struct psi_prom_label wrong_ns[] = {{"psi_usage", "vmi"}, {"namespace", "other"}, {"name", "b"}};
    struct psi_prom_series s[] = {series(n0, 2, 2.5), series(n1, 2, 0.25), series(va, 3, 0.94),   series(pb, 3, 1.5),
                                  series(pw, 3, NAN), series(pa, 3, 0.5),  series(wrong_ns, 3, 9)};
    struct psi_prom_vector v = {s, 7, NULL};
    double nu[3], ru[3];
    usage_fill(&v, nodes, 3, nu, refs, 3, ru);
    assert_true(fabs(nu[0] - 2.5) < 1e-12); /* matched by address */
    assert_true(fabs(nu[1] - 0.25) < 1e-12);
    assert_true(isnan(nu[2]));               /* no series: unknown */
    assert_true(fabs(ru[0] - 0.94) < 1e-12); /* the VMI series wins over the pod's */
    assert_true(fabs(ru[1] - 1.5) < 1e-12);  /* no VMI series: the launcher pod's */
    assert_true(isnan(ru[2]));               /* NaN stays unknown */

    /* no node_cpu_seconds_total at all, but KubeVirt's metrics: nodes are their VMs' sum */
    struct psi_prom_label vn0[] = {{"psi_usage", "vmnode"}, {"node", "worker-0"}};
    struct psi_prom_series s2[] = {series(vn0, 2, 2.96), series(va, 3, 0.94)};
    struct psi_prom_vector v2 = {s2, 2, NULL};
    usage_fill(&v2, nodes, 3, nu, refs, 3, ru);
    assert_true(fabs(nu[0] - 2.96) < 1e-12);
    assert_true(nu[1] == 0 && nu[2] == 0); /* no VM there */
    /* neither: unknown */
    struct psi_prom_vector empty = {NULL, 0, NULL};
    usage_fill(&empty, nodes, 3, nu, refs, 3, ru);
    assert_true(isnan(nu[0]) && isnan(ru[0]));
}

static void test_summary(void **state)
{
    (void)state;
    cJSON *sum =
        cJSON_Parse("{\"node\":{\"nodeName\":\"w0\",\"cpu\":{\"usageNanoCores\":2500000000}},"
                    "\"pods\":[{\"podRef\":{\"name\":\"virt-launcher-a-x\",\"namespace\":\"vms\"},"
                    "\"cpu\":{\"usageNanoCores\":940000000}},"
                    "{\"podRef\":{\"name\":\"other\",\"namespace\":\"vms\"},\"cpu\":{\"usageNanoCores\":1}}]}");
    struct usage_ref refs[2] = {{"vms", "virt-launcher-a-x", "a"}, {"vms", "gone", NULL}};
    double nu, ru[2] = {NAN, NAN};
    usage_from_summary(sum, &nu, refs, 2, ru);
    assert_true(fabs(nu - 2.5) < 1e-12);
    assert_true(fabs(ru[0] - 0.94) < 1e-12);
    assert_true(isnan(ru[1]));
    cJSON_Delete(sum);
    cJSON *bad = cJSON_Parse("{\"node\":{}}");
    usage_from_summary(bad, &nu, refs, 2, ru);
    assert_true(isnan(nu));
    cJSON_Delete(bad);
}

/* The pods' own stall: from the query's reply and from a Summary; out of range or absent is unknown. */
static void test_stall(void **state)
{
    (void)state;
    struct usage_ref refs[3] = {
        {"vms", "virt-launcher-a-x", "a"}, {"vms", "virt-launcher-b-y", "b"}, {"apps", "web", NULL}};
    struct psi_prom_label ca[] = {{"psi_usage", "podcpustall"}, {"namespace", "vms"}, {"pod", "virt-launcher-a-x"}};
    struct psi_prom_label ma[] = {{"psi_usage", "podmemstall"}, {"namespace", "vms"}, {"pod", "virt-launcher-a-x"}};
    struct psi_prom_label cb[] = {{"psi_usage", "podcpustall"}, {"namespace", "vms"}, {"pod", "virt-launcher-b-y"}};
    struct psi_prom_label cw[] = {{"psi_usage", "podcpustall"}, {"namespace", "other"}, {"pod", "web"}};
    struct psi_prom_label ua[] = {{"psi_usage", "pod"}, {"namespace", "vms"}, {"pod", "virt-launcher-a-x"}};
    struct psi_prom_series s[] = {series(ca, 3, 42.5), series(ma, 3, 3), series(cb, 3, 250), series(cw, 3, 7),
                                  series(ua, 3, 0.5)};
    struct psi_prom_vector v = {s, 5, NULL};
    double cpu[3], mem[3];
    usage_fill_stall(&v, refs, 3, cpu, mem);
    assert_true(cpu[0] == 42.5 && mem[0] == 3);
    /* the dirty rate lands on the VM of that name and namespace only */
    struct psi_prom_label da[] = {{"psi_usage", "vmidirty"}, {"namespace", "vms"}, {"name", "a"}};
    struct psi_prom_label dw[] = {{"psi_usage", "vmidirty"}, {"namespace", "apps"}, {"name", "web"}};
    struct psi_prom_series d[] = {series(da, 3, 1048576), series(dw, 3, 5)};
    struct psi_prom_vector dv = {d, 2, NULL};
    double dirty[3];
    usage_fill_dirty(&dv, refs, 3, dirty);
    assert_true(dirty[0] == 1048576 && isnan(dirty[1]) && isnan(dirty[2])); /* web is no VM */
    assert_true(isnan(cpu[1]) && isnan(mem[1]));                            /* 250 % is no stall */
    assert_true(isnan(cpu[2]));                                             /* another namespace's pod */

    cJSON *sum = cJSON_Parse(
        "{\"node\":{},\"pods\":[{\"podRef\":{\"name\":\"virt-launcher-a-x\",\"namespace\":\"vms\"},"
        "\"cpu\":{\"psi\":{\"some\":{\"avg10\":50,\"avg60\":31.5},\"full\":{\"avg60\":2}}},"
        "\"memory\":{\"psi\":{\"some\":{\"avg60\":0.5}}}},"
        "{\"podRef\":{\"name\":\"virt-launcher-b-y\",\"namespace\":\"vms\"},\"cpu\":{\"usageNanoCores\":1}},"
        "{\"podRef\":{\"name\":\"web\",\"namespace\":\"apps\"},\"cpu\":{\"psi\":{\"some\":{\"avg60\":\"9\"}}}}]}");
    for (int j = 0; j < 3; j++)
        cpu[j] = mem[j] = -1;
    usage_stall_from_summary(sum, "avg60", refs, 3, cpu, mem);
    assert_true(cpu[0] == 31.5 && mem[0] == 0.5); /* "some" at the window's average */
    assert_true(isnan(cpu[1]) && isnan(mem[1]));  /* a kubelet before 1.34: no psi */
    assert_true(isnan(cpu[2]));                   /* not a number */
    cJSON_Delete(sum);
}

static void test_memory(void **state)
{
    (void)state;
    struct usage_ref refs[] = {{"vms", "virt-launcher-vm.a-x", "vm.a"}, {"apps", "web-1", NULL}};
    char *q = usage_memory_query(refs, 2);
    assert_non_null(q);
    assert_non_null(
        strstr(q, "(node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes), \"psi_usage\", \"node\""));
    assert_non_null(strstr(q, "sum by (node) (kubevirt_vmi_memory_resident_bytes), \"psi_usage\", \"vmnode\""));
    assert_non_null(strstr(q, "kubevirt_vmi_memory_resident_bytes{name=~\"vm\\\\.a\"}), \"psi_usage\", \"vmi\""));
    assert_non_null(strstr(q, "container_memory_working_set_bytes{container!=\"\",container!=\"POD\","
                              "pod=~\"virt-launcher-vm\\\\.a-x|web-1\"}), \"psi_usage\", \"pod\""));
    free(q);
    /* the kubelet: working sets */
    cJSON *sum = cJSON_Parse("{\"node\":{\"memory\":{\"workingSetBytes\":8589934592}},"
                             "\"pods\":[{\"podRef\":{\"name\":\"web-1\",\"namespace\":\"apps\"},"
                             "\"memory\":{\"workingSetBytes\":1048576}}]}");
    double nu, ru[2] = {NAN, NAN};
    usage_memory_from_summary(sum, &nu, refs, 2, ru);
    assert_true(nu == 8589934592.0);
    assert_true(isnan(ru[0]));
    assert_true(ru[1] == 1048576.0);
    cJSON_Delete(sum);
    cJSON *bad = cJSON_Parse("{\"node\":{\"memory\":{\"workingSetBytes\":-1}}}");
    usage_memory_from_summary(bad, &nu, refs, 2, ru);
    assert_true(isnan(nu));
    cJSON_Delete(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query),   cmocka_unit_test(test_fill),   cmocka_unit_test(test_fill_runqueue),
        cmocka_unit_test(test_summary), cmocka_unit_test(test_memory), cmocka_unit_test(test_stall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
