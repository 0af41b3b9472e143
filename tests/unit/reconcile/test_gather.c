/* Unit tests of controller/reconcile/gather's pure parts: the informer projections keep what
 * the decisions read and drop the rest (nodes: nodeproj, with shared label strings); the plan's
 * view of a node from its projection; the candidates: each pod of an informer matched to the
 * source node it runs on. */
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
#include "kube/informer.h"
#include "reconcile/gather.h"
#include "reconcile/move/cost.h"
#include "reconcile/move/fit.h"
#include "reconcile/move/moves.h"
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

static uint64_t next(uint64_t *rng)
{
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    return *rng;
}

/* Over random clusters (node names repeated, pods on no node, on unknown nodes, on sources and
 * not), gather_candidates collects exactly the pods on a source, each with the index of the
 * first source of its node's name, as a scan of the nodes from the first finds it. */
static void test_candidates_matched_to_sources(void **state)
{
    (void)state;
    static char names[300][16];
    static struct mover_node nodes[300];
    static bool is_source[300];
    uint64_t rng = 42;
    size_t matched = 0;
    for (int round = 0; round < 60; round++) {
        size_t nn = 1 + next(&rng) % 300, npods = next(&rng) % 600, want = 0;
        for (size_t i = 0; i < nn; i++) {
            snprintf(names[i], sizeof(names[i]), "w%zu", next(&rng) % (nn + nn / 8 + 1));
            nodes[i] = (struct mover_node){.name = names[i]};
            is_source[i] = next(&rng) % 3 == 0;
        }
        struct kube_err err;
        struct kube_informer_opts o = {
            .path = "/api/v1/pods", .project = gather_pod_projection, .free_value = (void (*)(void *))cJSON_Delete};
        struct kube_informer *inf = kube_informer_new(&o, &err);
        assert_non_null(inf);
        kube_informer_list_begin(inf);
        for (size_t j = 0; j < npods; j++) {
            char node[32] = "", text[512];
            if (next(&rng) % 10)
                snprintf(node, sizeof(node), "\"nodeName\":\"w%zu\"", (size_t)(next(&rng) % (nn + 20)));
            snprintf(text, sizeof(text),
                     "{\"metadata\":{\"name\":\"p%zu\",\"namespace\":\"n\",\"resourceVersion\":\"1\"},"
                     "\"spec\":{%s}}",
                     j, node);
            kube_informer_list_item(inf, parse(text));
        }
        kube_informer_list_end(inf, "1");
        assert_int_equal(kube_informer_len(inf), npods);
        struct gather_candidates g = {0};
        assert_int_equal(gather_candidates(inf, nodes, nn, is_source, &g), 0);
        for (size_t j = 0; j < npods; j++) {
            char key[32];
            snprintf(key, sizeof(key), "n/p%zu", j);
            const char *on = jx_str(kube_informer_get_key(inf, key), "spec.nodeName");
            long first = -1;
            for (size_t i = 0; on && i < nn && first < 0; i++)
                if (is_source[i] && strcmp(names[i], on) == 0)
                    first = (long)i;
            want += first >= 0;
            size_t k = 0;
            while (k < g.n && strcmp(g.c[k].name, key + 2) != 0)
                k++;
            if (first < 0) {
                assert_true(k == g.n); /* not collected */
                continue;
            }
            assert_true(k < g.n);
            assert_int_equal(g.c[k].node, (size_t)first);
        }
        assert_int_equal(g.n, want);
        matched += want;
        gather_candidates_free(&g);
        kube_informer_free(inf);
    }
    assert_true(matched > 1000); /* the rule was exercised */
}

/* The VMI and VMIM projections the informers keep answer every reader as the full objects
 * do: the cost (memory, last migration), vCPUs, migratability, and the migration as read. */
