/* Unit tests of controller/reconcile/status/nodestatus: summary, per-node entries, which nodes are
 * listed, and the bound on entries and bytes at any cluster size. */
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

static const struct api_node_status *entry(const struct api_status *st, const char *name)
{
    for (size_t i = 0; i < st->nnodes; i++)
        if (strcmp(st->nodes[i].name, name) == 0)
            return &st->nodes[i];
    return NULL;
}

static void test_entries_and_summary(void **state)
{
    (void)state;
    struct taintfsm_params p = {
        .taint_above = 25, .untaint_below = 15, .sustain_ms = 0, .max_tainted_percent = 25, .swap_margin = 10};
    struct taintfsm_input in[4] = {
        {.name = "worker-2", .selected = true, .pressure = 31.24, .utilization = NAN},
        {.name = "worker-0", .selected = true, .pressure = 1.06, .utilization = NAN},
        {.name = "worker-1", .selected = true, .pressure = NAN, .utilization = NAN},
        {.name = "worker-3", .selected = true, .pressure = 27, .utilization = NAN},
    };
    struct nodestatus_reading rd[4] = {
        {{31.24, 0.0, 1.06}, 77.77},
        {{1.06, NAN, INFINITY}, NAN},
        {{NAN, NAN, NAN}, NAN},
        {{27, 2, 3}, NAN},
    };
    struct taintfsm_result r = {0};
    assert_int_equal(taintfsm_step(&p, in, 4, 1700000000123LL, &r), 0);

    struct api_status st = {0};
    st.summary.evictions = 7;
    st.summary.migrations_succeeded = 5;
    struct api_node_status *old = api_status_add_node(&st, "worker-2");
    old->evictions = 2;
    old->migrations.succeeded = 2;
    old->migrations.in_flight = 1;
    api_status_add_node(&st, "gone-node");
    struct nodestatus_info info;
    assert_int_equal(nodestatus_build(&st, &r, rd, &info), 0);
    assert_int_equal(info.listed, 4);
    assert_int_equal(info.omitted, 0);
    assert_int_equal(st.nnodes, 4);
    for (size_t i = 1; i < st.nnodes; i++) /* sorted by name */
        assert_true(strcmp(st.nodes[i - 1].name, st.nodes[i].name) < 0);
    assert_null(entry(&st, "gone-node"));
    const struct api_node_status *w2 = entry(&st, "worker-2");
    assert_int_equal(w2->state, API_NODE_TAINTED);
    assert_int_equal(w2->since, 1700000000);
    assert_int_equal(w2->evictions, 2);
    assert_int_equal(w2->migrations.succeeded, 2);
    assert_int_equal(w2->migrations.in_flight, 1);
    assert_int_equal(entry(&st, "worker-3")->state, API_NODE_PRESSURED); /* cap 1: the hotter one has it */
    assert_int_equal(entry(&st, "worker-1")->state, API_NODE_UNKNOWN);
    assert_int_equal(entry(&st, "worker-0")->state, API_NODE_NORMAL);
    assert_true(isnan(entry(&st, "worker-0")->pressure[API_RESOURCE_IO]));
    assert_int_equal(st.summary.nodes, 4);
    assert_int_equal(st.summary.pressured, 2);
    assert_int_equal(st.summary.tainted, (int64_t)r.tainted);
    assert_int_equal(st.summary.evictions, 7);
    assert_int_equal(st.summary.migrations_succeeded, 5);
    assert_int_equal(st.summary.node_states[API_NODE_NORMAL], 1);
    assert_int_equal(st.summary.node_states[API_NODE_TAINTED], 1);
    assert_int_equal(st.summary.node_states[API_NODE_PRESSURED], 1);
    assert_int_equal(st.summary.node_states[API_NODE_UNKNOWN], 1);
    assert_int_equal(st.summary.node_states[API_NODE_COOLING], 0);

    /* As written: one decimal, absent readings left out; the size estimate is exact. */
    cJSON *j = api_status_encode(&st);
    assert_non_null(j);
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "nodes"));
    size_t sum = 0;
    for (size_t i = 0; i < st.nnodes; i++)
        sum += nodestatus_entry_size(&st.nodes[i]);
    assert_int_equal(strlen(text), sum + 1); /* "[" entries "]" with one comma fewer */
    free(text);
    text = cJSON_PrintUnformatted(j);
    assert_non_null(
        strstr(text, "\"name\":\"worker-2\",\"pressure\":{\"cpu\":\"31.2\",\"memory\":\"0.0\",\"io\":\"1.1\"}"));
    assert_non_null(strstr(text, "\"utilization\":\"77.8\""));
    assert_non_null(strstr(text, "\"name\":\"worker-0\",\"pressure\":{\"cpu\":\"1.1\"}"));
    assert_non_null(strstr(text, "\"name\":\"worker-1\",\"state\":\"Unknown\""));
    assert_non_null(strstr(text, "\"since\":\"2023-11-14T22:13:20Z\""));
    free(text);
    cJSON_Delete(j);
    api_status_free(&st);
    taintfsm_result_free(&r);
}

