/* Unit tests of controller/reconcile/move/placement: the verdicts and their messages on small
 * clusters written out, and the certificate against a brute force on random small clusters:
 * every assignment of the source's candidates to the destinations (or to staying), predicted
 * here forward along the curves (not through placement's inverse), with the fit of each
 * destination's whole share. Soundness: whenever placement says "unplaceable", the brute force
 * finds no assignment that brings the source below taintAbovePercent. Completeness: how often
 * the brute force finds none while placement could not tell, printed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/move/placement.h"
#include "testutil.h"

#define GI 1073741824.0

static struct rebalance_node node(const char *name, double cpus, double demand, double pressure)
{
    return (struct rebalance_node){
        .name = name,
        .selected = true,
        .pressure = pressure,
        .cpu_pressure = pressure,
        .sustained = true,
        .cpus = cpus,
        .demand = demand,
        .alloc_cpu = cpus,
        .alloc_memory = 64.0 * GI,
        .alloc_pods = 110,
        .req_cpu = 0,
        .req_memory = 0,
        .req_pods = 0,
        .mem_used = NAN,
        .mem_pressure = NAN,
        .memory = NAN,
    };
}

static struct rebalance_candidate cand(const char *name, size_t on, double demand)
{
    return (struct rebalance_candidate){
        .ns = "vms",
        .name = name,
        .workload = name,
        .node = on,
        .req_cpu = 0.2,
        .req_memory = 1.0 * GI,
        .demand = demand,
        .mem_used = NAN,
        .vm = true,
    };
}

static struct placement_verdict judge_one(const struct rebalance_params *p, const struct rebalance_node *nodes,
                                          size_t nn, const struct rebalance_candidate *c, size_t nc, size_t s)
{
    struct placement_verdict v;
    struct placement_cluster cl = {p, nodes, nn, c, nc};
    assert_int_equal(placement_judge(&cl, &s, 1, &v), 0);
    return v;
}

/* Every worker hot: no destination; what must leave fits nowhere, so the least free node that
 * would let enough go is what lacks. */
static void test_all_hot(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    struct rebalance_node n[3] = {node("worker-0", 4, 4.2, 95), node("worker-1", 4, 4.0, 92),
                                  node("worker-2", 4, 3.9, 91)};
    struct rebalance_candidate c[] = {cand("vm-a", 0, 1.5), cand("vm-b", 0, 2.5), cand("vm-c", 1, 2.0)};
    struct placement_verdict v = judge_one(&p, n, 3, c, 3, 0);
    assert_int_equal(v.kind, PLACEMENT_ON_SOME_NODE);
    assert_int_equal(v.resource, REBALANCE_CPU);
    assert_true(v.need > 0 && v.need < 4.0);
    char msg[512];
    placement_describe(&v, "worker-0", msg, sizeof(msg));
    /* one of the VMs must go: the smaller one if it is enough, else the bigger */
    assert_true(strcmp(msg, "worker-0 needs about 2 more CPUs free on some node") == 0 ||
                strcmp(msg, "worker-0 needs about 3 more CPUs free on some node") == 0);
    /* a blocked VM never moves: with both blocked, moving what may move would not do */
    c[0].blocked = c[1].blocked = "cooling down";
    v = judge_one(&p, n, 3, c, 3, 0);
    assert_int_equal(v.kind, PLACEMENT_TOO_LITTLE);
    placement_describe(&v, "worker-0", msg, sizeof(msg));
    assert_non_null(strstr(msg, "worker-0 cannot get below it by moving what may move: about "));
}

/* A cool node with room: a placement may exist. */
static void test_room_somewhere(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    struct rebalance_node n[2] = {node("worker-0", 4, 4.2, 95), node("worker-1", 16, 2.0, 0.5)};
    struct rebalance_candidate c[] = {cand("vm-a", 0, 1.5), cand("vm-b", 0, 2.5)};
    assert_int_equal(judge_one(&p, n, 2, c, 2, 0).kind, PLACEMENT_UNKNOWN);
    /* cordoned, it is no destination: nothing else can take them */
    n[1].unschedulable = true;
    assert_int_equal(judge_one(&p, n, 2, c, 2, 0).kind, PLACEMENT_ON_SOME_NODE);
    /* settling after a move, it may be one soon: nothing is certified */
    n[1].unschedulable = false;
    n[1].settling = true;
    assert_int_equal(judge_one(&p, n, 2, c, 2, 0).kind, PLACEMENT_UNKNOWN);
    /* a candidate without a usage reading may move once read */
    n[1].settling = false;
    n[1].tainted = true;
    c[1].demand = NAN;
    assert_int_equal(judge_one(&p, n, 2, c, 2, 0).kind, PLACEMENT_UNKNOWN);
}