static void test_kubevirt_projections(void **state)
{
    (void)state;
    static const char *const vmis[] = {
        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"vms\",\"uid\":\"u\",\"labels\":{\"x\":\"y\"}},"
        "\"spec\":{\"evictionStrategy\":\"LiveMigrate\",\"domain\":{\"cpu\":{\"cores\":2,\"sockets\":2},"
        "\"memory\":{\"guest\":\"6Gi\"},\"resources\":{\"requests\":{\"memory\":\"7Gi\",\"cpu\":\"2\"}},"
        "\"devices\":{\"disks\":[{\"name\":\"root\"}]}}},"
        "\"status\":{\"nodeName\":\"w1\",\"phase\":\"Running\",\"migrationState\":{\"completed\":true,"
        "\"startTimestamp\":\"2026-12-01T10:00:00Z\",\"endTimestamp\":\"2026-12-01T10:00:33Z\","
        "\"targetNodeAddress\":\"127.0.0.2\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
        "{\"type\":\"LiveMigratable\",\"status\":\"False\",\"reason\":\"DisksNotLiveMigratable\"}]}}",
        "{\"metadata\":{\"name\":\"b\",\"namespace\":\"vms\"},\"spec\":{\"domain\":{\"resources\":"
        "{\"requests\":{\"memory\":\"1Gi\"}}}},\"status\":{\"migrationState\":{\"failed\":true,"
        "\"completed\":true,\"startTimestamp\":\"2026-12-01T10:00:00Z\",\"endTimestamp\":\"2026-12-01T10:00:09Z\"}}}",
        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"vms\"},\"spec\":{}}",
        "{\"metadata\":{\"name\":\"d\",\"namespace\":\"vms\"},\"status\":{\"migrationState\":{\"failed\":true,"
        "\"completed\":true,\"abortStatus\":\"Succeeded\",\"failureReason\":\"Live migration has been aborted\","
        "\"endTimestamp\":\"2026-12-01T10:00:00Z\"}}}",
        "{\"metadata\":{\"name\":\"e\",\"namespace\":\"vms\"},\"status\":{\"migrationState\":{\"failed\":true,"
        "\"completed\":true,\"abortStatus\":\"Succeeded\",\"abortRequested\":true,"
        "\"endTimestamp\":\"2026-12-01T10:00:00Z\"}}}",
    };
    for (size_t i = 0; i < sizeof(vmis) / sizeof(vmis[0]); i++) {
        cJSON *full = parse(vmis[i]);
        cJSON *proj = gather_vmi_projection(full, NULL);
        assert_int_equal(cost_vmi_memory(proj), cost_vmi_memory(full));
        int64_t a = -1, b = -1;
        assert_int_equal(cost_vmi_last_migration(proj, &a), cost_vmi_last_migration(full, &b));
        assert_int_equal(a, b);
        double va = rebalance_vmi_vcpus(proj), vb = rebalance_vmi_vcpus(full);
        assert_true((isnan(va) && isnan(vb)) || va == vb);
        const char *ma = rebalance_vmi_check(proj), *mb = rebalance_vmi_check(full);
        assert_true((!ma && !mb) || (ma && mb && strcmp(ma, mb) == 0));
        /* 2026-12-01T10:00:00Z, within a 10-minute hold */
        assert_ptr_equal(cost_convergence_hold(proj, 600000, 1796119260000),
                         cost_convergence_hold(full, 600000, 1796119260000));
        cJSON_Delete(proj);
        cJSON_Delete(full);
    }
    cJSON *full = parse("{\"metadata\":{\"name\":\"kubevirt-evacuation-x\",\"namespace\":\"vms\","
                        "\"creationTimestamp\":\"2026-12-01T09:59:58Z\",\"annotations\":"
                        "{\"kubevirt.io/evacuationMigration\":\"w1\"}},\"spec\":{\"vmiName\":\"a\","
                        "\"priority\":\"system-maintenance\"},\"status\":{\"phase\":\"Succeeded\","
                        "\"migrationState\":{\"sourceNode\":\"w1\",\"targetNode\":\"w2\","
                        "\"startTimestamp\":\"2026-12-01T10:00:00Z\",\"endTimestamp\":\"2026-12-01T10:00:33Z\","
                        "\"mode\":\"PreCopy\"}}}");
    cJSON *proj = gather_vmim_projection(full, NULL);
    struct moves_migration a, b;
    assert_int_equal(moves_migration_read(proj, &a), 0);
    assert_int_equal(moves_migration_read(full, &b), 0);
    assert_int_equal(a.start, b.start);
    assert_int_equal(a.end, b.end);
    assert_int_equal(a.created, b.created);
    assert_int_equal(a.evacuation, b.evacuation);
    assert_string_equal(a.source, b.source);
    assert_string_equal(a.target, b.target);
    assert_string_equal(a.priority, b.priority);
    assert_string_equal(a.phase, b.phase);
    cJSON_Delete(proj);
    cJSON_Delete(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_projection),
        cmocka_unit_test(test_pod_projection),
        cmocka_unit_test(test_candidates_matched_to_sources),
        cmocka_unit_test(test_kubevirt_projections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
