/* The planner (reconcile/move/plan) decides exactly as its reference (planref.c: the planner as
 * it was before destinations were judged once per plan, candidates indexed by node and reasons
 * formatted only when said), over thousands of random clusters: the same moves in the same
 * order with the same figures, the same reason, message and held moves.
 *
 * The clusters are drawn to reach every rule: nodes of 4 to 96 CPUs (some of unknown size),
 * readings on a kernel-shaped curve at their load, skewed x0.5 to x2.5, some unknown; tainted,
 * cordoned, settling, relieving, unselected nodes; requests read on some nodes only; node
 * labels, taints and allocatable that refuse some workloads; candidates blocked, without a
 * usage reading, capped by their vCPUs, VMs or not; CPU alone or CPU and memory; every limit
 * from 1 up; moves made in earlier rounds; recent moves that hold some as oscillation;
 * targeted migrations or evictions. The test counts the reasons seen and asserts that each
 * rule's reason came up, so that the comparison covered it. */
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

#include "planref.h"
#include "reconcile/move/plan.h"
#include "reconcile/status/nodelabels.h"
#include "testutil.h"

#define MAX_NODES 400
#define MAX_CANDS 4000
#define GI 1073741824.0

struct cluster {
    size_t nn, nc, nmade, nrecent;
    struct rebalance_params p;
    struct rebalance_node nodes[MAX_NODES];
    struct rebalance_candidate cands[MAX_CANDS];
    struct rebalance_move made[8];
    struct rebalance_recent recent[16];
    char node_names[MAX_NODES][16], cand_names[MAX_CANDS][16], workloads[MAX_CANDS][48];
    uint64_t rng;
};

static double rnd(struct cluster *cl)
{
    cl->rng ^= cl->rng << 13, cl->rng ^= cl->rng >> 7, cl->rng ^= cl->rng << 17;
    return (double)(cl->rng >> 11) / 9007199254740992.0;
}

static bool chance(struct cluster *cl, double p)
{
    return rnd(cl) < p;
}

static size_t pick(struct cluster *cl, size_t n)
{
    return (size_t)(rnd(cl) * (double)n) % n;
}

/* Kernel-shaped "some" (percent) at load L. */
static double kernel(double L)
{
    return L <= 0 ? 0 : 100 * fmin(1, pow(L / 1.05, 2.52));
}

/* Shared JSON: labels, taints, selectors, tolerations the nodes and candidates borrow. */
static struct nodelabels *zone_a, *zone_b;
static cJSON *taint_dedicated, *taint_soft, *select_a, *tolerate_dedicated, *affinity_b;

static int setup(void **state)
{
    (void)state;
    bool oom = false;
    cJSON *la = parse("{\"zone\":\"a\"}"), *lb = parse("{\"zone\":\"b\"}");
    zone_a = nodelabels_new(la, &oom);
    zone_b = nodelabels_new(lb, &oom);
    cJSON_Delete(la);
    cJSON_Delete(lb);
    taint_dedicated = parse("[{\"key\":\"dedicated\",\"value\":\"db\",\"effect\":\"NoSchedule\"}]");
    taint_soft = parse("[{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"}]");
    select_a = parse("{\"zone\":\"a\"}");
    tolerate_dedicated = parse("[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]");
    affinity_b = parse("{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
                       "[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"b\"]}]}]}}}");
    return oom ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    nodelabels_free(zone_a);
    nodelabels_free(zone_b);
    cJSON_Delete(taint_dedicated);
    cJSON_Delete(taint_soft);
    cJSON_Delete(select_a);
    cJSON_Delete(tolerate_dedicated);
    cJSON_Delete(affinity_b);
    return 0;
}

