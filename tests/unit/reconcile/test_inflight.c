/* inflight (reconcile/move/inflight): the VMs that count against maxInFlightMigrations.
 *
 * Generated over the whole class, against a reference that judges each VM alone: populations
 * of 1-8 VMs in two namespaces (the same names in both), each with 0-2 migrations of any
 * phase, a VMI that is or is not marked for evacuation (on its node, or already migrated off
 * it), of any phase and eviction strategy (its own, or the KubeVirt CR's default, External
 * included), a launcher pod with or without eviction-in-progress, and a move of ours asked
 * without a migration yet. The edge's assembly (marked VMIs, annotated pods, our moves) is
 * rebuilt here as mover.c does it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/move/evictor.h"
#include "reconcile/move/inflight.h"
#include "testutil.h"

static const char *const mphases[] = {"", "Pending", "Scheduling", "Running", "Succeeded", "Failed"};
static const char *const vphases[] = {"Running", "Scheduled", "Succeeded", "Failed"};
static const char *const pphases[] = {"Running", "Pending", "Succeeded", "Failed"};
static const char *const strategies[] = {NULL, "LiveMigrate", "LiveMigrateIfPossible", "External"};

static bool final(const char *phase)
{
    return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

static void test_generated(void **state)
{
    (void)state;
    static const char *const nss[] = {"vms", "other"};
    static const char *const names[] = {"vm0", "vm1", "vm2", "vm3"};
    srand(31);
    int populations = 0, truth_total = 0, shown_by_migrations = 0, undercounted = 0;
    for (int trial = 0; trial < 4000; trial++) {
        const char *cluster_default = strategies[rand() % 4];
        char kvtext[128];
        snprintf(kvtext, sizeof(kvtext), "{\"spec\":{\"configuration\":{%s%s%s}}}",
                 cluster_default ? "\"evictionStrategy\":\"" : "", cluster_default ? cluster_default : "",
                 cluster_default ? "\"" : "");
        cJSON *kv = parse(kvtext);
        size_t nvm = 1 + (size_t)(rand() % 8), nmigs = 0, nmore = 0;
        struct moves_migration migs[16];
        struct inflight_vm more[24];
        cJSON *objs[16];
        size_t nobjs = 0;
        bool seen[2][4] = {{false}};
        int truth = 0, by_migrations = 0;
        for (size_t v = 0; v < nvm; v++) {
            int ni = rand() % 2, vi = rand() % 4;
            if (seen[ni][vi])
                continue; /* one VM of a name per namespace */
            seen[ni][vi] = true;
            const char *ns = nss[ni], *name = names[vi];
            bool moving = false, migrating = false;
            for (int k = rand() % 3; k > 0; k--) {
                const char *ph = mphases[rand() % 6];
                migs[nmigs++] = (struct moves_migration){.ns = ns, .name = "m", .vmi = name, .phase = ph};
                migrating = migrating || !final(ph);
            }
            /* the VMI: mark none, empty, on its node, or on the node it left */
            int mark = rand() % 4;
            const char *vphase = vphases[rand() % 4], *strategy = strategies[rand() % 4];
            char text[512];
            snprintf(text, sizeof(text),
                     "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"},\"spec\":{%s%s%s},"
                     "\"status\":{\"nodeName\":\"w0\",\"phase\":\"%s\"%s%s%s}}",
                     ns, name, strategy ? "\"evictionStrategy\":\"" : "", strategy ? strategy : "",
                     strategy ? "\"" : "", vphase, mark ? ",\"evacuationNodeName\":\"" : "",
                     mark == 1   ? ""
                     : mark == 2 ? "w0"
                     : mark == 3 ? "w9"
                                 : "",
                     mark ? "\"" : "");
            objs[nobjs++] = parse(text);
            const char *effective = strategy ? strategy : cluster_default ? cluster_default : "None";
            bool waiting = mark == 2 && !final(vphase) && strcmp(effective, "External") != 0;
            /* its launcher pod */
            bool annotated = rand() % 3 == 0, launcher = rand() % 4 != 0;
            const char *pphase = pphases[rand() % 4];
            snprintf(text, sizeof(text),
                     "{\"metadata\":{\"name\":\"virt-launcher-%s\",\"namespace\":\"%s\",\"annotations\":{%s},"
                     "\"ownerReferences\":[{\"kind\":\"%s\",\"name\":\"%s\",\"controller\":true}]},"
                     "\"status\":{\"phase\":\"%s\"}}",
                     name, ns, annotated ? "\"descheduler.alpha.kubernetes.io/eviction-in-progress\":\"true\"" : "",
                     launcher ? "VirtualMachineInstance" : "ReplicaSet", launcher ? name : "rs", pphase);
            objs[nobjs++] = parse(text);
            bool evicted = annotated && launcher && !final(pphase);
            bool asked = rand() % 5 == 0;
            /* the edge's assembly */
            struct inflight_vm vm;
            if (inflight_vmi_waiting(objs[nobjs - 2], kv))
                more[nmore++] = (struct inflight_vm){ns, name};
            if (inflight_pod_vm(objs[nobjs - 1], &vm)) {
                assert_string_equal(vm.ns, ns);
                assert_string_equal(vm.name, name);
                more[nmore++] = vm;
            }
            if (asked)
                more[nmore++] = (struct inflight_vm){ns, name};
            assert_int_equal(inflight_vmi_waiting(objs[nobjs - 2], kv), waiting);
            moving = migrating || waiting || evicted || asked;
            truth += moving;
            by_migrations += migrating;
        }
        int n = inflight_count(migs, nmigs, more, nmore);
        assert_int_equal(n, truth);
        populations++;
        truth_total += truth, shown_by_migrations += by_migrations;
        undercounted += by_migrations < truth;
        for (size_t k = 0; k < nobjs; k++)
            cJSON_Delete(objs[k]);
        cJSON_Delete(kv);
    }
    print_message("in flight: %d populations, %d VMs moving, %d of them shown by an unfinished migration; %d "
                  "populations where the migrations alone undercount\n",
                  populations, truth_total, shown_by_migrations, undercounted);
    assert_true(truth_total > shown_by_migrations); /* the class reaches VMs no migration shows */
}

