/* Unit tests of controller/reconcile/move/migrate (targeted live migration): the object created,
 * the hostname it targets, the CRD check (fixtures of KubeVirt's CRD with and without
 * addedNodeSelector), the cleanup and lost-move decisions, the answers to a create, and how
 * moves follow a targeted migration (by name, not as an evacuation). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/move/migrate.h"
#include "reconcile/move/moves.h"
#include "testutil.h"

#define T0 1714557600 /* 2024-05-01T10:00:00Z */

static const char *at(const cJSON *o, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    if (c)
        v = cJSON_GetObjectItemCaseSensitive(v, c);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A move of VMI vms/vm from worker-0, requested at T0, carried by the named migration. */
static struct api_move vm_move(const char *destination, const char *migration, enum api_move_phase phase)
{
    return (struct api_move){.kind = strdup("VirtualMachineInstance"),
                             .ns = strdup("vms"),
                             .name = strdup("vm"),
                             .source_node = strdup("worker-0"),
                             .destination_node = strdup(destination),
                             .migration = strdup(migration),
                             .time = T0,
                             .phase = phase};
}

static void test_hostname(void **state)
{
    (void)state;
    cJSON *n = parse("{\"kubernetes.io/hostname\":\"w2.example\"}");
    cJSON *bare = parse("{\"kubernetes.io/hostname\":\"\"}");
    bool oom;
    struct nodelabels *ln = nodelabels_new(n, &oom), *lbare = nodelabels_new(bare, &oom);
    assert_string_equal(migrate_hostname(ln, "worker-2"), "w2.example");
    assert_string_equal(migrate_hostname(lbare, "worker-2"), "worker-2");
    assert_string_equal(migrate_hostname(NULL, "worker-3"), "worker-3");
    nodelabels_free(ln);
    nodelabels_free(lbare);
    cJSON_Delete(n);
    cJSON_Delete(bare);
}

static void test_vmim(void **state)
{
    (void)state;
    struct migrate_request r = {
        .ns = "vms",
        .vmi = "hot-0",
        .owner = "workers",
        .source = "worker-0",
        .destination = "worker-2",
        .hostname = "w2.example",
        .src_load = 2.13,
        .src_load_after = 1.47,
        .dst_load = 0.13,
        .dst_load_after = 0.8,
    };
    cJSON *o = migrate_vmim_new(&r);
    assert_non_null(o);
    assert_string_equal(at(o, "apiVersion", NULL, NULL), "kubevirt.io/v1");
    assert_string_equal(at(o, "kind", NULL, NULL), "VirtualMachineInstanceMigration");
    assert_string_equal(at(o, "metadata", "generateName", NULL), "psi-rebalancer-hot-0-");
    assert_null(at(o, "metadata", "name", NULL));
    assert_string_equal(at(o, "metadata", "namespace", NULL), "vms");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    assert_string_equal(at(md, "labels", "app.kubernetes.io/managed-by", NULL), "psi-rebalancer");
    assert_string_equal(at(md, "labels", "rebalance.psi.dev/psirebalance", NULL), "workers");
    assert_string_equal(at(md, "annotations", "rebalance.psi.dev/source-node", NULL), "worker-0");
    assert_string_equal(at(md, "annotations", "rebalance.psi.dev/destination-node", NULL), "worker-2");
    assert_string_equal(at(md, "annotations", "rebalance.psi.dev/predicted-load", NULL),
                        "worker-0 213% -> 147%, worker-2 13% -> 80%");
    /* not an evacuation: KubeVirt's mark is absent */
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "annotations"),
                                                 "kubevirt.io/evacuationMigration"));
    assert_string_equal(at(o, "spec", "vmiName", NULL), "hot-0");
    assert_string_equal(at(o, "spec", "addedNodeSelector", "kubernetes.io/hostname"), "w2.example");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"),
                                                                         "addedNodeSelector")),
                     1);
    cJSON_Delete(o);

    /* no hostname label: the node's name; a long VMI name is cut in generateName */
    r.hostname = NULL;
    r.vmi = "a-very-long-virtual-machine-instance-name-that-goes-on-and-on";
    o = migrate_vmim_new(&r);
    assert_string_equal(at(o, "spec", "addedNodeSelector", "kubernetes.io/hostname"), "worker-2");
    assert_string_equal(at(o, "spec", "vmiName", NULL), r.vmi);
    assert_true(strlen(at(o, "metadata", "generateName", NULL)) <= strlen("psi-rebalancer-") + 41);
    cJSON_Delete(o);

    r.destination = NULL;
    assert_null(migrate_vmim_new(&r));
}

