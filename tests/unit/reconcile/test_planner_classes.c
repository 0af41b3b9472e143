/* The planner (reconcile/move/plan) against a reference, over random clusters of the
 * classes issue 31 names: 2-8 nodes (reference: the exact fewest moves, by search, up to 3
 * moves, else greedy) and 50 and 200 nodes (reference: greedy, the largest VM from the hottest
 * node to the coolest node that takes it below its goal, then a local search that retries a
 * node's other VMs). The reference knows every true demand and skew and keeps the promises the
 * CRD makes of moves: only off a node not yet below its goal, each to a node it leaves below
 * its own goal, no VM moved twice, none back to a node it left, no node sending load back to
 * one that sent it some. Its goals: every node below the taint level (for the nodes left
 * above it), and what the planner is asked for (for the moves): every node below the taint
 * level and every node hot at the start below the relief target, where its taint comes off.
 * Clusters: sizes 4 to 96 CPUs; VMs too big for any destination; CPU alone, or CPU and
 * memory; readings skewed x0.5 to x2.5.
 *
 * Pressure is the kernel's CPU "some" as bench/psi-kernel measured it, in the family the
 * planner predicts with (predict.h) but not its constants: each node follows one of the two
 * per-size Weibull fits of bench/results/psi-kernel-2026-12-03-full.txt,
 * 1 - exp(-(L / 0.909)^3.529) (1 CPU) or 1 - exp(-(L / 0.938)^4.571) (2 CPUs), drawn at
 * random, times its skew, 100 % at most. Memory "some" is nil below the node's memory, as the
 * kernel measured it (0 up to a working set of 0.9 of the limit), and rises with the share of
 * the working set that does not fit: the planner's memory curve (rebalance_memory_curve) with
 * a burstiness of its own per node, 0.15 to 0.35, times the same skew. The skew is the node's:
 * its pressure is what it reads, and every figure below judges that pressure (the reference
 * knows each node's skew, the planner learns it from the readings). The edge's inputs are
 * built as gather builds them: usage is what is served (capacity at most, shared among a
 * saturated node's VMs as CFS shares it: serve()), demand inferred by the planner's own
 * rebalance_node_demand_scaled / rebalance_demand_scaled with the node's calibration, and
 * where demand_cpu finds a node saturated, bounded by its VMs' usage and vCPUs.
 *
 * The planner runs cycle after cycle with every field at its default, as the edge drives it,
 * until a cycle makes no move. Per class the test prints: the nodes the reference gets below
 * the taint level that the planner leaves at or above it, split into destinations it pushed
 * there, hot nodes a reference planning in the cluster as the planner believes it (as_believed)
 * also gets below (left by the planner's rules) and the rest (left for what the planner cannot
 * see); the clusters a search gets wholly below taint only through destinations pushed above it
 * on the way (outside the promises); the nodes hot at the start the planner leaves at or above
 * the relief target where the reference gets them below it; moves against the reference, per
 * cluster where it meets its goal wholly and per node where both meet it; useless moves;
 * single moves that show no drop; destinations pushed from below the taint level to at or
 * above it, and to above the evict level; returns (a VM moved back to a node it left) and
 * trades (a move opposite to an earlier one), within the run; the prediction error: each
 * source's and destination's predicted pressure after its last move of a cycle against what it
 * reads once the cycle's moves are made (median and p90, points); limits exceeded.
 *
 * A move is useless when its source's pressure neither falls REBALANCE_MIN_RELIEF points
 * below what it was just before the move nor below the target, until the end of the run or
 * until the source stops being relieved (rebalance_is_source says no): the moves that could
 * not help. They are broken down by cause: the source was already below the taint level (a
 * relief to the target that fell short), the source was saturated (99 % or more) before the
 * move and still is (nowhere to go), or else the source was never relieved. A single move that
 * shows no drop is one after which the source's pressure is not REBALANCE_MIN_RELIEF below
 * what it was just before it, whatever comes next: mostly steps off a saturated source, where
 * the kernel's curve is flat at 100 % from a load of about 1.2, so one move cannot show the
 * unserved demand it removes; printed with how many were off a saturated source, not a fault
 * by itself.
 *
 * Two classes are measured on their own: eight nodes with three hot ones (how many cycles until
 * every node is below the taint level) and a destination two sources contest (a hot node's
 * small VMs and a cooler node's big VM that fits only on the node the small ones would take
 * first: the clusters the planner gets below the taint level against the reference's).
 *
 * It asserts what holds by construction of the rules: no limit exceeded, no return or trade,
 * every run ends, every reference placement is real. The printed figures are the planner's
 * measure, not a pass mark. */
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

#include "reconcile/move/demand.h"
#include "reconcile/move/plan.h"
#include "testutil.h"

#define PN 200
#define PV 1600
#define GI 1073741824.0

struct pvm {
    char name[16], ns[8];
    double cpu, mem, vcpus;
    size_t node;
};

struct pnode {
    char name[16];
    double cpus, memory, skew, k;
    double fit_scale, fit_shape; /* its kernel curve */
    double burst;                /* its memory curve's burstiness */
    double believed[2];      /* > 0: its pressure is this scale times the planner's curve (as_believed), CPU, memory */
    bool relieving, tainted; /* tainted: as the tainter keeps it, from the readings */
};

struct pcluster {
    size_t nn, nv;
    struct pnode n[PN];
    struct pvm v[PV];
    double cpu[PN], mem[PN]; /* true demand per node, kept with the placement */
    unsigned resources;
    uint64_t rng;
};

struct pstats {
    int moves, cycles, dst_taint, dst_evict, limits;
    int useless, useless_band, useless_saturated, useless_unrelieved; /* useless moves, by cause (header) */
    int flat, flat_saturated; /* single moves that show no drop; of them, off a saturated source */
    int cycles_to_taint;      /* cycles until every node was below the taint level (-1: never) */
    int returns, trades;      /* a VM moved back to a node it left; a move opposite to an earlier one */
};

/* Prediction errors (points) of the run's moves, per class: the source's predicted pressure after
 * its last move of a cycle against what it reads after the cycle's moves, the same for each
 * destination. */
struct perrors {
    double src[16384], dst[16384];
    size_t nsrc, ndst;
};

static struct perrors errors;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of v[0..n) (sorted in place), NAN when empty. */
static double quantile(double *v, size_t n, double q)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof(*v), cmp_double);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

static double rnd(struct pcluster *cl)
{
    cl->rng ^= cl->rng << 13, cl->rng ^= cl->rng >> 7, cl->rng ^= cl->rng << 17;
    return (double)(cl->rng >> 11) / 9007199254740992.0;
}

/* The kernel-shaped share of time some task waits on node n at demand D on capacity C. */
static double kernel_some(const struct pnode *n, double D, double C)
{
    if (D <= 0 || C <= 0)
        return 0;
    return 1 - exp(-pow(D / C / n->fit_scale, n->fit_shape));
}

