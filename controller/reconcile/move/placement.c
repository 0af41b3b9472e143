/* placement: whether any set of moves can relieve a source (see placement.h). */
#include "reconcile/move/placement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0

/* The model's figures per node, as the planner has them (plan.c: work_init, calibrate_nodes). */
struct model {
    const struct rebalance_params *p;
    const struct rebalance_node *nodes;
    size_t nn;
    const struct rebalance_candidate *cands;
    size_t nc;
    unsigned res;
    double *dem[REBALANCE_NRES];  /* demand: CPU cores wanted (less what the caps took), memory bytes */
    double *room[REBALANCE_NRES]; /* a destination's room below taintAbovePercent; NAN: no destination */
    bool *passing;                /* no destination for a passing reason only (placement.h) */
    size_t *dests;                /* the destinations, in index order */
    size_t ndests;
};

static bool known(double v)
{
    return !isnan(v) && v > 0;
}

static bool watched(const struct model *m, int r)
{
    return (m->res >> r) & 1u;
}

static double capacity(const struct rebalance_node *n, int r)
{
    return r == REBALANCE_CPU ? n->cpus : n->memory;
}

/* What candidate c wants of resource r (plan.c's cand_demand). */
static double cand_demand(const struct rebalance_candidate *c, int r)
{
    if (r == REBALANCE_CPU)
        return known(c->max_demand) && c->demand > c->max_demand ? c->max_demand : c->demand;
    return isnan(c->mem_used) ? c->req_memory : c->mem_used;
}

/* The reading the planner predicts node n's resource r from. */
static double reading(const struct model *m, const struct rebalance_node *n, int r)
{
    if (r == REBALANCE_MEMORY)
        return n->mem_pressure;
    return m->p->resources ? n->cpu_pressure : n->pressure;
}

/* The least load L* with curve(r, L) >= goal, from above: curve(r, L) < goal for every L below
 * the true one, and the value returned is never less than it (rooms are over-estimated and
 * needs under-estimated, so that the answer errs toward a placement). INFINITY when the curve
 * stays below goal. */