static void gen_params(struct cluster *cl)
{
    struct rebalance_params *p = &cl->p;
    *p = default_params();
    if (chance(cl, 0.5)) {
        p->untaint_below = 8 + rnd(cl) * 12;
        p->taint_above = p->untaint_below + 3 + rnd(cl) * 15;
        p->evict_above = p->taint_above + rnd(cl) * 30;
    }
    p->target = chance(cl, 0.3) ? p->untaint_below + rnd(cl) * 10 : 0;
    p->margin = chance(cl, 0.3) ? rnd(cl) * 0.05 : 0;
    p->resources = chance(cl, 0.3) ? REBALANCE_RES_CPU | REBALANCE_RES_MEMORY : chance(cl, 0.3) ? REBALANCE_RES_CPU : 0;
    p->max_per_node = 1 + (int)pick(cl, 3);
    p->max_per_namespace = 1 + (int)pick(cl, 4);
    p->max_total = 1 + (int)pick(cl, 10);
    p->max_in_flight = 1 + (int)pick(cl, 10);
    p->in_flight = (int)pick(cl, 3);
    p->running = (int)pick(cl, 4);
    p->kubevirt_per_cluster = chance(cl, 0.5) ? 0 : 1 + (int)pick(cl, 6);
    p->kubevirt_per_node = chance(cl, 0.5) ? 0 : 1 + (int)pick(cl, 3);
    p->targeted = chance(cl, 0.6);
}

static void gen_node(struct cluster *cl, size_t i)
{
    static const double sizes[] = {4, 8, 16, 24, 32, 48, 64, 96};
    const struct rebalance_params *p = &cl->p;
    struct rebalance_node *n = &cl->nodes[i];
    snprintf(cl->node_names[i], sizeof(cl->node_names[i]), "n%03zu", chance(cl, 0.02) ? i / 2 : i);
    double cpus = sizes[pick(cl, 8)], load = chance(cl, 0.3) ? 0.8 + rnd(cl) * 0.6 : rnd(cl) * 0.9;
    double skew = 0.5 + rnd(cl) * 2, memory = cpus * 4 * GI, mload = rnd(cl) * 1.1;
    double pc = fmin(100, skew * kernel(load)), pm = fmin(100, kernel(mload));
    double hot = (p->resources & REBALANCE_RES_MEMORY) ? fmax(pc, pm) : pc;
    *n = (struct rebalance_node){
        .name = cl->node_names[i],
        .selected = !chance(cl, 0.05),
        .unschedulable = chance(cl, 0.04),
        .pressure = chance(cl, 0.03) ? NAN : hot,
        .settling = chance(cl, 0.08),
        .cpus = chance(cl, 0.03) ? NAN : cpus,
        .demand = chance(cl, 0.03) ? NAN : load * cpus,
        .alloc_cpu = chance(cl, 0.1) ? NAN : cpus,
        .alloc_memory = chance(cl, 0.1) ? NAN : memory,
        .alloc_pods = chance(cl, 0.1) ? NAN : 5 + (double)pick(cl, 40),
        .outbound = (int)pick(cl, 3),
        .cpu_pressure = chance(cl, 0.03) ? NAN : pc,
        .mem_pressure = chance(cl, 0.05) ? NAN : pm,
        .memory = chance(cl, 0.03) ? NAN : memory,
        .mem_used = chance(cl, 0.05) ? NAN : mload * memory,
    };
    bool read = chance(cl, 0.7);
    n->req_cpu = read ? rnd(cl) * cpus : NAN;
    n->req_memory = read ? rnd(cl) * memory : NAN;
    n->req_pods = read ? (double)pick(cl, 30) : NAN;
    n->sustained = !isnan(n->pressure) && n->pressure > p->evict_above && !chance(cl, 0.1);
    n->tainted = !isnan(n->pressure) && (n->pressure > p->taint_above ? !chance(cl, 0.1) : chance(cl, 0.05));
    n->relieving = chance(cl, 0.15);
    n->labels = chance(cl, 0.3) ? zone_a : chance(cl, 0.3) ? zone_b : NULL;
    n->taints = chance(cl, 0.05) ? taint_dedicated : chance(cl, 0.05) ? taint_soft : NULL;
    for (int r = 0; r < REBALANCE_NRES; r++)
        n->scale[r] = chance(cl, 0.5) ? 0 : 0.2 + rnd(cl) * 3;
}