/* The share of time some task waits on memory on node n at working set D in memory C: the
 * deficit 1 - C/D smoothed by the node's burstiness (as rebalance_memory_curve). */
static double memory_some(const struct pnode *n, double D, double C)
{
    if (D <= 0 || C <= 0)
        return 0;
    double b = n->burst, deficit = 1 - C / D, z = deficit / b;
    double f = deficit * 0.5 * erfc(-z / sqrt(2.0)) + b * exp(-0.5 * z * z) / sqrt(2 * M_PI);
    return fmin(1, fmax(0, f));
}

/* Node i's CPU and memory pressure, percent: what it reads. */
static void readings(const struct pcluster *cl, size_t i, double *pc, double *pm)
{
    const struct pnode *n = &cl->n[i];
    double cpu = cl->cpu[i] / n->cpus, mem = cl->mem[i] / n->memory;
    *pc = fmin(100, n->believed[REBALANCE_CPU] > 0 ? n->believed[REBALANCE_CPU] * 100 * rebalance_curve(cpu)
                                                   : n->skew * 100 * kernel_some(n, cl->cpu[i], n->cpus));
    *pm =
        fmin(100, n->believed[REBALANCE_MEMORY] > 0 ? n->believed[REBALANCE_MEMORY] * 100 * rebalance_memory_curve(mem)
                                                    : n->skew * 100 * memory_some(n, cl->mem[i], n->memory));
}

/* Node i's pressure on the resources balanced on. */
static double pressure_of(const struct pcluster *cl, size_t i)
{
    double pc, pm;
    readings(cl, i, &pc, &pm);
    return (cl->resources & REBALANCE_RES_MEMORY) ? fmax(pc, pm) : pc;
}

static void place(struct pcluster *cl, size_t j, size_t to)
{
    struct pvm *v = &cl->v[j];
    cl->cpu[v->node] -= v->cpu, cl->mem[v->node] -= v->mem;
    v->node = to;
    cl->cpu[to] += v->cpu, cl->mem[to] += v->mem;
}

static void add_node(struct pcluster *cl, double cpus, double base)
{
    struct pnode *n = &cl->n[cl->nn];
    snprintf(n->name, sizeof(n->name), "n%03zu", cl->nn);
    n->cpus = cpus, n->memory = cpus * 4 * GI, n->skew = 1, n->burst = 0.25;
    cl->cpu[cl->nn] = base, cl->mem[cl->nn] = 0;
    cl->nn++;
}

static void add_vm(struct pcluster *cl, const char *ns, double cpu, double mem, double vcpus, size_t node)
{
    struct pvm *v = &cl->v[cl->nv];
    snprintf(v->name, sizeof(v->name), "vm%zu", cl->nv);
    snprintf(v->ns, sizeof(v->ns), "%s", ns);
    v->cpu = cpu, v->mem = mem, v->vcpus = vcpus, v->node = node;
    cl->cpu[node] += cpu, cl->mem[node] += mem;
    cl->nv++;
}

/* A random cluster of nn nodes: sizes 4..96 CPUs, VMs piled on the first nodes (some hot),
 * a few VMs too big for any other node, memory balanced on with probability mem_share. */
static void generate(struct pcluster *cl, size_t nn, uint64_t seed, double mem_share)
{
    memset(cl, 0, sizeof(*cl));
    cl->rng = seed | 1;
    static const double sizes[] = {4, 8, 16, 24, 32, 48, 64, 96};
    double total = 0;
    for (size_t i = 0; i < nn; i++) {
        add_node(cl, sizes[(int)(rnd(cl) * 8)], rnd(cl) * 0.3);
        cl->n[i].skew = 0.5 + rnd(cl) * 2.0;
        bool one = rnd(cl) < 0.5;
        cl->n[i].fit_scale = one ? 0.909 : 0.938, cl->n[i].fit_shape = one ? 3.529 : 4.571;
        cl->n[i].burst = 0.15 + rnd(cl) * 0.2;
        total += cl->n[i].cpus;
    }
    static const char *ns[] = {"a", "b", "c", "d"};
    double share = 0.25 + rnd(cl) * 0.25, used = 0;
    size_t cap = nn <= 8 ? 12 : PV;
    while (used < share * total && cl->nv < cap) {
        size_t on = (size_t)(rnd(cl) * rnd(cl) * (double)nn);
        double cpu = 0.5 + rnd(cl) * fmin(12, cl->n[on].cpus * 0.6);
        if (rnd(cl) < 0.05)
            cpu = cl->n[on].cpus * 0.9; /* as big as its node: nowhere smaller takes it */
        double vcpus = ceil(cpu * (1 + rnd(cl) * 0.5));
        add_vm(cl, ns[(int)(rnd(cl) * 4)], cpu, (0.5 + rnd(cl) * 3) * cpu * GI, vcpus, on);
        used += cpu;
    }
    cl->resources = rnd(cl) < mem_share ? REBALANCE_RES_CPU | REBALANCE_RES_MEMORY : 0;
}

static bool all_below(const struct pcluster *cl, double level)
{
    for (size_t i = 0; i < cl->nn; i++)
        if (pressure_of(cl, i) >= level)
            return false;
    return true;
}

/* ---- the reference ---- */

/* What the reference must reach: node i below goal[i] (percent). */
struct goal {
    double below[PN];
};

/* Every node below the taint level. */
static void taint_goal(const struct pcluster *cl, double taint, struct goal *g)
{
    for (size_t i = 0; i < cl->nn; i++)
        g->below[i] = taint;
}

/* What the planner is asked for (the CRD's eviction): every node below the taint level, and
 * every node at or above it at the start (tainted, so relieved) below the relief target, where
 * its taint comes off; a node left between the two stays tainted. */
static void relief_goal(const struct pcluster *cl, double taint, double target, struct goal *g)
{
    for (size_t i = 0; i < cl->nn; i++)
        g->below[i] = pressure_of(cl, i) >= taint ? target : taint;
}

static bool met(const struct pcluster *cl, const struct goal *g, size_t i)
{
    return pressure_of(cl, i) < g->below[i];
}

static bool all_met(const struct pcluster *cl, const struct goal *g)
{
    for (size_t i = 0; i < cl->nn; i++)
        if (!met(cl, g, i))
            return false;
    return true;
}

/* How the exact search may move: within the planner's rules (a move only off a node not below
 * its goal, to a node it leaves below its own goal, each VM once, never against an earlier
 * move), or also through destinations pushed above their goal on the way and VMs moved twice
 * (chains that make room), returns and trades still excluded. */
enum search { WITHIN_RULES, THROUGH_HOT };

/* The moves on the search's path: VM j left node i; a move went from node i to node t. */
static bool path_left[PV][PN], path_sent[PN][PN];

