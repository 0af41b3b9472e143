/* What a VM's live migration costs (cost.h): guest memory, the last migration, the cluster's
 * rate (against a reference median over random move lists) and which estimate a move gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reconcile/move/cost.h"
#include "testutil.h"

#define GIB (1LL << 30)

static void test_memory(void **state)
{
    (void)state;
    static const struct {
        const char *vmi;
        int64_t bytes;
    } cases[] = {
        {"{\"spec\":{\"domain\":{\"memory\":{\"guest\":\"4Gi\"},\"resources\":{\"requests\":{\"memory\":\"5Gi\"}}}}}",
         4 * GIB},
        {"{\"spec\":{\"domain\":{\"resources\":{\"requests\":{\"memory\":\"2048Mi\"}}}}}", 2 * GIB},
        {"{\"spec\":{\"domain\":{\"memory\":{\"guest\":\"\"},\"resources\":{\"requests\":{\"memory\":\"1G\"}}}}}",
         1000000000},
        {"{\"spec\":{\"domain\":{\"memory\":{\"guest\":\"lots\"}}}}", 0},
        {"{\"spec\":{\"domain\":{\"memory\":{\"guest\":\"1e30\"}}}}", 0},
        {"{\"spec\":{\"domain\":{\"memory\":{\"guest\":4}}}}", 0},
        {"{\"spec\":{}}", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *v = parse(cases[i].vmi);
        if (cost_vmi_memory(v) != cases[i].bytes)
            fail_msg("case %zu: %lld, want %lld", i, (long long)cost_vmi_memory(v), (long long)cases[i].bytes);
        cJSON_Delete(v);
    }
    assert_int_equal(cost_vmi_memory(NULL), 0);
}

static void test_last_migration(void **state)
{
    (void)state;
    static const struct {
        const char *state;
        bool known;
        int64_t seconds;
    } cases[] = {
        {"{\"completed\":true,\"startTimestamp\":\"2026-12-01T10:00:00Z\",\"endTimestamp\":\"2026-12-01T10:00:42Z\"}",
         true, 42},
        {"{\"completed\":true,\"startTimestamp\":\"2026-12-01T10:00:00Z\",\"endTimestamp\":\"2026-12-01T10:00:00Z\"}",
         true, 0},
        /* failed, unfinished, or its times missing or backwards: not a duration */
        {"{\"completed\":true,\"failed\":true,\"startTimestamp\":\"2026-12-01T10:00:00Z\","
         "\"endTimestamp\":\"2026-12-01T10:00:09Z\"}",
         false, 0},
        {"{\"startTimestamp\":\"2026-12-01T10:00:00Z\"}", false, 0},
        {"{\"completed\":true,\"endTimestamp\":\"2026-12-01T10:00:09Z\"}", false, 0},
        {"{\"completed\":true,\"startTimestamp\":\"2026-12-01T10:00:09Z\",\"endTimestamp\":\"2026-12-01T10:00:00Z\"}",
         false, 0},
        {"{\"completed\":\"true\",\"startTimestamp\":\"2026-12-01T10:00:00Z\",\"endTimestamp\":\"2026-12-01T10:00:09Z\"}",
         false, 0},
        {"{\"completed\":true,\"startTimestamp\":\"yesterday\",\"endTimestamp\":\"2026-12-01T10:00:09Z\"}", false, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *v = cJSON_CreateObject();
        cJSON_AddItemToObject(cJSON_AddObjectToObject(v, "status"), "migrationState", parse(cases[i].state));
        int64_t s = -1;
        bool known = cost_vmi_last_migration(v, &s);
        if (known != cases[i].known || (known && s != cases[i].seconds))
            fail_msg("case %zu: %d %lld", i, known, (long long)s);
        cJSON_Delete(v);
    }
}

/* Every combination of what a VMI's migrationState may say (failed, abortStatus,
 * abortRequested, endTimestamp: each absent, of another type or value, or set) at times
 * around the hold's end, against the rule written out: held while now is before the end
 * plus the hold, only when KubeVirt aborted the migration on its own. */