static void test_without_readings(void **state)
{
    (void)state;
    struct taintfsm_node nodes[1] = {{.name = "a", .state = API_NODE_NORMAL, .since_ms = 0, .pressure = 3}};
    struct taintfsm_result r = {.nodes = nodes, .nnodes = 1};
    struct api_status st = {0};
    assert_int_equal(nodestatus_build(&st, &r, NULL, NULL), 0);
    assert_int_equal(st.nnodes, 1);
    for (int k = 0; k < API_RESOURCES; k++)
        assert_true(isnan(st.nodes[0].pressure[k]));
    assert_int_equal(st.nodes[0].since, 0);
    api_status_free(&st);
}

/* A result of n nodes "n-00000".. (names padded with x to namelen), Normal, pressure
 * i % 100 / 10 (cold); every tainted_every-th Tainted at 40, pressured_every-th (offset 1)
 * Pressured at 30, unknown_every-th (offset 2) Unknown; 0: none. */
static struct taintfsm_result big_result(size_t n, size_t namelen, size_t every, char **names_out)
{
    struct taintfsm_result r = {0};
    r.nodes = calloc(n, sizeof(*r.nodes));
    char *names = calloc(n, namelen + 1);
    assert_non_null(r.nodes);
    assert_non_null(names);
    for (size_t i = 0; i < n; i++) {
        char *nm = names + i * (namelen + 1);
        memset(nm, 'x', namelen);
        char num[16];
        snprintf(num, sizeof(num), "n-%05zu", i);
        memcpy(nm, num, strlen(num));
        r.nodes[i].name = nm;
        r.nodes[i].input = i;
        r.nodes[i].pressure = (double)(i % 100) / 10.0;
        r.nodes[i].since_ms = 1000;
        r.nodes[i].state = API_NODE_NORMAL;
        if (every && i % every == 0) {
            r.nodes[i].state = API_NODE_TAINTED;
            r.nodes[i].pressure = 40;
        } else if (every && i % every == 1) {
            r.nodes[i].state = API_NODE_PRESSURED;
            r.nodes[i].pressure = 30;
        } else if (every && i % every == 2) {
            r.nodes[i].state = API_NODE_UNKNOWN;
            r.nodes[i].pressure = NAN;
        }
    }
    r.nnodes = n;
    *names_out = names;
    return r;
}

static size_t encoded_nodes_bytes(const struct api_status *st)
{
    cJSON *j = api_status_encode(st);
    assert_non_null(j);
    const cJSON *nodes = cJSON_GetObjectItem(j, "nodes");
    char *text = nodes ? cJSON_PrintUnformatted(nodes) : NULL;
    size_t len = text ? strlen(text) : 0;
    free(text);
    cJSON_Delete(j);
    return len;
}

/* At 1,000 to 50,000 nodes with a few to say something: those, the 10 hottest, nothing else;
 * the summary counts them all. */