/* Whether g can be met in depth moves more, as `how` allows. */
static bool reachable(struct pcluster *cl, const struct goal *g, enum search how, int depth)
{
    if (all_met(cl, g))
        return true;
    if (depth == 0)
        return false;
    for (size_t j = 0; j < cl->nv; j++) {
        size_t from = cl->v[j].node;
        bool moved = false;
        for (size_t i = 0; how == WITHIN_RULES && i < cl->nn; i++)
            moved = moved || path_left[j][i];
        if (moved || met(cl, g, from))
            continue;
        for (size_t t = 0; t < cl->nn; t++) {
            if (t == from || path_left[j][t] || path_sent[t][from])
                continue;
            place(cl, j, t);
            bool ok = false;
            if (how == THROUGH_HOT || met(cl, g, t)) {
                bool was_left = path_left[j][from], was_sent = path_sent[from][t];
                path_left[j][from] = path_sent[from][t] = true;
                ok = reachable(cl, g, how, depth - 1);
                path_left[j][from] = was_left, path_sent[from][t] = was_sent;
            }
            place(cl, j, from);
            if (ok)
                return true;
        }
    }
    return false;
}

/* Exact: the fewest moves that meet g as `how` allows (-1: none within max). */
static int exact(const struct pcluster *cl, const struct goal *g, enum search how, int max)
{
    static struct pcluster copy;
    copy = *cl;
    memset(path_left, 0, sizeof(path_left));
    memset(path_sent, 0, sizeof(path_sent));
    for (int d = 0; d <= max; d++)
        if (reachable(&copy, g, how, d))
            return d;
    return -1;
}

/* Greedy plus local search: while a node is not below its goal, the hottest such node sends
 * the largest of its VMs that some node takes staying below its own goal, to the coolest node
 * after the move; when none of its VMs fits anywhere, it is left (unsolved). -1 when a node is
 * left. met_at_end[i] (may be NULL) says whether node i ends below its goal, moves_off[i] (may
 * be NULL) how many VMs left it. */
static int greedy(const struct pcluster *cl, const struct goal *g, bool *met_at_end, int *moves_off)
{
    static struct pcluster c;
    c = *cl;
    static bool stuck[PN];
    memset(stuck, 0, sizeof(stuck));
    if (moves_off)
        memset(moves_off, 0, sizeof(int) * cl->nn);
    int moves = 0;
    for (;;) {
        long hot = -1;
        for (size_t i = 0; i < c.nn; i++)
            if (!stuck[i] && !met(&c, g, i) && (hot < 0 || pressure_of(&c, i) > pressure_of(&c, (size_t)hot)))
                hot = (long)i;
        if (hot < 0)
            break;
        long bj = -1, bt = -1;
        double best_p = INFINITY;
        for (size_t j = 0; j < c.nv; j++) {
            if (c.v[j].node != (size_t)hot || (bj >= 0 && c.v[j].cpu < c.v[bj].cpu))
                continue;
            for (size_t t = 0; t < c.nn; t++) {
                if (t == (size_t)hot)
                    continue;
                place(&c, j, t);
                double pt = pressure_of(&c, t);
                place(&c, j, (size_t)hot);
                if (pt >= g->below[t])
                    continue;
                if (bj != (long)j || pt < best_p)
                    bj = (long)j, bt = (long)t, best_p = pt;
            }
        }
        if (bj < 0) {
            stuck[hot] = true;
            continue;
        }
        place(&c, (size_t)bj, (size_t)bt);
        moves++;
        if (moves_off)
            moves_off[hot]++;
    }
    for (size_t i = 0; met_at_end && i < c.nn; i++)
        met_at_end[i] = met(&c, g, i);
    return all_met(&c, g) ? moves : -1;
}

/* The reference's moves to meet g: exact up to max_exact moves, greedy beyond (or when
 * max_exact is 0); -1 when neither meets it. met_at_end and moves_off as greedy's. */
static int reference(const struct pcluster *cl, const struct goal *g, int max_exact, bool *met_at_end, int *moves_off)
{
    int ref = greedy(cl, g, met_at_end, moves_off);
    if (max_exact > 0) {
        int e = exact(cl, g, WITHIN_RULES, max_exact);
        if (e >= 0)
            ref = e;
    }
    return ref;
}

/* ---- the planner, cycle after cycle ---- */

/* Each VM's CPU use, into served[]: what the kernel's CFS (kernel/sched/fair.c) serves, shares by
 * cgroup weight. A launcher pod's weight follows its CPU request, which KubeVirt sizes by vCPUs,
 * so on a saturated node the VMs below the water level (lambda cores per vCPU) get what they
 * want and the others lambda times their vCPUs, with lambda such that the node's CPUs are all
 * used; the node's own base load is served first. A node with room serves everything. */
static void serve(const struct pcluster *cl, double *served)
{
    static double vms[PN];
    static size_t start[PN + 1], on[PV]; /* the VMs of node i: on[start[i] .. start[i + 1]) */
    memset(vms, 0, sizeof(double) * cl->nn);
    memset(start, 0, sizeof(size_t) * (cl->nn + 1));
    for (size_t j = 0; j < cl->nv; j++) {
        vms[cl->v[j].node] += cl->v[j].cpu, served[j] = cl->v[j].cpu;
        start[cl->v[j].node + 1]++;
    }
    for (size_t i = 0; i < cl->nn; i++)
        start[i + 1] += start[i];
    static size_t fill[PN];
    memcpy(fill, start, sizeof(size_t) * cl->nn);
    for (size_t j = 0; j < cl->nv; j++)
        on[fill[cl->v[j].node]++] = j;
    for (size_t i = 0; i < cl->nn; i++) {
        double room = cl->n[i].cpus - (cl->cpu[i] - vms[i]);
        if (vms[i] <= room)
            continue;
        double lo = 0, hi = 1;
        for (int it = 0; it < 60; it++) {
            double lambda = (lo + hi) / 2, got = 0;
            for (size_t k = start[i]; k < start[i + 1]; k++)
                got += fmin(cl->v[on[k]].cpu, lambda * cl->v[on[k]].vcpus);
            *(got < room ? &lo : &hi) = lambda;
        }
        for (size_t k = start[i]; k < start[i + 1]; k++)
            served[on[k]] = fmin(cl->v[on[k]].cpu, lo * cl->v[on[k]].vcpus);
    }
}

static double use[PV]; /* serve()'s, this cycle */

/* A node's CPU demand as the edge bounds it (mover.c, bound_demand): demand_cpu's (where it
 * finds the node saturated, the bound from its VMs' usage and vCPUs; elsewhere its usage), and
 * *ratio its demand over its usage (its workloads' demand over their usage); without usage the
 * inference, and *ratio 0. */
static double bounded_demand(const struct pcluster *cl, size_t i, double usage, double inferred, double pc,
                             double *ratio)
{
    static struct demand_workload w[PV];
    size_t nw = 0;
    for (size_t j = 0; j < cl->nv; j++)
        if (cl->v[j].node == i)
            w[nw++] = (struct demand_workload){use[j], cl->v[j].vcpus};
    struct demand_cpu_in in = {.cpus = cl->n[i].cpus,
                               .usage = usage,
                               .pressure = pc,
                               .from_pressure = inferred,
                               .load1 = NAN,
                               .waiting = NAN,
                               .w = w,
                               .nw = nw};
    struct demand_cpu_out out;
    demand_cpu(&in, &out);
    *ratio = !isnan(out.demand) && usage > 0 ? fmax(1, out.demand / usage) : 0;
    return isnan(out.demand) ? inferred : out.demand;
}