static void test_convergence_hold(void **state)
{
    (void)state;
    static const char *const failed[] = {NULL, "false", "true", "\"true\""};
    static const char *const status[] = {NULL, "\"\"", "\"Succeeded\"", "\"Failed\"", "\"Aborting\"", "1"};
    static const char *const requested[] = {NULL, "false", "true"};
    static const char *const ends[] = {NULL, "\"yesterday\"", "\"2026-12-01T10:00:00Z\""};
    const int64_t end_ms = 1796119200000; /* 2026-12-01T10:00:00Z */
    const int64_t hold_ms = 600000,
                  nows[] = {end_ms - 1000, end_ms, end_ms + hold_ms - 1, end_ms + hold_ms, end_ms + 10 * hold_ms};
    int held = 0;
    for (size_t f = 0; f < 4; f++)
        for (size_t a = 0; a < 6; a++)
            for (size_t r = 0; r < 3; r++)
                for (size_t e = 0; e < 3; e++) {
                    char json[256] = "{\"completed\":true";
                    const char *keys[] = {"failed", "abortStatus", "abortRequested", "endTimestamp"};
                    const char *vals[] = {failed[f], status[a], requested[r], ends[e]};
                    for (size_t k = 0; k < 4; k++)
                        if (vals[k])
                            snprintf(json + strlen(json), sizeof(json) - strlen(json), ",\"%s\":%s", keys[k], vals[k]);
                    strcat(json, "}");
                    cJSON *v = cJSON_CreateObject();
                    cJSON_AddItemToObject(cJSON_AddObjectToObject(v, "status"), "migrationState", parse(json));
                    bool aborted_by_kubevirt = f == 2 && a == 2 && r != 2 && e == 2;
                    for (size_t n = 0; n < sizeof(nows) / sizeof(nows[0]); n++) {
                        bool want = aborted_by_kubevirt && nows[n] < end_ms + hold_ms;
                        const char *got = cost_convergence_hold(v, hold_ms, nows[n]);
                        if ((got != NULL) != want)
                            fail_msg("%s at %+lld ms: got %s", json, (long long)(nows[n] - end_ms), got ? got : "none");
                        held += got != NULL;
                    }
                    cJSON_Delete(v);
                }
    assert_int_equal(held, 2 * 3); /* abortRequested absent or false, three times before the end of the hold */
    assert_null(cost_convergence_hold(NULL, hold_ms, end_ms));
}

/* The median by its definition: a value with at least half the values at or below it and at
 * least half at or above; of an even count, the mean of the two middle ones. */
static double reference_median(const double *v, size_t k)
{
    double lo = NAN, hi = NAN;
    for (size_t i = 0; i < k; i++) {
        size_t below = 0, above = 0;
        for (size_t j = 0; j < k; j++)
            below += v[j]<v[i], above += v[j]> v[i];
        /* v[i] holds rank positions below+1 .. k-above (1-based) */
        size_t first = below + 1, last = k - above;
        if (first <= (k + 1) / 2 && (k + 1) / 2 <= last)
            lo = v[i];
        if (first <= k / 2 + 1 && k / 2 + 1 <= last)
            hi = v[i];
    }
    return k % 2 ? lo : (lo + hi) / 2;
}

static void test_cluster_rate_random(void **state)
{
    (void)state;
    srand(7);
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(rand() % 12);
        struct api_move moves[12] = {0};
        double rates[12];
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            struct api_move_cost *c = &moves[i].cost;
            c->memory = rand() % 4 ? (int64_t)(rand() % 64 + 1) * GIB / 4 : 0;
            c->timed = rand() % 4 != 0;
            c->duration_s = rand() % 300;
            if (c->timed && c->memory)
                rates[k++] = (double)c->duration_s / ((double)c->memory / (double)GIB);
        }
        double got = cost_cluster_rate(moves, n);
        if (!isnan(got) != (k > 0))
            fail_msg("round %d: %g with %zu timed", round, got, k);
        if (k && fabs(got - reference_median(rates, k)) > 1e-9)
            fail_msg("round %d: %g, the median is %g", round, got, reference_median(rates, k));
    }
}

