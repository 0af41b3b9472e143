/* Unit tests of controller/reconcile/gather's pure parts: the informer projections keep what
 * the decisions read and drop the rest; the plan's view of a node from its projection. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/jx.h"
#include "reconcile/gather.h"
#include "testutil.h"

static void test_node_projection(void **state)
{
    (void)state;
    cJSON *node =
        parse("{\"metadata\":{\"name\":\"w0\",\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"},"
              "\"managedFields\":[{}],\"annotations\":{\"big\":\"x\"}},"
              "\"spec\":{\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}],\"unschedulable\":true,"
              "\"podCIDR\":\"10.0.0.0/24\"},"
              "\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"w0\"},{\"type\":"
              "\"InternalIP\",\"address\":\"127.0.0.10\"}],\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\"},"
              "\"allocatable\":{\"cpu\":\"3500m\",\"memory\":\"7Gi\",\"pods\":\"110\",\"hugepages-2Mi\":\"0\"},"
              "\"images\":[{}]}}");
    cJSON *p = gather_node_projection(node, NULL);
    assert_string_equal(jx_str(p, "metadata.resourceVersion"), "5");
    assert_null(jx_get(p, "metadata.managedFields"));
    assert_null(jx_get(p, "metadata.annotations"));
    assert_null(jx_get(p, "spec.podCIDR"));
    assert_null(jx_get(p, "status.images"));
    assert_int_equal(cJSON_GetArraySize(jx_get(p, "status.addresses")), 1); /* InternalIP only */
    assert_string_equal(jx_str(p, "status.capacity.memory"), "8Gi");        /* memory load is relative to it */
    assert_null(jx_get(p, "status.allocatable.hugepages-2Mi"));

    struct rebalance_node v;
    gather_node_view(p, &v);
    assert_true(v.unschedulable);
    assert_non_null(v.taints);
    assert_string_equal(jx_str(v.labels, "a"), "b");
    assert_float_equal(v.cpus, 4, 1e-9);
    assert_float_equal(v.alloc_cpu, 3.5, 1e-9);
    assert_float_equal(v.alloc_pods, 110, 1e-9);
    assert_float_equal(v.memory, 8.0 * 1024 * 1024 * 1024, 1);
    assert_float_equal(v.alloc_memory, 7.0 * 1024 * 1024 * 1024, 1);
    assert_true(isnan(v.pressure) && isnan(v.demand) && isnan(v.req_cpu)); /* this cycle's to fill */
    assert_false(v.selected || v.tainted || v.sustained || v.settling);
    cJSON_Delete(p);
    cJSON_Delete(node);
}

static void test_pod_projection(void **state)
{
    (void)state;
    cJSON *pod = parse("{\"metadata\":{\"name\":\"virt-launcher-vm-x\",\"namespace\":\"vms\",\"uid\":\"u\","
                       "\"labels\":{\"kubevirt.io\":\"virt-launcher\"},\"annotations\":{\"kubevirt.io/domain\":\"vm\","
                       "\"unrelated\":\"big\"},\"ownerReferences\":[{\"kind\":\"Foo\",\"name\":\"f\"},{\"kind\":"
                       "\"VirtualMachineInstance\",\"name\":\"vm\",\"controller\":true,\"uid\":\"x\"}]},"
                       "\"spec\":{\"nodeName\":\"w0\",\"priority\":0,\"containers\":[{\"name\":\"c\",\"resources\":"
                       "{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}],\"affinity\":{\"podAntiAffinity\":{},"
                       "\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
                       "[]}}}},\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.1.1\"}}");
    cJSON *p = gather_pod_projection(pod, NULL);
    assert_string_equal(jx_annotation(p, "kubevirt.io/domain"), "vm");
    assert_null(jx_annotation(p, "unrelated"));
    assert_int_equal(cJSON_GetArraySize(jx_get(p, "metadata.ownerReferences")), 1); /* the controller only */
    assert_null(jx_get(p, "spec.containers"));
    assert_null(jx_get(p, "spec.affinity.podAntiAffinity"));
    assert_non_null(jx_get(p, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"));
    assert_float_equal(jx_num(p, "requests.cpu", -1), 0.5, 1e-9);
    assert_float_equal(jx_num(p, "requests.memory", -1), 1073741824.0, 1);
    assert_string_equal(jx_str(p, "status.phase"), "Running");
    assert_null(jx_get(p, "status.podIP"));
    cJSON_Delete(p);
    cJSON_Delete(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_projection),
        cmocka_unit_test(test_pod_projection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
