/* Unit tests for the event aggregation bookkeeping (kube_event_agg_*). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kube/events.h"

static char *key(const char *reason, const char *note)
{
    struct kube_event_ref node = {"v1", "Node", "", "worker-0", "uid-1"};
    struct kube_event_occurrence what = {"Normal", reason, "Taint", note};
    return kube_event_key(&node, &what);
}

static void test_first_creates_repeats_patch_then_defer(void **state)
{
    (void)state;
    struct kube_event_agg *a = kube_event_agg_new(60000, 10000, 0);
    char *k = key("Tainted", "cpu 31%");
    struct kube_event_series *s;
    assert_int_equal(kube_event_agg_observe(a, k, 1000, &s), KUBE_EVENT_CREATE);
    assert_int_equal(kube_event_agg_created(s, "default", "worker-0.abc", 1000), 0);
    /* a repeat soon after: counted, deferred (the create was just sent) */
    assert_int_equal(kube_event_agg_observe(a, k, 2000, &s), KUBE_EVENT_DEFER);
    assert_int_equal(kube_event_agg_observe(a, k, 3000, &s), KUBE_EVENT_DEFER);
    assert_int_equal(s->count, 3);
    assert_int_equal(s->sent_count, 1);
    /* not due before the interval */
    int64_t next;
    assert_null(kube_event_agg_due(a, 5000, 0, &next));
    assert_int_equal(next, 11000);
    /* due at the interval: one patch carries count 3 */
    struct kube_event_series *d = kube_event_agg_due(a, 11000, 0, &next);
    assert_ptr_equal(d, s);
    assert_int_equal(d->count, 3);
    kube_event_agg_sent(d, d->count, 11000);
    assert_null(kube_event_agg_due(a, 11000, 0, &next));
    assert_int_equal(next, INT64_MAX);
    /* a repeat after the interval patches at once */
    assert_int_equal(kube_event_agg_observe(a, k, 21000, &s), KUBE_EVENT_PATCH);
    assert_int_equal(s->count, 4);
    assert_string_equal(s->event_name, "worker-0.abc");
    assert_int_equal(kube_event_agg_size(a), 1);
    free(k);
    kube_event_agg_free(a);
}

static void test_different_occurrences_are_different_series(void **state)
{
    (void)state;
    struct kube_event_agg *a = kube_event_agg_new(60000, 10000, 0);
    char *k1 = key("Tainted", "cpu 31%"), *k2 = key("Untainted", "cpu 31%"), *k3 = key("Tainted", "cpu 40%");
    struct kube_event_series *s1, *s2, *s3;
    assert_int_equal(kube_event_agg_observe(a, k1, 0, &s1), KUBE_EVENT_CREATE);
    kube_event_agg_created(s1, "default", "e1", 0);
    assert_int_equal(kube_event_agg_observe(a, k2, 0, &s2), KUBE_EVENT_CREATE);
    kube_event_agg_created(s2, "default", "e2", 0);
    assert_int_equal(kube_event_agg_observe(a, k3, 0, &s3), KUBE_EVENT_CREATE); /* the note differs */
    assert_int_equal(kube_event_agg_size(a), 3);
    assert_ptr_not_equal(s1, s2);
    free(k1);
    free(k2);
    free(k3);
    kube_event_agg_free(a);
}

static void test_window_ends_series(void **state)
{
    (void)state;
    struct kube_event_agg *a = kube_event_agg_new(60000, 10000, 0);
    char *k = key("Tainted", "x");
    struct kube_event_series *s;
    kube_event_agg_observe(a, k, 0, &s);
    kube_event_agg_created(s, "default", "e1", 0);
    /* quiet longer than the window: a new Event */
    assert_int_equal(kube_event_agg_observe(a, k, 60001, &s), KUBE_EVENT_CREATE);
    assert_int_equal(s->count, 1);
    assert_null(s->event_name);
    kube_event_agg_created(s, "default", "e2", 60001);
    /* quiet series are forgotten by due() */
    assert_null(kube_event_agg_due(a, 200000, 0, NULL));
    assert_int_equal(kube_event_agg_size(a), 0);
    free(k);
    kube_event_agg_free(a);
}

