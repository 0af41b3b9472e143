/* Unit tests of the simulator's KubeVirt parts that are pure: the eviction interceptor's
 * decisions and AdmissionReview format (admission.c), the parallel migration limits
 * (miglimits.c) and the objects it creates (objects.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "base/jx.h"
#include "hack/sim/admission.h"
#include "hack/sim/miglimits.h"
#include "hack/sim/objects.h"
#include "hack/sim/scenario.h"

static cJSON *json(const char *text)
{
    cJSON *o = cJSON_Parse(text);
    assert_non_null(o);
    return o;
}

static const char *launcher_pod =
    "{\"metadata\":{\"name\":\"virt-launcher-vm-abcde\",\"namespace\":\"ns\",\"labels\":{\"kubevirt.io\":\"virt-launcher\"},"
    "\"annotations\":{\"kubevirt.io/domain\":\"vm\"}},\"spec\":{\"nodeName\":\"worker-0\"},\"status\":{\"phase\":\"Running\"}}";

static cJSON *vmi_with(const char *strategy, bool migratable, const char *node, const char *evacuation)
{
    char text[1024];
    snprintf(
        text, sizeof(text),
        "{\"metadata\":{\"name\":\"vm\",\"namespace\":\"ns\"},\"spec\":{%s%s%s},\"status\":{\"nodeName\":\"%s\"%s%s%s,"
        "\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":\"%s\"}]}}",
        strategy ? "\"evictionStrategy\":\"" : "", strategy ? strategy : "", strategy ? "\"" : "", node,
        evacuation ? ",\"evacuationNodeName\":\"" : "", evacuation ? evacuation : "", evacuation ? "\"" : "",
        migratable ? "True" : "False");
    return json(text);
}

static void decide(const char *strategy, bool migratable, const char *node, const char *evac,
                   enum scenario_strategy cluster, struct admission_decision *d)
{
    cJSON *pod = json(launcher_pod);
    cJSON *vmi = vmi_with(strategy, migratable, node, evac);
    admission_decide(pod, vmi, NULL, cluster, d);
    /* the decision points into the pod: copy what the test reads before freeing */
    static char node_copy[64];
    if (d->node) {
        snprintf(node_copy, sizeof(node_copy), "%s", d->node);
        d->node = node_copy;
    }
    d->vmi = d->vmi ? "vm" : NULL;
    cJSON_Delete(pod);
    cJSON_Delete(vmi);
}

static void test_live_migrate_marks_and_denies(void **state)
{
    (void)state;
    struct admission_decision d;
    decide("LiveMigrate", true, "worker-0", NULL, SCENARIO_STRATEGY_NONE, &d);
    assert_int_equal(d.verdict, ADMISSION_MARK);
    assert_string_equal(d.node, "worker-0");
    assert_string_equal(d.message, "Eviction triggered evacuation of VMI \"ns/vm\"");
    /* the cluster default applies when the VMI has none */
    decide(NULL, true, "worker-0", NULL, SCENARIO_STRATEGY_LIVE_MIGRATE, &d);
    assert_int_equal(d.verdict, ADMISSION_MARK);
    decide("LiveMigrateIfPossible", true, "worker-0", NULL, SCENARIO_STRATEGY_NONE, &d);
    assert_int_equal(d.verdict, ADMISSION_MARK);
    decide("External", false, "worker-0", NULL, SCENARIO_STRATEGY_NONE, &d);
    assert_int_equal(d.verdict, ADMISSION_MARK);
}

static void test_repeat_is_in_progress(void **state)
{
    (void)state;
    struct admission_decision d;
    decide("LiveMigrate", true, "worker-0", "worker-0", SCENARIO_STRATEGY_NONE, &d);
    assert_int_equal(d.verdict, ADMISSION_DENY);
    assert_string_equal(d.message, "Evacuation in progress: Eviction triggered evacuation of VMI \"ns/vm\"");
}

static void test_none_and_not_migratable(void **state)
{
    (void)state;
    struct admission_decision d;
    decide("None", true, "worker-0", NULL, SCENARIO_STRATEGY_LIVE_MIGRATE, &d);
    assert_int_equal(d.verdict, ADMISSION_ALLOW);
    decide(NULL, true, "worker-0", NULL, SCENARIO_STRATEGY_UNSET, &d);
    assert_int_equal(d.verdict, ADMISSION_ALLOW);
    decide("LiveMigrateIfPossible", false, "worker-0", NULL, SCENARIO_STRATEGY_NONE, &d);
    assert_int_equal(d.verdict, ADMISSION_ALLOW);
    decide("LiveMigrate", false, "worker-0", NULL, SCENARIO_STRATEGY_NONE, &d);
    assert_int_equal(d.verdict, ADMISSION_DENY);
    assert_string_equal(d.message, "VMI vm is configured with an eviction strategy but is not live-migratable");
}