static void gen_candidate(struct cluster *cl, size_t j)
{
    static const char *const ns[] = {"a", "b", "c", "d"};
    static const char *const blocked[] = {"cooling down", "not live-migratable", "a PodDisruptionBudget"};
    struct rebalance_candidate *c = &cl->cands[j];
    size_t node = pick(cl, cl->nn);
    snprintf(cl->cand_names[j], sizeof(cl->cand_names[j]), "p%zu", chance(cl, 0.02) ? j / 2 : j);
    snprintf(cl->workloads[j], sizeof(cl->workloads[j]), "VirtualMachineInstance %s/%s", ns[j % 4], cl->cand_names[j]);
    double cpus = isnan(cl->nodes[node].cpus) ? 8 : cl->nodes[node].cpus;
    double demand = 0.1 + rnd(cl) * fmin(12, cpus * 0.6), vcpus = ceil(demand * (0.8 + rnd(cl)));
    *c = (struct rebalance_candidate){
        .ns = ns[pick(cl, 4)],
        .name = cl->cand_names[j],
        .workload = cl->workloads[j],
        .node = node,
        .req_cpu = rnd(cl) * vcpus,
        .req_memory = rnd(cl) * 8 * GI,
        .demand = chance(cl, 0.05)   ? NAN
                  : chance(cl, 0.02) ? 0
                                     : demand,
        .max_demand = chance(cl, 0.3) ? NAN : vcpus,
        .mem_used = chance(cl, 0.2) ? NAN : rnd(cl) * 8 * GI,
        .vm = chance(cl, 0.7),
        .node_selector = chance(cl, 0.1) ? select_a : NULL,
        .affinity = chance(cl, 0.05) ? affinity_b : NULL,
        .tolerations = chance(cl, 0.1) ? tolerate_dedicated : NULL,
        .blocked = chance(cl, 0.1) ? blocked[pick(cl, 3)] : NULL,
    };
}

/* Earlier rounds' moves and recent history, drawn from the cluster's own names. */
static void gen_history(struct cluster *cl)
{
    cl->nmade = chance(cl, 0.2) && cl->nc ? pick(cl, 4) : 0;
    for (size_t k = 0; k < cl->nmade; k++) {
        size_t ci = pick(cl, cl->nc);
        cl->made[k] =
            (struct rebalance_move){.candidate = ci, .source = cl->cands[ci].node, .destination = pick(cl, cl->nn)};
    }
    cl->nrecent = chance(cl, 0.3) && cl->nc ? pick(cl, 16) : 0;
    for (size_t k = 0; k < cl->nrecent; k++)
        cl->recent[k] = (struct rebalance_recent){cl->workloads[pick(cl, cl->nc)], cl->node_names[pick(cl, cl->nn)],
                                                  cl->node_names[pick(cl, cl->nn)]};
    cl->p.made = cl->made, cl->p.nmade = cl->nmade;
    cl->p.recent = cl->recent, cl->p.nrecent = cl->nrecent;
}

static void generate(struct cluster *cl, size_t nn, uint64_t seed)
{
    cl->rng = seed * 2654435761u | 1;
    gen_params(cl);
    cl->nn = nn;
    for (size_t i = 0; i < nn; i++)
        gen_node(cl, i);
    cl->nc = nn * (1 + pick(cl, 10));
    if (cl->nc > MAX_CANDS)
        cl->nc = MAX_CANDS;
    for (size_t j = 0; j < cl->nc; j++)
        gen_candidate(cl, j);
    gen_history(cl);
}

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0 || (isnan(a) && isnan(b));
}

