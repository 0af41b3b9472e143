/* Unit tests for psi_authcache: answers kept until they expire, a key answered again
 * replaced in place, and a full cache taking the place of an expired entry, or else of
 * the one that expires first, never growing; a refusal never taking the place of a live
 * allowance, checked over generated sequences against the last answer put for each key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "serve/authcache.h"

static void key_of(int n, unsigned char k[PSI_AUTHCACHE_KEY])
{
    memset(k, 0, PSI_AUTHCACHE_KEY);
    k[0] = (unsigned char)n;
    k[31] = (unsigned char)(n >> 8);
}

static void test_expiry_and_replace(void **state)
{
    (void)state;
    struct psi_authcache *c = psi_authcache_new(4);
    unsigned char a[PSI_AUTHCACHE_KEY], b[PSI_AUTHCACHE_KEY];
    key_of(1, a);
    key_of(2, b);
    assert_int_equal(psi_authcache_get(c, a, 0), 0);
    psi_authcache_put(c, a, 200, 0, 60000);
    psi_authcache_put(c, b, 401, 0, 10000);
    assert_int_equal(psi_authcache_get(c, a, 59999), 200);
    assert_int_equal(psi_authcache_get(c, a, 60000), 0);
    assert_int_equal(psi_authcache_get(c, b, 9999), 401);
    assert_int_equal(psi_authcache_get(c, b, 10000), 0);
    /* the same key answered again takes its own entry */
    psi_authcache_put(c, a, 403, 100, 30100);
    assert_int_equal(psi_authcache_get(c, a, 200), 403);
    assert_int_equal(psi_authcache_live(c, 200), 2);
    psi_authcache_free(c);
}

static void test_full_cache(void **state)
{
    (void)state;
    struct psi_authcache *c = psi_authcache_new(3);
    unsigned char k[5][PSI_AUTHCACHE_KEY];
    for (int i = 0; i < 5; i++)
        key_of(i + 10, k[i]);
    psi_authcache_put(c, k[0], 200, 0, 1000); /* expires first */
    psi_authcache_put(c, k[1], 200, 0, 5000);
    psi_authcache_put(c, k[2], 200, 0, 3000);
    /* full of allowances: a refusal is not kept */
    psi_authcache_put(c, k[3], 401, 10, 2000);
    assert_int_equal(psi_authcache_get(c, k[3], 10), 0);
    assert_int_equal(psi_authcache_get(c, k[0], 10), 200);
    /* full, none expired: for an allowance, the one that expires first goes */
    psi_authcache_put(c, k[3], 200, 10, 2000);
    assert_int_equal(psi_authcache_get(c, k[0], 10), 0);
    assert_int_equal(psi_authcache_get(c, k[1], 10), 200);
    assert_int_equal(psi_authcache_get(c, k[2], 10), 200);
    assert_int_equal(psi_authcache_get(c, k[3], 10), 200);
    /* at 2500 the entry of k[3] expired: a new key takes its place, not a live one's */
    psi_authcache_put(c, k[4], 403, 2500, 9000);
    assert_int_equal(psi_authcache_get(c, k[1], 2500), 200);
    assert_int_equal(psi_authcache_get(c, k[2], 2500), 200);
    assert_int_equal(psi_authcache_get(c, k[4], 2500), 403);
    assert_int_equal(psi_authcache_live(c, 2500), 3);
    /* a thousand made-up keys later the cache still holds three entries */
    for (int i = 0; i < 1000; i++) {
        unsigned char x[PSI_AUTHCACHE_KEY];
        key_of(1000 + i, x);
        psi_authcache_put(c, x, 401, 3000 + i, 13000 + i);
    }
    assert_int_equal(psi_authcache_live(c, 4000), 3);
    psi_authcache_free(c);
}

/* A flood of made-up tokens into a cache full of allowances keeps every allowance. */
static void test_refusals_keep_allowances(void **state)
{
    (void)state;
    struct psi_authcache *c = psi_authcache_new(4);
    unsigned char k[PSI_AUTHCACHE_KEY];
    for (int i = 0; i < 4; i++) {
        key_of(i, k);
        psi_authcache_put(c, k, 200, 0, 60000);
    }
    for (int i = 0; i < 1000; i++) {
        key_of(100 + i, k);
        psi_authcache_put(c, k, 401, 10 + i, 10010 + i);
        assert_int_equal(psi_authcache_get(c, k, 10 + i), 0); /* not kept: no room */
    }
    for (int i = 0; i < 4; i++) {
        key_of(i, k);
        assert_int_equal(psi_authcache_get(c, k, 2000), 200);
    }
    psi_authcache_free(c);
}

/* What was last put for a key. */
struct shadow {
    int status;
    int64_t expires;
};

static void test_generated_sequences(void **state)
{
    (void)state;
    srand(77);
    enum { KEYS = 12 };
    for (int round = 0; round < 300; round++) {
        size_t cap = 1 + (size_t)(rand() % 6);
        struct psi_authcache *c = psi_authcache_new(cap);
        struct shadow last[KEYS] = {0};
        int64_t now = 0;
        for (int step = 0; step < 300; step++) {
            now += rand() % 300;
            int n = rand() % KEYS;
            unsigned char k[PSI_AUTHCACHE_KEY];
            key_of(n, k);
            if (rand() % 2) {
                int got = psi_authcache_get(c, k, now);
                /* nothing, or the last answer put while it lives */
                assert_true(got == 0 || (got == last[n].status && now < last[n].expires));
                continue;
            }
            static const int statuses[] = {200, 401, 403};
            int status = statuses[rand() % 3];
            int64_t expires = now + 1 + rand() % 3000;
            int allowed_before[KEYS];
            for (int j = 0; j < KEYS; j++) {
                unsigned char kj[PSI_AUTHCACHE_KEY];
                key_of(j, kj);
                allowed_before[j] = psi_authcache_get(c, kj, now) == 200;
            }
            int room = psi_authcache_live(c, now) < cap || psi_authcache_get(c, k, now);
            int refusal_room = room;
            for (int j = 0; j < KEYS && !refusal_room; j++) {
                unsigned char kj[PSI_AUTHCACHE_KEY];
                key_of(j, kj);
                int s = psi_authcache_get(c, kj, now);
                refusal_room = s && s != 200;
            }
            psi_authcache_put(c, k, status, now, expires);
            last[n] = (struct shadow){status, expires};
            int kept = psi_authcache_get(c, k, now) == status;
            /* an allowance is always kept; a refusal whenever it displaces no allowance */
            assert_true(kept || (status != 200 && !refusal_room));
            assert_true(psi_authcache_live(c, now) <= cap);
            for (int j = 0; j < KEYS; j++) {
                unsigned char kj[PSI_AUTHCACHE_KEY];
                key_of(j, kj);
                if (allowed_before[j] && status != 200 && j != n)
                    assert_int_equal(psi_authcache_get(c, kj, now), 200);
            }
        }
        psi_authcache_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expiry_and_replace),
        cmocka_unit_test(test_full_cache),
        cmocka_unit_test(test_refusals_keep_allowances),
        cmocka_unit_test(test_generated_sequences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
