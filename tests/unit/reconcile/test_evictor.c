/* Unit tests of controller/reconcile/move/evictor: may this pod go? Eligibility and protections
 * of the pod, the workload it belongs to, what is being done with its workload (busy VMI,
 * move under way, cooldown, refusal), whether an eviction restarts a VM, and room under the
 * limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/move/evictor.h"
#include "testutil.h"

/* ---- the pod itself ---- */

#define LAUNCHER_META                                                                                      \
    "\"metadata\":{\"name\":\"virt-launcher-vm-abcde\",\"namespace\":\"vms\",\"labels\":{\"kubevirt.io\":" \
    "\"virt-launcher\"},\"annotations\":{\"kubevirt.io/domain\":\"vm\"%s},\"ownerReferences\":[{\"kind\":" \
    "\"VirtualMachineInstance\",\"name\":\"vm\",\"controller\":true}]%s}"

static const char *check(const char *extra_ann, const char *extra_meta, const char *spec, const char *phase,
                         const struct evictor_filter *f)
{
    char meta[2048], text[4096];
    snprintf(meta, sizeof(meta), LAUNCHER_META, extra_ann, extra_meta);
    snprintf(text, sizeof(text), "{%s,\"spec\":{\"nodeName\":\"worker-0\"%s},\"status\":{\"phase\":\"%s\"}}", meta,
             spec, phase);
    cJSON *pod = parse(text);
    const char *why = evictor_pod_check(pod, f);
    cJSON_Delete(pod);
    return why;
}