static double load_below(int r, double goal)
{
    if (goal <= 0)
        return 0;
    double lo = 0, hi = 1;
    while (rebalance_resource_curve(r, hi) < goal) {
        lo = hi;
        hi *= 2;
        if (hi > 1e6)
            return INFINITY;
    }
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;
        if (rebalance_resource_curve(r, mid) < goal)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* Node i's curve on resource r: the load it was read at, its scale and the pressure it is
 * moved from (plan.c's calibrate_nodes). Returns false when its load is unknown. */
static bool curve_of(const struct model *m, size_t i, int r, double *l0, double *k, double *base)
{
    const struct rebalance_node *n = &m->nodes[i];
    double cap = capacity(n, r);
    if (!known(cap) || isnan(m->dem[r][i]))
        return false;
    double P = reading(m, n, r), L = m->dem[r][i] / cap, f = rebalance_resource_curve(r, L);
    *k = rebalance_plan_scale(r, rebalance_is_source(m->p, n), P, f, n->scale[r]);
    *l0 = L;
    *base = isnan(P) ? 100.0 * *k * f : P;
    return true;
}

/* What must leave source s on resource r to predict it below taintAbovePercent: 0 when it is
 * already, INFINITY when nothing leaving can do it, NAN when its load is unknown. */
static double need_of(const struct model *m, size_t s, int r)
{
    double l0, k, b, taint = m->p->taint_above;
    if (!curve_of(m, s, r, &l0, &k, &b))
        return NAN;
    if (fmin(fmax(b, 0), 100) < taint)
        return 0;
    /* b + 100 k (f(L) - f(l0)) < taint */
    double goal = rebalance_resource_curve(r, l0) - (b - taint) / (100.0 * k);
    if (goal <= 0)
        return INFINITY;
    double need = m->dem[r][s] - load_below(r, goal) * capacity(&m->nodes[s], r);
    return need > 0 ? need : 0;
}

/* Destination t's room on resource r: the demand it may take and stay predicted below
 * taintAbovePercent (over-estimated, load_below). */
static double room_of(const struct model *m, size_t t, int r)
{
    double l0, k, b, taint = m->p->taint_above;
    if (!curve_of(m, t, r, &l0, &k, &b))
        return 0;
    if (taint > 100)
        return INFINITY;
    double L = load_below(r, rebalance_resource_curve(r, l0) + (taint - b) / (100.0 * k));
    double room = L * capacity(&m->nodes[t], r) - m->dem[r][t];
    return room > 0 ? room : 0;
}

/* Whether the selected node t, no source and no destination, is none only for a reason that
 * passes without the cluster changing (placement.h); tainted, cordoned and too warm are not. */
static bool passing_refusal(const struct model *m, const struct rebalance_node *t)
{
    if (t->tainted || t->unschedulable)
        return false;
    if (t->held || t->settling || isnan(t->pressure))
        return true;
    if ((m->res & REBALANCE_RES_MEMORY) && isnan(t->mem_pressure))
        return true;
    return t->pressure < m->p->untaint_below;
}

/* Fill the model. Returns 0 or -1. */
static int model_init(struct model *m)
{
    size_t n1 = m->nn ? m->nn : 1;
    double *d = calloc(4 * n1, sizeof(double));
    m->passing = calloc(n1, sizeof(bool));
    m->dests = calloc(n1, sizeof(size_t));
    if (!d || !m->passing || !m->dests) {
        free(d);
        return -1;
    }
    for (int r = 0; r < REBALANCE_NRES; r++)
        m->dem[r] = d + (size_t)(2 * r) * n1, m->room[r] = d + (size_t)(2 * r + 1) * n1;
    for (size_t i = 0; i < m->nn; i++) {
        const struct rebalance_node *n = &m->nodes[i];
        m->dem[REBALANCE_CPU][i] = known(n->cpus) ? n->demand : NAN;
        m->dem[REBALANCE_MEMORY][i] = rebalance_node_memory_demand(n->mem_used, n->memory, n->mem_pressure);
    }
    /* what the caps took off the workloads, their node does not want either */
    for (size_t j = 0; j < m->nc; j++) {
        const struct rebalance_candidate *c = &m->cands[j];
        if (c->node < m->nn && !isnan(c->demand))
            m->dem[REBALANCE_CPU][c->node] -= c->demand - cand_demand(c, REBALANCE_CPU);
    }
    for (size_t i = 0; i < m->nn; i++) {
        struct rebalance_node n = m->nodes[i];
        n.demand = m->dem[REBALANCE_CPU][i];
        char why[256];
        for (int r = 0; r < REBALANCE_NRES; r++)
            m->room[r][i] = NAN;
        if (!n.selected || rebalance_is_source(m->p, &n))
            continue;
        if (rebalance_destination_check(m->p, &n, why, sizeof(why))) {
            m->passing[i] = passing_refusal(m, &n);
            continue;
        }
        for (int r = 0; r < REBALANCE_NRES; r++)
            if (watched(m, r))
                m->room[r][i] = room_of(m, i, r);
        m->dests[m->ndests++] = i;
    }
    return 0;
}

static void model_free(struct model *m)
{
    free(m->dem[0]);
    free(m->passing);
    free(m->dests);
}

/* A candidate of the source being judged. */
struct cand_fit {
    size_t j;                 /* index into the candidates */
    double d[REBALANCE_NRES]; /* its demand */
    bool anywhere;            /* it fits some destination alone */
    double extra;             /* the least extra room (resource judged) some destination would need to take it */
};

/* Node t as the planner sees it before any move (plan.c's current()). */
static struct rebalance_node view(const struct model *m, size_t t)
{
    struct rebalance_node n = m->nodes[t];
    n.demand = m->dem[REBALANCE_CPU][t];
    n.mem_used = m->dem[REBALANCE_MEMORY][t];
    return n;
}

/* Whether candidate f fits destination t alone (placement.h). */
static bool fits_alone(const struct model *m, const struct cand_fit *f, size_t t, const struct rebalance_node *n)
{
    for (int r = 0; r < REBALANCE_NRES; r++)
        if (watched(m, r) && !(f->d[r] < m->room[r][t] + 1e-9 * (1 + fabs(m->room[r][t]))))
            return false;
    return rebalance_fits(&m->cands[f->j], n);
}

static int by_extra(const void *a, const void *b)
{
    const struct cand_fit *x = a, *y = b;
    return x->extra < y->extra ? -1 : x->extra > y->extra;
}

/* Conditions 1-3 of placement.h on resource r for source s (its candidates fs, nf of them,
 * `anywhere` set, sorted by nothing yet) into *v. Returns whether one failed. */
static bool short_on(const struct model *m, struct cand_fit *fs, size_t nf, int r, double need, const double *onto,
                     struct placement_verdict *v)
{
    double eps = 1e-9 * (1 + need), total = 0, fit = 0, across = 0;
    for (size_t k = 0; k < nf; k++) {
        total += fs[k].d[r];
        if (fs[k].anywhere)
            fit += fs[k].d[r];
    }
    for (size_t q = 0; q < m->ndests; q++)
        across += fmin(m->room[r][m->dests[q]], onto[q]);
    *v = (struct placement_verdict){.resource = (enum rebalance_resource)r, .need = need, .movable = total};
    if (total < need - eps) {
        v->kind = PLACEMENT_TOO_LITTLE;
        v->lacking = need - total;
    } else if (fit < need - eps) {
        /* the others that would let enough go, the least extra room first */
        qsort(fs, nf, sizeof(*fs), by_extra);
        double got = fit;
        for (size_t k = 0; k < nf && got < need - eps; k++) {
            if (fs[k].anywhere)
                continue;
            got += fs[k].d[r];
            v->lacking = fs[k].extra;
        }
        v->kind = PLACEMENT_ON_SOME_NODE;
    } else if (across < need - eps) {
        v->kind = PLACEMENT_ACROSS_NODES;
        v->lacking = need - across;
    }
    return v->kind != PLACEMENT_UNKNOWN;
}

/* Judge source s into *v; fs and onto: room for its candidates and the destinations. */
static void judge(const struct model *m, size_t s, struct cand_fit *fs, double *onto, struct placement_verdict *v)
{
    *v = (struct placement_verdict){.kind = PLACEMENT_UNKNOWN};
    for (size_t t = 0; t < m->nn; t++)
        if (t != s && m->passing[t])
            return;
    double need[REBALANCE_NRES] = {0};
    for (int r = 0; r < REBALANCE_NRES; r++) {
        if (!watched(m, r))
            continue;
        need[r] = need_of(m, s, r);
        if (isnan(need[r]) || isinf(need[r]))
            return;
    }
    size_t nf = 0;
    for (size_t j = 0; j < m->nc; j++) {
        const struct rebalance_candidate *c = &m->cands[j];
        if (c->node != s || c->blocked)
            continue;
        if (watched(m, REBALANCE_CPU) && isnan(c->demand))
            return; /* it may move once its usage is read */
        struct cand_fit f = {.j = j};
        bool known_all = true;
        for (int r = 0; r < REBALANCE_NRES; r++) {
            f.d[r] = cand_demand(c, r);
            known_all = known_all && (!watched(m, r) || !isnan(f.d[r]));
        }
        if (known_all)
            fs[nf++] = f;
    }
    for (int r = 0; r < REBALANCE_NRES; r++) {
        if (!watched(m, r) || need[r] <= 0)
            continue;
        for (size_t k = 0; k < nf; k++)
            fs[k].anywhere = false, fs[k].extra = fs[k].d[r];
        for (size_t q = 0; q < m->ndests; q++) {
            size_t t = m->dests[q];
            struct rebalance_node n = view(m, t);
            onto[q] = 0;
            for (size_t k = 0; k < nf; k++) {
                if (fits_alone(m, &fs[k], t, &n)) {
                    fs[k].anywhere = true;
                    onto[q] += fs[k].d[r];
                } else if (rebalance_fits(&m->cands[fs[k].j], &n)) {
                    double e = fs[k].d[r] - m->room[r][t];
                    fs[k].extra = fmin(fs[k].extra, e > 0 ? e : 0);
                }
            }
        }
        if (short_on(m, fs, nf, r, need[r], onto, v))
            return;
    }
}

int placement_judge(const struct placement_cluster *c, const size_t *sources, size_t nsrc,
                    struct placement_verdict *out)
{
    struct model m = {.p = c->p, .nodes = c->nodes, .nn = c->nn, .cands = c->cands, .nc = c->nc};
    m.res = c->p->resources ? c->p->resources : REBALANCE_RES_CPU;
    size_t nn = c->nn, nc = c->nc;
    struct cand_fit *fs = calloc(nc ? nc : 1, sizeof(*fs));
    double *onto = calloc(nn ? nn : 1, sizeof(double));
    int rc = -1;
    if (fs && onto && model_init(&m) == 0) {
        for (size_t k = 0; k < nsrc; k++) {
            if (sources[k] < nn)
                judge(&m, sources[k], fs, onto, &out[k]);
            else
                out[k] = (struct placement_verdict){.kind = PLACEMENT_UNKNOWN};
        }
        rc = 0;
    }
    model_free(&m);
    free(fs);
    free(onto);
    return rc;
}

/* A figure rounded up, 1 at least, and its unit ("CPU"/"CPUs", "GiB"). */
static long figure(const struct placement_verdict *v, double x, const char **unit)
{
    bool cpu = v->resource == REBALANCE_CPU;
    double f = ceil(cpu ? x : x / GIB);
    long n = f < 1 ? 1 : f > 1e9 ? 1000000000L : (long)f;
    *unit = cpu ? (n == 1 ? "CPU" : "CPUs") : "GiB of memory";
    return n;
}

void placement_describe(const struct placement_verdict *v, const char *name, char *buf, size_t len)
{
    const char *u;
    long n = figure(v, v->lacking, &u);
    switch (v->kind) {
    case PLACEMENT_ON_SOME_NODE: snprintf(buf, len, "%s needs about %ld more %s free on some node", name, n, u); break;
    case PLACEMENT_ACROSS_NODES:
        snprintf(buf, len, "%s needs about %ld more %s free across the nodes that could take its workloads", name, n,
                 u);
        break;
    case PLACEMENT_TOO_LITTLE: {
        bool cpu = v->resource == REBALANCE_CPU;
        snprintf(buf, len,
                 "%s cannot get below it by moving what may move: about %ld %s must leave, what may move %s %.1f%s",
                 name, figure(v, v->need, &u), u, cpu ? "wants" : "uses", cpu ? v->movable : v->movable / GIB,
                 cpu ? "" : " GiB");
        break;
    }
    case PLACEMENT_UNKNOWN:
    default: snprintf(buf, len, "%s may have a placement", name); break;
    }
}

void placement_message(const struct placement_verdict *v, const char *const *names, size_t n, double taint_above,
                       char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t k = 0; k < n && k < PLACEMENT_SHOWN && used + 1 < len; k++) {
        char one[512];
        placement_describe(&v[k], names[k], one, sizeof(one));
        int w = snprintf(buf + used, len - used, "%s%s", k ? "; " : "", one);
        used += w > 0 ? (size_t)w : 0;
    }
    if (n > PLACEMENT_SHOWN && used + 1 < len) {
        int w = snprintf(buf + used, len - used, "; and %zu more", n - PLACEMENT_SHOWN);
        used += w > 0 ? (size_t)w : 0;
    }
    if (used + 1 < len)
        snprintf(buf + used, len - used,
                 ": no set of moves brings %s below taintAbovePercent %.0f%%, so nothing is evicted",
                 n == 1 ? "it" : "them", taint_above);
}