static void test_estimate(void **state)
{
    (void)state;
    /* two timed moves: 8 s for 4 GiB, 30 s for 2 GiB (2 and 15 s per GiB: median 8.5) */
    struct api_move moves[3] = {0};
    moves[0].cost = (struct api_move_cost){.memory = 4 * GIB, .timed = true, .duration_s = 8};
    moves[1].cost = (struct api_move_cost){.memory = 2 * GIB, .timed = true, .duration_s = 30};
    moves[2].cost = (struct api_move_cost){.memory = 8 * GIB}; /* still migrating */
    cJSON *fresh = parse("{\"spec\":{\"domain\":{\"memory\":{\"guest\":\"6Gi\"}}}}");
    struct api_move_cost c = cost_estimate(fresh, cost_cluster_rate(moves, 3), NAN);
    assert_int_equal(c.memory, 6 * GIB);
    assert_int_equal(c.basis, API_COST_CLUSTER_RATE);
    assert_int_equal(c.expected_s, 51); /* 6 GiB at 8.5 s per GiB */
    assert_false(c.timed);
    /* nothing timed yet: no estimate, the memory still said */
    c = cost_estimate(fresh, cost_cluster_rate(moves + 2, 1), NAN);
    assert_int_equal(c.basis, API_COST_NONE);
    assert_int_equal(c.memory, 6 * GIB);
    /* the VM's own last migration comes first */
    cJSON *moved = parse("{\"spec\":{\"domain\":{\"memory\":{\"guest\":\"6Gi\"}}},\"status\":{\"migrationState\":"
                         "{\"completed\":true,\"startTimestamp\":\"2026-12-01T10:00:00Z\","
                         "\"endTimestamp\":\"2026-12-01T10:01:40Z\"}}}");
    c = cost_estimate(moved, cost_cluster_rate(moves, 3), 1e12);
    assert_int_equal(c.basis, API_COST_LAST_MIGRATION);
    assert_int_equal(c.expected_s, 100);
    /* without memory there is no rate to apply */
    cJSON *bare = parse("{\"spec\":{}}");
    c = cost_estimate(bare, cost_cluster_rate(moves, 3), 1e6);
    assert_int_equal(c.basis, API_COST_NONE);
    cJSON_Delete(fresh);
    cJSON_Delete(moved);
    cJSON_Delete(bare);
}

/* The dirty rate against the rule written out: M / (B - D) below the copy rate B, the hold at
 * or above it, the plain rate where D is unknown, over generated memories, rates and D. */
static void test_dirty_rate(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 5000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double gib = 1 + (double)(x % 64), s_per_gib = 0.5 + (double)(x >> 8 & 1023) / 64.0;
        double b = GIB / s_per_gib, d = (double)(x >> 20 & 4095) / 2048.0 * b; /* 0 .. 2 B */
        char json[128];
        snprintf(json, sizeof(json), "{\"spec\":{\"domain\":{\"memory\":{\"guest\":\"%.0fGi\"}}}}", gib);
        cJSON *vmi = parse(json);
        struct api_move_cost c = cost_estimate(vmi, s_per_gib, d);
        if (d == 0) { /* nothing dirtied: the plain rate, and said so */
            assert_int_equal(c.basis, API_COST_CLUSTER_RATE);
            assert_null(cost_dirty_hold(s_per_gib, d));
        } else if (d < b) {
            assert_int_equal(c.basis, API_COST_DIRTY_RATE);
            assert_int_equal(c.expected_s, llround(gib * GIB / (b - d)));
            assert_true(c.expected_s >= llround(gib * s_per_gib) - 1); /* never faster than without */
            assert_null(cost_dirty_hold(s_per_gib, d));
        } else {
            assert_int_equal(c.basis, API_COST_CLUSTER_RATE);
            assert_string_equal(cost_dirty_hold(s_per_gib, d), COST_DIRTIES_FASTER);
        }
        c = cost_estimate(vmi, s_per_gib, NAN);
        assert_int_equal(c.basis, API_COST_CLUSTER_RATE);
        cJSON_Delete(vmi);
    }
    /* a VM that dirties nothing is priced at the plain rate */
    cJSON *idle = parse("{\"spec\":{\"domain\":{\"memory\":{\"guest\":\"2Gi\"}}}}");
    assert_int_equal(cost_estimate(idle, 6, 0).basis, API_COST_CLUSTER_RATE);
    cJSON_Delete(idle);
    /* no rate measured: no hold, whatever D */
    assert_null(cost_dirty_hold(NAN, 1e12));
    assert_null(cost_dirty_hold(8.5, NAN));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory),           cmocka_unit_test(test_last_migration),
        cmocka_unit_test(test_convergence_hold), cmocka_unit_test(test_cluster_rate_random),
        cmocka_unit_test(test_estimate),         cmocka_unit_test(test_dirty_rate),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}