static void observe(struct pcluster *cl, const struct rebalance_params *p, struct rebalance_node *nodes,
                    struct rebalance_candidate *c)
{
    static double ratio[PN];
    serve(cl, use);
    for (size_t i = 0; i < cl->nn; i++) {
        struct pnode *n = &cl->n[i];
        double pc, pm;
        readings(cl, i, &pc, &pm);
        double served = fmin(1, n->cpus / fmax(cl->cpu[i], 1e-9)); /* the kernel serves capacity at most */
        double usage = cl->cpu[i] * served;
        n->k = rebalance_calibrate(n->k, usage / n->cpus, pc);
        double hot = (p->resources & REBALANCE_RES_MEMORY) ? fmax(pc, pm) : pc;
        n->tainted = hot > p->taint_above || (n->tainted && hot >= p->untaint_below);
        nodes[i] = (struct rebalance_node){
            .name = n->name,
            .selected = true,
            .pressure = hot,
            .sustained = hot > p->evict_above,
            .relieving = n->relieving,
            .tainted = n->tainted,
            .cpus = n->cpus,
            .demand =
                bounded_demand(cl, i, usage, rebalance_node_demand_scaled(usage, n->cpus, pc, n->k), pc, &ratio[i]),
            .alloc_cpu = n->cpus,
            .alloc_memory = n->memory,
            .alloc_pods = 250,
            .req_cpu = 0,
            .req_memory = 0,
            .req_pods = 0,
            .cpu_pressure = pc,
            .mem_pressure = pm,
            .memory = n->memory,
            .mem_used = fmin(cl->mem[i], n->memory),
        };
        nodes[i].scale[REBALANCE_CPU] = n->k;
    }
    for (size_t j = 0; j < cl->nv; j++) {
        struct pvm *v = &cl->v[j];
        size_t i = v->node;
        c[j] = (struct rebalance_candidate){
            .ns = v->ns,
            .name = v->name,
            .workload = v->name,
            .node = i,
            .req_cpu = 0,
            .req_memory = 0,
            .demand =
                ratio[i] > 0 ? use[j] * ratio[i] : rebalance_demand_scaled(use[j], nodes[i].cpu_pressure, cl->n[i].k),
            .mem_used = v->mem,
            .max_demand = v->vcpus,
            .vm = true,
        };
    }
}

static int limits_exceeded(const struct pcluster *cl, const struct rebalance_params *p, const struct rebalance_move *m,
                           size_t n)
{
    int bad = (int)n > p->max_total || (int)n > p->max_in_flight;
    for (size_t a = 0; a < n; a++) {
        int same_ns = 0, same_src = 0;
        for (size_t b = 0; b < n; b++) {
            same_ns += strcmp(cl->v[m[a].candidate].ns, cl->v[m[b].candidate].ns) == 0;
            same_src += m[a].source == m[b].source;
        }
        bad += same_ns > p->max_per_namespace || same_src > p->max_per_node;
    }
    return bad;
}

static struct rebalance_recent recent[8192];
static char recent_names[8192][3][16];

/* A move whose source's relief is still open: its source's true pressure just before it. */
struct pending {
    size_t source;
    double before;
};

/* Moves still waiting for their source to fall REBALANCE_MIN_RELIEF below their `before`. */
struct relief_book {
    struct pending m[8192];
    size_t n;
};

/* Source s's pressure is now hot: the moves off it that it relieved (by REBALANCE_MIN_RELIEF,
 * or below the target) leave the book. */
static void book_relieved(struct relief_book *b, size_t s, double hot, double target)
{
    size_t k = 0;
    for (size_t j = 0; j < b->n; j++)
        if (b->m[j].source != s || (b->m[j].before - hot < REBALANCE_MIN_RELIEF && hot >= target))
            b->m[k++] = b->m[j];
    b->n = k;
}

/* The moves off s (every source when s is PN) close unrelieved: counted useless, by cause (one
 * off a node below the taint level, one off a saturated source that stays saturated, the rest). */
static void book_close(struct relief_book *b, const struct pcluster *cl, const struct rebalance_params *p, size_t s,
                       struct pstats *st)
{
    size_t k = 0;
    for (size_t j = 0; j < b->n; j++) {
        const struct pending *m = &b->m[j];
        if (s != PN && m->source != s) {
            b->m[k++] = *m;
            continue;
        }
        double now = pressure_of(cl, m->source);
        st->useless++;
        if (m->before < p->taint_above)
            st->useless_band++;
        else if (m->before >= 99 && now >= 99)
            st->useless_saturated++;
        else
            st->useless_unrelieved++;
    }
    b->n = k;
}

/* The prediction errors of plan's moves, now that they are made (struct perrors). */
static void record_errors(const struct pcluster *cl, const struct rebalance_plan *plan)
{
    for (size_t k = 0; k < plan->nmoves; k++) {
        const struct rebalance_move *mv = &plan->moves[k];
        bool last_off = true, last_onto = true;
        for (size_t j = k + 1; j < plan->nmoves; j++) {
            last_off = last_off && plan->moves[j].source != mv->source;
            last_onto = last_onto && plan->moves[j].destination != mv->destination;
        }
        if (last_off && errors.nsrc < 16384)
            errors.src[errors.nsrc++] = fabs(mv->src_pressure_after - pressure_of(cl, mv->source));
        if (last_onto && errors.ndst < 16384)
            errors.dst[errors.ndst++] = fabs(mv->dst_pressure_after - pressure_of(cl, mv->destination));
    }
}

static int planner_off[PN]; /* drive's moves off each node */