/* Each candidate fits some destination alone, but all of them together do not. */
static void test_across(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    /* two small cool nodes: each takes one 1-core VM below the taint level (25 %), not two */
    struct rebalance_node n[3] = {node("worker-0", 8, 10.0, 98), node("worker-1", 4, 0.4, 1),
                                  node("worker-2", 4, 0.4, 1)};
    struct rebalance_candidate c[8];
    static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    for (size_t j = 0; j < 8; j++)
        c[j] = cand(names[j], 0, 1.0);
    struct placement_verdict v = judge_one(&p, n, 3, c, 8, 0);
    assert_int_equal(v.kind, PLACEMENT_ACROSS_NODES);
    char msg[512];
    placement_describe(&v, "worker-0", msg, sizeof(msg));
    assert_string_equal(msg, "worker-0 needs about 1 more CPU free across the nodes that could take its workloads");
}

static void test_message(void **state)
{
    (void)state;
    struct placement_verdict v[5];
    for (int k = 0; k < 5; k++)
        v[k] = (struct placement_verdict){.kind = PLACEMENT_ON_SOME_NODE, .resource = REBALANCE_CPU, .lacking = 8.2};
    v[1].kind = PLACEMENT_ACROSS_NODES, v[1].lacking = 0.3;
    v[2].resource = REBALANCE_MEMORY, v[2].lacking = 2.5 * GI;
    const char *names[] = {"worker-3", "worker-4", "worker-5", "worker-6", "worker-7"};
    char msg[2048];
    placement_message(v, names, 1, 80, msg, sizeof(msg));
    assert_string_equal(msg, "worker-3 needs about 9 more CPUs free on some node: no set of moves brings it below "
                             "taintAbovePercent 80%, so nothing is evicted");
    placement_message(v, names, 5, 80, msg, sizeof(msg));
    assert_string_equal(msg, "worker-3 needs about 9 more CPUs free on some node; worker-4 needs about 1 more CPU "
                             "free across the nodes that could take its workloads; worker-5 needs about 3 more GiB "
                             "of memory free on some node; and 2 more: no set of moves brings them below "
                             "taintAbovePercent 80%, so nothing is evicted");
}

/* ---- against the brute force ---- */

#define BN 5 /* nodes at most */
#define BC 5 /* candidates of the source at most */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static double rnd(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static double between(double a, double b)
{
    return a + (b - a) * rnd();
}

/* The reference's own reading of the model: per node and resource the load read at, the scale
 * and the pressure it is moved from (docs/architecture.md, "Prediction"). */
struct ref_curve {
    bool ok;
    double l0, k, base, cap;
};

static bool is_known(double v)
{
    return !isnan(v) && v > 0;
}

static double ref_cand(const struct rebalance_candidate *c, int r)
{
    if (r == REBALANCE_CPU)
        return is_known(c->max_demand) && c->demand > c->max_demand ? c->max_demand : c->demand;
    return isnan(c->mem_used) ? c->req_memory : c->mem_used;
}

static struct ref_curve ref_curve(const struct rebalance_params *p, const struct rebalance_node *n, double dem, int r)
{
    struct ref_curve c = {.cap = r == REBALANCE_CPU ? n->cpus : n->memory};
    if (!is_known(c.cap) || isnan(dem))
        return c;
    double P = r == REBALANCE_MEMORY ? n->mem_pressure : p->resources ? n->cpu_pressure : n->pressure;
    double L = dem / c.cap, f = rebalance_resource_curve(r, L), own = NAN;
    if (!isnan(P) && f >= REBALANCE_INFORMATIVE)
        own = rebalance_clamp_scale(P / (100 * f));
    double cal = is_known(n->scale[r]) ? n->scale[r] : 0;
    if (rebalance_is_source(p, n))
        c.k = !isnan(own) ? own : cal > 0 ? cal : 1;
    else
        c.k = fmax(cal > 0                 ? cal
                   : r == REBALANCE_MEMORY ? REBALANCE_MEMORY_SAFETY
                                           : REBALANCE_SAFETY,
                   isnan(own) ? 0 : own);
    c.l0 = L;
    c.base = isnan(P) ? 100 * c.k * f : P;
    c.ok = true;
    return c;
}

