/* Unit tests for status_metrics: the numbers the alerts read from a stored PsiRebalance
 * (Ready, nodes selected, tainted, the taint cap, held back, without a reading, rebalancing
 * on, when each tainted node was tainted), and an object with nothing in it; and, over
 * generated clusters of up to 3,000 nodes written as the reconciler writes them
 * (nodestatus_build, api_status_encode), the held-back and unreadable counts against a count
 * of the generated states, also past the 200 entries status.nodes keeps. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/status/nodestatus.h"
#include "status_metrics.h"

struct seen {
    char names[4][32];
    int64_t since[4];
    int n;
};

static void on_tainted(const char *node, int64_t since, void *ud)
{
    struct seen *s = ud;
    if (s->n < 4) {
        snprintf(s->names[s->n], sizeof(s->names[0]), "%s", node);
        s->since[s->n++] = since;
    }
}

static void test_status_health(void **state)
{
    (void)state;
    cJSON *obj = cJSON_Parse(
        "{\"spec\":{\"metrics\":{\"interval\":\"1m30s\"},\"pressure\":{\"maxTaintedPercent\":34,\"taintAbovePercent\":25,\"untaintBelowPercent\":15},\"eviction\":{\"mode\":\"Automatic\"}},"
        "\"status\":{\"conditions\":[{\"type\":\"Degraded\",\"status\":\"True\"},{\"type\":\"Ready\",\"status\":\"True\"}],"
        "\"summary\":{\"nodes\":3,\"tainted\":1,\"nodeStates\":{\"pressured\":1,\"unknown\":1}},"
        "\"nodes\":[{\"name\":\"w0\",\"state\":\"Tainted\",\"since\":\"2026-12-01T10:30:00Z\",\"taintedSince\":\"2026-12-01T10:00:00Z\"},"
        "{\"name\":\"w1\",\"state\":\"Pressured\"},{\"name\":\"w2\",\"state\":\"Unknown\"},"
        "{\"name\":\"w3\",\"state\":\"Cooling\",\"since\":\"bad\"},{\"name\":\"w4\",\"state\":\"Normal\"}]}}");
    assert_non_null(obj);
    struct status_health h;
    struct seen s = {0};
    status_health_of(obj, &h, on_tainted, &s);
    assert_int_equal(h.ready, 1);
    assert_int_equal(h.selected, 3);
    assert_int_equal(h.tainted, 1);
    assert_int_equal(h.taint_cap, 1); /* 34 % of 3 */
    assert_int_equal(h.held, 1);
    assert_int_equal(h.unknown, 1);
    assert_int_equal(h.rebalancing, 1);
    assert_int_equal(h.interval_ms, 90000);
    assert_true(h.taint_above == 25 && h.untaint_below == 15);
    assert_int_equal(h.last_success_s, 0); /* neither lastSuccessfulCycleTime nor creationTimestamp */
    assert_int_equal(s.n, 2);
    assert_string_equal(s.names[0], "w0");
    assert_int_equal(s.since[0], 1796119200);
    assert_string_equal(s.names[1], "w3");
    assert_int_equal(s.since[1], 0);
    cJSON_Delete(obj);

    obj = cJSON_Parse("{\"spec\":{\"eviction\":{\"mode\":\"DryRun\"}},"
                      "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
    status_health_of(obj, &h, NULL, NULL);
    assert_int_equal(h.ready, 0);
    assert_int_equal(h.rebalancing, 0);
    assert_int_equal(h.selected, 0);
    assert_int_equal(h.taint_cap, 0);
    cJSON_Delete(obj);
    /* The dead-man time: the stored lastSuccessfulCycleTime, else the creation time (a
     * PsiRebalance that never succeeded ages from when it was made). */
    obj = cJSON_Parse("{\"metadata\":{\"creationTimestamp\":\"2026-12-01T09:00:00Z\"},"
                      "\"status\":{\"lastSuccessfulCycleTime\":\"2026-12-01T10:00:00Z\"}}");
    status_health_of(obj, &h, NULL, NULL);
    assert_int_equal(h.last_success_s, 1796119200);
    cJSON_Delete(obj);
    obj = cJSON_Parse("{\"metadata\":{\"creationTimestamp\":\"2026-12-01T09:00:00Z\"},"
                      "\"status\":{\"lastSuccessfulCycleTime\":\"garbage\"}}");
    status_health_of(obj, &h, NULL, NULL);
    assert_int_equal(h.last_success_s, 1796119200 - 3600);
    cJSON_Delete(obj);
    obj = cJSON_Parse("{}");
    status_health_of(obj, &h, on_tainted, &s);
    assert_int_equal(h.ready + h.selected + h.tainted + h.held + h.unknown + h.rebalancing + h.interval_ms, 0);
    cJSON_Delete(obj);
}

