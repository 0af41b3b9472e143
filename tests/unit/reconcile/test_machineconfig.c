/* Unit tests of controller/reconcile/mc/machineconfig: the object, its diff, and PSIEnabled
 * from MachineConfigPool fixtures in tests/testdata/reconcile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/status/conditions.h"
#include "reconcile/mc/machineconfig.h"
#include "testutil.h"

/* tests/testdata/reconcile/name, parsed; fails the test when missing or not JSON. */
static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *label(const cJSON *mc, const char *key)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mc, "metadata"), "labels");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *kargs(const cJSON *mc)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mc, "spec"), "kernelArguments");
}

static void test_name(void **state)
{
    (void)state;
    char *n = machineconfig_name("worker");
    assert_string_equal(n, "99-worker-psi-rebalancer");
    free(n);
    n = machineconfig_name("worker-cnf");
    assert_string_equal(n, "99-worker-cnf-psi-rebalancer");
    free(n);
}

static void test_build(void **state)
{
    (void)state;
    struct machineconfig_want w = {"worker", "workers", false};
    cJSON *mc = machineconfig_build(&w);
    assert_non_null(mc);
    assert_string_equal(str_at(mc, "apiVersion", NULL), "machineconfiguration.openshift.io/v1");
    assert_string_equal(str_at(mc, "kind", NULL), "MachineConfig");
    assert_string_equal(str_at(mc, "metadata", "name"), "99-worker-psi-rebalancer");
    assert_string_equal(label(mc, "machineconfiguration.openshift.io/role"), "worker");
    assert_string_equal(label(mc, "app.kubernetes.io/managed-by"), "psi-rebalancer");
    assert_string_equal(label(mc, "rebalance.psi.dev/owner"), "workers");
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mc, "metadata"), "ownerReferences"));
    const cJSON *k = kargs(mc);
    assert_int_equal(cJSON_GetArraySize(k), 1);
    assert_string_equal(cJSON_GetArrayItem(k, 0)->valuestring, "psi=1");
    const cJSON *ign = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mc, "spec"), "config"), "ignition");
    assert_string_equal(str_at(ign, "version", NULL), "3.2.0");
    assert_int_equal(machineconfig_diff(mc, &w), MACHINECONFIG_UP_TO_DATE);
    cJSON_Delete(mc);

    struct machineconfig_want ws = {"infra", "workers", true};
    mc = machineconfig_build(&ws);
    k = kargs(mc);
    assert_int_equal(cJSON_GetArraySize(k), 2);
    assert_string_equal(cJSON_GetArrayItem(k, 0)->valuestring, "psi=1");
    assert_string_equal(cJSON_GetArrayItem(k, 1)->valuestring, "schedstats=enable");
    assert_string_equal(str_at(mc, "metadata", "name"), "99-infra-psi-rebalancer");
    assert_int_equal(machineconfig_diff(mc, &ws), MACHINECONFIG_UP_TO_DATE);
    assert_int_equal(machineconfig_diff(mc, &w), MACHINECONFIG_NEEDS_UPDATE); /* role and kargs differ */
    cJSON_Delete(mc);
}