static void test_small_at_any_size(void **state)
{
    (void)state;
    static const size_t sizes[] = {1000, 5000, 50000};
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
        char *names;
        size_t n = sizes[z];
        struct taintfsm_result r = big_result(n, 12, 1000, &names);
        size_t says = 0;
        for (size_t i = 0; i < n; i++)
            says += r.nodes[i].state != API_NODE_NORMAL;
        struct api_status st = {0};
        struct nodestatus_info info;
        assert_int_equal(nodestatus_build(&st, &r, NULL, &info), 0);
        assert_int_equal(info.listed, says + NODESTATUS_HOTTEST);
        assert_int_equal(info.omitted, 0);
        assert_int_equal(st.summary.nodes, (int64_t)n);
        int64_t counted = 0;
        for (int k = 0; k < API_NODE_STATES; k++)
            counted += st.summary.node_states[k];
        assert_int_equal(counted, (int64_t)n);
        assert_int_equal(st.summary.node_states[API_NODE_NORMAL], (int64_t)(n - says));
        /* The Normal nodes listed are the hottest (pressure 9.9: i % 100 == 99). */
        size_t normal = 0;
        for (size_t i = 0; i < st.nnodes; i++) {
            if (i)
                assert_true(strcmp(st.nodes[i - 1].name, st.nodes[i].name) < 0);
            if (st.nodes[i].state != API_NODE_NORMAL)
                continue;
            normal++;
            assert_int_equal(strtoul(st.nodes[i].name + 2, NULL, 10) % 100, 99);
        }
        assert_int_equal(normal, NODESTATUS_HOTTEST);
        assert_true(encoded_nodes_bytes(&st) <= NODESTATUS_MAX_BYTES);
        /* The same input again: the same list, nothing for a status write. */
        struct api_status again = {0};
        assert_int_equal(api_status_copy(&again, &st), 0);
        assert_int_equal(nodestatus_build(&again, &r, NULL, NULL), 0);
        assert_false(api_status_changed(&st, &again, NULL));
        api_status_free(&again);
        api_status_free(&st);
        free(names);
        free(r.nodes);
    }
}

/* A storm: every node has something to say. The entries stop at the bound, tainted first,
 * then pressured, then unknown. */
static void test_storm_bounded_by_entries(void **state)
{
    (void)state;
    char *names;
    size_t n = 5000;
    struct taintfsm_result r = big_result(n, 12, 3, &names);
    for (size_t i = 0; i < n; i++)
        if (r.nodes[i].state == API_NODE_PRESSURED)
            r.nodes[i].pressure = 25 + (double)(i % 50) / 10.0;
    struct api_status st = {0};
    struct nodestatus_info info;
    assert_int_equal(nodestatus_build(&st, &r, NULL, &info), 0);
    assert_int_equal(info.listed, NODESTATUS_MAX_NODES);
    assert_int_equal(st.nnodes, NODESTATUS_MAX_NODES);
    assert_int_equal(info.omitted, n - NODESTATUS_MAX_NODES);
    for (size_t i = 0; i < st.nnodes; i++) /* 1,667 tainted fill it */
        assert_int_equal(st.nodes[i].state, API_NODE_TAINTED);
    assert_int_equal(st.summary.node_states[API_NODE_PRESSURED], 1667);
    /* Fewer tainted: the rest are the hottest pressured. */
    for (size_t i = 0; i < n; i++)
        if (r.nodes[i].state == API_NODE_TAINTED && i >= 300)
            r.nodes[i].state = API_NODE_NORMAL;
    assert_int_equal(nodestatus_build(&st, &r, NULL, &info), 0);
    assert_int_equal(st.nnodes, NODESTATUS_MAX_NODES);
    size_t tainted = 0;
    double coolest = 1e9;
    for (size_t i = 0; i < st.nnodes; i++) {
        tainted += st.nodes[i].state == API_NODE_TAINTED;
        if (st.nodes[i].state == API_NODE_PRESSURED) {
            double p = r.nodes[strtoul(st.nodes[i].name + 2, NULL, 10)].pressure;
            coolest = p < coolest ? p : coolest;
        }
        assert_int_not_equal(st.nodes[i].state, API_NODE_UNKNOWN);
        assert_int_not_equal(st.nodes[i].state, API_NODE_NORMAL);
    }
    assert_int_equal(tainted, 100);
    for (size_t i = 0; i < n; i++)
        if (r.nodes[i].state == API_NODE_PRESSURED && r.nodes[i].pressure > coolest)
            assert_non_null(entry(&st, r.nodes[i].name));
    api_status_free(&st);
    free(names);
    free(r.nodes);
}

