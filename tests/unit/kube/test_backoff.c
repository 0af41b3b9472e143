/* Unit tests for kube_backoff: growth, cap, jitter range, reset after a stable period. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/backoff.h"

static void test_growth_and_cap(void **state)
{
    (void)state;
    struct kube_backoff b;
    kube_backoff_init(&b);
    uint64_t now = 1000;
    /* rnd 0: no jitter taken off: 800, 1600, ..., 25600, then capped at 30000. */
    uint64_t want[] = {800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        uint64_t d = kube_backoff_next(&b, now, 0.0);
        assert_int_equal(d, want[i]);
        now += d;
    }
    /* Many failures in a row never overflow and stay at the cap. */
    for (int i = 0; i < 200; i++) {
        uint64_t d = kube_backoff_next(&b, now, 0.0);
        assert_int_equal(d, 30000);
        now += d;
    }
}

static void test_jitter_range(void **state)
{
    (void)state;
    struct kube_backoff b;
    kube_backoff_init(&b);
    /* The largest share taken off is 25 %: first delay in [600, 800]. */
    assert_int_equal(kube_backoff_next(&b, 0, 0.5), 700);
    kube_backoff_reset(&b);
    uint64_t d = kube_backoff_next(&b, 0, 0.9999);
    assert_true(d >= 600 && d <= 800);
    /* Jitter applies at the cap too, so clients spread out. */
    kube_backoff_reset(&b);
    for (int i = 0; i < 10; i++)
        (void)kube_backoff_next(&b, 100 * (uint64_t)i, 0.0);
    assert_int_equal(kube_backoff_next(&b, 2000, 0.5), 26250);
    /* Out-of-range randomness is clamped. */
    assert_int_equal(kube_backoff_next(&b, 3000, -3.0), 30000);
    d = kube_backoff_next(&b, 4000, 7.0);
    assert_true(d >= 22500 && d < 22600);
}

static void test_reset_after_stable_connection(void **state)
{
    (void)state;
    struct kube_backoff b;
    kube_backoff_init(&b);
    uint64_t now = 0;
    for (int i = 0; i < 5; i++)
        now += kube_backoff_next(&b, now, 0.0);
    assert_int_equal(b.failures, 5);
    /* Up for less than 2 minutes: the next failure keeps growing. */
    kube_backoff_up(&b, now);
    now += 60000;
    assert_int_equal(kube_backoff_next(&b, now, 0.0), 25600);
    /* Up for 2 minutes: back to the start. */
    kube_backoff_up(&b, now);
    now += KUBE_BACKOFF_RESET_MS;
    assert_int_equal(kube_backoff_next(&b, now, 0.0), 800);
    assert_int_equal(kube_backoff_next(&b, now + 800, 0.0), 1600);
}

static void test_reset_after_quiet_spell(void **state)
{
    (void)state;
    struct kube_backoff b;
    kube_backoff_init(&b);
    assert_int_equal(kube_backoff_next(&b, 0, 0.0), 800);
    assert_int_equal(kube_backoff_next(&b, 1000, 0.0), 1600);
    /* No connection recorded, but the last failure is 2 minutes ago. */
    assert_int_equal(kube_backoff_next(&b, 1000 + KUBE_BACKOFF_RESET_MS, 0.0), 800);
}

static void test_short_lived_connections_keep_growing(void **state)
{
    (void)state;
    struct kube_backoff b;
    kube_backoff_init(&b);
    uint64_t now = 0, d = 0;
    /* A server that accepts and drops each stream after a second. */
    for (int i = 0; i < 8; i++) {
        d = kube_backoff_next(&b, now, 0.0);
        now += d;
        kube_backoff_up(&b, now);
        now += 1000;
    }
    assert_int_equal(d, 30000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_growth_and_cap),
        cmocka_unit_test(test_jitter_range),
        cmocka_unit_test(test_reset_after_stable_connection),
        cmocka_unit_test(test_reset_after_quiet_spell),
        cmocka_unit_test(test_short_lived_connections_keep_growing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
