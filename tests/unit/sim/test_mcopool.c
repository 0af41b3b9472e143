/* Unit tests of the MachineConfig operator stand-in's bookkeeping (hack/sim/mcopool.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "base/jx.h"
#include "hack/sim/mcopool.h"

static cJSON *json(const char *text)
{
    cJSON *o = cJSON_Parse(text);
    assert_non_null(o);
    return o;
}

static const char *pool_text =
    "{\"metadata\":{\"name\":\"worker\",\"uid\":\"pool-uid\",\"generation\":3},\"spec\":{"
    "\"machineConfigSelector\":{\"matchLabels\":{\"machineconfiguration.openshift.io/role\":\"worker\"}},"
    "\"nodeSelector\":{\"matchLabels\":{\"node-role.kubernetes.io/worker\":\"\"}}}}";

static cJSON *mc(const char *name, const char *role, const char *kargs)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"machineconfiguration.openshift.io/role\":\"%s\"}},"
             "\"spec\":{\"kernelArguments\":%s}}",
             name, role, kargs);
    return json(text);
}

static cJSON *node(const char *name, const char *cur, const char *des, const char *state, bool cordoned)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"node-role.kubernetes.io/worker\":\"\"},\"annotations\":{"
             "\"machineconfiguration.openshift.io/currentConfig\":\"%s\","
             "\"machineconfiguration.openshift.io/desiredConfig\":\"%s\","
             "\"machineconfiguration.openshift.io/state\":\"%s\","
             "\"machineconfiguration.openshift.io/reason\":\"drain timed out\"}},\"spec\":{%s}}",
             name, cur, des, state, cordoned ? "\"unschedulable\":true" : "");
    return json(text);
}

static void test_select_and_render(void **state)
{
    (void)state;
    cJSON *pool = json(pool_text);
    cJSON *base = mc("00-worker", "worker", "[]");
    cJSON *psi = mc("99-worker-psi", "worker", "[\"psi=1\",\"schedstats=enable\"]");
    cJSON *other = mc("99-master-psi", "master", "[\"psi=1\"]");
    cJSON *extra = mc("50-worker-extra", "worker", "[\"psi=1\",\"nosmt\"]");
    cJSON *rendered_old = mc("rendered-worker-0123", "worker", "[]");
    assert_true(mcopool_selects(pool, base));
    assert_true(mcopool_selects(pool, psi));
    assert_false(mcopool_selects(pool, other));
    assert_false(mcopool_selects(pool, rendered_old)); /* rendered configs are outputs, not inputs */
    /* a custom pool inheriting the worker MachineConfigs: role In (worker, worker-cnf) */
    cJSON *custom = json("{\"metadata\":{\"name\":\"worker-cnf\"},\"spec\":{\"machineConfigSelector\":{"
                         "\"matchExpressions\":[{\"key\":\"machineconfiguration.openshift.io/role\",\"operator\":"
                         "\"In\",\"values\":[\"worker\",\"worker-cnf\"]}]}}}");
    cJSON *cnf_mc = mc("99-worker-cnf-psi", "worker-cnf", "[\"psi=1\"]");
    assert_true(mcopool_selects(custom, psi));
    assert_true(mcopool_selects(custom, cnf_mc));
    assert_false(mcopool_selects(custom, other));
    assert_false(mcopool_selects(pool, cnf_mc));
    cJSON_Delete(custom);
    cJSON_Delete(cnf_mc);

    const cJSON *two[] = {psi, base};
    cJSON *source = NULL;
    cJSON *r1 = mcopool_render(pool, two, 2, &source);
    const char *name = jx_str(r1, "metadata.name");
    assert_int_equal(strncmp(name, "rendered-worker-", 16), 0);
    assert_int_equal(strlen(name), strlen("rendered-worker-") + 32); /* an md5 in hex */
    assert_true(mcopool_has_karg(r1, "psi=1"));
    assert_true(mcopool_has_karg(r1, "schedstats=enable"));
    assert_int_equal(cJSON_GetArraySize(source), 2);
    assert_string_equal(jx_str(cJSON_GetArrayItem(source, 0), "name"), "00-worker"); /* name order */
    assert_string_equal(jx_str(cJSON_GetArrayItem(source, 1), "kind"), "MachineConfig");
    const cJSON *owner = cJSON_GetArrayItem(jx_get(r1, "metadata.ownerReferences"), 0);
    assert_string_equal(jx_str(owner, "kind"), "MachineConfigPool");
    assert_string_equal(jx_str(owner, "uid"), "pool-uid");

    /* the same inputs in another order render the same config; another input, another one */
    const cJSON *two_swapped[] = {base, psi};
    cJSON *r2 = mcopool_render(pool, two_swapped, 2, NULL);
    assert_string_equal(jx_str(r2, "metadata.name"), name);
    const cJSON *three[] = {base, psi, extra};
    cJSON *r3 = mcopool_render(pool, three, 3, NULL);
    assert_string_not_equal(jx_str(r3, "metadata.name"), name);
    /* merged arguments keep the first occurrence, in name order: 50-worker-extra first */
    const cJSON *args = jx_get(r3, "spec.kernelArguments");
    assert_int_equal(cJSON_GetArraySize(args), 3);
    assert_string_equal(cJSON_GetArrayItem(args, 0)->valuestring, "psi=1");
    assert_string_equal(cJSON_GetArrayItem(args, 1)->valuestring, "nosmt");
    assert_string_equal(cJSON_GetArrayItem(args, 2)->valuestring, "schedstats=enable");
    const cJSON *one[] = {base};
    cJSON *r0 = mcopool_render(pool, one, 1, NULL);
    assert_false(mcopool_has_karg(r0, "psi=1"));

    cJSON *n = node("worker-0", "a", "a", "Done", false);
    assert_true(mcopool_has_node(pool, n));
    cJSON *master = json("{\"metadata\":{\"name\":\"m\",\"labels\":{\"node-role.kubernetes.io/master\":\"\"}}}");
    assert_false(mcopool_has_node(pool, master));
    cJSON_Delete(master);
    cJSON_Delete(n);
    cJSON *all[] = {pool, base, psi, other, extra, rendered_old, source, r0, r1, r2, r3};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        cJSON_Delete(all[i]);
}

