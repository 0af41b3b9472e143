/* Unit tests of controller/reconcile/move/history: moves recorded with their cooldowns and
 * counters, read back from a status once, migrations' outcomes, moves under way, DryRun's
 * virtual moves, and the status filled from it all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/move/history.h"

#define T0 1700000000000LL /* ms */

static const struct cooldown_params cp = {600000, 7200000, 86400000};

static struct history *fresh(void)
{
    struct history *h = history_new();
    assert_non_null(h);
    struct api_status empty = {0};
    history_begin(h, &cp, T0, &empty);
    return h;
}

static void test_key(void **state)
{
    (void)state;
    char *k = history_key("VirtualMachineInstance", "vms", "vm-1");
    assert_string_equal(k, "VirtualMachineInstance vms/vm-1");
    free(k);
    k = history_key(NULL, NULL, "p");
    assert_string_equal(k, "Pod /p");
    free(k);
}

static void test_record(void **state)
{
    (void)state;
    struct history *h = fresh();
    struct history_entry e = {"ReplicaSet apps/web", "ReplicaSet", "apps", "web", "web-abc", "w0", "w1",
                              API_MOVE_EVICTED};
    struct api_move *m = history_record(h, &e, T0);
    assert_non_null(m);
    assert_string_equal(m->name, "web");
    assert_string_equal(m->pod, "web-abc");
    assert_int_equal(m->time, T0 / 1000);
    assert_int_equal(m->end_time, T0 / 1000); /* an eviction is over as far as we know */
    assert_int_equal(m->cooldown_until, (T0 + 600000) / 1000);
    assert_int_equal(h->status.summary.evictions, 1);
    assert_int_equal(history_node(h, "w0")->evictions, 1);
    assert_true(history_cooling(h, "ReplicaSet apps/web", false));
    assert_false(history_cooling(h, "ReplicaSet apps/web", true)); /* DryRun keeps its own */
    assert_false(history_move_running(h, "ReplicaSet apps/web", T0));

    /* a VM's move asked for: under way until a migration answers, or ten minutes */
    struct history_entry vm = {"VirtualMachineInstance vms/vm",
                               "VirtualMachineInstance",
                               "vms",
                               "vm",
                               "virt-launcher-vm-x",
                               "w0",
                               "w2",
                               API_MOVE_REQUESTED};
    m = history_record(h, &vm, T0);
    assert_int_equal(m->end_time, 0);
    assert_int_equal(h->status.summary.evictions, 1); /* a migration asked is no eviction */
    assert_int_equal(history_node(h, "w0")->evictions, 1);
    assert_true(history_move_running(h, "VirtualMachineInstance vms/vm", T0 + 1000));
    assert_int_equal(history_running(h, T0 + 1000), 1);
    assert_int_equal(history_running(h, T0 + HISTORY_REQUESTED_IN_FLIGHT_MS), 0);
    history_settle(h, "w0", "w2", T0 + 5000);
    assert_int_equal(history_node(h, "w0")->settle_until_ms, T0 + 5000);
    assert_int_equal(history_node(h, "w2")->settle_until_ms, T0 + 5000);

    /* its migration fails: counted, and the cooldown grows (a repeat move) */
    history_failed(h, m);
    assert_int_equal(h->status.summary.migrations_failed, 1);
    assert_int_equal(history_node(h, "w0")->failed, 1);
    assert_int_equal(m->cooldown_until, (T0 + 1200000) / 1000);
    history_succeeded(h, m);
    assert_int_equal(h->status.summary.migrations_succeeded, 1);
    assert_int_equal(history_node(h, "w0")->succeeded, 1);

    /* eight targeted live migrations more, all succeeded: evictions stay as they were */
    for (int i = 0; i < 8; i++) {
        char key[64], name[16];
        snprintf(name, sizeof(name), "vm%d", i);
        snprintf(key, sizeof(key), "VirtualMachineInstance vms/%s", name);
        struct history_entry more = {key,  "VirtualMachineInstance", "vms", name, "launcher", "w3",
                                     "w4", API_MOVE_REQUESTED};
        history_succeeded(h, history_record(h, &more, T0));
    }
    assert_int_equal(h->status.summary.evictions, 1);
    assert_int_equal(h->status.summary.migrations_succeeded, 9);
    assert_int_equal(history_node(h, "w3")->evictions, 0);
    assert_int_equal(history_node(h, "w3")->succeeded, 8);
    /* DryRun's would-be moves count as the evictions they stand for */
    struct history_entry dry = {"ReplicaSet apps/dry", "ReplicaSet", "apps", "dry", "dry-1", "w0", "w1",
                                API_MOVE_WOULD_MOVE};
    assert_non_null(history_record(h, &dry, T0));
    assert_int_equal(h->status.summary.evictions, 2);

    /* refusals are held apart */
    assert_false(history_refused(h, "Pod apps/x"));
    history_refusal(h, "Pod apps/x");
    assert_true(history_refused(h, "Pod apps/x"));
    assert_false(history_cooling(h, "Pod apps/x", false));
    history_free(h);
}