static void count_tainted(const char *node, int64_t since, void *ud)
{
    (void)node;
    (void)since;
    (*(size_t *)ud)++;
}

/* A cluster of n nodes, each in a state drawn with weights w[state] (of 100) from a
 * linear-congruential sequence seeded by seed; ref[] counts the states drawn. */
static void generate(struct taintfsm_result *r, char (*names)[16], size_t n, const int w[API_NODE_STATES],
                     uint32_t seed, size_t ref[API_NODE_STATES])
{
    memset(ref, 0, API_NODE_STATES * sizeof(ref[0]));
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        int roll = (int)((seed >> 16) % 100), st = 0;
        while (st < API_NODE_STATES - 1 && roll >= w[st])
            roll -= w[st++];
        snprintf(names[i], sizeof(names[i]), "n-%05zu", i);
        r->nodes[i] = (struct taintfsm_node){.name = names[i],
                                             .state = (enum api_node_state)st,
                                             .since_ms = 1796119200000,
                                             .tainted = st == API_NODE_TAINTED || st == API_NODE_COOLING,
                                             .pressure = st == API_NODE_UNKNOWN ? NAN : (double)(seed % 90),
                                             .input = i};
        ref[st]++;
    }
    r->nnodes = n;
    r->tainted = ref[API_NODE_TAINTED] + ref[API_NODE_COOLING];
}

static void test_counts_cover_every_node(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 7, 199, 200, 201, 260, 1000, 3000};
    /* Weights of Normal, Pressured, Tainted, Cooling, Unknown: a calm cluster, a storm with
     * most nodes tainted, one with most unreadable, and one with no Normal node at all. */
    static const int weights[][API_NODE_STATES] = {
        {90, 4, 3, 1, 2}, {5, 10, 75, 5, 5}, {10, 5, 20, 5, 60}, {0, 20, 60, 10, 10}};
    size_t max = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1], past_cap = 0;
    struct taintfsm_result r = {.nodes = calloc(max, sizeof(struct taintfsm_node))};
    char(*names)[16] = calloc(max, sizeof(*names));
    assert_non_null(r.nodes);
    assert_non_null(names);
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        for (size_t w = 0; w < sizeof(weights) / sizeof(weights[0]); w++) {
            size_t ref[API_NODE_STATES];
            generate(&r, names, sizes[s], weights[w], (uint32_t)(s * 31 + w + 1), ref);
            struct api_status st = {0};
            assert_int_equal(nodestatus_build(&st, &r, NULL, NULL), 0);
            cJSON *obj = cJSON_CreateObject();
            cJSON_AddItemToObject(obj, "status", api_status_encode(&st));
            struct status_health h;
            size_t listed_tainted = 0;
            status_health_of(obj, &h, count_tainted, &listed_tainted);
            assert_int_equal(h.selected, (int64_t)sizes[s]);
            assert_int_equal(h.held, (int64_t)ref[API_NODE_PRESSURED]);
            assert_int_equal(h.unknown, (int64_t)ref[API_NODE_UNKNOWN]);
            size_t all_tainted = ref[API_NODE_TAINTED] + ref[API_NODE_COOLING];
            assert_int_equal(listed_tainted, all_tainted < st.nnodes ? all_tainted : st.nnodes);
            past_cap += all_tainted > NODESTATUS_MAX_NODES && h.held > 0 && h.unknown > 0;
            cJSON_Delete(obj);
            api_status_free(&st);
        }
    }
    assert_true(past_cap > 0); /* the generator did reach past 200 tainted nodes */
    free(r.nodes);
    free(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_health),
        cmocka_unit_test(test_counts_cover_every_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
