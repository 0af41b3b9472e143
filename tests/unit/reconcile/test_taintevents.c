/* Unit tests of controller/reconcile/taint/taintevents: per-node Events below the count, one
 * summary past it, and the summary's note within an Event's limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/taint/taintevents.h"

static void test_per_node_below_the_count(void **state)
{
    (void)state;
    assert_true(taintevents_per_node(0));
    assert_true(taintevents_per_node(1));
    assert_true(taintevents_per_node(TAINTEVENTS_PER_NODE_MAX));
    assert_false(taintevents_per_node(TAINTEVENTS_PER_NODE_MAX + 1));
    assert_false(taintevents_per_node(1000));
}

static void test_summary_small(void **state)
{
    (void)state;
    const char *added[] = {"worker-1", "worker-2"}, *removed[] = {"worker-9"};
    char note[TAINTEVENTS_NOTE_MAX];
    size_t n = taintevents_summary(note, sizeof(note), "NoSchedule taint k:w", added, 2, removed, 1);
    assert_string_equal(note,
                        "NoSchedule taint k:w: tainted 2 nodes (worker-1, worker-2); untainted 1 node (worker-9)");
    assert_int_equal(n, strlen(note));
    taintevents_summary(note, sizeof(note), NULL, NULL, 0, removed, 1);
    assert_string_equal(note, "the taint: untainted 1 node (worker-9)");
    taintevents_summary(note, sizeof(note), "t", added, 1, NULL, 0);
    assert_string_equal(note, "t: tainted 1 node (worker-1)");
}

/* 1,000 tainted with names of 253 characters and 500 untainted: the counts are exact, the
 * note fits in 1 kB, both lists are there and end with how many more. */
static void test_summary_storm(void **state)
{
    (void)state;
    size_t na = 1000, nr = 500;
    const char **added = calloc(na, sizeof(*added)), **removed = calloc(nr, sizeof(*removed));
    char(*names)[254] = calloc(na + nr, sizeof(*names));
    assert_non_null(added);
    assert_non_null(removed);
    assert_non_null(names);
    for (size_t i = 0; i < na + nr; i++) {
        memset(names[i], 'x', 253);
        char num[16];
        int len = snprintf(num, sizeof(num), "n-%04zu", i);
        memcpy(names[i], num, (size_t)len);
        if (i < na)
            added[i] = names[i];
        else
            removed[i - na] = names[i];
    }
    char note[4096];
    size_t n =
        taintevents_summary(note, sizeof(note), "NoSchedule taint psi.dev/pressure:workers", added, na, removed, nr);
    assert_true(n < TAINTEVENTS_NOTE_MAX);
    assert_int_equal(n, strlen(note));
    assert_non_null(strstr(note, "tainted 1000 nodes (n-0000"));
    assert_non_null(strstr(note, "untainted 500 nodes ("));
    assert_non_null(strstr(note, "more); untainted"));
    assert_int_equal(note[n - 1], ')');
    assert_non_null(strstr(note, " more)"));
    /* short names: many listed, still bounded */
    for (size_t i = 0; i < na + nr; i++)
        names[i][8] = '\0';
    n = taintevents_summary(note, sizeof(note), "t", added, na, removed, nr);
    assert_true(n < TAINTEVENTS_NOTE_MAX);
    assert_non_null(strstr(note, "n-0000xx, n-0001xx"));
    assert_non_null(strstr(note, "untainted 500 nodes (n-1000xx"));
    /* a small buffer: cut, terminated */
    char tiny[16];
    n = taintevents_summary(tiny, sizeof(tiny), "t", added, na, removed, nr);
    assert_int_equal(n, strlen(tiny));
    assert_true(n < sizeof(tiny));
    free(names);
    free(added);
    free(removed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_node_below_the_count),
        cmocka_unit_test(test_summary_small),
        cmocka_unit_test(test_summary_storm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
