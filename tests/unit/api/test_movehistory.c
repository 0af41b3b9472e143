/* api_move_history (status.moveHistory): what a move adds, that its size follows the workloads
 * and node pairs that moved and not how often, the byte count against cJSON's own printing,
 * the bound (under the cap, the newest facts kept), the round trip through JSON, and the
 * decoder against hostile and mangled input (an error naming the field, nothing kept). Random
 * histories from a seeded generator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/movehistory.h"

#define T0 1767225600 /* 2026-01-01T00:00:00Z */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int pick(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

/* A name of a realistic shape, now and then with characters JSON escapes. */
static void node_name(char *buf, size_t len, int i)
{
    if (pick(20) == 0)
        snprintf(buf, len, "odd\"node\\%d\n\x01", i);
    else
        snprintf(buf, len, "worker-%03d.cluster.example.com", i);
}

static void workload_key(char *buf, size_t len, int i)
{
    snprintf(buf, len, "VirtualMachineInstance tenant-%02d/vm-%05d", i % 17, i);
}

/* A random history: w workloads and n nodes, moves spread over span seconds before T0. */
static void random_history(struct api_move_history *mh, int w, int n, int moves, int span)
{
    for (int k = 0; k < moves; k++) {
        char key[128], s[64], d[64];
        workload_key(key, sizeof(key), pick(w));
        int a = pick(n), b = (a + 1 + pick(n - 1)) % n;
        node_name(s, sizeof(s), a);
        node_name(d, sizeof(d), b);
        assert_int_equal(api_move_history_record(mh, key, s, pick(10) ? d : NULL, T0 - pick(span)), 0);
        if (pick(8) == 0)
            assert_int_equal(api_move_history_mark_unhelpful(mh, key, T0 - pick(span)), 0);
    }
}

static size_t printed(const struct api_move_history *mh)
{
    cJSON *j = api_move_history_encode(mh);
    assert_non_null(j);
    char *s = cJSON_PrintUnformatted(j);
    size_t n = strlen(s);
    free(s);
    cJSON_Delete(j);
    return n;
}

static void test_record_and_query(void **state)
{
    (void)state;
    struct api_move_history mh = {0};
    assert_int_equal(api_move_history_record(&mh, "Pod ns/a", "n1", "n2", T0), 0);
    assert_int_equal(api_move_history_record(&mh, "Pod ns/a", "n2", "n3", T0 + 10), 0);
    assert_int_equal(api_move_history_record(&mh, "Pod ns/b", "n3", NULL, T0 + 20), 0);
    assert_int_equal(api_move_history_left_at(&mh, "Pod ns/a", "n1"), T0);
    assert_int_equal(api_move_history_left_at(&mh, "Pod ns/a", "n2"), T0 + 10);
    assert_int_equal(api_move_history_left_at(&mh, "Pod ns/a", "n3"), 0);
    assert_int_equal(api_move_history_left_at(&mh, "Pod ns/b", "n3"), T0 + 20);
    assert_int_equal(api_move_history_sent_at(&mh, "n1", "n2"), T0);
    assert_int_equal(api_move_history_sent_at(&mh, "n2", "n1"), 0);
    assert_int_equal(api_move_history_sent_at(&mh, "n3", "n1"), 0); /* destination unknown: no pair */
    assert_int_equal(api_move_history_moves_since(&mh, "Pod ns/a", T0), 2);
    assert_int_equal(api_move_history_moves_since(&mh, "Pod ns/a", T0 + 1), 1);
    assert_int_equal(api_move_history_moves_since(&mh, NULL, T0), 3);
    /* a later landing of the same pair keeps the latest time */
    assert_int_equal(api_move_history_sent(&mh, "n1", "n2", T0 + 30), 0);
    assert_int_equal(api_move_history_sent_at(&mh, "n1", "n2"), T0 + 30);
    api_move_history_prune(&mh, T0 + 15);
    assert_int_equal(api_move_history_left_at(&mh, "Pod ns/a", "n1"), 0);
    assert_int_equal(api_move_history_left_at(&mh, "Pod ns/a", "n2"), 0);
    assert_int_equal(api_move_history_moves_since(&mh, NULL, 0), 1);
    assert_int_equal(api_move_history_sent_at(&mh, "n1", "n2"), T0 + 30);
    assert_int_equal(api_move_history_sent_at(&mh, "n2", "n3"), 0);
    assert_null(api_move_history_workload(&mh, "Pod ns/a"));
    api_move_history_release(&mh);
}

/* The byte count is what cJSON prints, on random histories with escaped characters. */
static void test_bytes_exact(void **state)
{
    (void)state;
    rng_state = 0x9E3779B97F4A7C15ULL;
    for (int c = 0; c < 300; c++) {
        struct api_move_history mh = {0};
        random_history(&mh, 1 + pick(40), 2 + pick(12), pick(200), 1 + pick(100000));
        assert_int_equal(api_move_history_bytes(&mh), printed(&mh));
        api_move_history_release(&mh);
    }
}

/* Round trip: encode, print, parse, decode gives the same facts; so does a copy. */
static void test_round_trip(void **state)
{
    (void)state;
    rng_state = 0x2545F4914F6CDD1DULL;
    for (int c = 0; c < 200; c++) {
        struct api_move_history mh = {0}, back = {0}, copy = {0};
        random_history(&mh, 1 + pick(30), 2 + pick(10), pick(150), 1 + pick(100000));
        cJSON *j = api_move_history_encode(&mh);
        char *text = cJSON_PrintUnformatted(j);
        cJSON *parsed = cJSON_Parse(text);
        struct api_errors errs = {0}, warns = {0};
        assert_int_equal(api_move_history_decode(parsed, "status.moveHistory", &back, &errs, &warns), 0);
        assert_int_equal(errs.n, 0);
        assert_int_equal(warns.n, 0);
        assert_true(api_move_history_equal(&mh, &back));
        assert_int_equal(api_move_history_copy(&copy, &mh), 0);
        assert_true(api_move_history_equal(&mh, &copy));
        if (!api_move_history_empty(&mh)) { /* one more fact makes them differ */
            assert_int_equal(api_move_history_record(&copy, "Pod x/y", "a", "b", T0 + 1), 0);
            assert_false(api_move_history_equal(&mh, &copy));
        }
        api_move_history_release(&mh);
        api_move_history_release(&back);
        api_move_history_release(&copy);
        cJSON_Delete(j);
        cJSON_Delete(parsed);
        free(text);
        api_errors_free(&errs);
        api_errors_free(&warns);
    }
}

/* The size follows the workloads and node pairs that moved, not the rate: 10 VMs moving among
 * 5 nodes take the same bytes after 1000 moves and after 5000, and the cost of one more move
 * of a new workload, of a known one to a new node, and of a known one on known ground is bounded. */
static void test_size_per_move(void **state)
{
    (void)state;
    rng_state = 0xD1B54A32D192ED03ULL;
    struct api_move_history mh = {0};
    int loc[10] = {0};
    size_t after1000 = 0;
    for (int k = 0; k < 5000; k++) {
        char key[128], s[64], d[64];
        int w = pick(10), t = (loc[w] + 1 + pick(4)) % 5;
        workload_key(key, sizeof(key), w);
        snprintf(s, sizeof(s), "worker-%03d.cluster.example.com", loc[w]);
        snprintf(d, sizeof(d), "worker-%03d.cluster.example.com", t);
        assert_int_equal(api_move_history_record(&mh, key, s, d, T0 + k), 0);
        loc[w] = t;
        if (k == 999)
            after1000 = api_move_history_bytes(&mh);
    }
    size_t after5000 = api_move_history_bytes(&mh);
    assert_int_equal(after1000, after5000);
    /* 10 workloads of 16 times and 5 nodes left, 20 pairs: the shape's own bound */
    size_t per_workload = 64 + 16 * 11 + 5 * 46, per_pair = 80;
    assert_true(after5000 <= 10 * per_workload + 20 * per_pair);
    print_message("10 workloads, 5 nodes: %zu bytes after 1000 moves, %zu after 5000\n", after1000, after5000);
    api_move_history_release(&mh);

    /* a new workload between new nodes; a known one to a new node; a known one on known ground */
    struct api_move_history one = {0};
    const char *vm = "VirtualMachineInstance tenant-01/vm-00001";
    const char *n1 = "worker-001.cluster.example.com", *n2 = "worker-002.cluster.example.com",
               *n3 = "worker-003.cluster.example.com";
    assert_int_equal(api_move_history_record(&one, vm, n1, n2, T0), 0);
    size_t first = api_move_history_bytes(&one);
    assert_int_equal(api_move_history_record(&one, vm, n2, n3, T0 + 60), 0);
    size_t second = api_move_history_bytes(&one) - first;
    assert_int_equal(api_move_history_record(&one, vm, n3, n1, T0 + 120), 0);
    size_t before = api_move_history_bytes(&one);
    assert_int_equal(api_move_history_record(&one, vm, n1, n2, T0 + 180), 0); /* n1 left before, n1>n2 known */
    size_t known = api_move_history_bytes(&one) - before;
    print_message("a move: %zu bytes for a new workload between new nodes, %zu to a new node, %zu on known ground\n",
                  first, second, known);
    /* the key, a node left, a pair of names and times, with JSON's punctuation */
    assert_true(first <= strlen(vm) + 3 * strlen(n1) + 3 * 11 + 80);
    assert_true(second <= 3 * strlen(n1) + 2 * 11 + 20);
    assert_int_equal(known, 11); /* a time and its comma */
    api_move_history_release(&one);
}

/* Over the cap: the oldest facts go, the newest stay, and the cut is the smallest that fits. */
static void test_bound(void **state)
{
    (void)state;
    rng_state = 0x94D049BB133111EBULL;
    for (int c = 0; c < 40; c++) {
        struct api_move_history mh = {0}, orig = {0};
        random_history(&mh, 200 + pick(2000), 5 + pick(60), 2000 + pick(6000), 1 + pick(1000000));
        assert_int_equal(api_move_history_copy(&orig, &mh), 0);
        size_t cap = 1000 + (size_t)pick((int)api_move_history_bytes(&mh));
        int64_t cut = api_move_history_bound(&mh, cap);
        assert_true(api_move_history_bytes(&mh) <= cap);
        /* what is left is exactly the original's facts from the cut on */
        struct api_move_history want = {0};
        assert_int_equal(api_move_history_copy(&want, &orig), 0);
        api_move_history_prune(&want, cut);
        assert_true(api_move_history_equal(&mh, &want));
        /* and keeping one second more would not fit */
        if (cut > 1) {
            struct api_move_history more = {0};
            assert_int_equal(api_move_history_copy(&more, &orig), 0);
            api_move_history_prune(&more, cut - 1);
            assert_true(api_move_history_bytes(&more) > cap);
            api_move_history_release(&more);
        }
        api_move_history_release(&mh);
        api_move_history_release(&orig);
        api_move_history_release(&want);
    }
    /* the cap of status.moveHistory holds over the decoder too: an oversized record is bounded */
    struct api_move_history big = {0}, back = {0};
    rng_state = 7;
    random_history(&big, 8000, 64, 30000, 1000000);
    assert_true(api_move_history_bytes(&big) > API_MOVE_HISTORY_MAX_BYTES);
    cJSON *j = api_move_history_encode(&big);
    struct api_errors errs = {0}, warns = {0};
    assert_int_equal(api_move_history_decode(j, "status.moveHistory", &back, &errs, &warns), 0);
    assert_int_equal(warns.n, 1);
    assert_true(api_move_history_bytes(&back) <= API_MOVE_HISTORY_MAX_BYTES);
    print_message("cap %d bytes: a record of %zu bytes decoded to %zu\n", API_MOVE_HISTORY_MAX_BYTES,
                  api_move_history_bytes(&big), api_move_history_bytes(&back));
    cJSON_Delete(j);
    api_errors_free(&errs);
    api_errors_free(&warns);
    api_move_history_release(&big);
    api_move_history_release(&back);
}

/* Hostile input: each refused with an error naming the field, nothing kept. */
static void test_decode_refuses(void **state)
{
    (void)state;
    static const struct {
        const char *json, *field;
    } cases[] = {
        {"[]", "status.moveHistory"},
        {"{\"workloads\":{}}", "status.moveHistory.workloads"},
        {"{\"workloads\":[1]}", "status.moveHistory.workloads[0]"},
        {"{\"workloads\":[{}]}", "status.moveHistory.workloads[0].workload"},
        {"{\"workloads\":[{\"workload\":\"\"}]}", "status.moveHistory.workloads[0].workload"},
        {"{\"workloads\":[{\"workload\":\"a\"},{\"workload\":\"a\"}]}", "status.moveHistory.workloads[1].workload"},
        {"{\"workloads\":[{\"workload\":\"a\",\"moved\":[1.5]}]}", "status.moveHistory.workloads[0].moved[0]"},
        {"{\"workloads\":[{\"workload\":\"a\",\"moved\":[-3]}]}", "status.moveHistory.workloads[0].moved[0]"},
        {"{\"workloads\":[{\"workload\":\"a\",\"moved\":[\"1\"]}]}", "status.moveHistory.workloads[0].moved[0]"},
        {"{\"workloads\":[{\"workload\":\"a\",\"moved\":[1e300]}]}", "status.moveHistory.workloads[0].moved[0]"},
        {"{\"workloads\":[{\"workload\":\"a\",\"moved\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}]}",
         "status.moveHistory.workloads[0].moved"},
        {"{\"workloads\":[{\"workload\":\"a\",\"left\":[]}]}", "status.moveHistory.workloads[0].left"},
        {"{\"workloads\":[{\"workload\":\"a\",\"left\":{\"n\":\"x\"}}]}", "status.moveHistory.workloads[0].left.n"},
        {"{\"workloads\":[{\"workload\":\"a\",\"left\":{\"\":5}}]}", "status.moveHistory.workloads[0].left."},
        {"{\"workloads\":[{\"workload\":\"a\",\"unhelpful\":true}]}", "status.moveHistory.workloads[0].unhelpful"},
        {"{\"sent\":[]}", "status.moveHistory.sent"},
        {"{\"sent\":{\"ab\":5}}", "status.moveHistory.sent.ab"},
        {"{\"sent\":{\">b\":5}}", "status.moveHistory.sent.>b"},
        {"{\"sent\":{\"a>\":5}}", "status.moveHistory.sent.a>"},
        {"{\"sent\":{\"a>b\":0}}", "status.moveHistory.sent.a>b"},
        {"{\"workloads\":[{\"workload\":\"ok\",\"moved\":[5]}],\"sent\":{\"a>b\":null}}",
         "status.moveHistory.sent.a>b"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *j = cJSON_Parse(cases[i].json);
        assert_non_null(j);
        struct api_move_history mh = {0};
        struct api_errors errs = {0}, warns = {0};
        api_move_history_record(&mh, "Pod stale/one", "x", "y", T0); /* replaced, not kept */
        int rc = api_move_history_decode(j, "status.moveHistory", &mh, &errs, &warns);
        if (rc != -1 || !api_errors_find(&errs, cases[i].field)) {
            char *all = api_errors_join(&errs, "; ");
            fail_msg("%s: want an error at %s, got rc %d: %s", cases[i].json, cases[i].field, rc, all ? all : "");
        }
        assert_true(api_move_history_empty(&mh));
        cJSON_Delete(j);
        api_errors_free(&errs);
        api_errors_free(&warns);
    }
    /* counts over the bounds are refused before anything is allocated for them */
    cJSON *j = cJSON_CreateObject(), *ws = cJSON_AddArrayToObject(j, "workloads");
    for (int i = 0; i <= API_MOVE_HISTORY_MAX_WORKLOADS; i++)
        cJSON_AddItemToArray(ws, cJSON_CreateObject());
    struct api_move_history mh = {0};
    struct api_errors errs = {0};
    assert_int_equal(api_move_history_decode(j, "status.moveHistory", &mh, &errs, NULL), -1);
    assert_non_null(api_errors_find(&errs, "status.moveHistory.workloads"));
    cJSON_Delete(j);
    api_errors_free(&errs);
    /* a key over the length bound */
    char key[API_MOVE_HISTORY_MAX_KEY + 2];
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = 0;
    j = cJSON_CreateObject();
    ws = cJSON_AddArrayToObject(j, "workloads");
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "workload", key);
    cJSON_AddItemToArray(ws, w);
    assert_int_equal(api_move_history_decode(j, "status.moveHistory", &mh, &errs, NULL), -1);
    assert_non_null(api_errors_find(&errs, "status.moveHistory.workloads[0].workload"));
    cJSON_Delete(j);
    api_errors_free(&errs);
}

/* A random change to one value of a valid record (a type, a sign, a fraction, a key): the
 * decoder either takes the record or refuses it whole with an error, never half of it. */
static void mangle(cJSON *node)
{
    int n = 0;
    for (cJSON *c = node->child; c; c = c->next)
        n++;
    if (!n)
        return;
    int k = pick(n), idx = k;
    cJSON *c = node->child;
    while (k--)
        c = c->next;
    if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && pick(3)) {
        mangle(c);
        return;
    }
    cJSON *repl;
    switch (pick(6)) {
    case 0: repl = cJSON_CreateString("x"); break;
    case 1: repl = cJSON_CreateNumber(-1); break;
    case 2: repl = cJSON_CreateNumber(0.5); break;
    case 3: repl = cJSON_CreateTrue(); break;
    case 4: repl = cJSON_CreateArray(); break;
    default: repl = cJSON_CreateNull(); break;
    }
    if (cJSON_IsObject(node))
        cJSON_ReplaceItemInObjectCaseSensitive(node, c->string, repl);
    else
        cJSON_ReplaceItemInArray(node, idx, repl);
}