static void test_rollout_status(void **state)
{
    (void)state;
    cJSON *pool = json(pool_text);
    cJSON *source = json("[{\"apiVersion\":\"machineconfiguration.openshift.io/v1\",\"kind\":\"MachineConfig\","
                         "\"name\":\"99-worker-psi\"}]");
    /* one node done, one updating (cordoned, Working), one still on the old config */
    cJSON *n0 = node("worker-0", "new", "new", "Done", false);
    cJSON *n1 = node("worker-1", "old", "new", "Working", true);
    cJSON *n2 = node("worker-2", "old", "old", "Done", false);
    const cJSON *nodes[] = {n0, n1, n2};
    struct mcopool_counts c;
    mcopool_count(nodes, 3, "new", &c);
    assert_int_equal(c.machines, 3);
    assert_int_equal(c.updated, 1);
    assert_int_equal(c.ready, 1);
    assert_int_equal(c.unavailable, 1);
    assert_int_equal(c.degraded, 0);
    cJSON *st = mcopool_status(pool, "new", source, &c, "2026-01-01T00:00:00Z");
    assert_int_equal((int)jx_num(st, "machineCount", -1), 3);
    assert_int_equal((int)jx_num(st, "updatedMachineCount", -1), 1);
    assert_int_equal((int)jx_num(st, "observedGeneration", -1), 3);
    assert_null(jx_get(st, "configuration")); /* not every machine runs it yet */
    cJSON *wrapper = cJSON_CreateObject();
    cJSON_AddItemToObject(wrapper, "status", st);
    assert_false(jx_condition_true(wrapper, "Updated"));
    assert_true(jx_condition_true(wrapper, "Updating"));
    assert_false(jx_condition_true(wrapper, "Degraded"));
    const cJSON *updating = jx_condition(wrapper, "Updating");
    assert_string_equal(jx_str(updating, "message"), "All nodes are updating to MachineConfig new");

    /* all done: Updated, configuration.source, and the transition time of a condition that
     * keeps its status is kept */
    cJSON *pool2 = json(pool_text);
    cJSON_AddItemToObject(pool2, "status", cJSON_Duplicate(st, 1));
    cJSON_Delete(wrapper);
    cJSON *m0 = node("worker-0", "new", "new", "Done", false);
    cJSON *m1 = node("worker-1", "new", "new", "Done", false);
    cJSON *m2 = node("worker-2", "new", "new", "Done", false);
    const cJSON *done[] = {m0, m1, m2};
    mcopool_count(done, 3, "new", &c);
    assert_int_equal(c.updated, 3);
    assert_int_equal(c.unavailable, 0);
    st = mcopool_status(pool2, "new", source, &c, "2026-01-02T00:00:00Z");
    assert_string_equal(jx_str(st, "configuration.name"), "new");
    assert_string_equal(jx_str(cJSON_GetArrayItem(jx_get(st, "configuration.source"), 0), "name"), "99-worker-psi");
    wrapper = cJSON_CreateObject();
    cJSON_AddItemToObject(wrapper, "status", st);
    assert_true(jx_condition_true(wrapper, "Updated"));
    assert_false(jx_condition_true(wrapper, "Updating"));
    assert_string_equal(jx_str(jx_condition(wrapper, "Updated"), "lastTransitionTime"), "2026-01-02T00:00:00Z");
    assert_string_equal(jx_str(jx_condition(wrapper, "Degraded"), "lastTransitionTime"), "2026-01-01T00:00:00Z");
    assert_false(mcopool_status_equal(st, jx_get(pool2, "status")));
    cJSON *again = mcopool_status(pool2, "new", source, &c, "2026-01-03T00:00:00Z");
    assert_true(mcopool_status_equal(st, again)); /* only transition times could differ */
    cJSON_Delete(again);

    /* a degraded machine degrades the pool */
    cJSON *d1 = node("worker-1", "old", "new", "Degraded", true);
    const cJSON *deg[] = {m0, d1, m2};
    mcopool_count(deg, 3, "new", &c);
    assert_int_equal(c.degraded, 1);
    cJSON *dst = mcopool_status(pool, "new", source, &c, "2026-01-04T00:00:00Z");
    cJSON *w3 = cJSON_CreateObject();
    cJSON_AddItemToObject(w3, "status", dst);
    assert_true(jx_condition_true(w3, "Degraded"));
    assert_true(jx_condition_true(w3, "NodeDegraded"));
    assert_non_null(strstr(jx_str(jx_condition(w3, "Degraded"), "message"), "worker-1"));
    assert_int_equal((int)jx_num(dst, "degradedMachineCount", -1), 1);

    cJSON *all[] = {pool, pool2, source, n0, n1, n2, m0, m1, m2, d1, wrapper, w3};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        cJSON_Delete(all[i]);
}

