/* Unit tests of controller/reconcile/move/cooldown: the hold after a move, doubling on repeats
 * inside the history window, capped; restore and prune; all on an injected clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "reconcile/move/cooldown.h"

#define MIN (60 * 1000LL)

static int64_t fake_now;
static int64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now;
}

static struct cooldown *make(int64_t initial, int64_t max, int64_t history)
{
    struct cooldown_params p = {initial, max, history};
    struct cooldown_clock c = {fake_clock, NULL};
    struct cooldown *cd = cooldown_new(&p, &c);
    assert_non_null(cd);
    return cd;
}

static void test_hold_doubles_and_caps(void **state)
{
    (void)state;
    struct cooldown_params p = {10 * MIN, 120 * MIN, 24 * 60 * MIN};
    assert_int_equal(cooldown_hold_ms(&p, 1), 10 * MIN);
    assert_int_equal(cooldown_hold_ms(&p, 2), 20 * MIN);
    assert_int_equal(cooldown_hold_ms(&p, 3), 40 * MIN);
    assert_int_equal(cooldown_hold_ms(&p, 4), 80 * MIN);
    assert_int_equal(cooldown_hold_ms(&p, 5), 120 * MIN);
    assert_int_equal(cooldown_hold_ms(&p, 40), 120 * MIN); /* no overflow however often */
    struct cooldown_params q = {10 * MIN, 10 * MIN, 60 * MIN};
    assert_int_equal(cooldown_hold_ms(&q, 3), 10 * MIN);
}

static void test_unknown_workload_is_free(void **state)
{
    (void)state;
    fake_now = 1000000;
    struct cooldown *c = make(10 * MIN, 120 * MIN, 24 * 60 * MIN);
    assert_int_equal(cooldown_until(c, "VirtualMachineInstance ns/a"), 0);
    assert_int_equal(cooldown_moves(c, "VirtualMachineInstance ns/a"), 0);
    cooldown_free(c);
}

static void test_repeats_inside_history_double(void **state)
{
    (void)state;
    fake_now = 1000 * MIN;
    const char *k = "VirtualMachineInstance ns/vm";
    struct cooldown *c = make(10 * MIN, 120 * MIN, 24 * 60 * MIN);
    assert_int_equal(cooldown_record(c, k), 0);
    assert_int_equal(cooldown_until(c, k), 1010 * MIN);
    fake_now += 9 * MIN;
    assert_true(cooldown_until(c, k) > fake_now); /* still held */
    fake_now = 1010 * MIN;
    assert_int_equal(cooldown_until(c, k), 0);  /* free exactly at the end */
    assert_int_equal(cooldown_record(c, k), 0); /* second move: 20 min */
    assert_int_equal(cooldown_moves(c, k), 2);
    assert_int_equal(cooldown_until(c, k), 1030 * MIN);
    fake_now = 1030 * MIN;
    cooldown_record(c, k); /* third: 40 */
    assert_int_equal(cooldown_until(c, k), 1070 * MIN);
    fake_now = 1070 * MIN;
    cooldown_record(c, k); /* fourth: 80 */
    assert_int_equal(cooldown_until(c, k), 1150 * MIN);
    fake_now = 1150 * MIN;
    cooldown_record(c, k); /* fifth: capped at 120 */
    assert_int_equal(cooldown_until(c, k), 1270 * MIN);
    /* another workload is not affected */
    assert_int_equal(cooldown_until(c, "VirtualMachineInstance ns/other"), 0);
    cooldown_free(c);
}

static void test_history_window_forgets(void **state)
{
    (void)state;
    fake_now = 0;
    const char *k = "ReplicaSet ns/web";
    struct cooldown *c = make(10 * MIN, 120 * MIN, 60 * MIN);
    cooldown_record(c, k);
    fake_now = 30 * MIN;
    cooldown_record(c, k); /* 2 in the window: 20 min */
    assert_int_equal(cooldown_until(c, k), 50 * MIN);
    fake_now = 100 * MIN; /* both out of the 60-min window */
    assert_int_equal(cooldown_moves(c, k), 0);
    cooldown_record(c, k); /* counts as a first move again */
    assert_int_equal(cooldown_until(c, k), 110 * MIN);
    cooldown_prune(c);
    assert_int_equal(cooldown_size(c), 1);
    fake_now = 200 * MIN;
    cooldown_prune(c);
    assert_int_equal(cooldown_size(c), 0);
    assert_int_equal(cooldown_until(c, k), 0);
    cooldown_free(c);
}

static void test_restore_out_of_order_and_params_change(void **state)
{
    (void)state;
    fake_now = 100 * MIN;
    const char *k = "VirtualMachineInstance ns/vm";
    struct cooldown *c = make(10 * MIN, 120 * MIN, 24 * 60 * MIN);
    /* read back from status after a restart, newest first */
    cooldown_record_at(c, k, 95 * MIN);
    cooldown_record_at(c, k, 80 * MIN);
    assert_int_equal(cooldown_moves(c, k), 2);
    assert_int_equal(cooldown_until(c, k), 115 * MIN); /* from the latest, doubled */
    struct cooldown_params p = {5 * MIN, 5 * MIN, 24 * 60 * MIN};
    cooldown_set_params(c, &p);
    assert_int_equal(cooldown_until(c, k), 0); /* 95 + 5 <= 100 */
    cooldown_free(c);
}

static void test_history_is_bounded(void **state)
{
    (void)state;
    fake_now = 0;
    const char *k = "VirtualMachineInstance ns/flappy";
    struct cooldown *c = make(1 * MIN, 120 * MIN, 10000 * MIN);
    for (int i = 0; i < 3 * COOLDOWN_MAX_HISTORY; i++) {
        fake_now += MIN;
        assert_int_equal(cooldown_record(c, k), 0);
    }
    assert_int_equal(cooldown_moves(c, k), COOLDOWN_MAX_HISTORY);
    assert_int_equal(cooldown_until(c, k), fake_now + 120 * MIN);
    cooldown_free(c);
}

static void test_many_workloads_sorted_lookup(void **state)
{
    (void)state;
    fake_now = 0;
    struct cooldown *c = make(10 * MIN, 120 * MIN, 60 * MIN);
    char key[32];
    for (int i = 99; i >= 0; i--) {
        snprintf(key, sizeof(key), "Pod ns/p-%03d", i);
        fake_now = i * 1000;
        cooldown_record(c, key);
    }
    assert_int_equal(cooldown_size(c), 100);
    fake_now = 0;
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "Pod ns/p-%03d", i);
        assert_int_equal(cooldown_until(c, key), i * 1000 + 10 * MIN);
    }
    cooldown_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hold_doubles_and_caps),
        cmocka_unit_test(test_unknown_workload_is_free),
        cmocka_unit_test(test_repeats_inside_history_double),
        cmocka_unit_test(test_history_window_forgets),
        cmocka_unit_test(test_restore_out_of_order_and_params_change),
        cmocka_unit_test(test_history_is_bounded),
        cmocka_unit_test(test_many_workloads_sorted_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
