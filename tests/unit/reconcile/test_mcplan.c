/* Unit tests of controller/reconcile/mc/mcplan: a node's MachineConfigPool as the MachineConfig
 * operator decides it, and the MachineConfigs that cover the selected nodes' pools, over the
 * pools in tests/testdata/reconcile/mcp-cluster.json (master, worker, two custom pools that
 * inherit the worker MachineConfigs, one that only inherits them, one with an empty node
 * selector). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/mc/mcplan.h"
#include "testutil.h"

#define MAX_POOLS 8

struct cluster {
    cJSON *list;
    const cJSON *pools[MAX_POOLS];
    size_t n;
    cJSON *nodes[8];
    size_t nnodes;
};

static void cluster_load(struct cluster *c)
{
    memset(c, 0, sizeof(*c));
    c->list = fixture("mcp-cluster.json");
    const cJSON *it;
    cJSON_ArrayForEach (it, c->list) {
        assert_true(c->n < MAX_POOLS);
        c->pools[c->n++] = it;
    }
}

/* A node named name with the node-role labels roles (comma-separated). */
static const cJSON *node(struct cluster *c, const char *name, const char *roles)
{
    char text[512];
    int len =
        snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"kubernetes.io/os\":\"linux\"", name);
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", roles);
    for (char *r = copy, *comma; r && *r; r = comma ? comma + 1 : NULL) {
        comma = strchr(r, ',');
        if (comma)
            *comma = '\0';
        len += snprintf(text + len, sizeof(text) - (size_t)len, ",\"node-role.kubernetes.io/%s\":\"\"", r);
    }
    snprintf(text + len, sizeof(text) - (size_t)len, "}}}");
    assert_true(c->nnodes < 8);
    c->nodes[c->nnodes] = parse(text);
    return c->nodes[c->nnodes++];
}

static void cluster_free(struct cluster *c)
{
    for (size_t i = 0; i < c->nnodes; i++)
        cJSON_Delete(c->nodes[i]);
    cJSON_Delete(c->list);
}

static const char *name_of(const cJSON *obj)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_node_pool(void **state)
{
    (void)state;
    struct cluster c;
    cluster_load(&c);
    assert_string_equal(name_of(mcplan_node_pool(c.pools, c.n, node(&c, "w", "worker"))), "worker");
    /* a custom pool wins over worker */
    assert_string_equal(name_of(mcplan_node_pool(c.pools, c.n, node(&c, "cnf", "worker,worker-cnf"))), "worker-cnf");
    assert_string_equal(name_of(mcplan_node_pool(c.pools, c.n, node(&c, "cnf-only", "worker-cnf"))), "worker-cnf");
    /* a compact cluster's master carries the worker role and stays in the master pool */
    assert_string_equal(name_of(mcplan_node_pool(c.pools, c.n, node(&c, "m", "master,worker"))), "master");
    /* two custom pools: the MachineConfig operator refuses the node */
    assert_null(mcplan_node_pool(c.pools, c.n, node(&c, "both", "worker,worker-cnf,worker-rt")));
    /* no pool selects it (the empty node selector of "everything" matches nothing) */
    assert_null(mcplan_node_pool(c.pools, c.n, node(&c, "edge", "edge")));
    assert_null(mcplan_node_pool(c.pools, 0, c.nodes[0]));
    cluster_free(&c);
}

static void test_pool_selects_role(void **state)
{
    (void)state;
    struct cluster c;
    cluster_load(&c);
    assert_true(mcplan_pool_selects_role(c.pools[1], "worker"));
    assert_false(mcplan_pool_selects_role(c.pools[1], "worker-cnf"));
    assert_true(mcplan_pool_selects_role(c.pools[2], "worker"));
    assert_true(mcplan_pool_selects_role(c.pools[2], "worker-cnf"));
    assert_false(mcplan_pool_selects_role(c.pools[2], "master"));
    cJSON *bare = parse("{\"metadata\":{\"name\":\"bare\"}}");
    assert_false(mcplan_pool_selects_role(bare, "bare")); /* no selector: nothing */
    cJSON_Delete(bare);
    cluster_free(&c);
}

/* Plan over the nodes given, check roles (comma-separated, in order) and pool:role pairs. */
static void expect_plan(struct cluster *c, const char *roles, const char *const *pairs, size_t npairs)
{
    struct mcplan plan;
    assert_int_equal(mcplan_build(c->pools, c->n, (const cJSON *const *)c->nodes, c->nnodes, &plan), 0);
    char got[256] = "";
    for (size_t i = 0; i < plan.nroles; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "", plan.roles[i]);
    assert_string_equal(got, roles);
    assert_int_equal(plan.npools, npairs);
    for (size_t i = 0; i < npairs; i++) {
        char pair[128];
        snprintf(pair, sizeof(pair), "%s:%s", plan.pools[i].name, plan.pools[i].role ? plan.pools[i].role : "-");
        assert_string_equal(pair, pairs[i]);
    }
    mcplan_free(&plan);
}