static void test_diff_and_apply_existing(void **state)
{
    (void)state;
    cJSON *existing = fixture("machineconfig-existing.json");
    struct machineconfig_want w = {"worker", "workers", false};
    assert_int_equal(machineconfig_diff(existing, &w), MACHINECONFIG_UP_TO_DATE);
    /* schedstats asked for now: an update, keeping everything we do not own. */
    w.schedstats = true;
    assert_int_equal(machineconfig_diff(existing, &w), MACHINECONFIG_NEEDS_UPDATE);
    cJSON *updated = machineconfig_apply(existing, &w);
    assert_non_null(updated);
    assert_int_equal(machineconfig_diff(updated, &w), MACHINECONFIG_UP_TO_DATE);
    assert_string_equal(str_at(updated, "metadata", "resourceVersion"), "77310");
    assert_string_equal(str_at(updated, "metadata", "uid"), "0b6f5a4e-1f7c-4c44-9d5e-2d7f3c1a9b10");
    const cJSON *ann =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(updated, "metadata"), "annotations");
    assert_string_equal(str_at(ann, "note", NULL), "kept as is");
    assert_int_equal(cJSON_GetArraySize(kargs(updated)), 2);
    assert_true(
        cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(updated, "spec"), "fips")));
    /* The original is untouched. */
    assert_int_equal(cJSON_GetArraySize(kargs(existing)), 1);
    cJSON_Delete(updated);

    /* A hand-edited kernel argument list, a lost label, a missing Ignition version: updates. */
    w.schedstats = false;
    cJSON *edited = cJSON_Duplicate(existing, true);
    cJSON_AddItemToArray(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(edited, "spec"), "kernelArguments"),
        cJSON_CreateString("nosmt"));
    assert_int_equal(machineconfig_diff(edited, &w), MACHINECONFIG_NEEDS_UPDATE);
    cJSON_Delete(edited);
    edited = cJSON_Duplicate(existing, true);
    cJSON_DeleteItemFromObject(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(edited, "metadata"), "labels"),
        "machineconfiguration.openshift.io/role");
    assert_int_equal(machineconfig_diff(edited, &w), MACHINECONFIG_NEEDS_UPDATE);
    updated = machineconfig_apply(edited, &w);
    assert_string_equal(label(updated, "machineconfiguration.openshift.io/role"), "worker");
    cJSON_Delete(updated);
    cJSON_Delete(edited);
    edited = cJSON_Duplicate(existing, true);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItemCaseSensitive(edited, "spec"), "config");
    assert_int_equal(machineconfig_diff(edited, &w), MACHINECONFIG_NEEDS_UPDATE);
    updated = machineconfig_apply(edited, &w);
    assert_int_equal(machineconfig_diff(updated, &w), MACHINECONFIG_UP_TO_DATE);
    cJSON_Delete(updated);
    cJSON_Delete(edited);
    /* Another PsiRebalance's MachineConfig for the same role. */
    struct machineconfig_want other = {"worker", "someone-else", false};
    assert_int_equal(machineconfig_diff(existing, &other), MACHINECONFIG_FOREIGN);
    cJSON_Delete(existing);
    assert_null(machineconfig_apply(NULL, &w));
}

static void test_foreign(void **state)
{
    (void)state;
    cJSON *mc = fixture("machineconfig-foreign.json");
    struct machineconfig_want w = {"worker", "workers", false};
    assert_int_equal(machineconfig_diff(mc, &w), MACHINECONFIG_FOREIGN);
    cJSON_Delete(mc);
}

/* Whether mc's kernelArguments hold arg. */
static bool has_karg(const cJSON *mc, const char *arg)
{
    const cJSON *a;
    cJSON_ArrayForEach (a, kargs(mc)) {
        if (cJSON_IsString(a) && strcmp(a->valuestring, arg) == 0)
            return true;
    }
    return false;
}

/* Every set of kernel arguments an existing MachineConfig of ours may hold, whatever is asked:
 * what is written keeps each argument of ours it had (the admission policy refuses taking one
 * away), holds psi=1 and what is asked, and is up to date afterwards. */
static void test_keep_only_adds(void **state)
{
    (void)state;
    static const char *const args[] = {MACHINECONFIG_KARG_PSI, MACHINECONFIG_KARG_SCHEDSTATS};
    for (int held = 0; held < 4; held++)
        for (int asked = 0; asked < 2; asked++) {
            struct machineconfig_want w = {"worker", "workers", asked == 1};
            cJSON *existing = machineconfig_build(&w);
            cJSON *held_args = cJSON_CreateArray();
            for (int i = 0; i < 2; i++)
                if (held & (1 << i))
                    cJSON_AddItemToArray(held_args, cJSON_CreateString(args[i]));
            cJSON_ReplaceItemInObject(cJSON_GetObjectItem(existing, "spec"), "kernelArguments", held_args);
            struct machineconfig_want kept = machineconfig_keep(existing, &w);
            assert_int_equal(kept.schedstats, asked == 1 || (held & 2) != 0);
            cJSON *written = machineconfig_apply(existing, &kept);
            assert_non_null(written);
            for (int i = 0; i < 2; i++)
                if (held & (1 << i))
                    assert_true(has_karg(written, args[i]));
            assert_true(has_karg(written, MACHINECONFIG_KARG_PSI));
            assert_int_equal(has_karg(written, MACHINECONFIG_KARG_SCHEDSTATS), kept.schedstats);
            assert_int_equal(machineconfig_diff(written, &kept), MACHINECONFIG_UP_TO_DATE);
            cJSON_Delete(written);
            cJSON_Delete(existing);
        }
    struct machineconfig_want w = {"worker", "workers", false};
    assert_false(machineconfig_keep(NULL, &w).schedstats); /* nothing yet: as asked */
}

