/* Unit tests of controller/reconcile/move/moves: reading migrations, counting them for the limits,
 * following moves to their end, pruning, and status.moves through the api codec. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/json.h"
#include "reconcile/move/moves.h"
#include "testutil.h"

#define T0 1714557600 /* 2024-05-01T10:00:00Z */

static void test_read(void **state)
{
    (void)state;
    cJSON *j = parse("{\"metadata\":{\"name\":\"kubevirt-evacuation-abcde\",\"namespace\":\"vms\","
                     "\"creationTimestamp\":\"2024-05-01T10:00:05Z\","
                     "\"annotations\":{\"kubevirt.io/evacuationMigration\":\"worker-0\"}},"
                     "\"spec\":{\"vmiName\":\"vm\"},"
                     "\"status\":{\"phase\":\"Succeeded\",\"migrationState\":{\"sourceNode\":\"worker-9\","
                     "\"targetNode\":\"worker-2\",\"startTimestamp\":\"2024-05-01T10:00:12Z\","
                     "\"endTimestamp\":\"2024-05-01T10:00:30Z\"}}}");
    struct moves_migration m;
    assert_int_equal(moves_migration_read(j, &m), 0);
    assert_string_equal(m.name, "kubevirt-evacuation-abcde");
    assert_string_equal(m.vmi, "vm");
    assert_string_equal(m.source, "worker-0"); /* the annotation wins */
    assert_string_equal(m.target, "worker-2");
    assert_true(m.evacuation);
    assert_int_equal(m.created, T0 + 5);
    assert_int_equal(m.end, T0 + 30);
    assert_int_equal(m.start, T0 + 12);
    cJSON_Delete(j);

    /* no state yet, end from the phase transitions, no annotation */
    j = parse("{\"metadata\":{\"name\":\"m\",\"namespace\":\"vms\"},\"spec\":{\"vmiName\":\"vm\"},"
              "\"status\":{\"phase\":\"Failed\",\"phaseTransitionTimestamps\":[{\"phase\":\"Pending\","
              "\"phaseTransitionTimestamp\":\"2024-05-01T10:00:00Z\"},{\"phase\":\"Failed\","
              "\"phaseTransitionTimestamp\":\"2024-05-01T10:01:00Z\"}]}}");
    assert_int_equal(moves_migration_read(j, &m), 0);
    assert_false(m.evacuation);
    assert_null(m.source);
    assert_null(m.target);
    assert_int_equal(m.end, T0 + 60);
    cJSON_Delete(j);

    j = parse("{\"metadata\":{\"name\":\"m\"},\"spec\":{}}");
    assert_int_equal(moves_migration_read(j, &m), -1);
    assert_string_equal(m.phase, "");
    cJSON_Delete(j);
}

static void test_phases_and_counts(void **state)
{
    (void)state;
    assert_true(moves_phase_final("Succeeded"));
    assert_true(moves_phase_final("Failed"));
    assert_false(moves_phase_final("Running"));
    assert_false(moves_phase_final(""));
    assert_false(moves_phase_running(""));
    assert_false(moves_phase_running("Pending"));
    assert_true(moves_phase_running("Scheduling"));
    assert_true(moves_phase_running("Running"));
    assert_false(moves_phase_running("Succeeded"));
    struct moves_migration migs[] = {
        {.name = "a", .vmi = "1", .phase = "Running", .source = "w0"},
        {.name = "b", .vmi = "2", .phase = "Scheduling", .source = "w0"},
        {.name = "c", .vmi = "3", .phase = "Pending", .source = "w1"},
        {.name = "d", .vmi = "4", .phase = "Succeeded", .source = "w1"},
        {.name = "e", .vmi = "5", .phase = "", .source = NULL},
        {.name = "f", .vmi = "6", .phase = "TargetReady", .source = "elsewhere"},
    };
    const char *nodes[] = {"w0", "w1", "w2"};
    int out[3] = {9, 9, 9};
    struct moves_counts c;
    moves_count(migs, 6, nodes, 3, &c, out);
    assert_int_equal(c.running, 3);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], 0);
}

static struct api_move move(const char *name, int64_t time, enum api_move_phase phase)
{
    return (struct api_move){
        .kind = strdup("VirtualMachineInstance"),
        .ns = strdup("vms"),
        .name = strdup(name),
        .pod = strdup("virt-launcher-x"),
        .source_node = strdup("w0"),
        .destination_node = strdup("w1"),
        .time = time,
        .phase = phase,
    };
}

static struct moves_migration mig(const char *name, const char *vmi, const char *phase, int64_t created, int64_t end)
{
    return (struct moves_migration){.ns = "vms",
                                    .name = name,
                                    .vmi = vmi,
                                    .phase = phase,
                                    .source = "w0",
                                    .target = "w2",
                                    .evacuation = true,
                                    .created = created,
                                    .end = end};
}

static size_t count_kind(const struct moves_event *ev, size_t n, enum moves_event_kind k)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ev[i].kind == k;
    return c;
}