static void test_crd_support(void **state)
{
    (void)state;
    char why[512] = "";
    cJSON *with = fixture("vmim-crd-with-selector.json");
    assert_int_equal(migrate_crd_support(with, why, sizeof(why)), MIGRATE_SUPPORTED);

    cJSON *without = fixture("vmim-crd-without-selector.json");
    assert_int_equal(migrate_crd_support(without, why, sizeof(why)), MIGRATE_UNSUPPORTED);
    assert_non_null(strstr(why, "addedNodeSelector"));
    assert_non_null(strstr(why, "virtualmachineinstancemigrations.kubevirt.io"));

    /* v1 not served: only the deprecated version has it */
    cJSON *versions = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(with, "spec"), "versions");
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetArrayItem(versions, 0), "served", cJSON_CreateFalse());
    assert_int_equal(migrate_crd_support(with, why, sizeof(why)), MIGRATE_UNSUPPORTED);
    assert_non_null(strstr(why, "kubevirt.io/v1"));
    /* v1 without a schema: unknown */
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetArrayItem(versions, 0), "served", cJSON_CreateTrue());
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetArrayItem(versions, 0), "schema");
    assert_int_equal(migrate_crd_support(with, why, sizeof(why)), MIGRATE_UNKNOWN);

    /* no CRD: no KubeVirt */
    assert_int_equal(migrate_crd_support(NULL, why, sizeof(why)), MIGRATE_UNSUPPORTED);
    assert_non_null(strstr(why, "does not exist"));
    cJSON_Delete(with);
    cJSON_Delete(without);
}

static void test_cleanup_action(void **state)
{
    (void)state;
    int64_t now = T0 + 1000;
    struct moves_migration g = {.ns = "vms", .name = "psi-rebalancer-vm-x", .vmi = "vm", .owner = "workers"};
    /* failed: delete (follow counted it) */
    g.phase = "Failed", g.created = now - 10;
    assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_DELETE_FAILED);
    g.phase = "Succeeded";
    assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_KEEP);
    /* waiting: kept until the bound, then deleted as stuck */
    const char *waiting[] = {"", "Pending", "Scheduling"};
    for (size_t i = 0; i < 3; i++) {
        g.phase = waiting[i];
        g.created = now - MIGRATE_STUCK_S + 1;
        assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_KEEP);
        g.created = now - MIGRATE_STUCK_S;
        assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_DELETE_STUCK);
        assert_int_equal(migrate_cleanup_action(&g, now, MIGRATE_STUCK_S + 60), MIGRATE_KEEP);
    }
    g.phase = NULL;
    assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_DELETE_STUCK);
    /* running long is fine: the migration makes progress */
    const char *going[] = {"Scheduled", "PreparingTarget", "TargetReady", "Running"};
    for (size_t i = 0; i < 4; i++) {
        g.phase = going[i];
        g.created = now - 10 * MIGRATE_STUCK_S;
        assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_KEEP);
    }
    /* unknown creation time: never stuck */
    g.phase = "Pending", g.created = 0;
    assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_KEEP);
    /* not ours (an evacuation, another tool): never touched */
    g.owner = NULL, g.phase = "Failed";
    assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_KEEP);
    g.phase = "Pending", g.created = now - 10 * MIGRATE_STUCK_S;
    assert_int_equal(migrate_cleanup_action(&g, now, 0), MIGRATE_KEEP);
}

static void test_lost(void **state)
{
    (void)state;
    int64_t now = T0 + 1000;
    struct api_move m = {.kind = "VirtualMachineInstance",
                         .ns = "vms",
                         .name = "vm",
                         .migration = "psi-rebalancer-vm-abcde",
                         .time = now - MIGRATE_LOST_S - 1,
                         .phase = API_MOVE_MIGRATING};
    struct moves_migration migs[] = {{.ns = "vms", .name = "psi-rebalancer-vm-abcde", .vmi = "vm", .phase = "Running"},
                                     {.ns = "vms", .name = "kubevirt-evacuation-x", .vmi = "vm", .phase = "Running"}};
    assert_false(migrate_move_lost(&m, migs, 2, now));
    assert_true(migrate_move_lost(&m, migs + 1, 1, now));
    /* asked a moment ago: the informer may not have it yet */
    m.time = now - 5;
    assert_false(migrate_move_lost(&m, migs + 1, 1, now));
    m.time = now - MIGRATE_LOST_S - 1;
    m.phase = API_MOVE_REQUESTED;
    assert_true(migrate_move_lost(&m, NULL, 0, now));
    /* ended moves and eviction moves are not ours to judge */
    m.phase = API_MOVE_FAILED;
    assert_false(migrate_move_lost(&m, NULL, 0, now));
    m.phase = API_MOVE_MIGRATING;
    m.migration = "kubevirt-evacuation-x";
    assert_false(migrate_move_lost(&m, NULL, 0, now));
    assert_false(migrate_move_targeted(&m));
    m.migration = NULL;
    assert_false(migrate_move_lost(&m, NULL, 0, now));
}

