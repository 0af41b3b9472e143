/* Unit tests of kube/workqueue: coalescing, one at a time per key, delays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/workqueue.h"

static int64_t fake_now;

static int64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now;
}

static struct workqueue *new_queue(void)
{
    fake_now = 1000;
    struct workqueue *q = workqueue_new(fake_clock, NULL);
    assert_non_null(q);
    return q;
}

static void test_add_coalesces(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    assert_null(workqueue_get(q));
    assert_int_equal(workqueue_next_delay(q), -1);
    assert_int_equal(workqueue_add(q, "a"), 0);
    assert_int_equal(workqueue_add(q, "a"), 0);
    assert_int_equal(workqueue_add(q, "b"), 0);
    assert_int_equal(workqueue_add(q, "a"), 0);
    assert_int_equal(workqueue_pending(q), 2);
    assert_int_equal(workqueue_next_delay(q), 0);
    const char *k = workqueue_get(q);
    assert_string_equal(k, "a"); /* first made pending first */
    workqueue_done(q, k);
    k = workqueue_get(q);
    assert_string_equal(k, "b");
    workqueue_done(q, k);
    assert_null(workqueue_get(q));
    assert_int_equal(workqueue_pending(q), 0);
    workqueue_free(q);
}

static void test_never_twice_at_once(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add(q, "a");
    const char *k = workqueue_get(q);
    assert_string_equal(k, "a");
    assert_true(workqueue_processing(q, "a"));
    /* Events while it is processed: kept, not handed out. */
    workqueue_add(q, "a");
    workqueue_add(q, "a");
    assert_null(workqueue_get(q));
    assert_int_equal(workqueue_pending(q), 1);
    assert_int_equal(workqueue_next_delay(q), -1); /* nothing can be handed out yet */
    workqueue_done(q, k);
    assert_false(workqueue_processing(q, "a"));
    /* Exactly once more. */
    k = workqueue_get(q);
    assert_string_equal(k, "a");
    workqueue_done(q, k);
    assert_null(workqueue_get(q));
    workqueue_free(q);
}

static void test_other_keys_flow_while_one_is_processed(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add(q, "a");
    workqueue_add(q, "b");
    const char *a = workqueue_get(q);
    workqueue_add(q, "a");
    const char *b = workqueue_get(q);
    assert_string_equal(a, "a");
    assert_string_equal(b, "b");
    assert_null(workqueue_get(q));
    workqueue_done(q, b);
    assert_null(workqueue_get(q));
    workqueue_done(q, a);
    assert_string_equal(workqueue_get(q), "a");
    workqueue_free(q);
}

static void test_add_after_earliest_wins(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add_after(q, "a", 30000);
    assert_null(workqueue_get(q));
    assert_int_equal(workqueue_next_delay(q), 30000);
    workqueue_add_after(q, "a", 60000); /* later: does not postpone */
    assert_int_equal(workqueue_next_delay(q), 30000);
    workqueue_add_after(q, "a", 5000); /* sooner: wins */
    assert_int_equal(workqueue_next_delay(q), 5000);
    assert_int_equal(workqueue_pending(q), 1);
    fake_now += 4999;
    assert_null(workqueue_get(q));
    assert_int_equal(workqueue_next_delay(q), 1);
    fake_now += 1;
    const char *k = workqueue_get(q);
    assert_string_equal(k, "a");
    workqueue_done(q, k);
    /* A delayed key made due by a plain add. */
    workqueue_add_after(q, "b", 10000);
    workqueue_add(q, "b");
    assert_string_equal(workqueue_get(q), "b");
    workqueue_free(q);
}

static void test_due_order(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add_after(q, "late", 200);
    workqueue_add_after(q, "soon", 100);
    workqueue_add_after(q, "past", -50); /* negative: now */
    fake_now += 300;
    const char *k1 = workqueue_get(q), *k2 = workqueue_get(q), *k3 = workqueue_get(q);
    assert_string_equal(k1, "past");
    assert_string_equal(k2, "soon");
    assert_string_equal(k3, "late");
    workqueue_free(q);
}

static void test_requeue_after_while_processing(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add(q, "a");
    const char *k = workqueue_get(q);
    workqueue_add_after(q, "a", 30000); /* the reconcile asks to run again in 30 s */
    workqueue_done(q, k);
    assert_null(workqueue_get(q));
    assert_int_equal(workqueue_next_delay(q), 30000);
    fake_now += 30000;
    assert_string_equal(workqueue_get(q), "a");
    workqueue_free(q);
}

static void test_forget(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add(q, "a");
    workqueue_add_after(q, "b", 100);
    workqueue_forget(q, "a");
    workqueue_forget(q, "nothing");
    assert_int_equal(workqueue_pending(q), 1);
    fake_now += 100;
    const char *k = workqueue_get(q);
    assert_string_equal(k, "b");
    workqueue_add(q, "b");
    workqueue_forget(q, "b"); /* deleted while processed: the pending request goes */
    assert_true(workqueue_processing(q, "b"));
    workqueue_done(q, k);
    assert_null(workqueue_get(q));
    assert_int_equal(workqueue_pending(q), 0);
    workqueue_free(q);
}

static void test_many_keys_and_real_clock(void **state)
{
    (void)state;
    struct workqueue *q = workqueue_new(NULL, NULL);
    assert_non_null(q);
    char key[32];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        assert_int_equal(workqueue_add(q, key), 0);
        assert_int_equal(workqueue_add(q, key), 0);
    }
    assert_int_equal(workqueue_pending(q), 100);
    for (int i = 0; i < 100; i++) {
        const char *k = workqueue_get(q);
        assert_non_null(k);
        snprintf(key, sizeof(key), "k%d", i);
        assert_string_equal(k, key);
        workqueue_done(q, k);
    }
    assert_null(workqueue_get(q));
    workqueue_free(q);
    workqueue_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_coalesces),
        cmocka_unit_test(test_never_twice_at_once),
        cmocka_unit_test(test_other_keys_flow_while_one_is_processed),
        cmocka_unit_test(test_add_after_earliest_wins),
        cmocka_unit_test(test_due_order),
        cmocka_unit_test(test_requeue_after_while_processing),
        cmocka_unit_test(test_forget),
        cmocka_unit_test(test_many_keys_and_real_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