static void test_plan_worker_and_cnf(void **state)
{
    (void)state;
    struct cluster c;
    cluster_load(&c);
    /* only workers: the worker MachineConfig */
    node(&c, "w-0", "worker");
    node(&c, "w-1", "worker");
    expect_plan(&c, "worker", (const char *const[]){"worker:worker"}, 1);
    /* and a worker-cnf node: worker-cnf inherits the worker MachineConfig, no duplicate */
    node(&c, "cnf-0", "worker,worker-cnf");
    expect_plan(&c, "worker", (const char *const[]){"worker:worker", "worker-cnf:worker"}, 2);
    cluster_free(&c);
}

static void test_plan_cnf_alone(void **state)
{
    (void)state;
    struct cluster c;
    cluster_load(&c);
    /* only worker-cnf nodes: a worker MachineConfig would reboot the worker pool: its own role */
    node(&c, "cnf-0", "worker,worker-cnf");
    node(&c, "cnf-1", "worker,worker-cnf");
    expect_plan(&c, "worker-cnf", (const char *const[]){"worker-cnf:worker-cnf"}, 1);
    /* two custom pools, no worker: one role each */
    node(&c, "rt-0", "worker,worker-rt");
    expect_plan(&c, "worker-cnf,worker-rt", (const char *const[]){"worker-cnf:worker-cnf", "worker-rt:worker-rt"}, 2);
    cluster_free(&c);
}

static void test_plan_compact(void **state)
{
    (void)state;
    struct cluster c;
    cluster_load(&c);
    /* the default node selector (workers) on a compact cluster: the masters' pool */
    node(&c, "m-0", "master,worker");
    node(&c, "m-1", "master,worker");
    expect_plan(&c, "master", (const char *const[]){"master:master"}, 1);
    cluster_free(&c);
}

static void test_plan_not_covered_and_orphans(void **state)
{
    (void)state;
    struct cluster c;
    cluster_load(&c);
    /* a pool that only picks up worker MachineConfigs, the worker pool not in the plan */
    node(&c, "x-0", "inherits-only");
    node(&c, "e-0", "edge");
    node(&c, "both", "worker-cnf,worker-rt");
    struct mcplan plan;
    assert_int_equal(mcplan_build(c.pools, c.n, (const cJSON *const *)c.nodes, c.nnodes, &plan), 0);
    assert_int_equal(plan.nroles, 0);
    assert_int_equal(plan.npools, 1);
    assert_string_equal(plan.pools[0].name, "inherits-only");
    assert_null(plan.pools[0].role);
    assert_int_equal(plan.pools[0].nodes, 1);
    assert_int_equal(plan.norphans, 2);
    assert_string_equal(plan.orphans[0], "e-0");
    assert_string_equal(plan.orphans[1], "both");
    mcplan_free(&plan);
    /* with a worker node selected too, the worker MachineConfig covers both */
    node(&c, "w-0", "worker");
    expect_plan(&c, "worker", (const char *const[]){"inherits-only:worker", "worker:worker"}, 2);
    cluster_free(&c);
}

static void test_plan_empty(void **state)
{
    (void)state;
    struct cluster c;
    cluster_load(&c);
    struct mcplan plan;
    assert_int_equal(mcplan_build(c.pools, c.n, NULL, 0, &plan), 0);
    assert_int_equal(plan.npools + plan.nroles + plan.norphans, 0);
    assert_false(mcplan_has_role(&plan, "worker"));
    mcplan_free(&plan);
    node(&c, "w-0", "worker");
    assert_int_equal(mcplan_build(NULL, 0, (const cJSON *const *)c.nodes, c.nnodes, &plan), 0);
    assert_int_equal(plan.norphans, 1); /* no pool at all */
    mcplan_free(&plan);
    assert_int_equal(mcplan_build(c.pools, c.n, (const cJSON *const *)c.nodes, c.nnodes, &plan), 0);
    assert_true(mcplan_has_role(&plan, "worker"));
    mcplan_free(&plan);
    cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_pool),           cmocka_unit_test(test_pool_selects_role),
        cmocka_unit_test(test_plan_worker_and_cnf), cmocka_unit_test(test_plan_cnf_alone),
        cmocka_unit_test(test_plan_compact),        cmocka_unit_test(test_plan_not_covered_and_orphans),
        cmocka_unit_test(test_plan_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
