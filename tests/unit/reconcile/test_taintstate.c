/* Unit tests of controller/reconcile/taint/taintstate: the state machine's result kept per node,
 * our last write remembered, and a cache that lags behind our own write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/taint/taintstate.h"
#include "testutil.h"

static void test_update_and_cache(void **state)
{
    (void)state;
    struct taintfsm_node fn[2] = {
        {.name = "w2", .state = API_NODE_PRESSURED, .since_ms = 1000, .tainted = true, .input = 0},
        {.name = "w1", .state = API_NODE_NORMAL, .since_ms = 2000, .tainted = false, .input = 1},
    };
    struct taintfsm_result res = {.nodes = fn, .nnodes = 2};
    char written[2][32] = {"42", ""};
    struct taintstate ts = {0};
    assert_int_equal(taintstate_update(&ts, &res, (const char(*)[32])written, 5000), 0);
    assert_int_equal(ts.n, 2);
    const struct taintstate_record *w2 = taintstate_find(&ts, "w2");
    assert_non_null(w2);
    assert_true(w2->tainted);
    assert_string_equal(w2->written_rv, "42");
    assert_int_equal(w2->written_ms, 5000);
    assert_string_equal(taintstate_find(&ts, "w1")->written_rv, "");
    assert_null(taintstate_find(&ts, "w3"));

    /* the cache still shows the version before our write: it is behind */
    const char *before = "41", *after = "42";
    assert_true(taintstate_cache_behind(w2, before, 6000));
    assert_false(taintstate_cache_behind(w2, after, 6000));
    assert_false(taintstate_cache_behind(w2, before, 5000 + TAINTSTATE_OWN_WRITE_GRACE_MS)); /* grace over */
    assert_false(taintstate_cache_behind(taintstate_find(&ts, "w1"), before, 6000));         /* no write of ours */
    assert_false(taintstate_cache_behind(NULL, before, 6000));
    assert_false(taintstate_cache_behind(w2, "", 6000)); /* no version cached */

    /* the next cycle writes nothing: the last write is kept */
    char none[2][32] = {"", ""};
    fn[0].since_ms = 7000;
    assert_int_equal(taintstate_update(&ts, &res, (const char(*)[32])none, 8000), 0);
    w2 = taintstate_find(&ts, "w2");
    assert_int_equal(w2->since_ms, 7000);
    assert_string_equal(w2->written_rv, "42");
    assert_int_equal(w2->written_ms, 5000);

    /* a node the state machine no longer looks at is forgotten */
    res.nnodes = 1;
    assert_int_equal(taintstate_update(&ts, &res, (const char(*)[32])none, 9000), 0);
    assert_int_equal(ts.n, 1);
    assert_null(taintstate_find(&ts, "w1"));
    taintstate_free(&ts);
}

/* A new key with a taint to add: its record goes first; removals alone need none. */
static void test_record_first_new_key(void **state)
{
    (void)state;
    struct api_status st = {0};
    assert_true(taintstate_key_record_first(&st, NULL, "example.com/hot", 1));
    assert_true(taintstate_key_record_first(NULL, NULL, "example.com/hot", 3));
    assert_false(taintstate_key_record_first(&st, NULL, "example.com/hot", 0));
}

/* A key the stored status names, or whose record this process stored while the cache had not
 * caught up yet, needs no new record. */
static void test_record_first_known_key(void **state)
{
    (void)state;
    struct api_status st = {0};
    assert_int_equal(api_status_add_taint_key(&st, "example.com/old"), 1);
    assert_int_equal(api_status_add_taint_key(&st, "example.com/hot"), 1);
    assert_false(taintstate_key_record_first(&st, NULL, "example.com/hot", 5));
    assert_true(taintstate_key_record_first(&st, NULL, "example.com/new", 5));
    assert_false(taintstate_key_record_first(&st, "example.com/new", "example.com/new", 5));
    assert_true(taintstate_key_record_first(&st, "example.com/other", "example.com/new", 5));
    api_status_free(&st);
}

/* Cleanup: an old key goes once nothing is left under it (a key recorded but never written has
 * nothing); the current key, or one whose taints could not all be taken off, stays. */
static void test_forget(void **state)
{
    (void)state;
    assert_true(taintstate_key_forget("example.com/old", "example.com/hot", 0));
    assert_false(taintstate_key_forget("example.com/old", "example.com/hot", 2));
    assert_false(taintstate_key_forget("example.com/hot", "example.com/hot", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_update_and_cache),
        cmocka_unit_test(test_record_first_new_key),
        cmocka_unit_test(test_record_first_known_key),
        cmocka_unit_test(test_forget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