static struct pstats drive(struct pcluster *cl, struct rebalance_params p, int max_cycles)
{
    static struct rebalance_node nodes[PN];
    static struct rebalance_candidate c[PV];
    static struct relief_book book;
    static bool left[PV][PN], moved[PN][PN]; /* VM j left node i; a move went from node i to node t */
    struct pstats st = {0};
    size_t nrecent = 0;
    book.n = 0;
    memset(left, 0, sizeof(left));
    memset(moved, 0, sizeof(moved));
    memset(planner_off, 0, sizeof(planner_off));
    p.resources = cl->resources;
    st.cycles_to_taint = all_below(cl, p.taint_above) ? 0 : -1;
    for (st.cycles = 0; st.cycles < max_cycles; st.cycles++) {
        p.recent = recent, p.nrecent = nrecent;
        observe(cl, &p, nodes, c);
        struct rebalance_plan plan;
        assert_int_equal(rebalance_plan(&p, nodes, cl->nn, c, cl->nv, &plan), 0);
        st.limits += limits_exceeded(cl, &p, plan.moves, plan.nmoves);
        for (size_t i = 0; i < cl->nn; i++) {
            cl->n[i].relieving = rebalance_is_source(&p, &nodes[i]);
            if (!cl->n[i].relieving) /* its relief is over: what did not come, will not */
                book_close(&book, cl, &p, i, &st);
        }
        size_t n = plan.nmoves;
        for (size_t k = 0; k < n; k++) {
            const struct rebalance_move *mv = &plan.moves[k];
            size_t s = mv->source, t = mv->destination;
            double s_before = pressure_of(cl, s), t_before = pressure_of(cl, t);
            st.returns += left[mv->candidate][t];
            st.trades += moved[t][s];
            left[mv->candidate][s] = moved[s][t] = true;
            planner_off[s]++;
            place(cl, mv->candidate, t);
            bool flat = s_before - pressure_of(cl, s) < REBALANCE_MIN_RELIEF;
            st.flat += flat, st.flat_saturated += flat && s_before >= 99;
            assert_true(book.n < sizeof(book.m) / sizeof(book.m[0]));
            book.m[book.n++] = (struct pending){s, s_before};
            book_relieved(&book, s, pressure_of(cl, s), rebalance_target(&p));
            st.dst_taint += t_before < p.taint_above && pressure_of(cl, t) >= p.taint_above;
            st.dst_evict += t_before <= p.evict_above && pressure_of(cl, t) > p.evict_above;
            if (nrecent < 8192) {
                snprintf(recent_names[nrecent][0], 16, "%s", cl->v[mv->candidate].name);
                snprintf(recent_names[nrecent][1], 16, "%s", cl->n[s].name);
                snprintf(recent_names[nrecent][2], 16, "%s", cl->n[t].name);
                recent[nrecent] = (struct rebalance_recent){recent_names[nrecent][0], recent_names[nrecent][1],
                                                            recent_names[nrecent][2]};
                nrecent++;
            }
        }
        record_errors(cl, &plan);
        st.moves += (int)n;
        if (st.cycles_to_taint < 0 && all_below(cl, p.taint_above))
            st.cycles_to_taint = st.cycles + 1;
        rebalance_plan_free(&plan);
        if (!n)
            break;
    }
    book_close(&book, cl, &p, PN, &st);
    return st;
}

/* Moves on the clusters a reference meets its goal on, against its moves there. */
struct against {
    int clusters, moves, ref_moves, over; /* over: runs above the reference + 10 % */
};

static void count_against(struct against *a, int ref, int moves)
{
    if (ref < 0)
        return;
    a->clusters++, a->moves += moves, a->ref_moves += ref;
    a->over += moves > ref + (ref + 9) / 10;
}

/* The cluster as the planner believes it at the start, for the reference to plan in: each VM's
 * CPU demand is the planner's estimate (on a saturated node bounded by its vCPUs and nothing
 * tighter, demand.h; on one read low, what the reading says), and each node's CPU and memory
 * pressure is the planner's curve times the scale it plans the node with
 * (rebalance_plan_scale: a source its own, any other node its calibration, else
 * REBALANCE_SAFETY or REBALANCE_MEMORY_SAFETY: an idle node reads 0 whatever its skew). A node
 * the planner leaves above the taint level where the reference gets it below in this cluster
 * too was left by the planner's rules, not by what it cannot see. */
static void as_believed(const struct pcluster *cl, const struct rebalance_params *p, struct pcluster *b)
{
    static struct rebalance_node nodes[PN];
    static struct rebalance_candidate c[PV];
    *b = *cl;
    observe(b, p, nodes, c);
    for (size_t i = 0; i < b->nn; i++) {
        struct pnode *n = &b->n[i];
        bool source = rebalance_is_source(p, &nodes[i]);
        double fc = rebalance_curve(nodes[i].demand / n->cpus), fm = rebalance_memory_curve(b->mem[i] / n->memory);
        n->believed[REBALANCE_CPU] = rebalance_plan_scale(REBALANCE_CPU, source, nodes[i].cpu_pressure, fc, n->k);
        n->believed[REBALANCE_MEMORY] = rebalance_plan_scale(REBALANCE_MEMORY, source, nodes[i].mem_pressure, fm, 0);
    }
    for (size_t j = 0; j < b->nv; j++) {
        b->cpu[b->v[j].node] += c[j].demand - b->v[j].cpu;
        b->v[j].cpu = c[j].demand;
    }
}

/* One class: trials clusters of nn nodes; exact reference up to max_exact moves on small ones.
 * Three references: one to below the taint level (the nodes the planner leaves above it where
 * this one gets below), the same in the cluster as the planner believes it (as_believed: which
 * of those nodes its rules left), one to what the planner is asked for (relief_goal: the
 * moves, per cluster where it meets the goal wholly, and per node, on the nodes both get there,
 * against greedy's moves off them: on 50 and 200 nodes no cluster is wholly solvable). */
