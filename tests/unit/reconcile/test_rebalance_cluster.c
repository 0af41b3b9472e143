/* Cluster tests of controller/reconcile/move/plan: the planner driven cycle after cycle against
 * a model cluster, as the edge drives it (readings from the model, demand from usage and the
 * calibrated scale, `relieving` kept, history kept, plans again after refusals with the moves
 * made counted). The model's pressure is the unserved share of demand (the simulator's curve)
 * times a skew per node: what PSI reads is not exactly that share.
 *
 * Scenarios (heterogeneous sizes, a small emptiest node, a memory-hot node, a load flipping
 * between two nodes, a 50-node cluster) assert the end state: every node below the target, with
 * the number of moves against the optimum computed here (by search on small clusters, a lower
 * bound on the large one). The random-cluster property: readings skewed x0.5 to x2.5, refusals;
 * no workload returns to a node it left, no limit is exceeded across planning rounds, no
 * destination is predicted at or above the taint level, and it ends. */
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

#include "reconcile/move/plan.h"
#include "testutil.h"

#define CN 64
#define CV 512
#define GI 1073741824.0

struct cvm {
    char name[16], ns[8];
    double cpu, mem; /* true CPU demand (cores), memory in use (bytes) */
    double vcpus;
    size_t node;
    int moves;
    unsigned long visited[CN / 64 + 1]; /* nodes it has been on */
};

struct cnode {
    char name[16];
    double cpus, base, skew, memory; /* base: system load (cores) */
    double k;                        /* the calibration the edge keeps */
    bool relieving;
};

struct cluster {
    size_t nn, nv;
    struct cnode n[CN];
    struct cvm v[CV];
    unsigned resources;
    double refuse; /* probability that a planned move is refused */
    uint64_t rng;
};

struct hist {
    struct rebalance_recent r[4096];
    char names[4096][3][16];
    size_t n;
};

struct stats {
    int moves, cycles, repeated;
    double err_sum, err_max; /* |predicted - observed| of the nodes a cycle touched */
    int err_n;
    int held_cycles; /* cycles whose plan said OscillationHeld */
};

static double rnd(struct cluster *cl)
{
    cl->rng ^= cl->rng << 13, cl->rng ^= cl->rng >> 7, cl->rng ^= cl->rng << 17;
    return (double)(cl->rng >> 11) / 9007199254740992.0;
}

/* The model: the share of demand D that waits on capacity C, demand fluctuating normally with
 * a coefficient of variation of 0.25 (hack/sim/model.c). */