static void test_pod_check(void **state)
{
    (void)state;
    struct api_selector sel = {0};
    assert_int_equal(api_selector_add_label(&sel, "kubevirt.io", "virt-launcher"), 0);
    char *excluded[] = {"kube-*", "openshift-*"};
    struct evictor_filter f = {&sel, excluded, 2};
    assert_null(check("", "", "", "Running", &f));
    assert_string_equal(check("", "", "", "Pending", &f), "not running");
    assert_string_equal(check("", ",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"", "", "Running", &f),
                        "being deleted");
    assert_string_equal(check(",\"kubernetes.io/config.mirror\":\"x\"", "", "", "Running", &f), "mirror pod");
    assert_string_equal(check(",\"kubernetes.io/config.source\":\"file\"", "", "", "Running", &f), "static pod");
    assert_null(check(",\"kubernetes.io/config.source\":\"api\"", "", "", "Running", &f));
    assert_string_equal(check("", "", ",\"priorityClassName\":\"system-node-critical\"", "Running", &f),
                        "system-critical");
    assert_string_equal(check("", "", ",\"priority\":2000001000", "Running", &f), "system-critical");
    assert_null(check("", "", ",\"priority\":1000", "Running", &f));
    assert_string_equal(check(",\"descheduler.alpha.kubernetes.io/prefer-no-eviction\":\"\"", "", "", "Running", &f),
                        "prefer-no-eviction");
    assert_string_equal(
        check(",\"descheduler.alpha.kubernetes.io/eviction-in-progress\":\"true\"", "", "", "Running", &f),
        "eviction in progress");

    /* a DaemonSet pod, a pod without a controller, an excluded namespace, not selected, a target pod */
    cJSON *ds = parse("{\"metadata\":{\"namespace\":\"x\",\"labels\":{\"kubevirt.io\":\"virt-launcher\"},"
                      "\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"d\",\"controller\":true}]},"
                      "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\"}}");
    assert_string_equal(evictor_pod_check(ds, &f), "DaemonSet pod");
    cJSON *naked = parse("{\"metadata\":{\"namespace\":\"x\",\"labels\":{\"kubevirt.io\":\"virt-launcher\"},"
                         "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"r\"}]},"
                         "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\"}}");
    assert_string_equal(evictor_pod_check(naked, &f), "no controller");
    cJSON *sys = parse("{\"metadata\":{\"namespace\":\"kube-system\",\"labels\":{\"kubevirt.io\":\"virt-launcher\"},"
                       "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"r\",\"controller\":true}]},"
                       "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\"}}");
    assert_string_equal(evictor_pod_check(sys, &f), "excluded namespace");
    cJSON *other = parse("{\"metadata\":{\"namespace\":\"apps\",\"labels\":{\"app\":\"web\"},"
                         "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"r\",\"controller\":true}]},"
                         "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\"}}");
    assert_string_equal(evictor_pod_check(other, &f), "not selected");
    struct evictor_filter all = {NULL, NULL, 0};
    assert_null(evictor_pod_check(other, &all));
    cJSON *target =
        parse("{\"metadata\":{\"namespace\":\"vms\",\"labels\":{\"kubevirt.io\":\"virt-launcher\","
              "\"kubevirt.io/migrationJobUID\":\"u\"},"
              "\"ownerReferences\":[{\"kind\":\"VirtualMachineInstance\",\"name\":\"vm\",\"controller\":true}]},"
              "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\"}}");
    assert_null(evictor_pod_check(target, &f)); /* the pod itself may go: its VMI decides */
    /* a live migration's target pod: not while its VMI runs elsewhere (or is unknown); once
     * the migration succeeded the VMI runs on the pod's node and KubeVirt leaves the label on
     * the pod, which is the VM's own now and may move again */
    cJSON *on_src = parse("{\"status\":{\"nodeName\":\"src\"}}");
    cJSON *on_n = parse("{\"status\":{\"nodeName\":\"n\"}}");
    cJSON *no_node = parse("{\"status\":{\"nodeName\":\"\"}}");
    assert_string_equal(evictor_migration_target(target, NULL), "migration target");
    assert_string_equal(evictor_migration_target(target, on_src), "migration target");
    assert_string_equal(evictor_migration_target(target, no_node), "migration target");
    assert_null(evictor_migration_target(target, on_n));
    assert_null(evictor_migration_target(other, on_src)); /* no label: no target pod */
    struct evictor_facts x = {.pod = target, .vmi = on_src, .controller = true};
    assert_string_equal(evictor_check(&x, &f), "migration target");
    x.vmi = on_n;
    assert_null(evictor_check(&x, &f));
    cJSON_Delete(on_src);
    cJSON_Delete(on_n);
    cJSON_Delete(no_node);
    cJSON_Delete(ds);
    cJSON_Delete(naked);
    cJSON_Delete(sys);
    cJSON_Delete(other);
    cJSON_Delete(target);
    api_selector_free(&sel);
}

static void test_workload(void **state)
{
    (void)state;
    const char *kind, *name;
    cJSON *vm = parse("{\"metadata\":{\"ownerReferences\":[{\"kind\":\"VirtualMachineInstance\",\"name\":\"vm-1\","
                      "\"controller\":true}]}}");
    evictor_pod_workload(vm, &kind, &name);
    assert_string_equal(kind, "VirtualMachineInstance");
    assert_string_equal(name, "vm-1");
    cJSON *rs = parse("{\"metadata\":{\"ownerReferences\":[{\"kind\":\"Foo\",\"name\":\"x\"},{\"kind\":"
                      "\"ReplicaSet\",\"name\":\"web-5d\",\"controller\":true}]}}");
    evictor_pod_workload(rs, &kind, &name);
    assert_string_equal(kind, "ReplicaSet");
    assert_string_equal(name, "web-5d");
    cJSON *none = parse("{\"metadata\":{}}");
    evictor_pod_workload(none, &kind, &name);
    assert_null(kind);
    assert_null(name);
    cJSON_Delete(vm);
    cJSON_Delete(rs);
    cJSON_Delete(none);
}

/* ---- what is being done with the workload ---- */

static void test_vmi_busy(void **state)
{
    (void)state;
    cJSON *evac = parse("{\"status\":{\"nodeName\":\"w0\",\"evacuationNodeName\":\"w0\"}}");
    cJSON *calm = parse("{\"status\":{\"nodeName\":\"w0\",\"evacuationNodeName\":\"\"}}");
    struct moves_migration migs[2] = {
        {.ns = "vms", .name = "m1", .vmi = "vm", .phase = "Succeeded"},
        {.ns = "other", .name = "m2", .vmi = "vm", .phase = "Running"},
    };
    assert_string_equal(evictor_vmi_busy(evac, NULL, 0, "vms", "vm"), "in evacuation");
    assert_null(evictor_vmi_busy(calm, NULL, 0, "vms", "vm")); /* "" is no evacuation */
    assert_null(evictor_vmi_busy(calm, migs, 2, "vms", "vm")); /* finished, or another namespace */
    assert_null(evictor_vmi_busy(NULL, migs, 2, "vms", "vm")); /* no VMI known */
    migs[0].phase = "Scheduling";
    assert_string_equal(evictor_vmi_busy(calm, migs, 2, "vms", "vm"), "migrating");
    assert_null(evictor_vmi_busy(calm, migs, 2, "vms", "vm-2"));
    cJSON_Delete(evac);
    cJSON_Delete(calm);
}

/* eviction-in-progress, generated over its values and the pod's phase and workload, against a
 * reference: present (any value) means in progress (how it counts in flight: test_inflight.c). */
static void test_eviction_in_progress_generated(void **state)
{
    (void)state;
    static const char *const values[] = {NULL, "", "true", "false"};
    static const char *const phases[] = {"Running", "Pending", "Succeeded", "Failed"};
    static const char *const vmis[] = {"vm-a", "vm-b"};
    static const char *const nss[] = {"vms", "other"};
    srand(41);
    for (int i = 0; i < 3000; i++) {
        const char *value = values[rand() % 4], *phase = phases[rand() % 4];
        const char *vmi = vmis[rand() % 2], *ns = nss[rand() % 2];
        bool launcher = rand() % 4 != 0; /* else a ReplicaSet's pod */
        char ann[128] = "", text[1024];
        if (value)
            snprintf(ann, sizeof(ann), ",\"descheduler.alpha.kubernetes.io/eviction-in-progress\":\"%s\"", value);
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"%s\",\"annotations\":{\"x\":\"y\"%s},"
                 "\"ownerReferences\":[{\"kind\":\"%s\",\"name\":\"%s\",\"controller\":true}]},"
                 "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"%s\"}}",
                 ns, ann, launcher ? "VirtualMachineInstance" : "ReplicaSet", launcher ? vmi : "rs", phase);
        cJSON *pod = parse(text);
        bool in_progress = value != NULL;
        assert_int_equal(evictor_eviction_in_progress(pod), in_progress);
        if (in_progress && !strcmp(phase, "Running") && strcmp(ns, "vms") == 0) {
            struct evictor_filter f = {0};
            assert_string_equal(evictor_pod_check(pod, &f), "eviction in progress");
        }
        cJSON_Delete(pod);
    }
}