static void run_class(const char *name, size_t nn_min, size_t nn_max, int trials, uint64_t seed, double mem_share,
                      int max_exact)
{
    static struct pcluster cl, start, believed;
    static struct goal to_taint, to_relief;
    struct rebalance_params p = default_params();
    double level = p.taint_above, target = rebalance_target(&p);
    int left = 0, left_pushed = 0, left_by_rules = 0, left_tainted = 0, moves = 0, dst_taint = 0, dst_evict = 0,
        limits = 0;
    struct pstats sum = {0};
    struct against vs_taint = {0}, vs_relief = {0};
    int only_through_hot = 0, hot_clusters = 0, nodes_ref_below = 0, nodes_ref_untainted = 0, nodes_both = 0,
        off_planner = 0, off_ref = 0;
    errors.nsrc = errors.ndst = 0;
    for (int trial = 0; trial < trials; trial++) {
        size_t nn = nn_min + (size_t)trial % (nn_max - nn_min + 1);
        generate(&start, nn, seed + (uint64_t)trial * 7919, mem_share);
        if (all_below(&start, level))
            continue;
        hot_clusters++;
        static bool below_taint[PN], believed_below[PN], relieved[PN];
        static int ref_off[PN];
        taint_goal(&start, level, &to_taint);
        relief_goal(&start, level, target, &to_relief);
        as_believed(&start, &p, &believed);
        int ref = reference(&start, &to_taint, max_exact, below_taint, NULL);
        int ref_believed = reference(&believed, &to_taint, max_exact, believed_below, NULL);
        int ref_relief = reference(&start, &to_relief, max_exact, relieved, ref_off);
        only_through_hot += ref < 0 && max_exact > 0 && exact(&start, &to_taint, THROUGH_HOT, max_exact) >= 0;
        cl = start;
        struct pstats st = drive(&cl, p, 200);
        for (size_t i = 0; i < cl.nn; i++) {
            bool hot = pressure_of(&start, i) >= level, left_above = pressure_of(&cl, i) >= level;
            bool gets_below = below_taint[i] || ref >= 0, gets_untainted = relieved[i] || ref_relief >= 0;
            nodes_ref_below += gets_below && hot;
            left += gets_below && left_above;
            left_pushed += gets_below && left_above && !hot;
            left_by_rules += gets_below && left_above && hot && (believed_below[i] || ref_believed >= 0);
            nodes_ref_untainted += gets_untainted && hot;
            left_tainted += gets_untainted && hot && pressure_of(&cl, i) >= target;
            if (hot && relieved[i] && pressure_of(&cl, i) < target)
                nodes_both++, off_planner += planner_off[i], off_ref += ref_off[i];
        }
        assert_true(st.cycles < 200); /* it ends */
        assert_int_equal(st.limits, 0);
        moves += st.moves, dst_taint += st.dst_taint, dst_evict += st.dst_evict;
        sum.useless += st.useless, sum.useless_band += st.useless_band;
        sum.useless_saturated += st.useless_saturated, sum.useless_unrelieved += st.useless_unrelieved;
        sum.flat += st.flat, sum.flat_saturated += st.flat_saturated;
        sum.returns += st.returns, sum.trades += st.trades;
        limits += st.limits;
        count_against(&vs_taint, ref, st.moves);
        count_against(&vs_relief, ref_relief, st.moves);
    }
    print_message(
        "%-28s %d hot clusters; nodes hot at the start that the reference gets below taint: %d, that the planner "
        "leaves at or above it: %d (%d destinations it pushed there, %d hot nodes the reference gets below in the "
        "cluster as the planner believes it); clusters wholly below taint only through hot destinations: %d; "
        "that the reference gets below the relief target: %d, that the planner leaves at or above it: %d; moves %d; "
        "on the %d clusters the reference gets wholly below taint %d against its %d (runs above it+10%%: %d); on "
        "the %d it gets wholly to the relief goal %d against its %d (runs above it+10%%: %d); off the %d nodes both "
        "get below the relief target %d against greedy's %d; useless %d (source never relieved %d, saturated with "
        "nowhere to go %d, off a source below taint %d); single moves that show no drop %d (%d of them off a "
        "saturated source); destinations pushed above taint %d, above evict %d; returns %d, trades %d; prediction "
        "error after a cycle's moves, points, median / p90: sources %.1f / %.1f, destinations %.1f / %.1f; limits "
        "exceeded %d\n",
        name, hot_clusters, nodes_ref_below, left, left_pushed, left_by_rules, only_through_hot, nodes_ref_untainted,
        left_tainted, moves, vs_taint.clusters, vs_taint.moves, vs_taint.ref_moves, vs_taint.over, vs_relief.clusters,
        vs_relief.moves, vs_relief.ref_moves, vs_relief.over, nodes_both, off_planner, off_ref, sum.useless,
        sum.useless_unrelieved, sum.useless_saturated, sum.useless_band, sum.flat, sum.flat_saturated, dst_taint,
        dst_evict, sum.returns, sum.trades, quantile(errors.src, errors.nsrc, 0.5),
        quantile(errors.src, errors.nsrc, 0.9), quantile(errors.dst, errors.ndst, 0.5),
        quantile(errors.dst, errors.ndst, 0.9), limits);
    assert_int_equal(sum.returns + sum.trades, 0); /* the oscillation hold (plan.c) */
    assert_true(hot_clusters > trials / 4);        /* the class was exercised */
}

/* ---- class 4: a set made within the limits ---- */

/* Whether going from hot_now to hot_end relieves as the planner judges a set (plan.c,
 * contributes): below the target, or across a level by a trusted drop. */
static bool relieves(const struct rebalance_params *p, double hot_now, double hot_end)
{
    double target = rebalance_target(p);
    if (hot_end < target)
        return true;
    if (!rebalance_trusted_drop(hot_now, hot_end))
        return false;
    double levels[3] = {target, p->taint_above, p->evict_above};
    for (int i = 0; i < 3; i++)
        if (hot_now >= levels[i] && hot_end < levels[i])
            return true;
    return false;
}

/* Source s's predicted pressure after each move of its whole set, as the planner builds it
 * with no limit: the plan of the same cluster with s the only source, every limit lifted and
 * the moves planned before s's made already. Returns the set's length. */
static size_t whole_set(const struct rebalance_params *lim, const struct rebalance_node *nodes, size_t nn,
                        const struct rebalance_candidate *c, size_t nc, const struct rebalance_plan *plan, size_t first,
                        size_t s, double *after, size_t max)
{
    static struct rebalance_node only[PN];
    struct rebalance_params p = *lim;
    p.max_total = p.max_per_node = p.max_per_namespace = p.max_in_flight = 1 << 20;
    p.kubevirt_per_cluster = p.kubevirt_per_node = 1 << 20;
    p.in_flight = p.running = 0;
    p.targeted = true; /* nor one eviction per destination and cycle */
    p.made = plan->moves, p.nmade = first;
    for (size_t i = 0; i < nn; i++) {
        only[i] = nodes[i];
        if (i != s)
            only[i].sustained = only[i].relieving = only[i].tainted = false;
    }
    struct rebalance_plan whole;
    assert_int_equal(rebalance_plan(&p, only, nn, c, nc, &whole), 0);
    size_t n = 0;
    for (size_t k = 0; k < whole.nmoves && n < max; k++)
        if (whole.moves[k].source == s)
            after[n++] = whole.moves[k].src_pressure_after;
    rebalance_plan_free(&whole);
    return n;
}

/* Per plan, the sources whose moves this cycle are a part that cannot help: they neither
 * relieve it by themselves (predicted) nor leave it as low as as many moves of its whole set
 * would (within REBALANCE_NOISE). */
static int partial_sets(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nn,
                        const struct rebalance_candidate *c, size_t nc, const struct rebalance_plan *plan)
{
    int bad = 0;
    for (size_t k = 0; k < plan->nmoves;) {
        size_t s = plan->moves[k].source, first = k;
        while (k < plan->nmoves && plan->moves[k].source == s)
            k++;
        const struct rebalance_move *a = &plan->moves[first], *z = &plan->moves[k - 1];
        if (relieves(p, a->src_pressure_after + a->relief, z->src_pressure_after))
            continue;
        static double after[PV];
        size_t n = whole_set(p, nodes, nn, c, nc, plan, first, s, after, PV);
        size_t made = k - first;
        bad += n == 0 || z->src_pressure_after > after[(made < n ? made : n) - 1] + REBALANCE_NOISE;
    }
    return bad;
}

/* Over random clusters and random limits (1-3 per node and namespace, 1-6 in all and in flight,
 * some in flight already), every source with moves started is predicted relieved by the moves
 * made, or they do as well as its whole set's first as many; never a cut set that leaves it
 * no better. */