/* The case: one migration runs, a second VM waits out its evacuation backoff (its
 * last migration failed, it is still marked on its node, its pod not listed), and
 * maxInFlightMigrations is 2: no third VM may start. */
static void test_backoff_counts(void **state)
{
    (void)state;
    struct moves_migration migs[] = {
        {.ns = "vms", .name = "kubevirt-evacuation-a", .vmi = "a", .phase = "Running"},
        {.ns = "vms", .name = "kubevirt-evacuation-b", .vmi = "b", .phase = "Failed"},
    };
    cJSON *b = parse("{\"metadata\":{\"namespace\":\"vms\",\"name\":\"b\"},\"spec\":{\"evictionStrategy\":"
                     "\"LiveMigrate\"},\"status\":{\"nodeName\":\"w0\",\"evacuationNodeName\":\"w0\","
                     "\"phase\":\"Running\"}}");
    assert_true(inflight_vmi_waiting(b, NULL));
    struct inflight_vm more[] = {{"vms", "b"}, {"vms", "a"}}; /* a: also a move of ours, counted once */
    int n = inflight_count(migs, 2, more, 2);
    assert_int_equal(n, 2);
    struct evictor_limits l = {.max_total = 5,
                               .max_per_node = 5,
                               .max_per_namespace = 5,
                               .max_in_flight = 2,
                               .in_flight = n,
                               .per_cluster = 5,
                               .per_node = 2};
    struct evictor_tally t = {.node = "w1", .ns = "vms"};
    char why[128];
    assert_non_null(evictor_room(&l, &t, true, why, sizeof(why)));
    assert_string_equal(why, "2 live migrations in flight, maxInFlightMigrations is 2");
    cJSON_Delete(b);
}

/* Marks that do not count: External (another controller's signal), migrated off, finished. */
static void test_marks_that_do_not_count(void **state)
{
    (void)state;
    cJSON *ext = parse("{\"spec\":{\"evictionStrategy\":\"External\"},\"status\":{\"nodeName\":\"w0\","
                       "\"evacuationNodeName\":\"w0\",\"phase\":\"Running\"}}");
    cJSON *left = parse("{\"status\":{\"nodeName\":\"w1\",\"evacuationNodeName\":\"w0\",\"phase\":\"Running\"}}");
    cJSON *done = parse("{\"status\":{\"nodeName\":\"w0\",\"evacuationNodeName\":\"w0\",\"phase\":\"Failed\"}}");
    cJSON *kv_ext = parse("{\"spec\":{\"configuration\":{\"evictionStrategy\":\"External\"}}}");
    cJSON *plain = parse("{\"status\":{\"nodeName\":\"w0\",\"evacuationNodeName\":\"w0\",\"phase\":\"Running\"}}");
    assert_false(inflight_vmi_waiting(ext, NULL));
    assert_false(inflight_vmi_waiting(left, NULL));
    assert_false(inflight_vmi_waiting(done, NULL));
    assert_false(inflight_vmi_waiting(plain, kv_ext));
    assert_true(inflight_vmi_waiting(plain, NULL));
    assert_false(inflight_vmi_waiting(NULL, NULL));
    assert_int_equal(inflight_count(NULL, 0, NULL, 0), 0);
    cJSON_Delete(ext);
    cJSON_Delete(left);
    cJSON_Delete(done);
    cJSON_Delete(kv_ext);
    cJSON_Delete(plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_backoff_counts),
        cmocka_unit_test(test_marks_that_do_not_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
