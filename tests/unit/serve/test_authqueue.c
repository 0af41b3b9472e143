/* Unit tests for psi_authqueue, the token reviews waiting for the reviewer thread:
 * generated sequences of pushes, takes by the reviewer, answers, takes of answers and
 * expiries, on queues of 1 to 5 slots, against a reference that keeps the documented rules
 * in the plainest form (a list in push order): a full queue refuses, the oldest waiting
 * review is taken first and carries its own token, an answer is taken once by its ticket,
 * and waiting or answered slots older than the age are dropped, never the one under
 * review. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "serve/authqueue.h"

enum { R_WAITING = 1, R_REVIEWING, R_ANSWERED };

struct ref_item {
    unsigned long long ticket;
    int st, status;
    int64_t since;
};

struct ref {
    struct ref_item v[8];
    size_t n, cap;
};

static struct ref_item *ref_find(struct ref *r, unsigned long long t)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].ticket == t)
            return &r->v[i];
    return NULL;
}

static void ref_remove(struct ref *r, struct ref_item *it)
{
    size_t i = (size_t)(it - r->v);
    memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(r->v[0]));
    r->n--;
}

static void token_of(unsigned long long t, char *buf, size_t len)
{
    snprintf(buf, len, "token-%llu", t);
}

static void key_of(unsigned long long t, unsigned char k[PSI_AUTHCACHE_KEY])
{
    memset(k, 0, PSI_AUTHCACHE_KEY);
    k[0] = (unsigned char)t;
}

static void test_generated_against_reference(void **state)
{
    (void)state;
    srand(4242);
    for (int round = 0; round < 400; round++) {
        struct ref r = {.cap = 1 + (size_t)(rand() % 5)};
        struct psi_authqueue *q = psi_authqueue_new(r.cap);
        assert_non_null(q);
        int64_t now = 0;
        for (int step = 0; step < 200; step++) {
            now += rand() % 40;
            unsigned long long t = (unsigned long long)(rand() % 9); /* 0 is never a ticket */
            unsigned char key[PSI_AUTHCACHE_KEY];
            char tok[32];
            key_of(t, key);
            token_of(t, tok, sizeof(tok));
            switch (rand() % 5) {
            case 0: {
                int want = t && !ref_find(&r, t) && r.n < r.cap ? 0 : -1;
                assert_int_equal(psi_authqueue_push(q, t, key, tok, "get", "/metrics", now), want);
                if (want == 0)
                    r.v[r.n++] = (struct ref_item){.ticket = t, .st = R_WAITING, .since = now};
                break;
            }
            case 1: {
                struct ref_item *oldest = NULL;
                for (size_t i = 0; i < r.n && !oldest; i++)
                    if (r.v[i].st == R_WAITING)
                        oldest = &r.v[i];
                struct psi_authreview got;
                assert_int_equal(psi_authqueue_next(q, &got), oldest != NULL);
                if (oldest) {
                    assert_true(got.ticket == oldest->ticket);
                    token_of(oldest->ticket, tok, sizeof(tok));
                    assert_string_equal(got.token, tok);
                    assert_string_equal(got.path, "/metrics");
                    key_of(oldest->ticket, key);
                    assert_memory_equal(got.key, key, PSI_AUTHCACHE_KEY);
                    free(got.token);
                    oldest->st = R_REVIEWING;
                }
                break;
            }
            case 2: {
                int status = 200 + 100 * (rand() % 3);
                psi_authqueue_answer(q, t, status, now);
                struct ref_item *it = ref_find(&r, t);
                if (it) {
                    it->st = R_ANSWERED;
                    it->status = status;
                    it->since = now;
                }
                break;
            }
            case 3: {
                struct ref_item *it = ref_find(&r, t);
                int want = !it ? -1 : it->st == R_ANSWERED ? it->status : 0;
                assert_int_equal(psi_authqueue_take(q, t), want);
                if (want > 0)
                    ref_remove(&r, it);
                break;
            }
            default: {
                int64_t age = rand() % 200;
                size_t dropped = 0;
                for (size_t i = 0; i < r.n;) {
                    if (r.v[i].st != R_REVIEWING && r.v[i].since < now - age) {
                        ref_remove(&r, &r.v[i]);
                        dropped++;
                    } else {
                        i++;
                    }
                }
                assert_int_equal(psi_authqueue_expire(q, now, age), dropped);
            }
            }
            assert_int_equal(psi_authqueue_len(q), r.n);
        }
        psi_authqueue_free(q);
    }
}

static void test_bad_pushes(void **state)
{
    (void)state;
    struct psi_authqueue *q = psi_authqueue_new(2);
    unsigned char key[PSI_AUTHCACHE_KEY] = {0};
    char path[PSI_AUTHQUEUE_PATH + 1];
    memset(path, 'p', sizeof(path) - 1);
    path[sizeof(path) - 1] = '\0';
    path[0] = '/';
    assert_int_equal(psi_authqueue_push(q, 0, key, "t", "get", "/metrics", 0), -1);
    assert_int_equal(psi_authqueue_push(q, 1, key, "t", "get", path, 0), -1);
    assert_int_equal(psi_authqueue_push(q, 1, key, "t", "a-very-long-verb-x", "/metrics", 0), -1);
    assert_int_equal(psi_authqueue_len(q), 0);
    psi_authqueue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_against_reference),
        cmocka_unit_test(test_bad_pushes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