static cJSON *role_pool(const char *name)
{
    char text[256];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"nodeSelector\":{\"matchLabels\":"
             "{\"node-role.kubernetes.io/%s\":\"\"}}}}",
             name, name);
    return json(text);
}

static void test_primary_pool_and_paused(void **state)
{
    (void)state;
    cJSON *master = role_pool("master"), *worker = role_pool("worker"), *cnf = role_pool("worker-cnf");
    cJSON *rt = role_pool("worker-rt");
    const cJSON *pools[] = {worker, cnf, master, rt};
    /* a compact cluster's node: master and worker roles: the master pool's */
    cJSON *both = json("{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/master\":\"\","
                       "\"node-role.kubernetes.io/worker\":\"\"}}}");
    assert_string_equal(mcopool_primary(pools, 4, both), "master");
    /* a custom pool wins over worker */
    cJSON *cnf_node = json("{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/worker-cnf\":\"\","
                           "\"node-role.kubernetes.io/worker\":\"\"}}}");
    assert_string_equal(mcopool_primary(pools, 4, cnf_node), "worker-cnf");
    cJSON *plain = json("{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/worker\":\"\"}}}");
    assert_string_equal(mcopool_primary(pools, 4, plain), "worker");
    /* two custom pools: the operator refuses to choose */
    cJSON *two = json("{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/worker-cnf\":\"\","
                      "\"node-role.kubernetes.io/worker-rt\":\"\"}}}");
    assert_null(mcopool_primary(pools, 4, two));
    /* a master in two custom pools too: refused before master is considered */
    cJSON *master_two =
        json("{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/master\":\"\","
             "\"node-role.kubernetes.io/worker-cnf\":\"\",\"node-role.kubernetes.io/worker-rt\":\"\"}}}");
    assert_null(mcopool_primary(pools, 4, master_two));
    cJSON_Delete(master_two);
    /* an empty node selector matches nothing */
    cJSON *empty = json("{\"metadata\":{\"name\":\"all\"},\"spec\":{\"nodeSelector\":{}}}");
    assert_false(mcopool_has_node(empty, plain));
    cJSON_Delete(empty);
    cJSON *none = json("{\"metadata\":{\"labels\":{\"app\":\"x\"}}}");
    assert_null(mcopool_primary(pools, 4, none));

    /* paused, behind its target: neither Updated nor Updating, and says why */
    cJSON *paused = json("{\"metadata\":{\"name\":\"worker\"},\"spec\":{\"paused\":true}}");
    struct mcopool_counts c = {.machines = 2, .updated = 0, .ready = 2};
    cJSON *w = cJSON_CreateObject();
    cJSON_AddItemToObject(w, "status", mcopool_status(paused, "rendered-worker-new", NULL, &c, "2026-01-01T00:00:00Z"));
    assert_false(jx_condition_true(w, "Updated"));
    assert_false(jx_condition_true(w, "Updating"));
    assert_string_equal(jx_str(jx_condition(w, "Updating"), "message"),
                        "Pool is paused; will not update to rendered-worker-new");
    cJSON *all[] = {master, worker, cnf, rt, both, cnf_node, plain, two, none, paused, w};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        cJSON_Delete(all[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_and_render),
        cmocka_unit_test(test_rollout_status),
        cmocka_unit_test(test_primary_pool_and_paused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
