/* Unit tests of controller/reconcile/gather's pure parts: the informer projections keep what
 * the decisions read and drop the rest (nodes: nodeproj, with shared label strings); the plan's
 * view of a node from its projection. */
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
#include "reconcile/status/nodeproj.h"
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
    size_t shared0 = nodelabels_shared_strings();
    struct nodeproj *p = nodeproj_project(node, NULL);
    assert_non_null(p);
    assert_string_equal(p->name, "w0");
    assert_string_equal(p->rv, "5");
    assert_string_equal(p->ip, "127.0.0.10"); /* the InternalIP, not the Hostname entry */
    assert_int_equal(cJSON_GetArraySize(p->taints), 1);
    assert_int_equal(p->labels->n, 1);

    /* a second node with the same label shares its strings; the last one gone frees them */
    cJSON *node2 = parse("{\"metadata\":{\"name\":\"w1\",\"labels\":{\"a\":\"b\",\"h\":\"w1\"}}}");
    struct nodeproj *p2 = nodeproj_project(node2, NULL);
    assert_non_null(p2);
    assert_int_equal(nodelabels_shared_strings(), shared0 + 4); /* a, b, h, w1 */
    assert_ptr_equal(nodelabels_get(p->labels, "a"), nodelabels_get(p2->labels, "a"));
    assert_null(p2->taints);
    assert_string_equal(p2->ip, "");
    assert_true(isnan(p2->cpus) && isnan(p2->alloc_pods));
    /* a heartbeat (a new resourceVersion alone) is no change; a label or a taint is */
    cJSON *beat = cJSON_Duplicate(node, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(beat, "metadata"), "resourceVersion", cJSON_CreateString("6"));
    struct nodeproj *pb = nodeproj_project(beat, NULL);
    assert_false(nodeproj_changed(p, pb));
    nodeproj_free(pb);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(beat, "spec"), "taints");
    pb = nodeproj_project(beat, NULL);
    assert_true(nodeproj_changed(p, pb));
    assert_true(nodeproj_changed(p, p2));
    assert_false(nodeproj_changed(p2, p2));
    nodeproj_free(pb);
    cJSON_Delete(beat);
    nodeproj_free(p2);
    assert_int_equal(nodelabels_shared_strings(), shared0 + 2);
    cJSON *nameless = parse("{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
    assert_null(nodeproj_project(nameless, NULL));

    struct rebalance_node v;
    gather_node_view(p, &v);
    assert_true(v.unschedulable);
    assert_non_null(v.taints);
    assert_string_equal(nodelabels_get(v.labels, "a"), "b");
    assert_float_equal(v.cpus, 4, 1e-9);
    assert_float_equal(v.memory, 8.0 * 1024 * 1024 * 1024, 1);
    assert_float_equal(v.alloc_cpu, 3.5, 1e-9);
    assert_float_equal(v.alloc_pods, 110, 1e-9);
    assert_float_equal(v.alloc_memory, 7.0 * 1024 * 1024 * 1024, 1);
    assert_true(isnan(v.pressure) && isnan(v.demand) && isnan(v.req_cpu)); /* this cycle's to fill */
    assert_false(v.selected || v.tainted || v.sustained || v.settling);
    nodeproj_free(p);
    assert_int_equal(nodelabels_shared_strings(), shared0);
    cJSON_Delete(node);
    cJSON_Delete(node2);
    cJSON_Delete(nameless);
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