static void test_create_outcome(void **state)
{
    (void)state;
    assert_int_equal(migrate_create_outcome(0), EVICTOR_MIGRATING);
    assert_int_equal(migrate_create_outcome(201), EVICTOR_MIGRATING);
    assert_int_equal(migrate_create_outcome(400), EVICTOR_REFUSED); /* "Cannot migrate VMI ..." */
    assert_int_equal(migrate_create_outcome(409), EVICTOR_REFUSED);
    assert_int_equal(migrate_create_outcome(422), EVICTOR_REFUSED);
    assert_int_equal(migrate_create_outcome(429), EVICTOR_REFUSED);
    assert_int_equal(migrate_create_outcome(404), EVICTOR_GONE);
    assert_int_equal(migrate_create_outcome(403), EVICTOR_ERROR);
    assert_int_equal(migrate_create_outcome(500), EVICTOR_ERROR);
}

/* A targeted move follows its own migration by name; an evacuation of the same VMI does not
 * change it, and a Failed migration ends it (KubeVirt does not retry it). */
static void test_follow_targeted(void **state)
{
    (void)state;
    cJSON *ours = parse("{\"metadata\":{\"name\":\"psi-rebalancer-vm-abcde\",\"namespace\":\"vms\","
                        "\"creationTimestamp\":\"2024-05-01T10:00:01Z\",\"labels\":{\"app.kubernetes.io/managed-by\":"
                        "\"psi-rebalancer\",\"rebalance.psi.dev/psirebalance\":\"workers\"}},"
                        "\"spec\":{\"vmiName\":\"vm\"},\"status\":{\"phase\":\"Scheduling\"}}");
    cJSON *other = parse("{\"metadata\":{\"name\":\"x\",\"namespace\":\"vms\",\"labels\":{"
                         "\"rebalance.psi.dev/psirebalance\":\"workers\"}},\"spec\":{\"vmiName\":\"vm\"}}");
    struct moves_migration migs[3];
    assert_int_equal(moves_migration_read(ours, &migs[0]), 0);
    assert_string_equal(migs[0].owner, "workers");
    assert_false(migs[0].evacuation);
    assert_int_equal(moves_migration_read(other, &migs[1]), 0);
    assert_null(migs[1].owner); /* the owner label counts only with managed-by ours */
    migs[1] = (struct moves_migration){.ns = "vms",
                                       .name = "kubevirt-evacuation-q",
                                       .vmi = "vm",
                                       .phase = "Succeeded",
                                       .target = "worker-1",
                                       .evacuation = true,
                                       .created = T0 + 2,
                                       .end = T0 + 20};

    struct api_move m = vm_move("worker-2", "psi-rebalancer-vm-abcde", API_MOVE_REQUESTED);
    struct moves_event *ev = NULL;
    size_t nev = 0;
    assert_int_equal(moves_follow(&m, 1, migs, 2, &ev, &nev), 0);
    assert_int_equal(m.phase, API_MOVE_MIGRATING); /* the evacuation's success is not ours */
    assert_string_equal(m.migration, "psi-rebalancer-vm-abcde");
    assert_int_equal(nev, 1);
    assert_int_equal(ev[0].kind, MOVES_STARTED);
    free(ev), ev = NULL, nev = 0;

    migs[0].phase = "Succeeded", migs[0].target = "worker-2", migs[0].end = T0 + 30;
    assert_int_equal(moves_follow(&m, 1, migs, 2, &ev, &nev), 0);
    assert_int_equal(m.phase, API_MOVE_SUCCEEDED);
    assert_string_equal(m.target_node, "worker-2");
    assert_string_equal(m.target_node, m.destination_node);
    assert_int_equal(m.end_time, T0 + 30);
    assert_int_equal(nev, 1);
    assert_int_equal(ev[0].kind, MOVES_SUCCEEDED);
    free(ev), ev = NULL, nev = 0;

    /* a failed one: one failure, phase Failed; once deleted (cleanup) the move keeps it */
    m.phase = API_MOVE_MIGRATING, m.end_time = 0;
    migs[0].phase = "Failed", migs[0].target = NULL;
    assert_int_equal(moves_follow(&m, 1, migs, 2, &ev, &nev), 0);
    assert_int_equal(m.phase, API_MOVE_FAILED);
    assert_int_equal(m.failures, 1);
    assert_int_equal(nev, 1);
    assert_int_equal(ev[0].kind, MOVES_FAILED);
    free(ev), ev = NULL, nev = 0;
    assert_int_equal(moves_follow(&m, 1, migs + 1, 1, &ev, &nev), 0);
    assert_int_equal(m.phase, API_MOVE_FAILED);
    assert_int_equal(m.failures, 1);
    assert_int_equal(nev, 0);
    free(ev);
    api_move_free(&m);
    cJSON_Delete(ours);
    cJSON_Delete(other);
}