static void test_check_order(void **state)
{
    (void)state;
    cJSON *pod = parse("{\"metadata\":{\"namespace\":\"apps\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\","
                       "\"name\":\"r\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n\"},"
                       "\"status\":{\"phase\":\"Running\"}}");
    cJSON *pending = parse("{\"metadata\":{\"namespace\":\"apps\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\","
                           "\"name\":\"r\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n\"},"
                           "\"status\":{\"phase\":\"Pending\"}}");
    struct evictor_facts x = {.pod = pod, .controller = true};
    assert_null(evictor_check(&x, NULL));
    x.refused = true;
    assert_string_equal(evictor_check(&x, NULL), "eviction refused recently");
    x.cooling = true;
    assert_string_equal(evictor_check(&x, NULL), "cooling down");
    x.move_running = true;
    assert_string_equal(evictor_check(&x, NULL), "move in progress");
    x.vmi_busy = "migrating";
    assert_string_equal(evictor_check(&x, NULL), "migrating");
    x.controller = false; /* the workload could not be named */
    assert_string_equal(evictor_check(&x, NULL), "no controller");
    x.pod = pending; /* the pod's own state comes first */
    assert_string_equal(evictor_check(&x, NULL), "not running");
    char *excluded[] = {"app*"};
    struct evictor_filter f = {NULL, excluded, 1};
    x = (struct evictor_facts){.pod = pod, .controller = true};
    assert_string_equal(evictor_check(&x, &f), "excluded namespace");
    cJSON_Delete(pod);
    cJSON_Delete(pending);
}

/* ---- limits ---- */

