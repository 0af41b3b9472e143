/* Unit tests of controller/reconcile/nodestatus: summary, per-node entries, the size bound. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/nodestatus.h"

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
    struct taintfsm_params p = {.taint_above = 25, .untaint_below = 15, .sustain_ms = 0, .max_tainted_percent = 25,
                                .swap_margin = 10};
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
    assert_non_null(strstr(text, "\"name\":\"worker-2\",\"pressure\":{\"cpu\":\"31.2\",\"memory\":\"0.0\",\"io\":\"1.1\"}"));
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

/* A result of n nodes "n-00000".., with states by i. */
static struct taintfsm_result big_result(size_t n, size_t namelen, char **names_out)
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
        r.nodes[i].pressure = (double)(i % 100);
        r.nodes[i].since_ms = 1000;
        /* Scattered: every 97th tainted, every 89th pressured, every 83rd unknown. */
        r.nodes[i].state = i % 97 == 5    ? API_NODE_TAINTED
                           : i % 89 == 7  ? API_NODE_PRESSURED
                           : i % 83 == 11 ? API_NODE_UNKNOWN
                                          : API_NODE_NORMAL;
        if (r.nodes[i].state == API_NODE_UNKNOWN)
            r.nodes[i].pressure = NAN;
    }
    r.nnodes = n;
    *names_out = names;
    return r;
}

static void test_bounded_at_5000(void **state)
{
    (void)state;
    char *names;
    size_t n = 6000;
    struct taintfsm_result r = big_result(n, 12, &names);
    size_t non_normal = 0;
    for (size_t i = 0; i < n; i++)
        non_normal += r.nodes[i].state != API_NODE_NORMAL;
    struct api_status st = {0};
    struct nodestatus_info info;
    assert_int_equal(nodestatus_build(&st, &r, NULL, &info), 0);
    assert_int_equal(info.listed, NODESTATUS_MAX_NODES);
    assert_int_equal(info.omitted, 1000);
    assert_int_equal(st.nnodes, NODESTATUS_MAX_NODES);
    assert_int_equal(st.summary.nodes, 6000);
    /* Every non-Normal node is listed; the Normal ones listed are the first by name. */
    size_t listed_non_normal = 0;
    char last_normal[32] = "";
    for (size_t i = 0; i < st.nnodes; i++) {
        if (i)
            assert_true(strcmp(st.nodes[i - 1].name, st.nodes[i].name) < 0);
        if (st.nodes[i].state != API_NODE_NORMAL)
            listed_non_normal++;
        else
            snprintf(last_normal, sizeof(last_normal), "%s", st.nodes[i].name);
    }
    assert_int_equal(listed_non_normal, non_normal);
    for (size_t i = 0; i < n; i++)
        if (r.nodes[i].state == API_NODE_NORMAL && strcmp(r.nodes[i].name, last_normal) < 0)
            assert_non_null(entry(&st, r.nodes[i].name));
    /* The same input gives the same list (no churn of Normal nodes). */
    struct api_status again = {0};
    assert_int_equal(nodestatus_build(&again, &r, NULL, NULL), 0);
    assert_false(api_status_changed(&st, &again, NULL));
    api_status_free(&again);
    /* Exactly at the limit: everything listed. */
    r.nnodes = NODESTATUS_MAX_NODES;
    assert_int_equal(nodestatus_build(&st, &r, NULL, &info), 0);
    assert_int_equal(info.omitted, 0);
    api_status_free(&st);
    free(names);
    free(r.nodes);
}

static void test_bounded_by_bytes(void **state)
{
    (void)state;
    char *names;
    size_t n = 4000, namelen = 250;
    struct taintfsm_result r = big_result(n, namelen, &names);
    struct api_status st = {0};
    struct nodestatus_info info;
    assert_int_equal(nodestatus_build(&st, &r, NULL, &info), 0);
    assert_true(info.listed < n && info.listed > 1000);
    assert_int_equal(info.omitted, n - info.listed);
    /* The encoded node list stays within the budget, and one more entry would not have. */
    cJSON *j = api_status_encode(&st);
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "nodes"));
    assert_true(strlen(text) <= NODESTATUS_MAX_BYTES);
    assert_true(strlen(text) + nodestatus_entry_size(&st.nodes[0]) > NODESTATUS_MAX_BYTES);
    free(text);
    cJSON_Delete(j);
    /* Priority when even non-Normal nodes do not all fit: tainted, then pressured, then unknown. */
    for (size_t i = 0; i < n; i++)
        r.nodes[i].state = i < 500 ? API_NODE_UNKNOWN : i < 1000 ? API_NODE_TAINTED : API_NODE_PRESSURED;
    assert_int_equal(nodestatus_build(&st, &r, NULL, &info), 0);
    assert_true(info.listed > 1000 && info.listed < n);
    size_t tainted = 0, pressured = 0, unknown = 0;
    for (size_t i = 0; i < st.nnodes; i++) {
        tainted += st.nodes[i].state == API_NODE_TAINTED;
        pressured += st.nodes[i].state == API_NODE_PRESSURED;
        unknown += st.nodes[i].state == API_NODE_UNKNOWN;
    }
    assert_int_equal(tainted, 500);
    assert_int_equal(pressured, info.listed - 500);
    assert_int_equal(unknown, 0);
    /* Among the pressured, the hottest made it. */
    double coolest_listed = 1e9;
    for (size_t i = 0; i < st.nnodes; i++)
        if (st.nodes[i].state == API_NODE_PRESSURED) {
            size_t idx = (size_t)strtoul(st.nodes[i].name + 2, NULL, 10);
            if (r.nodes[idx].pressure < coolest_listed)
                coolest_listed = r.nodes[idx].pressure;
        }
    for (size_t i = 1000; i < 3000; i++)
        if (r.nodes[i].pressure > coolest_listed)
            assert_non_null(entry(&st, r.nodes[i].name));
    api_status_free(&st);
    free(names);
    free(r.nodes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_and_summary),
        cmocka_unit_test(test_without_readings),
        cmocka_unit_test(test_bounded_at_5000),
        cmocka_unit_test(test_bounded_by_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