static void test_pending_flushed_even_after_window_and_force(void **state)
{
    (void)state;
    struct kube_event_agg *a = kube_event_agg_new(60000, 10000, 0);
    char *k = key("Tainted", "x");
    struct kube_event_series *s;
    kube_event_agg_observe(a, k, 0, &s);
    kube_event_agg_created(s, "default", "e1", 0);
    kube_event_agg_observe(a, k, 100, &s);
    /* force (shutdown) sends pending repeats before the interval */
    assert_ptr_equal(kube_event_agg_due(a, 200, 1, NULL), s);
    /* a pending repeat is not forgotten when the window passes */
    assert_ptr_equal(kube_event_agg_due(a, 500000, 0, NULL), s);
    kube_event_agg_sent(s, 2, 500000);
    assert_null(kube_event_agg_due(a, 500000, 0, NULL));
    free(k);
    kube_event_agg_free(a);
}

static void test_failed_create_and_drop(void **state)
{
    (void)state;
    struct kube_event_agg *a = kube_event_agg_new(60000, 10000, 0);
    char *k = key("Tainted", "x");
    struct kube_event_series *s;
    kube_event_agg_observe(a, k, 0, &s);
    kube_event_agg_drop(a, s); /* the create failed */
    assert_int_equal(kube_event_agg_size(a), 0);
    assert_int_equal(kube_event_agg_observe(a, k, 10, &s), KUBE_EVENT_CREATE);
    free(k);
    kube_event_agg_free(a);
}

static void test_capacity_evicts_oldest_quiet(void **state)
{
    (void)state;
    struct kube_event_agg *a = kube_event_agg_new(600000, 10000, 2);
    char *k1 = key("A", ""), *k2 = key("B", ""), *k3 = key("C", "");
    struct kube_event_series *s;
    kube_event_agg_observe(a, k1, 0, &s);
    kube_event_agg_created(s, "d", "e1", 0);
    kube_event_agg_observe(a, k1, 5, &s); /* A has a pending repeat */
    kube_event_agg_observe(a, k2, 10, &s);
    kube_event_agg_created(s, "d", "e2", 10);
    kube_event_agg_observe(a, k3, 20, &s);
    kube_event_agg_created(s, "d", "e3", 20);
    assert_int_equal(kube_event_agg_size(a), 2);
    /* B (nothing pending) went, not A (older, but pending) */
    assert_int_equal(kube_event_agg_observe(a, k1, 30, &s), KUBE_EVENT_DEFER);
    assert_int_equal(s->count, 3);
    assert_int_equal(kube_event_agg_observe(a, k2, 40, &s), KUBE_EVENT_CREATE);
    free(k1);
    free(k2);
    free(k3);
    kube_event_agg_free(a);
}

static void test_no_interval_patches_every_repeat(void **state)
{
    (void)state;
    struct kube_event_agg *a = kube_event_agg_new(60000, -1, 0);
    char *k = key("Tainted", "x");
    struct kube_event_series *s;
    kube_event_agg_observe(a, k, 0, &s);
    kube_event_agg_created(s, "default", "e1", 0);
    assert_int_equal(kube_event_agg_observe(a, k, 0, &s), KUBE_EVENT_PATCH);
    free(k);
    kube_event_agg_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_creates_repeats_patch_then_defer),
        cmocka_unit_test(test_different_occurrences_are_different_series),
        cmocka_unit_test(test_window_ends_series),
        cmocka_unit_test(test_pending_flushed_even_after_window_and_force),
        cmocka_unit_test(test_failed_create_and_drop),
        cmocka_unit_test(test_capacity_evicts_oldest_quiet),
        cmocka_unit_test(test_no_interval_patches_every_repeat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