static double unserved(double D, double C)
{
    if (D <= 0)
        return 0;
    double deficit = 1 - C / D, z = deficit / 0.25;
    double v = deficit * 0.5 * erfc(-z / sqrt(2.0)) + 0.25 * exp(-0.5 * z * z) / sqrt(2.0 * 3.14159265358979);
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

static void node_truth(const struct cluster *cl, size_t i, double *cpu, double *mem)
{
    *cpu = cl->n[i].base, *mem = 0;
    for (size_t j = 0; j < cl->nv; j++)
        if (cl->v[j].node == i)
            *cpu += cl->v[j].cpu, *mem += cl->v[j].mem;
}

/* What node i reads (percent) on CPU and memory. */
static void readings(const struct cluster *cl, size_t i, double *pc, double *pm)
{
    double cpu, mem;
    node_truth(cl, i, &cpu, &mem);
    *pc = fmin(100, cl->n[i].skew * 100 * unserved(cpu, cl->n[i].cpus));
    *pm = fmin(100, cl->n[i].skew * 100 * unserved(mem, cl->n[i].memory));
}

static double node_hot(const struct cluster *cl, size_t i)
{
    double pc, pm;
    readings(cl, i, &pc, &pm);
    return (cl->resources & REBALANCE_RES_MEMORY) ? fmax(pc, pm) : pc;
}

static double cluster_max(const struct cluster *cl)
{
    double m = 0;
    for (size_t i = 0; i < cl->nn; i++)
        m = fmax(m, node_hot(cl, i));
    return m;
}

static void add_node(struct cluster *cl, double cpus, double base)
{
    struct cnode *n = &cl->n[cl->nn];
    snprintf(n->name, sizeof(n->name), "n%zu", cl->nn);
    n->cpus = cpus, n->base = base, n->skew = 1, n->memory = cpus * 4 * GI;
    cl->nn++;
}

static void add_vm(struct cluster *cl, const char *ns, double cpu, double mem, size_t node)
{
    struct cvm *v = &cl->v[cl->nv];
    snprintf(v->name, sizeof(v->name), "vm%zu", cl->nv);
    snprintf(v->ns, sizeof(v->ns), "%s", ns);
    v->cpu = cpu, v->mem = mem, v->node = node, v->vcpus = ceil(cpu);
    v->visited[node / 64] |= 1ul << (node % 64);
    cl->nv++;
}

/* The nodes and candidates as the edge builds them. */
static void observe(struct cluster *cl, const struct rebalance_params *p, struct rebalance_node *nodes,
                    struct rebalance_candidate *c)
{
    for (size_t i = 0; i < cl->nn; i++) {
        struct cnode *cn = &cl->n[i];
        double cpu, mem, pc, pm;
        node_truth(cl, i, &cpu, &mem);
        readings(cl, i, &pc, &pm);
        double usage = cpu * (1 - unserved(cpu, cn->cpus));
        cn->k = rebalance_calibrate(cn->k, usage / cn->cpus, pc);
        double pods = 0;
        for (size_t j = 0; j < cl->nv; j++)
            pods += cl->v[j].node == i;
        double hotv = (p->resources & REBALANCE_RES_MEMORY) ? fmax(pc, pm) : pc;
        nodes[i] = (struct rebalance_node){
            .name = cn->name,
            .selected = true,
            .pressure = hotv,
            .sustained = hotv > p->evict_above,
            .relieving = cn->relieving,
            .cpus = cn->cpus,
            .demand = rebalance_node_demand_scaled(usage, cn->cpus, pc, cn->k),
            .alloc_cpu = cn->cpus,
            .alloc_memory = cn->memory,
            .alloc_pods = 250,
            .req_cpu = 0.1 * pods,
            .req_memory = 0,
            .req_pods = pods,
            .cpu_pressure = pc,
            .mem_pressure = pm,
            .memory = cn->memory,
            .mem_used = fmin(mem, cn->memory), /* a node holds no more than its memory */
        };
        nodes[i].scale[REBALANCE_CPU] = cn->k;
    }
    for (size_t j = 0; j < cl->nv; j++) {
        struct cvm *v = &cl->v[j];
        size_t i = v->node;
        double cpu, mem;
        node_truth(cl, i, &cpu, &mem);
        double usage = v->cpu * (1 - unserved(cpu, cl->n[i].cpus));
        c[j] = (struct rebalance_candidate){
            .ns = v->ns,
            .name = v->name,
            .workload = v->name,
            .node = i,
            .req_cpu = 0.1,
            .req_memory = 0,
            .demand = rebalance_demand_scaled(usage, nodes[i].cpu_pressure, cl->n[i].k),
            .mem_used = v->mem,
            .max_demand = v->vcpus,
            .vm = true,
        };
    }
}

/* Check what one cycle made against the limits, all rounds together. */
static void check_limits(const struct cluster *cl, const struct rebalance_params *p, const struct rebalance_move *made,
                         size_t n)
{
    assert_true((int)n <= p->max_total);
    assert_true((int)n <= p->max_in_flight); /* every workload here is a VM */
    for (size_t a = 0; a < n; a++) {
        int same_ns = 0, same_src = 0;
        for (size_t b = 0; b < n; b++) {
            same_ns += strcmp(cl->v[made[a].candidate].ns, cl->v[made[b].candidate].ns) == 0;
            same_src += made[a].source == made[b].source;
        }
        assert_true(same_ns <= p->max_per_namespace);
        assert_true(same_src <= p->max_per_node && same_src <= REBALANCE_KUBEVIRT_PER_NODE);
    }
}

/* One cycle as the edge runs it; the moves made. */
static size_t cycle(struct cluster *cl, struct rebalance_params p, struct hist *h, struct stats *st)
{
    static struct rebalance_node nodes[CN];
    static struct rebalance_candidate c[CV];
    struct rebalance_move made[64];
    size_t nmade = 0;
    p.resources = cl->resources;
    p.recent = h->r, p.nrecent = h->n;
    observe(cl, &p, nodes, c);
    for (int round = 0; round < 4; round++) {
        p.made = made, p.nmade = nmade;
        struct rebalance_plan plan;
        assert_int_equal(rebalance_plan(&p, nodes, cl->nn, c, cl->nv, &plan), 0);
        bool refused = false;
        for (size_t k = 0; k < plan.nmoves; k++) {
            const struct rebalance_move *mv = &plan.moves[k];
            assert_int_equal(mv->source, cl->v[mv->candidate].node);
            assert_true(mv->dst_pressure_after < p.taint_above); /* never predicted at the taint level */
            if (rnd(cl) < cl->refuse) {
                c[mv->candidate].blocked = "refused";
                refused = true;
            } else if (nmade < 64) {
                made[nmade++] = *mv;
            }
        }
        st->held_cycles += strcmp(plan.reason, REBALANCE_OSCILLATION) == 0;
        if (getenv("PSI_TEST_VERBOSE"))
            print_message("cycle: %s: %s%s%s\n", plan.reason, plan.message, plan.held ? " held: " : "",
                          plan.held_message);
        rebalance_plan_free(&plan);
        if (!refused)
            break;
    }
    check_limits(cl, &p, made, nmade);
    for (size_t i = 0; i < cl->nn; i++)
        cl->n[i].relieving = rebalance_is_source(&p, &nodes[i]);
    for (size_t k = 0; k < nmade; k++) {
        struct cvm *v = &cl->v[made[k].candidate];
        size_t t = made[k].destination;
        assert_false(v->visited[t / 64] & (1ul << (t % 64))); /* no workload returns to a node it left */
        v->visited[t / 64] |= 1ul << (t % 64);
        v->node = t;
        st->repeated += v->moves++ > 0;
        assert_true(h->n < 4096);
        snprintf(h->names[h->n][0], 16, "%s", v->name);
        snprintf(h->names[h->n][1], 16, "%s", cl->n[made[k].source].name);
        snprintf(h->names[h->n][2], 16, "%s", cl->n[t].name);
        h->r[h->n] = (struct rebalance_recent){h->names[h->n][0], h->names[h->n][1], h->names[h->n][2]};
        h->n++;
    }
    /* predicted against observed: the last prediction for each node touched */
    for (size_t i = 0; i < cl->nn; i++) {
        double pred = NAN;
        for (size_t k = 0; k < nmade; k++)
            pred = made[k].source == i        ? made[k].src_pressure_after
                   : made[k].destination == i ? made[k].dst_pressure_after
                                              : pred;
        if (isnan(pred))
            continue;
        double e = fabs(pred - node_hot(cl, i));
        st->err_sum += e, st->err_n++;
        st->err_max = fmax(st->err_max, e);
    }
    st->moves += (int)nmade;
    return nmade;
}

/* Cycles until one makes no move (at most max_cycles); the stats. */
static struct stats run(struct cluster *cl, const struct rebalance_params *p, int max_cycles)
{
    static struct hist h;
    h.n = 0;
    struct stats st = {0};
    for (st.cycles = 0; st.cycles < max_cycles; st.cycles++)
        if (!cycle(cl, *p, &h, &st))
            break;
    return st;
}

/* ---- the optimum ---- */

static bool all_below(const struct cluster *cl, double level)
{
    for (size_t i = 0; i < cl->nn; i++)
        if (node_hot(cl, i) >= level)
            return false;
    return true;
}

/* Whether `depth` more moves can get every node below level (moves off nodes at or above it). */
static bool reachable(struct cluster *cl, double level, int depth)
{
    if (all_below(cl, level))
        return true;
    if (depth == 0)
        return false;
    for (size_t j = 0; j < cl->nv; j++) {
        size_t from = cl->v[j].node;
        if (node_hot(cl, from) < level)
            continue;
        for (size_t t = 0; t < cl->nn; t++) {
            if (t == from)
                continue;
            cl->v[j].node = t;
            bool ok = reachable(cl, level, depth - 1);
            cl->v[j].node = from;
            if (ok)
                return true;
        }
    }
    return false;
}

/* The fewest moves that get every node below level, by search (-1: more than max). */
static int optimum(const struct cluster *cl, double level, int max)
{
    static struct cluster copy;
    copy = *cl;
    for (int d = 0; d <= max; d++)
        if (reachable(&copy, level, d))
            return d;
    return -1;
}

/* A lower bound: for each node at or above level, the fewest of its workloads whose leaving
 * gets it below level (biggest first). */
static int lower_bound(const struct cluster *cl, double level)
{
    static struct cluster copy;
    copy = *cl;
    int total = 0;
    for (size_t i = 0; i < copy.nn; i++) {
        while (node_hot(&copy, i) >= level) {
            long big = -1;
            for (size_t j = 0; j < copy.nv; j++)
                if (copy.v[j].node == i && (big < 0 || copy.v[j].cpu > copy.v[big].cpu))
                    big = (long)j;
            if (big < 0)
                break;
            copy.v[big].node = CN; /* gone */
            total++;
        }
    }
    return total;
}

/* The figures of a run; best < 0: no optimum computed. */
static void report(const char *name, const struct cluster *cl, const struct stats *st, int best)
{
    char opt[32] = "not computed";
    if (best >= 0)
        snprintf(opt, sizeof(opt), "%d", best);
    print_message("%-22s moves %d (optimum %s), repeated %d, cycles %d, final max %.1f%%, prediction error mean "
                  "%.1f max %.1f points\n",
                  name, st->moves, opt, st->repeated, st->cycles, cluster_max(cl),
                  st->err_n ? st->err_sum / st->err_n : 0, st->err_max);
}

/* ---- scenarios ---- */

static void test_heterogeneous(void **state)
{
    (void)state;
    static struct cluster cl;
    memset(&cl, 0, sizeof(cl));
    add_node(&cl, 8, 0.2), add_node(&cl, 16, 0.2), add_node(&cl, 32, 0.5), add_node(&cl, 64, 1);
    /* the small nodes hold the big VMs: 8 CPUs want 14 cores, 16 CPUs want 30 */
    add_vm(&cl, "a", 6, 8 * GI, 0), add_vm(&cl, "a", 4, 4 * GI, 0), add_vm(&cl, "a", 4, 4 * GI, 0);
    add_vm(&cl, "a", 12, 8 * GI, 1), add_vm(&cl, "a", 8, 8 * GI, 1), add_vm(&cl, "a", 6, 4 * GI, 1);
    add_vm(&cl, "a", 4, 4 * GI, 1);
    add_vm(&cl, "a", 8, 8 * GI, 2), add_vm(&cl, "a", 8, 8 * GI, 3);
    struct rebalance_params p = default_params();
    int best = optimum(&cl, rebalance_target(&p), 5);
    struct stats st = run(&cl, &p, 50);
    report("heterogeneous", &cl, &st, best);
    assert_true(all_below(&cl, rebalance_target(&p)));
    assert_int_equal(st.moves, best);
    assert_int_equal(st.repeated, 0);
}

static void test_small_emptiest(void **state)
{
    (void)state;
    static struct cluster cl;
    memset(&cl, 0, sizeof(cl));
    /* the emptiest node has 2 CPUs: a 3-core VM there would saturate it */
    add_node(&cl, 8, 0.2), add_node(&cl, 2, 0), add_node(&cl, 16, 0.2);
    for (int i = 0; i < 5; i++)
        add_vm(&cl, "a", 3, 4 * GI, 0);
    add_vm(&cl, "a", 6, 4 * GI, 2);
    struct rebalance_params p = default_params();
    int best = optimum(&cl, rebalance_target(&p), 4);
    struct stats st = run(&cl, &p, 50);
    report("small emptiest node", &cl, &st, best);
    assert_true(all_below(&cl, rebalance_target(&p)));
    assert_int_equal(st.moves, best);
    for (size_t j = 0; j < cl.nv; j++)
        assert_int_not_equal(cl.v[j].node, 1); /* nothing went to the small node */
}

static void test_memory_hot(void **state)
{
    (void)state;
    static struct cluster cl;
    memset(&cl, 0, sizeof(cl));
    cl.resources = REBALANCE_RES_CPU | REBALANCE_RES_MEMORY;
    add_node(&cl, 16, 0.5), add_node(&cl, 16, 0.5), add_node(&cl, 16, 0.5);
    /* n0: CPU cool, working sets of 114 GiB on 64 GiB; n1 CPU-busy but not hot */
    for (int i = 0; i < 6; i++)
        add_vm(&cl, "a", 1, 19 * GI, 0);
    add_vm(&cl, "a", 10, 8 * GI, 1), add_vm(&cl, "a", 2, 8 * GI, 2);
    struct rebalance_params p = default_params();
    double pc, pm;
    readings(&cl, 0, &pc, &pm);
    assert_true(pm > 40 && pc < 1); /* hot on memory alone */
    int best = optimum(&cl, rebalance_target(&p), 4);
    struct stats st = run(&cl, &p, 50);
    report("memory-hot node", &cl, &st, best);
    assert_true(all_below(&cl, rebalance_target(&p)));
    assert_int_equal(st.moves, best);
    /* CPU on CPU only: nothing moves, the memory pressure is not seen */
    memset(&cl, 0, sizeof(cl));
    add_node(&cl, 16, 0.5), add_node(&cl, 16, 0.5);
    for (int i = 0; i < 6; i++)
        add_vm(&cl, "a", 1, 19 * GI, 0);
    st = run(&cl, &p, 50);
    assert_int_equal(st.moves, 0);
}

static void test_flipping(void **state)
{
    (void)state;
    static struct cluster cl;
    memset(&cl, 0, sizeof(cl));
    add_node(&cl, 4, 0.2), add_node(&cl, 4, 0.2), add_node(&cl, 8, 0.2);
    add_vm(&cl, "a", 3, 4 * GI, 0), add_vm(&cl, "b", 1, 4 * GI, 0), add_vm(&cl, "c", 3, 4 * GI, 1);
    add_vm(&cl, "d", 1, 4 * GI, 1);
    cl.v[0].vcpus = cl.v[2].vcpus = 6;
    struct rebalance_params p = default_params();
    static struct hist h;
    h.n = 0;
    struct stats st = {0};
    /* the load flips: every 3 cycles the busy VM is on one node then the other's */
    for (int k = 0; k < 60; k++) {
        bool a = (k / 3) % 2 == 0;
        cl.v[0].cpu = a ? 6 : 0.2, cl.v[2].cpu = a ? 0.2 : 6;
        cycle(&cl, p, &h, &st);
        st.cycles++;
    }
    report("flipping load", &cl, &st, -1);
    assert_int_equal(st.repeated, 0); /* each VM moved at most once: history held the rest */
    assert_true(st.moves <= 2);
    assert_true(st.moves >= 1);
}

/* Two nodes only, and load that moves from one to the other: first two busy VMs on n0, one of
 * them is moved to n1; then the one left on n0 idles and n1's other VM gets busy. Relieving n1
 * now would send load back: the moved VM to the node it left, or another one along the way the
 * first came (two nodes trading load). History holds both, with the reason. */
static void test_trading(void **state)
{
    (void)state;
    static struct cluster cl;
    memset(&cl, 0, sizeof(cl));
    add_node(&cl, 8, 0.2), add_node(&cl, 8, 0.2);
    add_vm(&cl, "a", 7, 4 * GI, 0), add_vm(&cl, "b", 7, 4 * GI, 0), add_vm(&cl, "c", 0.2, 4 * GI, 1);
    cl.v[2].vcpus = 7;
    struct rebalance_params p = default_params();
    static struct hist h;
    h.n = 0;
    struct stats st = {0};
    for (int k = 0; k < 12; k++) {
        bool a = (k / 3) % 2 == 0;
        cl.v[1].cpu = a ? 7 : 0.2, cl.v[2].cpu = a ? 0.2 : 7;
        cycle(&cl, p, &h, &st);
    }
    report("two nodes trading", &cl, &st, -1);
    assert_int_equal(st.moves, 1); /* the first relief; the way back is held */
    assert_int_equal(st.repeated, 0);
    assert_true(st.held_cycles > 0);
}

static void test_fifty_nodes(void **state)
{
    (void)state;
    static struct cluster cl;
    memset(&cl, 0, sizeof(cl));
    cl.rng = 12345;
    for (int i = 0; i < 50; i++)
        add_node(&cl, i >= 10 && i % 3 == 0 ? 32 : 16, 0.5);
    char ns[8];
    /* 400 VMs: 10 hot nodes get 16 each, the other 40 hold 6 each */
    for (size_t i = 0; i < 50; i++) {
        int n = i < 10 ? 16 : 6;
        for (int k = 0; k < n; k++) {
            snprintf(ns, sizeof(ns), "ns%d", (int)(rnd(&cl) * 20));
            add_vm(&cl, ns, i < 10 ? 1.5 + rnd(&cl) * 1.5 : 0.2 + rnd(&cl) * 1.2, (1 + rnd(&cl) * 7) * GI, i);
        }
    }
    struct rebalance_params p = default_params();
    int hot = 0;
    for (size_t i = 0; i < cl.nn; i++)
        hot += node_hot(&cl, i) > p.evict_above;
    assert_int_equal(hot, 10);
    int bound = lower_bound(&cl, rebalance_target(&p));
    struct stats st = run(&cl, &p, 400);
    report("50 nodes, 400 VMs", &cl, &st, bound);
    assert_true(all_below(&cl, rebalance_target(&p)));
    assert_true(st.moves >= bound);
    assert_true(st.moves <= bound + bound / 5); /* within 20 % of the lower bound */
    assert_int_equal(st.repeated, 0);
}

/* ---- the random-cluster property ---- */

static void test_random_skewed(void **state)
{
    (void)state;
    static struct cluster cl;
    int trials = 0, moves = 0, below = 0, repeated = 0;
    double err = 0, worst = 0;
    int err_n = 0;
    uint64_t seed = 88172645463325252ULL;
    for (int trial = 0; trial < 200; trial++) {
        memset(&cl, 0, sizeof(cl));
        cl.rng = seed + (uint64_t)trial * 7919;
        size_t nn = 3 + (size_t)(rnd(&cl) * 6);
        for (size_t i = 0; i < nn; i++) {
            add_node(&cl, (double)(8 << (int)(rnd(&cl) * 4)), rnd(&cl) * 0.5);
            cl.n[i].skew = 0.5 + rnd(&cl) * 2.0; /* x0.5 to x2.5 the unserved share */
        }
        /* VMs wanting 30 % to 70 % of the cluster's CPUs and memory, piled on the first nodes */
        double cpus = 0, used = 0, share = 0.3 + rnd(&cl) * 0.4;
        for (size_t i = 0; i < nn; i++)
            cpus += cl.n[i].cpus;
        while (used < share * cpus && cl.nv < 40) {
            const char *ns[] = {"a", "b", "c"};
            size_t on = (size_t)(rnd(&cl) * rnd(&cl) * (double)nn);
            double cpu = 0.5 + rnd(&cl) * 10;
            add_vm(&cl, ns[(int)(rnd(&cl) * 3)], cpu, (0.5 + rnd(&cl) * 2) * cpu * share * 4 * GI, on);
            cl.v[cl.nv - 1].vcpus = ceil(cpu * (1 + rnd(&cl) * 0.5)); /* not every VM uses all its vCPUs */
            used += cpu;
        }
        cl.refuse = 0.2;
        cl.resources = rnd(&cl) < 0.3 ? REBALANCE_RES_CPU | REBALANCE_RES_MEMORY : 0;
        struct rebalance_params p = default_params();
        p.max_per_node = 1 + (int)(rnd(&cl) * 3);
        p.max_per_namespace = 1 + (int)(rnd(&cl) * 3);
        p.max_total = 1 + (int)(rnd(&cl) * 5);
        p.max_in_flight = 1 + (int)(rnd(&cl) * 5);
        struct stats st = run(&cl, &p, 300);
        assert_true(st.cycles < 300); /* it ends */
        trials++;
        moves += st.moves;
        repeated += st.repeated;
        below += cluster_max(&cl) < p.taint_above;
        err += st.err_sum, err_n += st.err_n;
        worst = fmax(worst, st.err_max);
    }
    print_message("random skewed clusters: %d trials, %d moves, %d repeated, %d ended below the taint level, "
                  "prediction error mean %.1f max %.1f points\n",
                  trials, moves, repeated, below, err_n ? err / err_n : 0, worst);
    assert_true(moves > 200); /* the property was exercised */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heterogeneous), cmocka_unit_test(test_small_emptiest), cmocka_unit_test(test_memory_hot),
        cmocka_unit_test(test_flipping),      cmocka_unit_test(test_trading),        cmocka_unit_test(test_fifty_nodes),
        cmocka_unit_test(test_random_skewed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