static double ref_predict(const struct ref_curve *c, int r, double dem)
{
    double v = c->base + 100 * c->k * (rebalance_resource_curve(r, dem / c->cap) - rebalance_resource_curve(r, c->l0));
    return v < 0 ? 0 : v > 100 ? 100 : v;
}

struct bcase {
    struct rebalance_params p;
    size_t nn, nc;
    struct rebalance_node n[BN];
    struct rebalance_candidate c[BC];
    char names[BN][16], cnames[BC][16];
};

/* Whether some assignment of the source's (node 0's) candidates brings it below the taint
 * level with every destination staying below it and fitting its share. */
static bool brute_force(const struct bcase *b)
{
    const struct rebalance_params *p = &b->p;
    unsigned res = p->resources ? p->resources : REBALANCE_RES_CPU;
    double dem[REBALANCE_NRES][BN];
    for (size_t i = 0; i < b->nn; i++) {
        dem[REBALANCE_CPU][i] = is_known(b->n[i].cpus) ? b->n[i].demand : NAN;
        dem[REBALANCE_MEMORY][i] = rebalance_node_memory_demand(b->n[i].mem_used, b->n[i].memory, b->n[i].mem_pressure);
    }
    for (size_t j = 0; j < b->nc; j++)
        if (!isnan(b->c[j].demand))
            dem[REBALANCE_CPU][b->c[j].node] -= b->c[j].demand - ref_cand(&b->c[j], REBALANCE_CPU);
    struct ref_curve cv[REBALANCE_NRES][BN];
    for (size_t i = 0; i < b->nn; i++)
        for (int r = 0; r < REBALANCE_NRES; r++)
            cv[r][i] = ref_curve(p, &b->n[i], dem[r][i], r);
    size_t dest[BN], nd = 0;
    for (size_t i = 1; i < b->nn; i++) {
        struct rebalance_node v = b->n[i];
        v.demand = dem[REBALANCE_CPU][i];
        char why[256];
        if (!rebalance_is_source(p, &v) && !rebalance_destination_check(p, &v, why, sizeof(why)))
            dest[nd++] = i;
    }
    size_t combos = 1;
    for (size_t j = 0; j < b->nc; j++)
        combos *= nd + 1;
    for (size_t a = 0; a < combos; a++) {
        size_t where[BC], x = a;
        bool ok = true;
        for (size_t j = 0; j < b->nc; j++, x /= nd + 1) {
            where[j] = x % (nd + 1); /* 0 stays, k goes to dest[k - 1] */
            const struct rebalance_candidate *c = &b->c[j];
            bool movable = !c->blocked && !isnan(c->demand);
            for (int r = 0; r < REBALANCE_NRES; r++)
                movable = movable && (!((res >> r) & 1u) || !isnan(ref_cand(c, r)));
            ok = ok && (where[j] == 0 || movable);
        }
        double after[REBALANCE_NRES][BN];
        memcpy(after, dem, sizeof(after));
        struct rebalance_node view[BN];
        for (size_t i = 0; i < b->nn; i++) {
            view[i] = b->n[i];
            view[i].demand = dem[REBALANCE_CPU][i];
            view[i].mem_used = dem[REBALANCE_MEMORY][i];
        }
        for (size_t j = 0; ok && j < b->nc; j++) {
            if (!where[j])
                continue;
            size_t t = dest[where[j] - 1];
            const struct rebalance_candidate *c = &b->c[j];
            ok = rebalance_fits(c, &view[t]);
            for (int r = 0; r < REBALANCE_NRES; r++) {
                double d = ref_cand(c, r);
                if (isnan(d))
                    continue;
                after[r][0] = fmax(0, after[r][0] - d);
                after[r][t] += d;
            }
            view[t].demand = after[REBALANCE_CPU][t];
            view[t].mem_used = after[REBALANCE_MEMORY][t];
            view[t].req_cpu += c->req_cpu, view[t].req_memory += c->req_memory, view[t].req_pods += 1;
        }
        for (int r = 0; ok && r < REBALANCE_NRES; r++) {
            if (!((res >> r) & 1u))
                continue;
            ok = cv[r][0].ok && ref_predict(&cv[r][0], r, after[r][0]) < p->taint_above;
            for (size_t k = 0; ok && k < nd; k++)
                ok = cv[r][dest[k]].ok && ref_predict(&cv[r][dest[k]], r, after[r][dest[k]]) < p->taint_above;
        }
        if (ok)
            return true;
    }
    return false;
}