static void test_target_pod_and_others(void **state)
{
    (void)state;
    struct admission_decision d;
    /* the pod is not on the VMI's node: a migration target */
    decide("LiveMigrate", true, "worker-1", NULL, SCENARIO_STRATEGY_NONE, &d);
    assert_int_equal(d.verdict, ADMISSION_DENY);
    assert_string_equal(d.message, "Eviction request for target Pod");

    /* not a launcher, completed, unreadable, no VMI annotation: allowed */
    cJSON *plain = json("{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"x\"}},\"spec\":{\"nodeName\":\"w\"}}");
    admission_decide(plain, NULL, NULL, SCENARIO_STRATEGY_LIVE_MIGRATE, &d);
    assert_int_equal(d.verdict, ADMISSION_ALLOW);
    cJSON_Delete(plain);
    cJSON *done = json("{\"metadata\":{\"labels\":{\"kubevirt.io\":\"virt-launcher\"},\"annotations\":"
                       "{\"kubevirt.io/domain\":\"vm\"}},\"status\":{\"phase\":\"Succeeded\"}}");
    admission_decide(done, NULL, NULL, SCENARIO_STRATEGY_LIVE_MIGRATE, &d);
    assert_int_equal(d.verdict, ADMISSION_ALLOW);
    cJSON_Delete(done);
    admission_decide(NULL, NULL, NULL, SCENARIO_STRATEGY_LIVE_MIGRATE, &d);
    assert_int_equal(d.verdict, ADMISSION_ALLOW);

    /* a launcher whose VMI cannot be read: denied, naming why */
    cJSON *pod = json(launcher_pod);
    admission_decide(pod, NULL, "virtualmachineinstances \"vm\" not found", SCENARIO_STRATEGY_LIVE_MIGRATE, &d);
    assert_int_equal(d.verdict, ADMISSION_DENY);
    assert_string_equal(d.message, "kubevirt failed getting the vmi: virtualmachineinstances \"vm\" not found");
    cJSON_Delete(pod);
}

static void test_migration_admission(void **state)
{
    (void)state;
    struct admission_migration_decision d;
    cJSON *ok = json("{\"metadata\":{\"name\":\"vm\"},\"status\":{\"phase\":\"Running\",\"conditions\":"
                     "[{\"type\":\"LiveMigratable\",\"status\":\"True\"}]}}");
    cJSON *pinned = json("{\"metadata\":{\"name\":\"vm\"},\"status\":{\"phase\":\"Running\",\"conditions\":"
                         "[{\"type\":\"LiveMigratable\",\"status\":\"False\",\"reason\":\"DisksNotLiveMigratable\","
                         "\"message\":\"cannot migrate VMI: PVC rootdisk is not shared\"}]}}");
    cJSON *done = json("{\"metadata\":{\"name\":\"vm\"},\"status\":{\"phase\":\"Succeeded\"}}");
    cJSON *migs =
        json("[{\"metadata\":{\"uid\":\"u-old\"},\"spec\":{\"vmiName\":\"vm\"},\"status\":{\"phase\":\"Failed\"}},"
             "{\"metadata\":{\"uid\":\"u-other\"},\"spec\":{\"vmiName\":\"other\"}}]");
    admission_decide_migration("ns", "vm", ok, NULL, migs, &d);
    assert_true(d.allowed);
    admission_decide_migration("ns", "vm", pinned, NULL, migs, &d);
    assert_false(d.allowed);
    assert_int_equal(d.code, 400);
    assert_string_equal(d.message, "Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: "
                                   "PVC rootdisk is not shared");
    admission_decide_migration("ns", "vm", done, NULL, NULL, &d);
    assert_int_equal(d.code, 400);
    assert_string_equal(d.message, "Cannot migrate VMI in finalized state.");
    admission_decide_migration("ns", "vm", NULL, NULL, NULL, &d);
    assert_int_equal(d.code, 400);
    assert_string_equal(d.message, "the VMI \"ns/vm\" does not exist");
    admission_decide_migration("ns", "", NULL, NULL, NULL, &d);
    assert_int_equal(d.code, 422);
    /* one in flight (no phase yet) for the same VMI */
    cJSON *busy =
        json("[{\"metadata\":{\"uid\":\"u-1\"},\"spec\":{\"vmiName\":\"vm\"},\"status\":{\"phase\":\"Running\"}}]");
    admission_decide_migration("ns", "vm", ok, NULL, busy, &d);
    assert_int_equal(d.code, 400);
    assert_string_equal(d.message, "in-flight migration detected. Active migration job (u-1) is currently already in "
                                   "progress for VMI vm.");
    cJSON_Delete(ok);
    cJSON_Delete(pinned);
    cJSON_Delete(done);
    cJSON_Delete(migs);
    cJSON_Delete(busy);
}