static void test_sets_within_limits(void **state)
{
    (void)state;
    static struct pcluster cl;
    static struct rebalance_node nodes[PN];
    static struct rebalance_candidate c[PV];
    int plans = 0, sources = 0, bad = 0;
    for (int trial = 0; trial < 240; trial++) {
        generate(&cl, trial % 3 ? 2 + (size_t)(trial % 7) : 50, 5005 + (uint64_t)trial * 104729, 0.3);
        struct rebalance_params p = default_params();
        p.resources = cl.resources;
        p.max_per_node = 1 + (int)(rnd(&cl) * 3);
        p.max_per_namespace = 1 + (int)(rnd(&cl) * 3);
        p.max_total = p.max_per_node + (int)(rnd(&cl) * 4);
        if (p.max_total < p.max_per_namespace)
            p.max_total = p.max_per_namespace;
        p.max_in_flight = 1 + (int)(rnd(&cl) * 6);
        p.in_flight = (int)(rnd(&cl) * 2);
        for (int cycle = 0; cycle < 6; cycle++) {
            observe(&cl, &p, nodes, c);
            struct rebalance_plan plan;
            assert_int_equal(rebalance_plan(&p, nodes, cl.nn, c, cl.nv, &plan), 0);
            assert_int_equal(limits_exceeded(&cl, &p, plan.moves, plan.nmoves), 0);
            plans++;
            for (size_t k = 0; k < plan.nmoves; k++)
                sources += k == 0 || plan.moves[k].source != plan.moves[k - 1].source;
            bad += partial_sets(&p, nodes, cl.nn, c, cl.nv, &plan);
            for (size_t i = 0; i < cl.nn; i++)
                cl.n[i].relieving = rebalance_is_source(&p, &nodes[i]);
            for (size_t k = 0; k < plan.nmoves; k++)
                place(&cl, plan.moves[k].candidate, plan.moves[k].destination);
            size_t n = plan.nmoves;
            rebalance_plan_free(&plan);
            if (!n)
                break;
        }
    }
    print_message("sets within the limits: %d plans, %d sources with moves started, %d of them a cut set that "
                  "neither relieves it nor does as well as its whole set's start\n",
                  plans, sources, bad);
    assert_true(sources > 50);
    assert_int_equal(bad, 0);
}

/* ---- class 5: the level rule is monotone ---- */

static double max_hot(const struct pcluster *cl)
{
    double m = 0;
    for (size_t i = 0; i < cl->nn; i++)
        m = fmax(m, pressure_of(cl, i));
    return m;
}

static int count_above(const struct pcluster *cl, double level)
{
    int n = 0;
    for (size_t i = 0; i < cl->nn; i++)
        n += pressure_of(cl, i) >= level;
    return n;
}

/* Random clusters, each planned to its end with evictAbovePercent (then taintAbovePercent)
 * lowered from a higher value: the pairs where the lower threshold leaves the hottest node
 * hotter (by more than REBALANCE_NOISE) or more nodes above the taint level than the higher
 * one. Lowering evictAbovePercent never does (plan.c, sheds: a set's drop is judged the same
 * for every evictAbovePercent below its source). Lowering taintAbovePercent still may, by the
 * destination rule: a lower taint level refuses the destinations a higher one takes (none is
 * predicted at or above the taint level), so a VM that only fits below the higher level stays,
 * or smaller ones go in its place. The bounds on those pairs (20 and 40 of 288) sit just above
 * what the planner reaches with the kernel-shaped memory pressure and CPU served as CFS serves
 * it (17 and 35), to catch a change that makes it worse. */
static void test_levels_monotone(void **state)
{
    (void)state;
    static struct pcluster start, lo, hi;
    static const double evicts[] = {30, 35, 40, 50};
    int pairs = 0, hotter = 0, more_above = 0, evict_worse = 0;
    for (int trial = 0; trial < 48; trial++) {
        generate(&start, trial % 4 ? 2 + (size_t)(trial % 7) : 50, 6006 + (uint64_t)trial * 7727, 0.3);
        if (all_below(&start, 25))
            continue;
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++) {
                struct rebalance_params pl = default_params(), ph = default_params();
                if (trial % 2) { /* evictAbove lowered */
                    pl.evict_above = evicts[a], ph.evict_above = evicts[b];
                } else { /* taintAbove lowered, evictAbove above both */
                    pl.taint_above = evicts[a] - 10, ph.taint_above = evicts[b] - 10;
                    pl.untaint_below = pl.taint_above - 5, ph.untaint_below = ph.taint_above - 5;
                    pl.evict_above = ph.evict_above = 50;
                }
                lo = start, hi = start;
                drive(&lo, pl, 200);
                drive(&hi, ph, 200);
                double level = ph.taint_above; /* the same level for both counts */
                pairs++;
                bool worse_max = max_hot(&lo) > max_hot(&hi) + REBALANCE_NOISE;
                bool worse_count = count_above(&lo, level) > count_above(&hi, level);
                hotter += worse_max, more_above += worse_count;
                evict_worse += trial % 2 && (worse_max || worse_count);
            }
    }
    print_message("levels monotone: %d threshold pairs; the lower threshold leaves the hottest node hotter in %d, "
                  "more nodes above the taint level in %d (%d of those pairs lower evictAbovePercent)\n",
                  pairs, hotter, more_above, evict_worse);
    assert_true(pairs > 50);
    assert_int_equal(evict_worse, 0);
    assert_true(hotter <= 20);
    assert_true(more_above <= 40);
}

/* ---- class 11: independent sources in parallel ---- */

/* An 8-node mixed cluster with three hot nodes: sizes 8-64 CPUs, the hot ones loaded to 1.0-1.3
 * of their CPUs with VMs of 1-6 CPUs, the others at 0-0.3; all VMs in one namespace, or spread
 * over four. Per class, the cycles until every node is below the taint level, over the
 * clusters where the reference gets there, with every field at its default. */
static void eight_node(struct pcluster *cl, uint64_t seed, bool one_ns)
{
    memset(cl, 0, sizeof(*cl));
    cl->rng = seed | 1;
    static const double sizes[] = {8, 16, 32, 64};
    static const char *ns[] = {"a", "b", "c", "d"};
    for (size_t i = 0; i < 8; i++) {
        add_node(cl, sizes[(int)(rnd(cl) * 4)], 0);
        bool one = rnd(cl) < 0.5;
        cl->n[i].fit_scale = one ? 0.909 : 0.938, cl->n[i].fit_shape = one ? 3.529 : 4.571;
        double goal = cl->n[i].cpus * (i < 3 ? 1.0 + rnd(cl) * 0.3 : rnd(cl) * 0.3);
        while (cl->cpu[i] < goal && cl->nv < PV) {
            double cpu = 1 + rnd(cl) * 5;
            add_vm(cl, one_ns ? "a" : ns[(int)(rnd(cl) * 4)], cpu, 2 * cpu * GI, ceil(cpu * 1.25), i);
        }
    }
}