static void test_decode_mangled(void **state)
{
    (void)state;
    rng_state = 0xA0761D6478BD642FULL;
    int refused = 0, taken = 0;
    for (int c = 0; c < 500; c++) {
        struct api_move_history mh = {0}, back = {0};
        random_history(&mh, 1 + pick(8), 2 + pick(5), 1 + pick(30), 100000);
        cJSON *j = api_move_history_encode(&mh);
        mangle(j);
        struct api_errors errs = {0}, warns = {0};
        int rc = api_move_history_decode(j, "status.moveHistory", &back, &errs, &warns);
        if (rc < 0) {
            assert_true(errs.n > 0);
            assert_true(api_move_history_empty(&back));
            refused++;
        } else {
            assert_int_equal(errs.n, 0);
            /* what it took encodes and decodes to itself */
            struct api_move_history again = {0};
            cJSON *j2 = api_move_history_encode(&back);
            assert_int_equal(api_move_history_decode(j2, "status.moveHistory", &again, &errs, NULL), 0);
            assert_true(api_move_history_equal(&back, &again));
            api_move_history_release(&again);
            cJSON_Delete(j2);
            taken++;
        }
        cJSON_Delete(j);
        api_errors_free(&errs);
        api_errors_free(&warns);
        api_move_history_release(&mh);
        api_move_history_release(&back);
    }
    print_message("mangled records: %d refused, %d taken\n", refused, taken);
    assert_true(refused > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_query),
        cmocka_unit_test(test_bytes_exact),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_size_per_move),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_decode_refuses),
        cmocka_unit_test(test_decode_mangled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