static void test_limits_from_kubevirt(void **state)
{
    (void)state;
    int c = 0, n = 0;
    cJSON *kv = json("{\"spec\":{\"configuration\":{\"migrations\":{\"parallelMigrationsPerCluster\":3,"
                     "\"parallelOutboundMigrationsPerNode\":1}}}}");
    miglimits_from_kubevirt(kv, &c, &n);
    assert_int_equal(c, 3);
    assert_int_equal(n, 1);
    cJSON_Delete(kv);
    /* unset, zero or fractional: KubeVirt's defaults */
    kv = json("{\"spec\":{\"configuration\":{\"migrations\":{\"parallelMigrationsPerCluster\":0,"
              "\"parallelOutboundMigrationsPerNode\":1.5}}}}");
    miglimits_from_kubevirt(kv, &c, &n);
    assert_int_equal(c, 5);
    assert_int_equal(n, 2);
    cJSON_Delete(kv);
    miglimits_from_kubevirt(NULL, &c, &n);
    assert_int_equal(c, 5);
    assert_int_equal(n, 2);
}

static void test_review_round_trip(void **state)
{
    (void)state;
    cJSON *review = json("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
                         "\"uid\":\"u-1\",\"namespace\":\"ns\",\"name\":\"virt-launcher-vm-abcde\",\"dryRun\":false,"
                         "\"object\":{\"kind\":\"Eviction\",\"metadata\":{\"annotations\":{\"requested-by\":"
                         "\"sigs.k8s.io/descheduler\"}},\"deleteOptions\":{\"dryRun\":[\"All\"]}}}}");
    struct admission_request req;
    char err[128];
    assert_int_equal(admission_parse_request(review, &req, err, sizeof(err)), 0);
    assert_string_equal(req.uid, "u-1");
    assert_string_equal(req.ns, "ns");
    assert_string_equal(req.pod, "virt-launcher-vm-abcde");
    assert_true(req.dry_run); /* from the Eviction's deleteOptions */
    assert_string_equal(req.requested_by, "sigs.k8s.io/descheduler");
    cJSON_Delete(review);

    cJSON *bad = json("{\"kind\":\"AdmissionReview\"}");
    assert_int_equal(admission_parse_request(bad, &req, err, sizeof(err)), -1);
    cJSON_Delete(bad);

    char *text = admission_response("u-1", false, 429, "Eviction triggered evacuation of VMI \"ns/vm\"");
    cJSON *resp = json(text);
    free(text);
    assert_string_equal(jx_str(resp, "apiVersion"), "admission.k8s.io/v1");
    assert_string_equal(jx_str(resp, "kind"), "AdmissionReview");
    assert_string_equal(jx_str(resp, "response.uid"), "u-1");
    assert_false(jx_bool(resp, "response.allowed", true));
    assert_int_equal((int)jx_num(resp, "response.status.code", 0), 429);
    assert_string_equal(jx_str(resp, "response.status.message"), "Eviction triggered evacuation of VMI \"ns/vm\"");
    cJSON_Delete(resp);
    text = admission_response("u-2", true, 429, "ignored");
    resp = json(text);
    free(text);
    assert_true(jx_bool(resp, "response.allowed", false));
    assert_null(jx_get(resp, "response.status"));
    cJSON_Delete(resp);
}

static void test_limits(void **state)
{
    (void)state;
    assert_false(miglimits_phase_running(""));
    assert_false(miglimits_phase_running(NULL));
    assert_false(miglimits_phase_running("Pending"));
    assert_true(miglimits_phase_running("Scheduling"));
    assert_true(miglimits_phase_running("TargetReady"));
    assert_true(miglimits_phase_running("Running"));
    assert_false(miglimits_phase_running("Succeeded"));
    assert_false(miglimits_phase_running("Failed"));
    assert_true(miglimits_phase_final("Failed"));

    struct miglimits l;
    miglimits_init(&l, 5, 2);
    assert_int_equal(miglimits_room(&l, "a"), 2);
    miglimits_add(&l, "a");
    assert_int_equal(miglimits_room(&l, "a"), 1);
    miglimits_add(&l, "a");
    assert_int_equal(miglimits_room(&l, "a"), 0); /* 2 outbound from a node */
    assert_int_equal(miglimits_room(&l, "b"), 2);
    miglimits_add(&l, "b");
    miglimits_add(&l, "b");
    miglimits_add(&l, "c");
    assert_int_equal(l.total, 5);
    assert_int_equal(miglimits_room(&l, "c"), 0); /* 5 in the cluster */
    assert_int_equal(miglimits_room(&l, "d"), 0);
    assert_int_equal(miglimits_running_from(&l, "b"), 2);
    miglimits_clear(&l);
    assert_int_equal(l.total, 0);
    assert_int_equal(miglimits_room(&l, "a"), 2);
}