/* A targeted migration KubeVirt failed because its target pod could not be scheduled: the
 * read gives migrationState.failureReason and the failure event carries it (the
 * MigrationFailed Event says why; e2e rebalance_migrate_unschedulable checks the Event). */
static void test_follow_unschedulable(void **state)
{
    (void)state;
    cJSON *full = parse("{\"metadata\":{\"name\":\"psi-rebalancer-vm-fghij\",\"namespace\":\"vms\","
                        "\"creationTimestamp\":\"2024-05-01T10:00:01Z\",\"labels\":{\"app.kubernetes.io/managed-by\":"
                        "\"psi-rebalancer\",\"rebalance.psi.dev/psirebalance\":\"workers\"},\"annotations\":{"
                        "\"rebalance.psi.dev/destination-node\":\"worker-1\"}},\"spec\":{\"vmiName\":\"vm\","
                        "\"addedNodeSelector\":{\"kubernetes.io/hostname\":\"worker-1\"}},\"status\":{\"phase\":"
                        "\"Failed\",\"migrationState\":{\"completed\":true,\"failed\":true,\"endTimestamp\":"
                        "\"2024-05-01T10:00:31Z\",\"failureReason\":\"Migration target pod was unschedulable for "
                        "too long.\"},\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}}");
    struct moves_migration g;
    assert_int_equal(moves_migration_read(full, &g), 0);
    assert_string_equal(g.phase, "Failed");
    assert_string_equal(g.owner, "workers");
    assert_null(g.target); /* never placed */
    assert_string_equal(g.reason, "Migration target pod was unschedulable for too long.");
    assert_int_equal(g.end, T0 + 31);
    assert_int_equal(migrate_cleanup_action(&g, T0 + 40, 0), MIGRATE_DELETE_FAILED);

    struct api_move m = vm_move("worker-1", "psi-rebalancer-vm-fghij", API_MOVE_MIGRATING);
    struct moves_event *ev = NULL;
    size_t nev = 0;
    assert_int_equal(moves_follow(&m, 1, &g, 1, &ev, &nev), 0);
    assert_int_equal(m.phase, API_MOVE_FAILED);
    assert_int_equal(m.failures, 1);
    assert_null(m.target_node);
    assert_int_equal(m.end_time, T0 + 31);
    assert_int_equal(nev, 1);
    assert_int_equal(ev[0].kind, MOVES_FAILED);
    assert_string_equal(ev[0].migration, "psi-rebalancer-vm-fghij");
    assert_string_equal(ev[0].reason, "Migration target pod was unschedulable for too long.");
    free(ev);

    /* a failure without a reason (older KubeVirt) gives none */
    g.reason = NULL, m.phase = API_MOVE_MIGRATING, m.failures = 0, ev = NULL, nev = 0;
    assert_int_equal(moves_follow(&m, 1, &g, 1, &ev, &nev), 0);
    assert_int_equal(nev, 1);
    assert_null(ev[0].reason);
    free(ev);
    api_move_free(&m);
    cJSON_Delete(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostname),
        cmocka_unit_test(test_vmim),
        cmocka_unit_test(test_crd_support),
        cmocka_unit_test(test_cleanup_action),
        cmocka_unit_test(test_lost),
        cmocka_unit_test(test_create_outcome),
        cmocka_unit_test(test_follow_targeted),
        cmocka_unit_test(test_follow_unschedulable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
