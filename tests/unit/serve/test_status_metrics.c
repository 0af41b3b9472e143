/* Unit tests for status_metrics: the numbers the alerts read from a stored PsiRebalance
 * (Ready, nodes selected, tainted, the taint cap, held back, without a reading, rebalancing
 * on, when each tainted node was tainted), and an object with nothing in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

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
        "\"summary\":{\"nodes\":3,\"tainted\":1},"
        "\"nodes\":[{\"name\":\"w0\",\"state\":\"Tainted\",\"since\":\"2026-12-01T10:00:00Z\"},"
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
    obj = cJSON_Parse("{}");
    status_health_of(obj, &h, on_tainted, &s);
    assert_int_equal(h.ready + h.selected + h.tainted + h.held + h.unknown + h.rebalancing + h.interval_ms, 0);
    cJSON_Delete(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_health),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