static void test_room(void **state)
{
    (void)state;
    struct evictor_limits l = {.max_total = 4,
                               .max_per_node = 2,
                               .max_per_namespace = 2,
                               .max_in_flight = 3,
                               .in_flight = 1,
                               .running = 1,
                               .per_cluster = 5,
                               .per_node = 2};
    struct evictor_tally t = {.total = 3, .node = "w0", .from_node = 1, .ns = "apps", .in_namespace = 1};
    char why[256];
    assert_null(evictor_room(&l, &t, false, why, sizeof(why)));
    assert_null(evictor_room(&l, &t, true, why, sizeof(why)));
    t.total = 4;
    assert_string_equal(evictor_room(&l, &t, false, why, sizeof(why)), "maxTotal (4) reached");
    t.total = 3, t.from_node = 2;
    assert_string_equal(evictor_room(&l, &t, false, why, sizeof(why)), "maxPerNode (2) reached for w0");
    t.from_node = 1;
    t.in_namespace = 2;
    assert_string_equal(evictor_room(&l, &t, false, why, sizeof(why)),
                        "maxPerNamespace (2) reached for namespace apps");
    t.in_namespace = 0;
    t.vm_moves = 2; /* 1 in flight + 2 planned reach maxInFlightMigrations 3 */
    assert_null(evictor_room(&l, &t, false, why, sizeof(why))); /* a pod eviction is no migration */
    assert_string_equal(evictor_room(&l, &t, true, why, sizeof(why)),
                        "3 live migrations in flight, maxInFlightMigrations is 3");
    l.max_in_flight = 10, l.running = 3; /* 3 running + 2 planned reach KubeVirt's 5 */
    assert_string_equal(evictor_room(&l, &t, true, why, sizeof(why)),
                        "5 live migrations running, KubeVirt runs at most 5 in the cluster");
    l.running = 0, t.outbound = 2;
    assert_string_equal(evictor_room(&l, &t, true, why, sizeof(why)),
                        "2 live migrations running from w0, KubeVirt runs at most 2 per node");
    t.outbound = 1;
    assert_null(evictor_room(&l, &t, true, why, sizeof(why)));
}

/* A VM's effective eviction strategy: the VMI's, else the KubeVirt CR's, else None; and
 * whether its eviction restarts it (None; LiveMigrateIfPossible when not migratable). */