static void test_follow_success(void **state)
{
    (void)state;
    struct api_move mv[2] = {move("vm", T0, API_MOVE_REQUESTED), move("other", T0, API_MOVE_WOULD_MOVE)};
    struct moves_event *ev = NULL;
    size_t nev = 0;
    /* no migration yet: nothing changes */
    assert_int_equal(moves_follow(mv, 2, NULL, 0, &ev, &nev), 0);
    assert_int_equal(nev, 0);
    assert_int_equal(mv[0].phase, API_MOVE_REQUESTED);
    /* an old migration of the same VMI (before the move) and another VMI's do not count */
    struct moves_migration m1[] = {mig("old", "vm", "Failed", T0 - 600, T0 - 500), mig("x", "other", "Running", T0, 0),
                                   mig("new", "vm", "Pending", T0 + 2, 0)};
    assert_int_equal(moves_follow(mv, 2, m1, 3, &ev, &nev), 0);
    assert_int_equal(mv[0].phase, API_MOVE_MIGRATING);
    assert_string_equal(mv[0].migration, "new");
    assert_int_equal(mv[0].failures, 0);
    assert_int_equal(nev, 1);
    assert_int_equal(ev[0].kind, MOVES_STARTED);
    assert_int_equal(mv[1].phase, API_MOVE_WOULD_MOVE); /* DryRun moves are not followed */
    /* running: no new event */
    m1[2].phase = "Running";
    assert_int_equal(moves_follow(mv, 2, m1, 3, &ev, &nev), 0);
    assert_int_equal(nev, 1);
    /* done: it took its migrationState's start to end, not the wait before it */
    m1[2].phase = "Succeeded";
    m1[2].start = T0 + 9;
    m1[2].end = T0 + 20;
    assert_int_equal(moves_follow(mv, 2, m1, 3, &ev, &nev), 0);
    assert_true(mv[0].cost.timed);
    assert_int_equal(mv[0].cost.duration_s, 11);
    assert_int_equal(nev, 2);
    assert_int_equal(ev[1].kind, MOVES_SUCCEEDED);
    assert_string_equal(ev[1].migration, "new");
    assert_int_equal(mv[0].phase, API_MOVE_SUCCEEDED);
    assert_int_equal(mv[0].end_time, T0 + 20);
    assert_string_equal(mv[0].target_node, "w2");
    /* final: no more events however often it is looked at */
    assert_int_equal(moves_follow(mv, 2, m1, 3, &ev, &nev), 0);
    assert_int_equal(nev, 2);
    free(ev);
    api_move_free(&mv[0]);
    api_move_free(&mv[1]);
}

static void test_follow_failures_and_retries(void **state)
{
    (void)state;
    struct api_move mv[1] = {move("vm", T0, API_MOVE_REQUESTED)};
    struct moves_event *ev = NULL;
    size_t nev = 0;
    struct moves_migration m[3] = {mig("m1", "vm", "Failed", T0 + 1, T0 + 10),
                                   mig("m2", "vm", "Failed", T0 + 40, T0 + 50), mig("m3", "vm", "Running", T0 + 90, 0)};
    /* first failure */
    assert_int_equal(moves_follow(mv, 1, m, 1, &ev, &nev), 0);
    assert_int_equal(mv[0].phase, API_MOVE_FAILED);
    assert_int_equal(mv[0].failures, 1);
    assert_int_equal(count_kind(ev, nev, MOVES_FAILED), 1);
    assert_int_equal(mv[0].end_time, T0 + 10);
    /* looked at again: the same failure is not counted twice */
    assert_int_equal(moves_follow(mv, 1, m, 1, &ev, &nev), 0);
    assert_int_equal(count_kind(ev, nev, MOVES_FAILED), 1);
    /* KubeVirt retried (and failed again), then a third runs: Migrating, two failures, two events */
    assert_int_equal(moves_follow(mv, 1, m, 3, &ev, &nev), 0);
    assert_int_equal(mv[0].failures, 2);
    assert_int_equal(count_kind(ev, nev, MOVES_FAILED), 2);
    assert_string_equal(ev[nev - 2].migration, "m2");
    assert_int_equal(mv[0].phase, API_MOVE_MIGRATING);
    assert_int_equal(mv[0].end_time, 0);
    /* ... and it succeeds, with no start known: not timed */
    m[2].phase = "Succeeded";
    assert_int_equal(moves_follow(mv, 1, m, 3, &ev, &nev), 0);
    assert_int_equal(mv[0].phase, API_MOVE_SUCCEEDED);
    assert_false(mv[0].cost.timed);
    assert_int_equal(count_kind(ev, nev, MOVES_SUCCEEDED), 1);
    assert_int_equal(mv[0].failures, 2);
    /* migrations garbage-collected afterwards: nothing changes */
    assert_int_equal(moves_follow(mv, 1, NULL, 0, &ev, &nev), 0);
    assert_int_equal(mv[0].phase, API_MOVE_SUCCEEDED);
    /* a migration without the evacuation annotation (someone's own) is not ours */
    struct api_move mv2[1] = {move("vm2", T0, API_MOVE_REQUESTED)};
    struct moves_migration own = mig("u", "vm2", "Running", T0 + 1, 0);
    own.evacuation = false;
    assert_int_equal(moves_follow(mv2, 1, &own, 1, &ev, &nev), 0);
    assert_int_equal(mv2[0].phase, API_MOVE_REQUESTED);
    free(ev);
    api_move_free(&mv[0]);
    api_move_free(&mv2[0]);
}

