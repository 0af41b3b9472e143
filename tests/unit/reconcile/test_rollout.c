/* Maintenance holds (reconcile/move/rollout.h) over generated classes of clusters, against a
 * reference written from the MachineConfig operator's and KubeVirt's own terms.
 *
 * A case draws 0-3 MachineConfigPools (each rolling from rendered-<pool>-1 to
 * rendered-<pool>-2, or steady; Updating True, False with a lastTransitionTime around the
 * settle time, or absent), 1-8 nodes (each in a pool by its configs, in none, or with configs
 * of a pool that does not exist; currentConfig, desiredConfig and state each drawn, absent
 * included) and 0-6 live migrations (every priority KubeVirt knows, none, or an unknown one;
 * every phase; evacuation or not; source and target among the nodes, unknown or elsewhere),
 * targeted moves or evictions. The reference states each rule as the operator and KubeVirt
 * define its terms:
 *   - the daemon works on a node: configs differ, or state Working / Rebooting
 *     (MachineConfigDaemonState* in pkg/daemon/constants/constants.go);
 *   - a node is in the first pool one of whose rendered configs it carries; in an Updating
 *     pool it is "done" exactly as LayeredNodeState.IsDone (non-layered): currentConfig ==
 *     desiredConfig == spec.configuration.name and state Done;
 *   - settling: Updating False, less than the settle time since its transition;
 *   - drain priority: KubeVirt's queue priority (PriorityFromMigration in
 *     pkg/util/migrations/migrations.go) is system-critical's 100, or an evacuation without a
 *     priority; waiting: phase unset or Pending.
 * The holds must be the reference's, for every node of every case, and a held node's reason
 * must name what holds it (the pool, or the migration).
 *
 * Then the planner with holds: over random clusters, a held node is never a source nor a
 * destination, and the plan is the plan of the same cluster without the held nodes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/move/moves.h"
#include "reconcile/move/plan.h"
#include "reconcile/move/rollout.h"
#include "testutil.h"

#define CASES 20000
#define NOW 1767225600LL
#define SETTLE 90

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static unsigned pick(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* ---- reference ---- */

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static int queue_priority(const char *p)
{
    if (!p)
        return 0;
    if (strcmp(p, "system-critical") == 0)
        return 100;
    if (strcmp(p, "user-triggered") == 0)
        return 50;
    if (strcmp(p, "system-maintenance") == 0)
        return 20;
    return 0;
}

static bool ref_drain_waiting(const struct moves_migration *m)
{
    bool waiting = m->phase[0] == '\0' || strcmp(m->phase, "Pending") == 0;
    bool drain = queue_priority(m->priority) == 100 || (!m->priority && m->evacuation);
    return waiting && drain;
}

static int ref_pool(const struct rollout_facts *f, const struct rollout_node *n)
{
    for (size_t k = 0; k < f->npools; k++) {
        const char *configs[] = {f->pools[k].target, f->pools[k].current};
        for (size_t c = 0; c < 2; c++)
            if (eq(n->current, configs[c]) || eq(n->desired, configs[c]))
                return (int)k;
    }
    return -1;
}

static enum rollout_hold ref_check(const struct rollout_facts *f, const struct rollout_node *n)
{
    if ((n->current && n->desired && !eq(n->current, n->desired)) || eq(n->state, "Working") ||
        eq(n->state, "Rebooting"))
        return ROLLOUT_UPDATING;
    int k = ref_pool(f, n);
    if (k >= 0) {
        const struct rollout_pool *p = &f->pools[k];
        if (p->updating) {
            bool done = eq(n->current, p->target) && eq(n->desired, p->target) && eq(n->state, "Done");
            return done ? ROLLOUT_BACK : ROLLOUT_TO_UPDATE;
        }
        if (p->since && NOW - p->since >= 0 && NOW - p->since < SETTLE)
            return ROLLOUT_SETTLING;
    }
    for (size_t m = 0; f->targeted && m < f->nmigs; m++)
        if (ref_drain_waiting(&f->migs[m]) && (eq(f->migs[m].source, n->name) || eq(f->migs[m].target, n->name)))
            return ROLLOUT_DRAIN_WAITS;
    return ROLLOUT_FREE;
}