/* Names of 253 characters (the longest a node may have): the bytes bound stops it first. */
static void test_storm_bounded_by_bytes(void **state)
{
    (void)state;
    char *names;
    size_t n = 5000;
    struct taintfsm_result r = big_result(n, 253, 1, &names);
    struct nodestatus_reading *rd = calloc(n, sizeof(*rd));
    assert_non_null(rd);
    for (size_t i = 0; i < n; i++)
        rd[i] = (struct nodestatus_reading){{100, 100, 100}, 100};
    struct api_status st = {0};
    struct nodestatus_info info;
    assert_int_equal(nodestatus_build(&st, &r, rd, &info), 0);
    assert_true(info.listed > 0 && info.listed < NODESTATUS_MAX_NODES);
    assert_int_equal(info.omitted, n - info.listed);
    size_t bytes = encoded_nodes_bytes(&st);
    assert_true(bytes <= NODESTATUS_MAX_BYTES);
    assert_true(bytes + nodestatus_entry_size(&st.nodes[0]) > NODESTATUS_MAX_BYTES);
    api_status_free(&st);
    free(rd);
    free(names);
    free(r.nodes);
}

/* Nodes a move names are listed while the move is in status.moves, Normal and cold. */
static void test_moved_nodes_listed(void **state)
{
    (void)state;
    char *names;
    struct taintfsm_result r = big_result(1000, 7, 0, &names);
    struct api_status st = {0};
    struct api_move *m = api_status_add_move(&st);
    assert_non_null(m);
    m->source_node = strdup("n-00010");
    m->destination_node = strdup("n-00020");
    m->target_node = strdup("n-00030");
    assert_int_equal(nodestatus_build(&st, &r, NULL, NULL), 0);
    assert_int_equal(st.nnodes, 3 + NODESTATUS_HOTTEST);
    assert_non_null(entry(&st, "n-00010"));
    assert_non_null(entry(&st, "n-00020"));
    assert_non_null(entry(&st, "n-00030"));
    assert_int_equal(entry(&st, "n-00020")->state, API_NODE_NORMAL);
    api_status_free(&st);
    free(names);
    free(r.nodes);
}

/* A Normal node among the hottest stays listed while it is among the 20 hottest. */
static void test_hottest_hold(void **state)
{
    (void)state;
    char *names;
    struct taintfsm_result r = big_result(100, 7, 0, &names);
    for (size_t i = 0; i < 100; i++)
        r.nodes[i].pressure = (double)i / 10.0; /* n-00099 hottest */
    struct api_status st = {0};
    assert_int_equal(nodestatus_build(&st, &r, NULL, NULL), 0);
    assert_int_equal(st.nnodes, NODESTATUS_HOTTEST);
    assert_non_null(entry(&st, "n-00090"));
    assert_null(entry(&st, "n-00089"));
    r.nodes[90].pressure = 8.15; /* 15th hottest now: held */
    assert_int_equal(nodestatus_build(&st, &r, NULL, NULL), 0);
    assert_int_equal(st.nnodes, NODESTATUS_HOTTEST + 1);
    assert_non_null(entry(&st, "n-00090"));
    assert_non_null(entry(&st, "n-00089"));
    r.nodes[90].pressure = 0.05; /* far down: dropped */
    assert_int_equal(nodestatus_build(&st, &r, NULL, NULL), 0);
    assert_int_equal(st.nnodes, NODESTATUS_HOTTEST);
    assert_null(entry(&st, "n-00090"));
    /* A node never listed does not come in on the hold. */
    r.nodes[90].pressure = 8.15;
    assert_int_equal(nodestatus_build(&st, &r, NULL, NULL), 0);
    assert_null(entry(&st, "n-00090"));
    api_status_free(&st);
    free(names);
    free(r.nodes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_and_summary),    cmocka_unit_test(test_without_readings),
        cmocka_unit_test(test_small_at_any_size),      cmocka_unit_test(test_storm_bounded_by_entries),
        cmocka_unit_test(test_storm_bounded_by_bytes), cmocka_unit_test(test_moved_nodes_listed),
        cmocka_unit_test(test_hottest_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