static void test_prune(void **state)
{
    (void)state;
    struct api_status st = {0};
    for (int i = 0; i < 60; i++) {
        struct api_move *m = api_status_add_move(&st);
        *m = move("vm", T0 + i, i == 1 ? API_MOVE_MIGRATING : API_MOVE_SUCCEEDED);
        m->end_time = T0 + i + 5;
    }
    /* a day later: all old, but the running one stays */
    moves_prune(&st, T0 + 86400 + 100, 86400);
    assert_int_equal(st.nmoves, 1);
    assert_int_equal(st.moves[0].phase, API_MOVE_MIGRATING);
    for (int i = 0; i < 60; i++) {
        struct api_move *m = api_status_add_move(&st);
        *m = move("vm", T0 + 100 + i, API_MOVE_EVICTED);
    }
    moves_prune(&st, T0 + 200, 86400);
    assert_int_equal(st.nmoves, API_STATUS_MAX_MOVES);
    assert_int_equal(st.moves[API_STATUS_MAX_MOVES - 1].time, T0 + 159); /* the newest are kept */
    api_status_free(&st);
}

static void test_status_codec(void **state)
{
    (void)state;
    struct api_status st = {0}, back = {0};
    struct api_move *m = api_status_add_move(&st);
    *m = move("vm", T0, API_MOVE_FAILED);
    m->failures = 2;
    m->end_time = T0 + 30;
    m->migration = strdup("kubevirt-evacuation-abcde");
    m->cooldown_until = T0 + 1800;
    m = api_status_add_move(&st);
    *m = move("web", T0 + 60, API_MOVE_WOULD_MOVE);
    free(m->kind);
    m->kind = strdup("ReplicaSet");
    cJSON *j = api_status_encode(&st);
    cJSON *mv = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(mv, "phase")), "Failed");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(mv, "time")), "2024-05-01T10:00:00Z");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(mv, "sourceNode")), "w0");
    assert_int_equal(cJSON_GetObjectItem(mv, "failures")->valueint, 2);
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 1), "failures"));
    struct api_errors errs = {0}, warns = {0};
    assert_int_equal(api_status_decode(j, &back, &errs, &warns), 0);
    assert_int_equal(errs.n, 0);
    assert_int_equal(warns.n, 0);
    assert_int_equal(back.nmoves, 2);
    assert_false(api_status_changed(&st, &back, NULL));
    assert_string_equal(back.moves[1].kind, "ReplicaSet");
    assert_int_equal(back.moves[0].cooldown_until, T0 + 1800);
    /* a change of phase, or of order, is a change */
    back.moves[0].phase = API_MOVE_SUCCEEDED;
    assert_true(api_status_changed(&st, &back, NULL));
    back.moves[0].phase = API_MOVE_FAILED;
    struct api_move tmp = back.moves[0];
    back.moves[0] = back.moves[1];
    back.moves[1] = tmp;
    assert_true(api_status_changed(&st, &back, NULL));
    /* a bad phase is an error that names the field */
    cJSON *bad = parse("{\"moves\":[{\"name\":\"x\",\"sourceNode\":\"w0\",\"phase\":\"Teleported\"}]}");
    struct api_status b2 = {0};
    assert_int_equal(api_status_decode(bad, &b2, &errs, &warns), -1);
    assert_non_null(strstr(errs.v[0].field, "status.moves[0].phase"));
    cJSON_Delete(bad);
    cJSON_Delete(j);
    api_status_free(&st);
    api_status_free(&back);
    api_status_free(&b2);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

static void test_kubevirt_limits(void **state)
{
    (void)state;
    int c = -1, n = -1;
    cJSON *kv = cJSON_Parse("{\"spec\":{\"configuration\":{\"migrations\":{\"parallelMigrationsPerCluster\":3,"
                            "\"parallelOutboundMigrationsPerNode\":1}}}}");
    moves_kubevirt_limits(kv, &c, &n);
    assert_int_equal(c, 3);
    assert_int_equal(n, 1);
    cJSON_Delete(kv);
    /* unset, zero, fractional, a string: 0, the planner's KubeVirt default */
    kv = cJSON_Parse("{\"spec\":{\"configuration\":{\"migrations\":{\"parallelMigrationsPerCluster\":0.5,"
                     "\"parallelOutboundMigrationsPerNode\":\"2\"}}}}");
    moves_kubevirt_limits(kv, &c, &n);
    assert_int_equal(c, 0);
    assert_int_equal(n, 0);
    cJSON_Delete(kv);
    moves_kubevirt_limits(NULL, &c, &n);
    assert_int_equal(c, 0);
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_phases_and_counts),
        cmocka_unit_test(test_follow_success),
        cmocka_unit_test(test_follow_failures_and_retries),
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_status_codec),
        cmocka_unit_test(test_kubevirt_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
