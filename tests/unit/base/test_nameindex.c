/* base/nameindex: over random sets of names (duplicates, prefixes of one another, the empty
 * name), every lookup answers as a scan from the first name would: the index of the first
 * equal name, -1 for a name not put. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/nameindex.h"

#define MAX_NAMES 3000

static uint64_t next(uint64_t *rng)
{
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    return *rng;
}

/* A name from a small alphabet, so that equal names and shared prefixes are common. */
static void random_name(uint64_t *rng, char *out, size_t len)
{
    size_t n = next(rng) % (len - 1);
    for (size_t i = 0; i < n; i++)
        out[i] = "ab-0"[next(rng) % 4];
    out[n] = '\0';
}

static long scan(char names[][12], size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (long)i;
    return -1;
}

static void test_answers_as_a_scan(void **state)
{
    (void)state;
    static char names[MAX_NAMES][12], probe[12];
    uint64_t rng = 88172645463325252ULL;
    for (int round = 0; round < 200; round++) {
        size_t n = next(&rng) % MAX_NAMES;
        for (size_t i = 0; i < n; i++)
            random_name(&rng, names[i], sizeof(names[i]));
        struct base_nameindex ix;
        assert_int_equal(base_nameindex_init(&ix, n), 0);
        for (size_t i = 0; i < n; i++)
            base_nameindex_put(&ix, names[i], i);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(base_nameindex_get(&ix, names[i]), scan(names, n, names[i]));
        for (int k = 0; k < 200; k++) {
            random_name(&rng, probe, sizeof(probe));
            assert_int_equal(base_nameindex_get(&ix, probe), scan(names, n, probe));
        }
        assert_int_equal(base_nameindex_get(&ix, NULL), -1);
        base_nameindex_release(&ix);
        assert_null(ix.names);
    }
}

static void test_empty(void **state)
{
    (void)state;
    struct base_nameindex ix;
    assert_int_equal(base_nameindex_init(&ix, 0), 0);
    assert_int_equal(base_nameindex_get(&ix, "node-0"), -1);
    base_nameindex_release(&ix);
    struct base_nameindex none = {0};
    assert_int_equal(base_nameindex_get(&none, "node-0"), -1); /* released or never made */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers_as_a_scan),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
