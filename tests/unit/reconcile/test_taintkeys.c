/* Unit tests of controller/reconcile/taintkeys: the record of a taint key is stored before the
 * first taint under it, and a recorded key that no node carries is forgotten. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "reconcile/taint/taintkeys.h"

/* A new key with a taint to add: its record goes first; removals alone need none. */
static void test_record_first_new_key(void **state)
{
    (void)state;
    struct api_status st = {0};
    assert_true(taintkeys_record_first(&st, NULL, "example.com/hot", 1));
    assert_true(taintkeys_record_first(NULL, NULL, "example.com/hot", 3));
    assert_false(taintkeys_record_first(&st, NULL, "example.com/hot", 0));
}

/* A key the stored status names, or whose record this process stored while the cache had not
 * caught up yet, needs no new record. */
static void test_record_first_known_key(void **state)
{
    (void)state;
    struct api_status st = {0};
    assert_int_equal(api_status_add_taint_key(&st, "example.com/old"), 1);
    assert_int_equal(api_status_add_taint_key(&st, "example.com/hot"), 1);
    assert_false(taintkeys_record_first(&st, NULL, "example.com/hot", 5));
    assert_true(taintkeys_record_first(&st, NULL, "example.com/new", 5));
    assert_false(taintkeys_record_first(&st, "example.com/new", "example.com/new", 5));
    assert_true(taintkeys_record_first(&st, "example.com/other", "example.com/new", 5));
    api_status_free(&st);
}

/* Cleanup: an old key goes once nothing is left under it (a key recorded but never written has
 * nothing); the current key, or one whose taints could not all be taken off, stays. */
static void test_forget(void **state)
{
    (void)state;
    assert_true(taintkeys_forget("example.com/old", "example.com/hot", 0));
    assert_false(taintkeys_forget("example.com/old", "example.com/hot", 2));
    assert_false(taintkeys_forget("example.com/hot", "example.com/hot", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_first_new_key),
        cmocka_unit_test(test_record_first_known_key),
        cmocka_unit_test(test_forget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
