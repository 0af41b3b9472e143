/* Unit tests of controller/reconcile/taintstate: the state machine's result kept per node,
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_update_and_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