static void test_load_once(void **state)
{
    (void)state;
    struct api_status st = {0};
    st.summary.evictions = 7;
    struct api_move *m = api_status_add_move(&st);
    m->kind = strdup("VirtualMachineInstance"), m->ns = strdup("vms"), m->name = strdup("vm");
    m->source_node = strdup("w0"), m->phase = API_MOVE_FAILED, m->time = T0 / 1000 - 60, m->failures = 1;
    m->end_time = T0 / 1000 - 30;
    struct api_move *d = api_status_add_move(&st);
    d->kind = strdup("Pod"), d->ns = strdup("a"), d->name = strdup("p");
    d->source_node = strdup("w1"), d->phase = API_MOVE_WOULD_MOVE, d->time = T0 / 1000 - 60;
    struct api_node_status *n = api_status_add_node(&st, "w0");
    assert_non_null(n);
    n->evictions = 3, n->migrations.failed = 1;

    struct history *h = history_new();
    history_begin(h, &cp, T0, &st);
    assert_true(h->loaded);
    assert_int_equal(h->status.nmoves, 2);
    assert_int_equal(h->status.summary.evictions, 7);
    assert_int_equal(history_node(h, "w0")->evictions, 3);
    /* a move and a failure within the window: the hold doubled, from the failure */
    assert_true(history_cooling(h, "VirtualMachineInstance vms/vm", false));
    assert_false(history_cooling(h, "VirtualMachineInstance vms/vm", true));
    assert_true(history_cooling(h, "Pod a/p", true)); /* a would-be move cools DryRun only */
    assert_false(history_cooling(h, "Pod a/p", false));
    st.summary.evictions = 99; /* read once: a later status does not reset what it counts */
    history_begin(h, &cp, T0 + 1000, &st);
    assert_int_equal(h->status.summary.evictions, 7);
    assert_int_equal(h->status.nmoves, 2);
    history_free(h);
    api_status_free(&st);
}

static void test_virtual(void **state)
{
    (void)state;
    struct history *h = fresh();
    struct history_entry e = {"Pod a/p", NULL, "a", NULL, "p", "w0", "w1", API_MOVE_WOULD_MOVE};
    assert_non_null(history_record(h, &e, T0));
    const double req[2] = {0.5, 1024};
    assert_int_equal(history_add_virtual(h, "Pod a/p", "w0", "w1", 1.5, req), 0);
    assert_int_equal(history_add_virtual(h, "Pod a/q", "w0", "w1", 1.0, req), 0); /* no cooldown: dropped */
    history_prune_virtual(h);
    assert_int_equal(h->nvirt, 1);
    assert_string_equal(h->virt[0].key, "Pod a/p");
    assert_float_equal(h->virt[0].demand, 1.5, 1e-9);
    history_settle(h, "w0", "w1", T0 + 1000);
    history_begin(h, &cp, T0 + 600001, &(struct api_status){0}); /* its DryRun cooldown ended */
    history_prune_virtual(h);
    assert_int_equal(h->nvirt, 0);
    assert_int_equal(history_add_virtual(h, "Pod a/p", "w0", "w1", 1.5, req), 0);
    history_forget_dry_run(h);
    assert_int_equal(h->nvirt, 0);
    assert_int_equal(history_node(h, "w0")->settle_until_ms, 0);
    history_free(h);
}

static void test_fill_status(void **state)
{
    (void)state;
    struct history *h = fresh();
    struct history_entry vm = {"VirtualMachineInstance vms/vm",
                               "VirtualMachineInstance",
                               "vms",
                               "vm",
                               "launcher",
                               "w0",
                               "w1",
                               API_MOVE_REQUESTED};
    assert_non_null(history_record(h, &vm, T0));
    struct history_entry pod = {"ReplicaSet a/r", "ReplicaSet", "a", "r", "r-1", "w1", "w2", API_MOVE_EVICTED};
    assert_non_null(history_record(h, &pod, T0));
    struct api_status next = {0};
    assert_non_null(api_status_add_node(&next, "w0"));
    assert_non_null(api_status_add_node(&next, "w1"));
    history_fill_status(h, T0 + 1000, cp.history_ms, &next);
    assert_int_equal(next.nmoves, 2);
    assert_string_equal(next.moves[0].name, "vm");
    assert_int_equal(next.summary.evictions, 1); /* the pod's; the VM's move is a migration */
    assert_int_equal(next.summary.migrations_in_flight, 1);
    assert_int_equal(next.nodes[0].evictions, 0);
    assert_int_equal(next.nodes[0].migrations.in_flight, 1);
    assert_int_equal(next.nodes[1].evictions, 1);
    assert_int_equal(next.nodes[1].migrations.in_flight, 0);
    /* a day later the finished eviction is gone from the history, the asked one too */
    history_fill_status(h, T0 + cp.history_ms + 2000000, cp.history_ms, &next);
    assert_int_equal(next.nmoves, 0);
    api_status_free(&next);
    history_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key),     cmocka_unit_test(test_record),      cmocka_unit_test(test_load_once),
        cmocka_unit_test(test_virtual), cmocka_unit_test(test_fill_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