static void test_vm_restarts(void **state)
{
    (void)state;
    cJSON *own = parse("{\"spec\":{\"evictionStrategy\":\"LiveMigrate\"}}");
    cJSON *plain = parse("{\"spec\":{\"evictionStrategy\":\"\"}}");
    cJSON *kv = parse("{\"spec\":{\"configuration\":{\"evictionStrategy\":\"LiveMigrateIfPossible\"}}}");
    cJSON *kv_bare = parse("{\"spec\":{\"configuration\":{}}}");
    assert_string_equal(evictor_vm_strategy(own, kv), "LiveMigrate"); /* the VMI's own wins */
    assert_string_equal(evictor_vm_strategy(plain, kv), "LiveMigrateIfPossible");
    assert_string_equal(evictor_vm_strategy(plain, kv_bare), "None"); /* KubeVirt's default */
    assert_string_equal(evictor_vm_strategy(plain, NULL), "None");
    assert_string_equal(evictor_vm_strategy(NULL, kv), "LiveMigrateIfPossible");

    assert_string_equal(evictor_vm_restarts("None", true), "VM would restart (eviction strategy None)");
    assert_string_equal(evictor_vm_restarts("None", false), "VM would restart (eviction strategy None)");
    assert_string_equal(evictor_vm_restarts("LiveMigrateIfPossible", false),
                        "VM would restart (LiveMigrateIfPossible, not migratable)");
    assert_null(evictor_vm_restarts("LiveMigrateIfPossible", true));
    assert_null(evictor_vm_restarts("LiveMigrate", false)); /* KubeVirt holds the pod: refused, not restarted */
    assert_null(evictor_vm_restarts("External", false));

    cJSON *yes = parse("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},"
                       "{\"type\":\"LiveMigratable\",\"status\":\"True\"}]}}");
    cJSON *no = parse("{\"status\":{\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":\"False\","
                      "\"reason\":\"DisksNotLiveMigratable\"}]}}");
    cJSON *unsaid = parse("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    assert_true(evictor_vmi_migratable(yes));
    assert_false(evictor_vmi_migratable(no));
    assert_false(evictor_vmi_migratable(unsaid)); /* KubeVirt migrates only a VMI that says True */
    assert_false(evictor_vmi_migratable(NULL));
    cJSON_Delete(own), cJSON_Delete(plain), cJSON_Delete(kv), cJSON_Delete(kv_bare);
    cJSON_Delete(yes), cJSON_Delete(no), cJSON_Delete(unsaid);
}

/* The owner's None against a targeted migration, generated over the VMI's and the KubeVirt
 * CR's strategies (set, empty, missing) against a reference: the effective strategy is the
 * VMI's, else the CR's, else None, and only None is overridden by a migration. */
static void test_migration_overrides_generated(void **state)
{
    (void)state;
    static const char *const strategies[] = {NULL, "", "None", "LiveMigrate", "LiveMigrateIfPossible", "External"};
    for (size_t i = 0; i < 6; i++)
        for (size_t k = 0; k < 7; k++) {
            char vtext[128], ktext[160];
            snprintf(vtext, sizeof(vtext), strategies[i] ? "{\"spec\":{\"evictionStrategy\":\"%s\"}}" : "{\"spec\":{}}",
                     strategies[i] ? strategies[i] : "");
            cJSON *vmi = parse(vtext), *kv = NULL;
            if (k < 6) {
                snprintf(ktext, sizeof(ktext),
                         strategies[k] ? "{\"spec\":{\"configuration\":{\"evictionStrategy\":\"%s\"}}}"
                                       : "{\"spec\":{\"configuration\":{}}}",
                         strategies[k] ? strategies[k] : "");
                kv = parse(ktext);
            }
            const char *want = strategies[i] && strategies[i][0]            ? strategies[i]
                               : k < 6 && strategies[k] && strategies[k][0] ? strategies[k]
                                                                            : "None";
            const char *got = evictor_vm_strategy(vmi, kv);
            assert_string_equal(got, want);
            const char *why = evictor_vm_migration_overrides(got);
            if (strcmp(want, "None") == 0)
                assert_non_null(why);
            else
                assert_null(why);
            cJSON_Delete(vmi);
            cJSON_Delete(kv);
        }
}

/* What the Eviction API's answer means: gone, migrating (KubeVirt's interceptor), refused or failed. */
static void test_evict_outcome(void **state)
{
    (void)state;
    assert_int_equal(evictor_outcome(0, NULL), EVICTOR_EVICTED);
    assert_int_equal(evictor_outcome(201, ""), EVICTOR_EVICTED);
    assert_int_equal(evictor_outcome(429, "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" "
                                          "denied the request: Eviction triggered evacuation of VMI \"ns/vm\""),
                     EVICTOR_MIGRATING);
    assert_int_equal(evictor_outcome(429, "admission webhook \"x\" denied the request: Evacuation in progress: "
                                          "Eviction triggered evacuation of VMI \"ns/vm\""),
                     EVICTOR_MIGRATING);
    assert_int_equal(evictor_outcome(429, "Cannot evict pod as it would violate the pod's disruption budget."),
                     EVICTOR_REFUSED);
    assert_int_equal(evictor_outcome(429, "VMI ns/vm is configured with an eviction strategy but is not "
                                          "live-migratable"),
                     EVICTOR_REFUSED);
    assert_int_equal(evictor_outcome(404, "not found"), EVICTOR_GONE);
    assert_int_equal(evictor_outcome(500, "boom"), EVICTOR_ERROR);
    assert_int_equal(evictor_outcome(403, "forbidden"), EVICTOR_ERROR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_check),
        cmocka_unit_test(test_workload),
        cmocka_unit_test(test_vmi_busy),
        cmocka_unit_test(test_check_order),
        cmocka_unit_test(test_room),
        cmocka_unit_test(test_vm_restarts),
        cmocka_unit_test(test_eviction_in_progress_generated),
        cmocka_unit_test(test_migration_overrides_generated),
        cmocka_unit_test(test_evict_outcome),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