static void test_parallel_relief(void **state)
{
    (void)state;
    static struct pcluster start, cl;
    for (int spread = 0; spread < 2; spread++) {
        int solved = 0, cycles = 0, moves = 0, reached = 0;
        for (int trial = 0; trial < 40; trial++) {
            eight_node(&start, 8008 + (uint64_t)trial * 131, spread == 0);
            static struct goal g;
            taint_goal(&start, 25, &g);
            if (greedy(&start, &g, NULL, NULL) < 0)
                continue;
            solved++;
            cl = start;
            struct pstats st = drive(&cl, default_params(), 200);
            moves += st.moves;
            if (st.cycles_to_taint >= 0)
                reached++, cycles += st.cycles_to_taint;
        }
        print_message("8 nodes, 3 hot, %s: %d clusters the reference gets below taint, the planner gets %d there "
                      "in %.1f cycles on average (%d moves in all)\n",
                      spread ? "four namespaces" : "one namespace", solved, reached,
                      reached ? (double)cycles / reached : 0.0, moves);
        assert_true(solved > 5);
    }
}

/* ---- class 3: a destination two sources contest ---- */

/* A hot node of 8-24 CPUs loaded to 1.1-1.4 of them with VMs of 1-3 CPUs; a cooler hot node
 * of 32-48 CPUs with one VM of 0.8-0.9 of them (and up to two small ones); one idle node that
 * the big VM takes to a load of 0.4-0.6, coolest of all for every VM; two to four idle nodes of
 * 8-16 CPUs, too small for the big VM. Hottest first and coolest destination first fill the
 * large node with the small VMs, and the big one has nowhere to go. */
static void contested(struct pcluster *cl, uint64_t seed)
{
    memset(cl, 0, sizeof(*cl));
    cl->rng = seed | 1;
    static const double hot_sizes[] = {8, 16, 24}, big_sizes[] = {32, 48}, small_sizes[] = {8, 16};
    add_node(cl, hot_sizes[(int)(rnd(cl) * 3)], 0);
    add_node(cl, big_sizes[(int)(rnd(cl) * 2)], 0);
    double big = cl->n[1].cpus * (0.8 + rnd(cl) * 0.1);
    add_node(cl, ceil(big / (0.4 + rnd(cl) * 0.2)), 0);
    size_t nsmall = 2 + (size_t)(rnd(cl) * 3);
    for (size_t i = 0; i < nsmall; i++)
        add_node(cl, small_sizes[(int)(rnd(cl) * 2)], 0);
    for (size_t i = 0; i < cl->nn; i++) {
        bool one = rnd(cl) < 0.5;
        cl->n[i].fit_scale = one ? 0.909 : 0.938, cl->n[i].fit_shape = one ? 3.529 : 4.571;
    }
    double goal = cl->n[0].cpus * (1.1 + rnd(cl) * 0.3);
    while (cl->cpu[0] < goal) {
        double cpu = 1 + rnd(cl) * 2;
        add_vm(cl, "a", cpu, 2 * cpu * GI, ceil(cpu * 1.25), 0);
    }
    add_vm(cl, "b", big, 2 * big * GI, ceil(big * 1.1), 1);
    for (int k = (int)(rnd(cl) * 3); k > 0; k--) {
        double cpu = 0.5 + rnd(cl);
        add_vm(cl, "b", cpu, 2 * cpu * GI, ceil(cpu * 1.25), 1);
    }
}

static void test_contested_destination(void **state)
{
    (void)state;
    static struct pcluster start, cl;
    struct rebalance_params p = default_params();
    int solved = 0, reached = 0, believed = 0, reached_believed = 0;
    struct against vs_taint = {0}, vs_relief = {0};
    for (int trial = 0; trial < 80; trial++) {
        contested(&start, 3003003 + (uint64_t)trial * 977);
        static struct goal to_taint, to_relief;
        taint_goal(&start, p.taint_above, &to_taint);
        int ref = reference(&start, &to_taint, 3, NULL, NULL);
        if (ref < 0)
            continue;
        relief_goal(&start, p.taint_above, rebalance_target(&p), &to_relief);
        int ref_relief = reference(&start, &to_relief, 3, NULL, NULL);
        static struct pcluster b;
        as_believed(&start, &p, &b);
        bool by_rules = reference(&b, &to_taint, 3, NULL, NULL) >= 0;
        solved++, believed += by_rules;
        cl = start;
        struct pstats st = drive(&cl, p, 200);
        assert_int_equal(st.limits, 0);
        count_against(&vs_taint, ref, st.moves);
        count_against(&vs_relief, ref_relief, st.moves);
        reached += all_below(&cl, p.taint_above);
        reached_believed += by_rules && all_below(&cl, p.taint_above);
    }
    print_message("a destination two sources contest: %d clusters the reference gets below taint in %d moves, the "
                  "planner gets %d there, in %d moves on them (runs above it+10%%: %d); on the %d it gets wholly to "
                  "the relief goal %d against its %d (runs above it+10%%: %d); of the %d the reference gets below "
                  "taint as the planner believes the cluster, the planner gets %d\n",
                  solved, vs_taint.ref_moves, reached, vs_taint.moves, vs_taint.over, vs_relief.clusters,
                  vs_relief.moves, vs_relief.ref_moves, vs_relief.over, believed, reached_believed);
    assert_true(solved > 20);
    assert_true(reached_believed == believed); /* what the planner's rules can see, they reach */
    /* the others: left by what it cannot observe (as_believed); 94-100 % of the clusters over seven
     * seeds of this generator, where planning only the sources left with no move first got 83-97 % */
    assert_true(reached * 100 >= solved * 93);
}

/* The reference's placements are real: replaying greedy's answer leaves every node below. */
static void test_reference_is_real(void **state)
{
    (void)state;
    static struct pcluster cl;
    int checked = 0;
    for (int trial = 0; trial < 40; trial++) {
        generate(&cl, 2 + (size_t)(trial % 7), 4242 + (uint64_t)trial * 31, 0.3);
        static struct goal goal;
        taint_goal(&cl, 25, &goal);
        int e = exact(&cl, &goal, WITHIN_RULES, 3), g = greedy(&cl, &goal, NULL, NULL);
        if (e >= 0 && g >= 0) {
            assert_true(g >= e); /* the exact answer is no worse than the heuristic */
            checked++;
        }
        if (e == 0)
            assert_true(all_below(&cl, 25));
    }
    assert_true(checked > 5);
}

static void test_small_cpu(void **state)
{
    (void)state;
    run_class("2-8 nodes, CPU", 2, 8, 60, 1001, 0, 3);
}

static void test_small_cpu_memory(void **state)
{
    (void)state;
    run_class("2-8 nodes, CPU+memory", 2, 8, 60, 2002, 1, 3);
}

static void test_fifty(void **state)
{
    (void)state;
    run_class("50 nodes, CPU, some memory", 50, 50, 12, 3003, 0.3, 0);
}

static void test_two_hundred(void **state)
{
    (void)state;
    run_class("200 nodes, CPU, some memory", 200, 200, 4, 4004, 0.3, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_is_real),     cmocka_unit_test(test_small_cpu),
        cmocka_unit_test(test_small_cpu_memory),      cmocka_unit_test(test_fifty),
        cmocka_unit_test(test_two_hundred),           cmocka_unit_test(test_sets_within_limits),
        cmocka_unit_test(test_levels_monotone),       cmocka_unit_test(test_parallel_relief),
        cmocka_unit_test(test_contested_destination),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