static void test_pool_updated(void **state)
{
    (void)state;
    cJSON *pool = fixture("mcp-worker-updated.json");
    struct machineconfig_pool_eval ev;
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.status, API_CONDITION_TRUE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_ENABLED);
    assert_string_equal(ev.pool, "worker");
    assert_true(ev.rendered && ev.updated);
    assert_int_equal(ev.updated_machines, 3);
    assert_int_equal(ev.machines, 3);
    /* Another MachineConfig name is not in the pool's sources. */
    machineconfig_pool_eval(pool, "99-worker-other", &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_PROGRESSING);
    assert_non_null(strstr(ev.message, "not rendered"));

    struct api_status st = {0};
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(machineconfig_status_entry(&st, "worker", "99-worker-psi-rebalancer", &ev), 0);
    assert_int_equal(st.nmachine_configs, 1);
    const struct api_machine_config_status *m = &st.machine_configs[0];
    assert_string_equal(m->role, "worker");
    assert_string_equal(m->name, "99-worker-psi-rebalancer");
    assert_string_equal(m->pool, "worker"); /* the key */
    assert_true(m->updated);
    assert_int_equal(m->updated_machines, 3);
    assert_int_equal(m->machines, 3);
    api_status_free(&st);
    cJSON_Delete(pool);
}

static void test_pool_updating(void **state)
{
    (void)state;
    cJSON *pool = fixture("mcp-worker-updating.json");
    struct machineconfig_pool_eval ev;
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_PROGRESSING);
    assert_false(ev.updated);
    assert_non_null(strstr(ev.message, "1 of 3 machines updated"));
    assert_int_equal(ev.updated_machines, 1);

    /* Every machine updated and Updated True, but the pool still targets a newer render. */
    cJSON *status = cJSON_GetObjectItemCaseSensitive(pool, "status");
    cJSON_ReplaceItemInObject(status, "updatedMachineCount", cJSON_CreateNumber(3));
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(conds, 1), "status", cJSON_CreateString("True"));
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_PROGRESSING);
    /* The MCO moves status.configuration once done: now Enabled. */
    cJSON *spec_conf =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pool, "spec"), "configuration");
    cJSON_ReplaceItemInObject(status, "configuration", cJSON_Duplicate(spec_conf, true));
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.status, API_CONDITION_TRUE);
    /* Counts that are no int32 (a cast of 1e300 is undefined) read as 0. */
    cJSON_ReplaceItemInObject(status, "machineCount", cJSON_CreateNumber(1e300));
    cJSON_ReplaceItemInObject(status, "updatedMachineCount", cJSON_CreateNumber(2.5));
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.machines, 0);
    assert_int_equal(ev.updated_machines, 0);
    cJSON_Delete(pool);
}