/* A random small cluster: node 0 a hot source, the others anything from cool to hot. */
static void generate(struct bcase *b, const cJSON *taints, bool memory)
{
    memset(b, 0, sizeof(*b));
    b->p = default_params();
    b->p.taint_above = between(40, 90);
    b->p.evict_above = b->p.taint_above - between(0, 15);
    b->p.untaint_below = b->p.evict_above - between(5, 25);
    if (b->p.untaint_below < 1)
        b->p.untaint_below = 1;
    b->p.resources = memory ? REBALANCE_RES_CPU | REBALANCE_RES_MEMORY : 0;
    b->nn = 2 + (size_t)(rnd() * (BN - 1));
    b->nc = 1 + (size_t)(rnd() * BC);
    for (size_t i = 0; i < b->nn; i++) {
        snprintf(b->names[i], sizeof(b->names[i]), "worker-%zu", i);
        double cpus = (double)(2 << (int)(rnd() * 4)); /* 2 .. 16 */
        double load = i == 0 ? between(0.8, 1.3) : between(0.05, 1.2);
        double k = between(0.6, 1.6);
        double P = fmin(100, 100 * k * rebalance_curve(load));
        if (i == 0)
            P = fmax(P, b->p.taint_above + between(1, 10));
        b->n[i] = node(b->names[i], cpus, load * cpus, fmin(P, 100));
        b->n[i].scale[REBALANCE_CPU] = rnd() < 0.5 ? between(0.5, 2) : 0;
        b->n[i].req_cpu = between(0, cpus);
        b->n[i].req_memory = between(0, 48) * GI;
        b->n[i].tainted = i > 0 && rnd() < 0.1;
        b->n[i].unschedulable = i > 0 && rnd() < 0.1;
        b->n[i].settling = i > 0 && rnd() < 0.05;
        if (i > 0 && rnd() < 0.15)
            b->n[i].taints = taints;
        if (memory) {
            b->n[i].memory = 64 * GI;
            b->n[i].mem_used = between(0.2, i == 0 ? 1.0 : 0.9) * 64 * GI;
            b->n[i].mem_pressure = between(0, i == 0 ? 60 : 20);
            b->n[i].pressure = fmax(b->n[i].cpu_pressure, b->n[i].mem_pressure);
        }
    }
    for (size_t j = 0; j < b->nc; j++) {
        snprintf(b->cnames[j], sizeof(b->cnames[j]), "vm-%zu", j);
        b->c[j] = cand(b->cnames[j], 0, between(0.1, 0.6) * b->n[0].cpus);
        b->c[j].req_cpu = between(0.1, 4);
        b->c[j].req_memory = between(1, 16) * GI;
        if (rnd() < 0.2)
            b->c[j].max_demand = floor(between(1, 4));
        if (rnd() < 0.15)
            b->c[j].blocked = "cooling down";
        if (memory)
            b->c[j].mem_used = between(0.5, 16) * GI;
    }
}

static void test_against_brute_force(void **state)
{
    (void)state;
    cJSON *taints = parse("[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]");
    int clusters = 20000, none = 0, certified = 0, missed = 0, by_kind[4] = {0};
    for (int i = 0; i < clusters; i++) {
        struct bcase b;
        generate(&b, taints, i % 4 == 3);
        size_t s = 0;
        struct placement_verdict v;
        struct placement_cluster cl = {&b.p, b.n, b.nn, b.c, b.nc};
        assert_int_equal(placement_judge(&cl, &s, 1, &v), 0);
        bool exists = brute_force(&b);
        if (placement_unplaceable(&v)) {
            if (exists)
                fail_msg("cluster %d: placement says unplaceable (kind %d, need %.3f, lacking %.3f), the brute force "
                         "found a placement",
                         i, (int)v.kind, v.need, v.lacking);
            certified++;
            by_kind[v.kind]++;
        }
        if (!exists) {
            none++;
            missed += !placement_unplaceable(&v);
        }
    }
    printf("placement: %d random clusters, no placement in %d; certified %d (too little %d, on some node %d, across "
           "%d), sound in all; not told %d of %d (%.1f %%)\n",
           clusters, none, certified, by_kind[PLACEMENT_TOO_LITTLE], by_kind[PLACEMENT_ON_SOME_NODE],
           by_kind[PLACEMENT_ACROSS_NODES], missed, none, none ? 100.0 * missed / none : 0.0);
    assert_true(certified > clusters / 20); /* the generator reaches the certificate */
    cJSON_Delete(taints);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_hot), cmocka_unit_test(test_room_somewhere),      cmocka_unit_test(test_across),
        cmocka_unit_test(test_message), cmocka_unit_test(test_against_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