/* ---- generator ---- */

static const char *const POOLS[] = {"worker", "infra", "gpu"};
static const char *const NODES[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
static char configs[4][2][32]; /* per pool (the last: a pool that does not exist): -1, -2 */

static const char *any_config(void)
{
    unsigned r = pick(10);
    if (r == 0)
        return NULL;
    return configs[pick(4)][pick(2)];
}

static const char *any_state(void)
{
    static const char *const s[] = {NULL, "Done", "Working", "Rebooting", "Degraded", "Unreconcilable"};
    return pick(5) ? "Done" : s[pick(6)];
}

struct gen {
    struct rollout_pool pools[3];
    struct rollout_node nodes[8];
    struct moves_migration migs[6];
    char mig_names[6][16];
    struct rollout_facts f;
    size_t nn;
};

static void generate(struct gen *g)
{
    memset(g, 0, sizeof(*g));
    g->f.npools = pick(4);
    for (size_t k = 0; k < g->f.npools; k++) {
        struct rollout_pool *p = &g->pools[k];
        p->name = POOLS[k];
        bool rolling = pick(2);
        p->current = configs[k][0];
        p->target = rolling ? configs[k][1] : configs[k][0];
        unsigned u = pick(3);
        p->updating = u == 0;
        p->since = u == 2 ? 0 : NOW - (int64_t)pick(3 * SETTLE) + 5;
        p->machines = pick(2) ? -1 : 3;
        p->updated = p->machines < 0 ? -1 : (long)pick(4);
    }
    g->nn = 1 + pick(8);
    for (size_t i = 0; i < g->nn; i++) {
        struct rollout_node *n = &g->nodes[i];
        n->name = NODES[i];
        /* mostly coherent: desired == current, in a pool */
        n->current = any_config();
        n->desired = pick(6) ? n->current : any_config();
        n->state = any_state();
    }
    g->f.nmigs = pick(7);
    static const char *const prios[] = {NULL, "system-critical", "user-triggered", "system-maintenance", "urgent"};
    static const char *const phases[] = {
        "",        "Pending",        "Scheduling",    "Scheduled", "PreparingTarget", "TargetReady",
        "Running", "WaitingForSync", "Synchronizing", "Succeeded", "Failed"};
    for (size_t k = 0; k < g->f.nmigs; k++) {
        struct moves_migration *m = &g->migs[k];
        snprintf(g->mig_names[k], sizeof(g->mig_names[k]), "mig-%zu", k);
        m->ns = "vms";
        m->name = g->mig_names[k];
        m->vmi = "vm";
        m->priority = prios[pick(5)];
        m->phase = phases[pick(11)];
        m->evacuation = pick(2);
        m->source = pick(5) ? NODES[pick(8)] : NULL;
        m->target = pick(2) ? NODES[pick(8)] : NULL;
    }
    g->f.pools = g->pools;
    g->f.migs = g->migs;
    g->f.targeted = pick(2);
    g->f.now = NOW;
    g->f.settle_s = SETTLE;
}

static void test_holds_against_reference(void **state)
{
    (void)state;
    for (size_t k = 0; k < 4; k++)
        for (size_t v = 0; v < 2; v++)
            snprintf(configs[k][v], sizeof(configs[k][v]), "rendered-%s-%zu", k < 3 ? POOLS[k] : "gone", v + 1);
    size_t seen[ROLLOUT_DRAIN_WAITS + 1] = {0};
    for (int c = 0; c < CASES; c++) {
        struct gen g;
        generate(&g);
        for (size_t i = 0; i < g.nn; i++) {
            char why[320];
            enum rollout_hold got = rollout_check(&g.f, &g.nodes[i], why, sizeof(why));
            enum rollout_hold want = ref_check(&g.f, &g.nodes[i]);
            if (got != want)
                fail_msg("case %d node %s: hold %d, the reference says %d (%s)", c, g.nodes[i].name, got, want, why);
            seen[got]++;
            if (got == ROLLOUT_FREE) {
                assert_string_equal(why, "");
                continue;
            }
            assert_true(why[0] != '\0');
            int k = ref_pool(&g.f, &g.nodes[i]);
            if (got == ROLLOUT_TO_UPDATE || got == ROLLOUT_BACK || got == ROLLOUT_SETTLING)
                assert_non_null(strstr(why, g.pools[k].name));
            if (got == ROLLOUT_DRAIN_WAITS)
                assert_non_null(strstr(why, "mig-"));
        }
    }
    /* the generator reaches every verdict often */
    for (int h = ROLLOUT_FREE; h <= ROLLOUT_DRAIN_WAITS; h++) {
        print_message("hold %d: %zu nodes\n", h, seen[h]);
        assert_true(seen[h] > CASES / 50);
    }
}

/* ---- reading what the API serves ---- */

static void test_pool_read(void **state)
{
    (void)state;
    cJSON *pool =
        parse("{\"metadata\": {\"name\": \"worker\"},"
              " \"spec\": {\"configuration\": {\"name\": \"rendered-worker-2\"}},"
              " \"status\": {\"configuration\": {\"name\": \"rendered-worker-1\"}, \"machineCount\": 3,"
              " \"updatedMachineCount\": 1, \"conditions\": ["
              "  {\"type\": \"Updated\", \"status\": \"False\", \"lastTransitionTime\": \"2026-01-01T00:00:00Z\"},"
              "  {\"type\": \"Updating\", \"status\": \"True\", \"lastTransitionTime\": \"2026-01-01T00:00:10Z\"}]}}");
    struct rollout_pool p;
    assert_int_equal(rollout_pool_read(pool, &p), 0);
    assert_string_equal(p.name, "worker");
    assert_string_equal(p.target, "rendered-worker-2");
    assert_string_equal(p.current, "rendered-worker-1");
    assert_true(p.updating);
    assert_int_equal(p.since, NOW + 10);
    assert_int_equal(p.machines, 3);
    assert_int_equal(p.updated, 1);
    cJSON_Delete(pool);

    /* a fresh pool: no status yet */
    pool = parse("{\"metadata\": {\"name\": \"infra\"}, \"spec\": {}}");
    assert_int_equal(rollout_pool_read(pool, &p), 0);
    assert_null(p.target);
    assert_false(p.updating);
    assert_int_equal(p.since, 0);
    assert_int_equal(p.machines, -1);
    cJSON_Delete(pool);

    pool = parse("{\"metadata\": {}}");
    assert_int_equal(rollout_pool_read(pool, &p), -1);
    cJSON_Delete(pool);
}

static void test_migration_priority_read(void **state)
{
    (void)state;
    cJSON *vmim = parse("{\"metadata\": {\"name\": \"kubevirt-evacuation-x\", \"namespace\": \"vms\","
                        " \"annotations\": {\"kubevirt.io/evacuationMigration\": \"w1\"}},"
                        " \"spec\": {\"vmiName\": \"vm\", \"priority\": \"system-critical\"},"
                        " \"status\": {\"phase\": \"Pending\"}}");
    struct moves_migration m;
    assert_int_equal(moves_migration_read(vmim, &m), 0);
    assert_string_equal(m.priority, "system-critical");
    assert_true(rollout_drain_waiting(&m));
    cJSON_Delete(vmim);
    vmim = parse("{\"metadata\": {\"name\": \"psi-rebalancer-x\", \"namespace\": \"vms\"},"
                 " \"spec\": {\"vmiName\": \"vm\"}, \"status\": {\"phase\": \"Pending\"}}");
    assert_int_equal(moves_migration_read(vmim, &m), 0);
    assert_null(m.priority);
    assert_false(rollout_drain_waiting(&m)); /* ours: no priority, no evacuation */
    cJSON_Delete(vmim);
}

/* ---- the planner with holds ---- */

static struct rebalance_node pnode(const char *name, double cpus, double demand, double pressure)
{
    return (struct rebalance_node){
        .name = name,
        .selected = true,
        .pressure = pressure,
        .sustained = true,
        .cpus = cpus,
        .demand = demand,
        .alloc_cpu = cpus,
        .alloc_memory = 256.0 * 1073741824,
        .alloc_pods = 110,
        .req_cpu = 0,
        .req_memory = 0,
        .req_pods = 0,
    };
}

static void test_plan_skips_held(void **state)
{
    (void)state;
    static char names[8][8], cnames[64][8];
    for (int i = 0; i < 8; i++)
        snprintf(names[i], sizeof(names[i]), "n%d", i);
    for (int j = 0; j < 64; j++)
        snprintf(cnames[j], sizeof(cnames[j]), "vm%d", j);
    struct rebalance_params p = default_params();
    size_t planned = 0, held_any = 0;
    for (int c = 0; c < 3000; c++) {
        struct rebalance_node nodes[8], kept[8];
        struct rebalance_candidate cands[64], kcands[64];
        size_t nn = 2 + pick(7), nc = 0, nk = 0, nkc = 0, map[8];
        for (size_t i = 0; i < nn; i++) {
            double cpus = 8 + 8 * pick(3), load = (double)(5 + pick(120)) / 100.0;
            double pressure = load < 0.6 ? 5 + 10 * load : fmin(100, 20 + 80 * (load - 0.6) / 0.5);
            nodes[i] = pnode(names[i], cpus, load * cpus, pressure);
            nodes[i].held = pick(4) == 0 ? "held by a test" : NULL;
            size_t vms = pick(6);
            for (size_t v = 0; v < vms && nc < 64; v++, nc++)
                cands[nc] = (struct rebalance_candidate){.ns = "vms",
                                                         .name = cnames[nc],
                                                         .workload = cnames[nc],
                                                         .node = i,
                                                         .req_cpu = 0.2,
                                                         .req_memory = 1073741824.0,
                                                         .demand = (double)(1 + pick(40)) / 10.0,
                                                         .vm = true};
        }
        for (size_t i = 0; i < nn; i++) {
            map[i] = (size_t)-1;
            if (nodes[i].held)
                continue;
            map[i] = nk;
            kept[nk++] = nodes[i];
        }
        for (size_t j = 0; j < nc; j++)
            if (!nodes[cands[j].node].held) {
                kcands[nkc] = cands[j];
                kcands[nkc++].node = map[cands[j].node];
            }
        held_any += nk < nn;
        struct rebalance_plan a, b;
        assert_int_equal(rebalance_plan(&p, nodes, nn, cands, nc, &a), 0);
        assert_int_equal(rebalance_plan(&p, kept, nk, kcands, nkc, &b), 0);
        assert_int_equal(a.nmoves, b.nmoves);
        for (size_t m = 0; m < a.nmoves; m++) {
            assert_null(nodes[a.moves[m].source].held);
            assert_null(nodes[a.moves[m].destination].held);
            assert_int_equal(map[a.moves[m].source], b.moves[m].source);
            assert_int_equal(map[a.moves[m].destination], b.moves[m].destination);
            assert_string_equal(cands[a.moves[m].candidate].name, kcands[b.moves[m].candidate].name);
        }
        planned += a.nmoves;
        rebalance_plan_free(&a);
        rebalance_plan_free(&b);
    }
    print_message("%zu moves planned over 3000 clusters, %zu with held nodes\n", planned, held_any);
    assert_true(planned > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holds_against_reference),
        cmocka_unit_test(test_pool_read),
        cmocka_unit_test(test_migration_priority_read),
        cmocka_unit_test(test_plan_skips_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