static void test_pool_paused_and_uncounted(void **state)
{
    (void)state;
    /* a paused pool in the middle of our rollout: PoolPaused, not Progressing for ever */
    cJSON *pool = fixture("mcp-worker-updating.json");
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pool, "spec");
    cJSON_AddTrueToObject(spec, "paused");
    struct machineconfig_pool_eval ev;
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_POOL_PAUSED);
    assert_non_null(strstr(ev.message, "pool worker is paused"));
    assert_non_null(strstr(ev.message, "(1 of 3 updated)"));
    /* over two pools, a paused pool outranks one that progresses */
    struct machineconfig_pool_eval both[2];
    both[0] = ev;
    cJSON_ReplaceItemInObject(spec, "paused", cJSON_CreateFalse());
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &both[1]);
    assert_string_equal(both[1].reason, MACHINECONFIG_REASON_PROGRESSING);
    char msg[512];
    struct machineconfig_psi out = {.msg = msg, .msglen = sizeof(msg)};
    machineconfig_psi_enabled(both, 2, true, true, &out);
    assert_string_equal(out.reason, MACHINECONFIG_REASON_POOL_PAUSED);
    /* a pool counting no machine while a selected node is in it: never "all 0 machines" Enabled */
    cJSON *status = cJSON_GetObjectItemCaseSensitive(pool, "status");
    cJSON_ReplaceItemInObject(status, "machineCount", cJSON_CreateNumber(0));
    cJSON_ReplaceItemInObject(status, "updatedMachineCount", cJSON_CreateNumber(0));
    cJSON_ReplaceItemInObject(status, "configuration",
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(spec, "configuration"), true));
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_PROGRESSING);
    assert_non_null(strstr(ev.message, "pool worker counts no machine yet"));
    cJSON_Delete(pool);
}

static void test_pool_not_rendered(void **state)
{
    (void)state;
    cJSON *pool = fixture("mcp-worker-not-rendered.json");
    struct machineconfig_pool_eval ev;
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE); /* Updated True 3/3, but without ours */
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_PROGRESSING);
    assert_false(ev.rendered);
    assert_int_equal(ev.updated_machines, 0);
    assert_int_equal(ev.machines, 3);
    assert_non_null(strstr(ev.message, "not rendered"));
    cJSON_Delete(pool);
}

static void test_pool_degraded(void **state)
{
    (void)state;
    cJSON *pool = fixture("mcp-worker-degraded.json");
    struct machineconfig_pool_eval ev;
    machineconfig_pool_eval(pool, "99-worker-psi-rebalancer", &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_POOL_DEGRADED);
    assert_int_equal(ev.degraded_machines, 1);
    assert_non_null(strstr(ev.message, "1 of 3 machines degraded"));
    assert_non_null(strstr(ev.message, "unexpected on-disk state"));
    cJSON_Delete(pool);
}

static void test_orphans_and_not_covered(void **state)
{
    (void)state;
    struct machineconfig_pool_eval ev;
    const char *names[] = {"n-1", "n-2"};
    machineconfig_orphans(names, 2, 7, &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_POOL_NOT_FOUND);
    assert_non_null(strstr(ev.message, "7 selected nodes are in no MachineConfigPool"));
    assert_non_null(strstr(ev.message, ": n-1, n-2 and 5 more"));
    machineconfig_orphans(names, 1, 1, &ev);
    assert_non_null(strstr(ev.message, "1 selected node is in no MachineConfigPool"));
    assert_null(strstr(ev.message, "more"));

    machineconfig_not_covered("gpu", &ev);
    assert_int_equal(ev.status, API_CONDITION_FALSE);
    assert_string_equal(ev.reason, MACHINECONFIG_REASON_POOL_NOT_COVERED);
    assert_non_null(strstr(ev.message, "pool gpu picks up MachineConfigs of no role"));
    struct api_status st = {0};
    assert_int_equal(machineconfig_status_entry(&st, NULL, NULL, &ev), 0);
    assert_string_equal(st.machine_configs[0].pool, "gpu");
    assert_null(st.machine_configs[0].role);
    assert_null(st.machine_configs[0].name);
    assert_false(st.machine_configs[0].updated);
    api_status_free(&st);
}