/* Fails, naming the cluster and what differs, unless the two plans are the same. */
static void assert_same_plan(const struct rebalance_plan *got, const struct rebalance_plan *want, uint64_t seed)
{
    if (strcmp(got->reason, want->reason) != 0 || strcmp(got->message, want->message) != 0)
        fail_msg("cluster %llu: reason %s, message \"%s\"; the reference: %s, \"%s\"", (unsigned long long)seed,
                 got->reason, got->message, want->reason, want->message);
    if (got->held != want->held || strcmp(got->held_message, want->held_message) != 0)
        fail_msg("cluster %llu: held %zu \"%s\"; the reference: %zu \"%s\"", (unsigned long long)seed, got->held,
                 got->held_message, want->held, want->held_message);
    if (got->nmoves != want->nmoves)
        fail_msg("cluster %llu: %zu moves; the reference: %zu", (unsigned long long)seed, got->nmoves, want->nmoves);
    for (size_t k = 0; k < got->nmoves; k++) {
        const struct rebalance_move *a = &got->moves[k], *b = &want->moves[k];
        bool same = a->candidate == b->candidate && a->source == b->source && a->destination == b->destination &&
                    a->resource == b->resource && same_double(a->demand, b->demand) && same_double(a->mem, b->mem) &&
                    same_double(a->relief, b->relief) && same_double(a->src_load, b->src_load) &&
                    same_double(a->src_load_after, b->src_load_after) && same_double(a->dst_load, b->dst_load) &&
                    same_double(a->dst_load_after, b->dst_load_after) &&
                    same_double(a->src_pressure_after, b->src_pressure_after) &&
                    same_double(a->dst_pressure_after, b->dst_pressure_after);
        if (!same)
            fail_msg("cluster %llu: move %zu is %zu from %zu to %zu; the reference's %zu from %zu to %zu (or their "
                     "figures differ)",
                     (unsigned long long)seed, k, a->candidate, a->source, a->destination, b->candidate, b->source,
                     b->destination);
    }
}

struct tally {
    const char *reason[16];
    int count[16];
    size_t n;
    int moves, held;
};

static void count(struct tally *t, const struct rebalance_plan *plan)
{
    size_t k = 0;
    while (k < t->n && strcmp(t->reason[k], plan->reason) != 0)
        k++;
    if (k == t->n && t->n < 16)
        t->reason[t->n++] = plan->reason;
    if (k < t->n)
        t->count[k]++;
    t->moves += (int)plan->nmoves;
    t->held += plan->held > 0;
}

static int seen(const struct tally *t, const char *reason)
{
    for (size_t k = 0; k < t->n; k++)
        if (strcmp(t->reason[k], reason) == 0)
            return t->count[k];
    return 0;
}

/* Plan cluster seed both ways (with its candidates, and without any as the mover asks when no
 * source may be decided on) and compare. */
static void check(struct cluster *cl, uint64_t seed, struct tally *t)
{
    struct rebalance_plan got, want;
    assert_int_equal(rebalance_plan(&cl->p, cl->nodes, cl->nn, cl->cands, cl->nc, &got), 0);
    assert_int_equal(ref_plan(&cl->p, cl->nodes, cl->nn, cl->cands, cl->nc, &want), 0);
    assert_same_plan(&got, &want, seed);
    count(t, &got);
    rebalance_plan_free(&got);
    ref_plan_free(&want);
    assert_int_equal(rebalance_plan(&cl->p, cl->nodes, cl->nn, NULL, 0, &got), 0);
    assert_int_equal(ref_plan(&cl->p, cl->nodes, cl->nn, NULL, 0, &want), 0);
    assert_same_plan(&got, &want, seed);
    rebalance_plan_free(&got);
    ref_plan_free(&want);
}

static void test_random_clusters(void **state)
{
    (void)state;
    static struct cluster cl;
    struct tally t = {0};
    for (uint64_t seed = 1; seed <= 4000; seed++) {
        generate(&cl, 1 + (size_t)(seed % 40), seed);
        check(&cl, seed, &t);
    }
    for (uint64_t seed = 100001; seed <= 100040; seed++) {
        generate(&cl, 200 + (size_t)(seed % 200), seed);
        check(&cl, seed, &t);
    }
    for (size_t k = 0; k < t.n; k++)
        print_message("%-20s %d plans\n", t.reason[k], t.count[k]);
    print_message("%d moves planned, %d plans holding moves as oscillation\n", t.moves, t.held);
    /* every rule's outcome was compared */
    static const char *const reasons[] = {REBALANCE_MOVING,       REBALANCE_NO_PRESSURE,    REBALANCE_SETTLING,
                                          REBALANCE_NO_CANDIDATE, REBALANCE_NO_DESTINATION, REBALANCE_NO_IMPROVEMENT,
                                          REBALANCE_LIMITED,      REBALANCE_USAGE_UNKNOWN};
    for (size_t k = 0; k < sizeof(reasons) / sizeof(reasons[0]); k++)
        if (!seen(&t, reasons[k]))
            fail_msg("no random cluster gave %s: the comparison did not cover it", reasons[k]);
    assert_true(t.moves > 1000);
    assert_true(t.held > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_clusters),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
