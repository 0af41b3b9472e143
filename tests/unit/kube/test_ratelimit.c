/* Unit tests for kube_ratelimit: burst, steady rate, refill cap, unlimited, requests in flight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/ratelimit.h"

static void test_burst_then_rate(void **state)
{
    (void)state;
    struct kube_ratelimit rl;
    kube_ratelimit_init(&rl, 5.0, 3, 1000);
    /* the burst goes through at once */
    for (int i = 0; i < 3; i++)
        assert_int_equal(kube_ratelimit_reserve(&rl, 1000), 0);
    /* then one token per 200 ms; reservations queue up */
    assert_int_equal(kube_ratelimit_reserve(&rl, 1000), 200);
    assert_int_equal(kube_ratelimit_reserve(&rl, 1000), 400);
    /* 400 ms later both queued tokens are paid: the next waits 200 */
    assert_int_equal(kube_ratelimit_reserve(&rl, 1400), 200);
}

static void test_refill_capped_at_burst(void **state)
{
    (void)state;
    struct kube_ratelimit rl;
    kube_ratelimit_init(&rl, 10.0, 2, 0);
    assert_int_equal(kube_ratelimit_reserve(&rl, 0), 0);
    assert_int_equal(kube_ratelimit_reserve(&rl, 0), 0);
    /* an hour idle refills only up to the burst */
    assert_int_equal(kube_ratelimit_reserve(&rl, 3600000), 0);
    assert_int_equal(kube_ratelimit_reserve(&rl, 3600000), 0);
    assert_int_equal(kube_ratelimit_reserve(&rl, 3600000), 100);
}

static void test_try(void **state)
{
    (void)state;
    struct kube_ratelimit rl;
    kube_ratelimit_init(&rl, 1.0, 1, 0);
    assert_true(kube_ratelimit_try(&rl, 0));
    assert_false(kube_ratelimit_try(&rl, 500));
    assert_true(kube_ratelimit_try(&rl, 1000));
    /* a fractional qps rounds waits up, never down */
    kube_ratelimit_init(&rl, 3.0, 1, 0);
    assert_int_equal(kube_ratelimit_reserve(&rl, 0), 0);
    assert_int_equal(kube_ratelimit_reserve(&rl, 0), 334);
}

static void test_unlimited(void **state)
{
    (void)state;
    struct kube_ratelimit rl;
    kube_ratelimit_init(&rl, 0, 0, 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(kube_ratelimit_reserve(&rl, 0), 0);
    assert_true(kube_ratelimit_try(&rl, 0));
}

/* In flight: the budget's rate times a request's time, between the bounds. */
static void test_in_flight(void **state)
{
    (void)state;
    assert_int_equal(kube_ratelimit_in_flight(50, 0, 8, 24), 8);     /* no latency known yet */
    assert_int_equal(kube_ratelimit_in_flight(50, 40, 8, 24), 8);    /* 2 would do: the floor */
    assert_int_equal(kube_ratelimit_in_flight(50, 160, 8, 24), 8);   /* exactly 8 */
    assert_int_equal(kube_ratelimit_in_flight(50, 161, 8, 24), 9);   /* rounded up */
    assert_int_equal(kube_ratelimit_in_flight(50, 300, 8, 24), 15);  /* 15 a 300 ms each: 50 a second */
    assert_int_equal(kube_ratelimit_in_flight(50, 2000, 8, 24), 24); /* a slow server: the cap */
    assert_int_equal(kube_ratelimit_in_flight(5, 1000, 1, 24), 5);
    assert_int_equal(kube_ratelimit_in_flight(0, 10, 8, 24), 24); /* unlimited */
    assert_int_equal(kube_ratelimit_in_flight(50, 1e300, 8, 24), 24);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_rate),
        cmocka_unit_test(test_refill_capped_at_burst),
        cmocka_unit_test(test_try),
        cmocka_unit_test(test_unlimited),
        cmocka_unit_test(test_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