static void test_psi_enabled_over_pools(void **state)
{
    (void)state;
    cJSON *updated = fixture("mcp-worker-updated.json"), *updating = fixture("mcp-worker-updating.json"),
          *degraded = fixture("mcp-worker-degraded.json");
    struct machineconfig_pool_eval ev[3];
    char msg[1024];
    struct machineconfig_psi out = {.msg = msg, .msglen = sizeof(msg)};
    machineconfig_pool_eval(updated, "99-worker-psi-rebalancer", &ev[0]);
    machineconfig_pool_eval(updating, "99-worker-psi-rebalancer", &ev[1]);
    const char *orphan[] = {"lonely"};
    machineconfig_orphans(orphan, 1, 1, &ev[2]);

    machineconfig_psi_enabled(ev, 1, true, true, &out);
    assert_int_equal(out.status, API_CONDITION_TRUE);
    assert_string_equal(out.reason, "Enabled");
    machineconfig_psi_enabled(ev, 2, true, true, &out);
    assert_int_equal(out.status, API_CONDITION_FALSE);
    assert_string_equal(out.reason, "Progressing");
    assert_non_null(strstr(msg, "1 of 3"));
    /* every pool's state, the one in the reported state first */
    const char *progressing = strstr(msg, "1 of 3"), *enabled = strstr(msg, "all 3 machines");
    assert_non_null(enabled);
    assert_true(progressing < enabled);
    machineconfig_psi_enabled(ev, 3, true, true, &out);
    assert_string_equal(out.reason, "PoolNotFound");
    machineconfig_pool_eval(degraded, "99-worker-psi-rebalancer", &ev[0]);
    machineconfig_psi_enabled(ev, 3, true, true, &out);
    assert_int_equal(out.status, API_CONDITION_FALSE);
    assert_string_equal(out.reason, "PoolDegraded");
    /* conditions_derive recognises this reason as a degraded pool. */
    assert_string_equal(MACHINECONFIG_REASON_POOL_DEGRADED, CONDITIONS_REASON_POOL_DEGRADED);

    machineconfig_psi_enabled(ev, 3, false, true, &out);
    assert_int_equal(out.status, API_CONDITION_UNKNOWN);
    assert_string_equal(out.reason, "MachineConfigAPIUnavailable");
    machineconfig_psi_enabled(ev, 3, true, false, &out);
    assert_int_equal(out.status, API_CONDITION_UNKNOWN);
    assert_string_equal(out.reason, "MachineConfigDisabled");
    machineconfig_psi_enabled(ev, 0, true, true, &out);
    assert_int_equal(out.status, API_CONDITION_UNKNOWN);
    assert_string_equal(out.reason, "NoSelectedNodes");
    /* A MachineConfig of our name that is someone else's: False, however updated its pool is. */
    machineconfig_pool_eval(updated, "99-worker-psi-rebalancer", &ev[0]);
    machineconfig_not_owned("worker", "99-worker-psi-rebalancer", &ev[0]);
    machineconfig_psi_enabled(ev, 1, true, true, &out);
    assert_int_equal(out.status, API_CONDITION_FALSE);
    assert_string_equal(out.reason, "MachineConfigNotOwned");
    assert_non_null(
        strstr(msg, "pool worker: MachineConfig 99-worker-psi-rebalancer (role worker) exists but was not made"));
    machineconfig_psi_enabled(ev, 3, true, true, &out);
    assert_string_equal(out.reason, "MachineConfigNotOwned"); /* before nodes in no pool */
    machineconfig_not_covered("gpu", &ev[1]);
    machineconfig_pool_eval(updated, "99-worker-psi-rebalancer", &ev[0]);
    machineconfig_psi_enabled(ev, 2, true, true, &out);
    assert_string_equal(out.reason, "PoolNotCovered");
    machineconfig_psi_enabled(ev, 3, true, true, &out);
    assert_string_equal(out.reason, "PoolNotFound"); /* before a pool not covered */
    /* A tiny buffer is never overrun and stays terminated. */
    char tiny[8];
    struct machineconfig_psi small = {.msg = tiny, .msglen = sizeof(tiny)};
    machineconfig_psi_enabled(ev, 3, true, true, &small);
    assert_true(strlen(tiny) < sizeof(tiny));
    cJSON_Delete(updated);
    cJSON_Delete(updating);
    cJSON_Delete(degraded);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name),
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_diff_and_apply_existing),
        cmocka_unit_test(test_foreign),
        cmocka_unit_test(test_keep_only_adds),
        cmocka_unit_test(test_pool_updated),
        cmocka_unit_test(test_pool_updating),
        cmocka_unit_test(test_pool_paused_and_uncounted),
        cmocka_unit_test(test_pool_not_rendered),
        cmocka_unit_test(test_pool_degraded),
        cmocka_unit_test(test_orphans_and_not_covered),
        cmocka_unit_test(test_psi_enabled_over_pools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
