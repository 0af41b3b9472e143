/* Unit tests for kube_linequeue: watch lines kept as bytes until delivered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/linequeue.h"

/* Lines come out in order, whole, NUL-terminated, with their lengths (a NUL inside too). */
static void test_order_and_bytes(void **state)
{
    (void)state;
    struct kube_linequeue q = {0};
    static const char nul_inside[] = {'a', '\0', 'b'};
    assert_int_equal(kube_linequeue_push(&q, "{\"type\":\"ADDED\"}", 16, NULL), 0);
    assert_int_equal(kube_linequeue_push(&q, "", 0, NULL), 0);
    assert_int_equal(kube_linequeue_push(&q, nul_inside, sizeof(nul_inside), NULL), 0);
    size_t n = 99;
    const char *l = kube_linequeue_next(&q, &n);
    assert_non_null(l);
    assert_int_equal(n, 16);
    assert_string_equal(l, "{\"type\":\"ADDED\"}");
    l = kube_linequeue_next(&q, &n);
    assert_non_null(l);
    assert_int_equal(n, 0);
    assert_int_equal(l[0], '\0');
    l = kube_linequeue_next(&q, &n);
    assert_non_null(l);
    assert_int_equal(n, 3);
    assert_memory_equal(l, nul_inside, 3);
    assert_int_equal(l[3], '\0');
    assert_null(kube_linequeue_next(&q, &n));
    assert_null(kube_linequeue_next(&q, &n));
    kube_linequeue_free(&q);
}

/* Drops the bytes 1..3 of a line of at least 4 ("abcdef" -> "aef"); shorter lines stay. */
static size_t drop_three(char *text, size_t n)
{
    if (n < 4)
        return n;
    memmove(text + 1, text + 4, n - 4);
    return n - 3;
}

/* A line is edited as it is queued: it comes out edited, the queue holds only the edited
 * bytes (the next line is queued right behind it), and a line the edit leaves is intact. */
static void test_edit_on_push(void **state)
{
    (void)state;
    struct kube_linequeue q = {0};
    assert_int_equal(kube_linequeue_push(&q, "abcdef", 6, drop_three), 0);
    assert_int_equal(q.len, sizeof(size_t) + 3 + 1);
    assert_int_equal(kube_linequeue_push(&q, "ghi", 3, drop_three), 0);
    assert_int_equal(q.len, 2 * sizeof(size_t) + 3 + 1 + 3 + 1);
    size_t n;
    const char *l = kube_linequeue_next(&q, &n);
    assert_non_null(l);
    assert_int_equal(n, 3);
    assert_string_equal(l, "aef");
    l = kube_linequeue_next(&q, &n);
    assert_non_null(l);
    assert_int_equal(n, 3);
    assert_string_equal(l, "ghi");
    kube_linequeue_free(&q);
}

/* Lines pushed while others are being taken (a write callback during a handler) queue
 * behind them; once drained the queue starts again from the front of its buffer. */
static void test_push_while_taking(void **state)
{
    (void)state;
    struct kube_linequeue q = {0};
    char line[32];
    size_t n, taken = 0, pushed = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5; i++) {
            int len = snprintf(line, sizeof(line), "line %zu", pushed++);
            assert_int_equal(kube_linequeue_push(&q, line, (size_t)len, NULL), 0);
        }
        const char *l = kube_linequeue_next(&q, &n);
        assert_non_null(l);
        snprintf(line, sizeof(line), "line %zu", taken++);
        assert_string_equal(l, line);
        /* pushed after a take, before the rest is taken */
        int len = snprintf(line, sizeof(line), "line %zu", pushed++);
        assert_int_equal(kube_linequeue_push(&q, line, (size_t)len, NULL), 0);
        while ((l = kube_linequeue_next(&q, &n)) != NULL) {
            snprintf(line, sizeof(line), "line %zu", taken++);
            assert_string_equal(l, line);
        }
        assert_int_equal(taken, pushed);
        assert_int_equal(q.len, 0);
    }
    kube_linequeue_free(&q);
}

/* A burst grows the buffer; drained, a buffer past KUBE_LINEQUEUE_KEEP is given back and a
 * small one kept; clear drops lines not taken. */
static void test_burst_given_back(void **state)
{
    (void)state;
    struct kube_linequeue q = {0};
    static char big[5000];
    memset(big, 'x', sizeof(big));
    for (int i = 0; i < 100; i++)
        assert_int_equal(kube_linequeue_push(&q, big, sizeof(big), NULL), 0);
    assert_true(q.cap > KUBE_LINEQUEUE_KEEP);
    size_t n, count = 0;
    while (kube_linequeue_next(&q, &n) != NULL) {
        assert_int_equal(n, sizeof(big));
        count++;
    }
    assert_int_equal(count, 100);
    assert_null(q.buf);
    assert_int_equal(q.cap, 0);

    assert_int_equal(kube_linequeue_push(&q, "small", 5, NULL), 0);
    assert_non_null(kube_linequeue_next(&q, &n));
    assert_null(kube_linequeue_next(&q, &n));
    assert_non_null(q.buf); /* small: kept for the next events */

    assert_int_equal(kube_linequeue_push(&q, "dropped", 7, NULL), 0);
    kube_linequeue_clear(&q);
    assert_null(kube_linequeue_next(&q, &n));
    kube_linequeue_free(&q);
    assert_null(q.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_bytes),
        cmocka_unit_test(test_edit_on_push),
        cmocka_unit_test(test_push_while_taking),
        cmocka_unit_test(test_burst_given_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