static const struct scenario_vm vm = {
    .name = "web-1",
    .group = "web",
    .vcpus = 2,
    .memory = 4.0 * 1024 * 1024 * 1024,
    .cpu_demand = 1.5,
    .memory_demand = 2.0 * 1024 * 1024 * 1024,
    .io_demand = 1,
    .strategy = SCENARIO_STRATEGY_UNSET,
    .migratable = true,
    .cpu_request = 0.2,
};

static void test_objects(void **state)
{
    (void)state;
    cJSON *o = objects_vm("ns", "seed", &vm, 1.5);
    assert_string_equal(jx_str(o, "kind"), "VirtualMachine");
    assert_string_equal(jx_str(o, "spec.runStrategy"), "Always");
    assert_int_equal((int)jx_num(o, "spec.template.spec.domain.cpu.cores", 0), 2);
    assert_string_equal(jx_str(o, "spec.template.spec.domain.memory.guest"), "4Gi");
    assert_null(jx_get(o, "spec.template.spec.evictionStrategy")); /* unset: the cluster's */
    assert_string_equal(jx_annotation(o, "sim.psi.dev/cpu-demand"), "1.5");
    cJSON_Delete(o);

    o = objects_vmi("ns", "seed", &vm, "vm-uid", SCENARIO_STRATEGY_LIVE_MIGRATE);
    assert_string_equal(jx_str(o, "metadata.name"), "web-1");
    assert_string_equal(jx_str(o, "spec.evictionStrategy"), "LiveMigrate");
    const cJSON *ref = cJSON_GetArrayItem(jx_get(o, "metadata.ownerReferences"), 0);
    assert_string_equal(jx_str(ref, "kind"), "VirtualMachine");
    assert_string_equal(jx_str(ref, "uid"), "vm-uid");
    assert_true(jx_bool(ref, "controller", false));
    cJSON_Delete(o);

    o = objects_launcher_pod("ns", "seed", &vm, "web-1", "vmi-uid", "virt-launcher-web-1-bcdfg", NULL);
    assert_string_equal(jx_label(o, "kubevirt.io"), "virt-launcher");
    assert_string_equal(jx_label(o, "kubevirt.io/created-by"), "vmi-uid");
    assert_string_equal(jx_label(o, "vm.kubevirt.io/name"), "web-1");
    assert_string_equal(jx_annotation(o, "kubevirt.io/domain"), "web-1");
    assert_non_null(jx_annotation(o, "descheduler.alpha.kubernetes.io/request-evict-only"));
    assert_null(jx_label(o, "kubevirt.io/migrationJobUID"));
    assert_null(jx_get(o, "spec.affinity"));
    const cJSON *c = cJSON_GetArrayItem(jx_get(o, "spec.containers"), 0);
    assert_string_equal(jx_str(c, "name"), "compute");
    assert_string_equal(jx_str(c, "resources.requests.cpu"), "200m");
    /* guest memory plus overhead: 4Gi + 200Mi + 16Mi + 0.5 % */
    assert_string_equal(jx_str(c, "resources.requests.memory"), "4333Mi");
    const cJSON *sel = jx_get(o, "spec.nodeSelector");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(sel, "kubevirt.io/schedulable")->valuestring, "true");
    cJSON_Delete(o);

    cJSON *added = json("{\"kubernetes.io/hostname\":\"worker-2\"}");
    struct objects_target t = {"mig-uid", "kubevirt-evacuation-xyz12", added};
    o = objects_launcher_pod("ns", "seed", &vm, "web-1", "vmi-uid", "virt-launcher-web-1-hjklm", &t);
    assert_string_equal(jx_label(o, "kubevirt.io/migrationJobUID"), "mig-uid");
    assert_string_equal(jx_annotation(o, "kubevirt.io/migrationJobName"), "kubevirt-evacuation-xyz12");
    sel = jx_get(o, "spec.nodeSelector");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(sel, "kubernetes.io/hostname")->valuestring, "worker-2");
    const cJSON *term = cJSON_GetArrayItem(
        jx_get(o, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"), 0);
    assert_string_equal(jx_str(term, "topologyKey"), "kubernetes.io/hostname");
    const cJSON *ml = jx_get(term, "labelSelector.matchLabels");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ml, "kubevirt.io/created-by")->valuestring, "vmi-uid");
    cJSON_Delete(o);
    cJSON_Delete(added);

    o = objects_evacuation("ns", "web-1", "worker-0", NULL);
    assert_string_equal(jx_str(o, "metadata.generateName"), "kubevirt-evacuation-");
    assert_string_equal(jx_annotation(o, "kubevirt.io/evacuationMigration"), "worker-0");
    assert_string_equal(jx_str(o, "spec.vmiName"), "web-1");
    assert_string_equal(jx_str(o, "spec.priority"), "system-critical"); /* a drain, a plain eviction */
    cJSON_Delete(o);
    o = objects_evacuation("ns", "web-1", "worker-0", "descheduler");
    assert_string_equal(jx_str(o, "spec.priority"), "system-maintenance");
    cJSON_Delete(o);
    o = objects_evacuation("ns", "web-1", "worker-0", "someone-else");
    assert_string_equal(jx_str(o, "spec.priority"), "system-critical");
    cJSON_Delete(o);
}

/* The migration queue's order, generated: random priorities (the three, unset, unknown) and
 * creation times, sorted by miglimits_queue_order, checked against a reference ranking
 * (system-critical 100 > user-triggered 50 > system-maintenance 20 > unset or other 0, then
 * first come first) pair by pair, and as a permutation of the input. */
static int reference_rank(const char *p)
{
    if (!p)
        return 0;
    return !strcmp(p, "system-critical")      ? 100
           : !strcmp(p, "user-triggered")     ? 50
           : !strcmp(p, "system-maintenance") ? 20
                                              : 0;
}

static void test_queue_order_generated(void **state)
{
    (void)state;
    static const char *const prios[] = {NULL, "system-critical", "user-triggered", "system-maintenance", "urgent"};
    srand(20);
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + (size_t)(rand() % 12);
        cJSON *migs[12];
        const cJSON *order[12];
        for (size_t i = 0; i < n; i++) {
            char name[32], ts[32];
            snprintf(name, sizeof(name), "m-%02zu", i);
            snprintf(ts, sizeof(ts), "2026-12-03T08:%02d:%02dZ", rand() % 3, rand() % 60);
            migs[i] = cJSON_CreateObject();
            cJSON *md = cJSON_AddObjectToObject(migs[i], "metadata");
            cJSON_AddStringToObject(md, "name", name);
            cJSON_AddStringToObject(md, "creationTimestamp", ts);
            cJSON *spec = cJSON_AddObjectToObject(migs[i], "spec");
            const char *p = prios[rand() % 5];
            if (p)
                cJSON_AddStringToObject(spec, "priority", p);
            order[i] = migs[i];
        }
        qsort(order, n, sizeof(*order), miglimits_queue_order);
        for (size_t i = 0; i < n; i++) {
            size_t seen = 0;
            for (size_t k = 0; k < n; k++)
                seen += order[k] == migs[i];
            assert_int_equal(seen, 1);
        }
        for (size_t i = 0; i + 1 < n; i++) {
            int a = reference_rank(jx_str(order[i], "spec.priority"));
            int b = reference_rank(jx_str(order[i + 1], "spec.priority"));
            assert_true(a >= b);
            assert_int_equal(miglimits_queue_priority(jx_str(order[i], "spec.priority")), a);
            if (a == b) {
                int t = strcmp(jx_str(order[i], "metadata.creationTimestamp"),
                               jx_str(order[i + 1], "metadata.creationTimestamp"));
                assert_true(t < 0 || (t == 0 && strcmp(jx_str(order[i], "metadata.name"),
                                                       jx_str(order[i + 1], "metadata.name")) < 0));
            }
        }
        for (size_t i = 0; i < n; i++)
            cJSON_Delete(migs[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_migrate_marks_and_denies),
        cmocka_unit_test(test_repeat_is_in_progress),
        cmocka_unit_test(test_none_and_not_migratable),
        cmocka_unit_test(test_target_pod_and_others),
        cmocka_unit_test(test_migration_admission),
        cmocka_unit_test(test_limits_from_kubevirt),
        cmocka_unit_test(test_review_round_trip),
        cmocka_unit_test(test_queue_order_generated),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
