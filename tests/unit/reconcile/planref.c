/* The planner as it was before it was made fast (controller/reconcile/move/plan.c at the
 * commit before "planner, gather: decisions in time linear in the cluster"): every destination
 * tried by a scan of every node, every refusal formatted. Kept as the reference the planner
 * must decide exactly as (test_plan_equivalence.c); its public names carry ref_ instead of
 * rebalance_. The rules it decides by change with the planner's, in the same commit: since
 * "planner: a source's set made within the limits", a source's moves are chosen again within
 * the limits and taken back when they neither relieve it nor do as well as its whole set's first;
 * since "planner: sources planned across one another", a source left with no move is planned
 * first in a second plan of the cycle, kept when it moves off every node the first moved off;
 * since "planner: a source stopped short planned first too", so is a source whose whole set
 * stops short of the target, also when the move limit is used (among the sources planned before
 * it was), and the second plan is kept when it does no worse on any node (no move < moves
 * stopping short < moves toward the target) and better on that one. */
#include "planref.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"
#include "reconcile/move/evictor.h"

/* ---- nodes ---- */

static double margin_of(const struct rebalance_params *p)
{
    return p->margin > 0 ? p->margin : REBALANCE_MARGIN;
}

double ref_target(const struct rebalance_params *p)
{
    return p->target > 0 ? p->target : p->untaint_below;
}

bool ref_is_source(const struct rebalance_params *p, const struct rebalance_node *n)
{
    if (!n->selected || isnan(n->pressure))
        return false;
    if (n->sustained && n->pressure > p->evict_above)
        return true;
    if (n->tainted && n->pressure > p->taint_above) /* the band: tainted, not yet above evict */
        return true;
    return n->relieving && n->pressure >= ref_target(p);
}

static bool known(double v)
{
    return !isnan(v) && v > 0;
}

static unsigned resources_of(const struct rebalance_params *p)
{
    return p->resources ? p->resources : REBALANCE_RES_CPU;
}

const char *ref_destination_check(const struct rebalance_params *p, const struct rebalance_node *n, char *why,
                                  size_t len)
{
    const char *w = NULL;
    bool mem = resources_of(p) & REBALANCE_RES_MEMORY;
    if (!n->selected)
        w = "not selected";
    else if (n->tainted)
        w = "tainted";
    else if (n->unschedulable)
        w = "cordoned";
    else if (isnan(n->pressure) || (mem && isnan(n->mem_pressure)))
        w = "pressure unknown";
    else if (n->settling)
        w = "settling after a move";
    else if (!known(n->cpus) || isnan(n->demand))
        w = "usage unknown";
    else if (mem && (!known(n->memory) || isnan(n->mem_used)))
        w = "memory in use unknown";
    if (w) {
        snprintf(why, len, "%s", w);
        return why;
    }
    if (n->pressure >= p->untaint_below) {
        snprintf(why, len, "pressure not below untaintBelowPercent %.0f%%", p->untaint_below);
        return why;
    }
    if (isnan(n->req_cpu)) {
        snprintf(why, len, "requests not read");
        return why;
    }
    return NULL;
}

/* ---- plan ---- */

struct ns_count {
    const char *ns;
    int n;
};

/* What planned moves change: per node the demand on each resource (CPU cores wanted, memory
 * bytes in use) and the requests; per candidate whether it is planned already. */
struct state {
    double *dem[REBALANCE_NRES];
    double *req_cpu, *req_mem, *req_pods;
    bool *cand_used;
};

/* A destination as judged for one move. */
struct eval {
    double dst_after; /* its highest predicted pressure after the move */
    double lt_after;  /* its load after, on the resource driving the move */
};

/* What commit changed, to take a move back (take_back). */
struct undo {
    size_t cand, s, t;
    double dem_s[REBALANCE_NRES], dem_t[REBALANCE_NRES]; /* demand on s and t before */
    double req_cpu, req_mem, req_pods;                   /* t's requests before */
    bool dest_used;                                      /* t's before */
};

struct work {
    const struct rebalance_params *p;
    const struct rebalance_node *nodes;
    size_t nn;
    const struct rebalance_candidate *cands;
    size_t nc;
    unsigned res; /* resources balanced on */
    double target;
    double *base[REBALANCE_NRES]; /* per node: the pressure read (percent) */
    double *l0[REBALANCE_NRES];   /* per node: the load it was read at */
    double *k[REBALANCE_NRES];    /* per node: the curve scale (a source's own, a destination's) */
    bool *source;
    struct state cur, sim;      /* what is planned this cycle; a source's set being tried */
    struct rebalance_move *set; /* the set being tried (up to nc moves) */
    struct undo *undo;          /* per move of the source's set made now (up to nc) */
    bool *dest_used;            /* took an eviction this cycle */
    int *moved_from, *outbound;
    struct ns_count *ns;
    size_t nns, ns_cap;
    int total, vm_moves;
    /* what stood in the way, for the message */
    bool usage_unknown, any_candidate, any_destination, limited, any_fit;
    char limit_why[256], fit_why[256], useless_why[256];
    bool emitting; /* judging what is planned now, not the set */
    bool reached;  /* the last source's whole set got it below the target */
    size_t held;
    struct {
        size_t cand, dest;
    } held_seen[64];
    struct rebalance_plan *out;
};

static int *ns_slot(struct work *w, const char *ns)
{
    for (size_t i = 0; i < w->nns; i++)
        if (jx_eq(w->ns[i].ns, ns))
            return &w->ns[i].n;
    return NULL;
}

static int ns_add(struct work *w, const char *ns)
{
    int *slot = ns_slot(w, ns);
    if (slot) {
        (*slot)++;
        return 0;
    }
    if (BASE_GROW(w->ns, w->nns + 1, w->ns_cap) < 0)
        return -1;
    w->ns[w->nns++] = (struct ns_count){ns, 1};
    return 0;
}

static bool watched(const struct work *w, int r)
{
    return (w->res >> r) & 1u;
}

static double capacity(const struct work *w, size_t i, int r)
{
    return r == REBALANCE_CPU ? w->nodes[i].cpus : w->nodes[i].memory;
}

/* What candidate c wants of resource r: CPU demand, or memory in use (its request without a reading). */
static double cand_demand(const struct rebalance_candidate *c, int r)
{
    if (r == REBALANCE_CPU)
        return known(c->max_demand) && c->demand > c->max_demand ? c->max_demand : c->demand;
    return isnan(c->mem_used) ? c->req_memory : c->mem_used;
}

static double load_of(const struct work *w, const struct state *st, size_t i, int r)
{
    double cap = capacity(w, i, r);
    return known(cap) && !isnan(st->dem[r][i]) ? st->dem[r][i] / cap : NAN;
}

/* Predicted pressure (percent) of node i on resource r at load L: the reading, moved along
 * the node's curve from the load it was read at. */
static double predict_at(const struct work *w, size_t i, int r, double L)
{
    double b = w->base[r][i];
    if (isnan(L) || isnan(w->l0[r][i]))
        return isnan(b) ? 0 : b;
    double v = b + 100.0 * w->k[r][i] * (rebalance_resource_curve(r, L) - rebalance_resource_curve(r, w->l0[r][i]));
    return v < 0 ? 0 : v > 100 ? 100 : v;
}

/* The highest predicted pressure of node i over the resources balanced on; the resource to *r. */
static double hot(const struct work *w, const struct state *st, size_t i, int *r)
{
    double best = -1;
    for (int q = 0; q < REBALANCE_NRES; q++) {
        if (!watched(w, q))
            continue;
        double v = predict_at(w, i, q, load_of(w, st, i, q));
        if (v > best) {
            best = v;
            if (r)
                *r = q;
        }
    }
    return best;
}

/* The pressure read on node n for resource r (percent; NAN unknown). */
static double reading(const struct work *w, const struct rebalance_node *n, int r)
{
    if (r == REBALANCE_MEMORY)
        return n->mem_pressure;
    return w->p->resources ? n->cpu_pressure : n->pressure;
}

/* Scales and readings, per node and resource (docs/architecture.md, "Rebalancing: the model": Prediction). */
static void calibrate_nodes(struct work *w)
{
    for (size_t i = 0; i < w->nn; i++)
        for (int r = 0; r < REBALANCE_NRES; r++) {
            const struct rebalance_node *n = &w->nodes[i];
            double P = reading(w, n, r), L = load_of(w, &w->cur, i, r), f = rebalance_resource_curve(r, L);
            bool informative = !isnan(P) && !isnan(L) && f >= REBALANCE_INFORMATIVE;
            double cal = known(n->scale[r]) ? n->scale[r] : 0, k;
            if (w->source[i]) {
                k = informative ? rebalance_clamp_scale(P / (100.0 * f)) : cal > 0 ? cal : 1;
            } else {
                k = cal > 0 ? cal : r == REBALANCE_MEMORY ? REBALANCE_MEMORY_SAFETY : REBALANCE_SAFETY;
                if (informative && rebalance_clamp_scale(P / (100.0 * f)) > k)
                    k = rebalance_clamp_scale(P / (100.0 * f));
            }
            w->k[r][i] = k;
            w->l0[r][i] = L;
            w->base[r][i] = isnan(P) ? (isnan(L) ? NAN : 100.0 * k * f) : P;
        }
}

/* A node as it stands in state st. */
static struct rebalance_node current(const struct work *w, const struct state *st, size_t i)
{
    struct rebalance_node n = w->nodes[i];
    n.demand = st->dem[REBALANCE_CPU][i];
    n.mem_used = st->dem[REBALANCE_MEMORY][i];
    n.req_cpu = st->req_cpu[i];
    n.req_memory = st->req_mem[i];
    n.req_pods = st->req_pods[i];
    return n;
}

/* Candidate ci moves from s to t in state st. */
static void apply(const struct work *w, struct state *st, size_t ci, size_t s, size_t t)
{
    const struct rebalance_candidate *c = &w->cands[ci];
    for (int r = 0; r < REBALANCE_NRES; r++) {
        double d = cand_demand(c, r);
        if (isnan(d))
            continue;
        st->dem[r][s] -= d;
        if (st->dem[r][s] < 0)
            st->dem[r][s] = 0;
        st->dem[r][t] += d;
    }
    st->req_cpu[t] += c->req_cpu;
    st->req_mem[t] += c->req_memory;
    st->req_pods[t] += 1;
    st->cand_used[ci] = true;
}

/* Whether history holds moving candidate c from s to t (docs/architecture.md: Convergence and oscillation). */
static const char *oscillation(const struct work *w, const struct rebalance_candidate *c, size_t s, size_t t)
{
    const char *sn = w->nodes[s].name, *tn = w->nodes[t].name;
    for (size_t i = 0; i < w->p->nrecent; i++) {
        const struct rebalance_recent *m = &w->p->recent[i];
        if (jx_eq(m->workload, c->workload) && jx_eq(m->source, tn))
            return "it left that node recently";
        if (jx_eq(m->source, tn) && jx_eq(m->destination, sn))
            return "that node sent load here recently";
    }
    return NULL;
}

static void note_held(struct work *w, size_t ci, size_t s, size_t t, const char *why)
{
    size_t seen = w->held < 64 ? w->held : 64;
    for (size_t i = 0; i < seen; i++)
        if (w->held_seen[i].cand == ci && w->held_seen[i].dest == t)
            return;
    if (w->held < 64)
        w->held_seen[w->held].cand = ci, w->held_seen[w->held].dest = t;
    struct rebalance_plan *out = w->out;
    size_t used = strlen(out->held_message);
    if (w->held < 3 && used + 1 < sizeof(out->held_message))
        snprintf(out->held_message + used, sizeof(out->held_message) - used, "%s%s not moved from %s to %s: %s",
                 used ? "; " : "", w->cands[ci].workload ? w->cands[ci].workload : w->cands[ci].name, w->nodes[s].name,
                 w->nodes[t].name, why);
    w->held++;
}

/* The move rules on every resource balanced on (docs/architecture.md: Convergence, Destinations); r
 * drives the move. The destination's figures go to *e. */
static bool pair_ok(const struct work *w, const struct state *st, size_t ci, size_t s, size_t t, int r, struct eval *e)
{
    const struct rebalance_candidate *c = &w->cands[ci];
    e->dst_after = 0;
    for (int q = 0; q < REBALANCE_NRES; q++) {
        if (!watched(w, q))
            continue;
        double d = cand_demand(c, q), ls = load_of(w, st, s, q), lt = load_of(w, st, t, q);
        if (isnan(d) || isnan(lt) || (q == r && (isnan(ls) || d <= 0)))
            return false;
        double lt2 = (st->dem[q][t] + d) / capacity(w, t, q);
        double pt2 = predict_at(w, t, q, lt2);
        if (pt2 >= w->p->taint_above)
            return false;
        if (pt2 > e->dst_after)
            e->dst_after = pt2;
        if (isnan(ls))
            continue;
        double ls2 = (st->dem[q][s] - d) / capacity(w, s, q);
        if (ls2 < 0)
            ls2 = 0;
        if (q == r) {
            /* the convergence rule: the pair's maximum load falls by the margin, or its maximum
             * predicted pressure by REBALANCE_MIN_RELIEF with the destination that much below the
             * taint level (a node read higher per load sends to one read lower) */
            bool load_falls = fmax(ls2, lt2) <= fmax(ls, lt) - margin_of(w->p);
            bool pressure_falls = pt2 <= w->p->taint_above - REBALANCE_MIN_RELIEF &&
                                  fmax(predict_at(w, s, q, ls2), pt2) <=
                                      fmax(predict_at(w, s, q, ls), predict_at(w, t, q, lt)) - REBALANCE_MIN_RELIEF;
            if (!load_falls && !pressure_falls)
                return false;
            e->lt_after = lt2;
        } else {
            /* another resource: the pair's maximum may rise only while it stays below the untaint level */
            double after = fmax(predict_at(w, s, q, ls2), pt2);
            if (after >= w->p->untaint_below &&
                after > fmax(predict_at(w, s, q, ls), predict_at(w, t, q, lt)) + REBALANCE_NOISE)
                return false;
        }
    }
    return true;
}

/* Whether t may take candidate ci off s in state st (its figures to *e). */
static bool dest_ok(struct work *w, const struct state *st, size_t ci, size_t s, size_t t, int r, struct eval *e)
{
    const struct rebalance_candidate *c = &w->cands[ci];
    if (t == s || w->source[t] || w->moved_from[t] > 0)
        return false;
    if (w->emitting && w->dest_used[t] && !(w->p->targeted && c->vm))
        return false; /* an eviction lands where the scheduler wants: one per destination and cycle */
    char why[256];
    struct rebalance_node dst = current(w, st, t);
    if (ref_destination_check(w->p, &dst, why, sizeof(why)))
        return false;
    w->any_destination = true;
    if (rebalance_fit(c, &dst, why, sizeof(why))) {
        snprintf(w->fit_why, sizeof(w->fit_why), "%s on %s: %s", c->name, dst.name, why);
        return false;
    }
    w->any_fit = true;
    if (!pair_ok(w, st, ci, s, t, r, e))
        return false;
    const char *osc = oscillation(w, c, s, t);
    if (osc) {
        note_held(w, ci, s, t, osc);
        return false;
    }
    return true;
}

/* The coolest destination for candidate ci off s in state st, or -1. */
static long best_destination(struct work *w, const struct state *st, size_t ci, size_t s, int r)
{
    long best = -1;
    struct eval be = {0};
    for (size_t t = 0; t < w->nn; t++) {
        struct eval e;
        if (!dest_ok(w, st, ci, s, t, r, &e))
            continue;
        bool better = best < 0 || e.dst_after < be.dst_after - REBALANCE_NOISE ||
                      (fabs(e.dst_after - be.dst_after) <= REBALANCE_NOISE &&
                       (e.lt_after < be.lt_after - 1e-12 || (fabs(e.lt_after - be.lt_after) <= 1e-12 &&
                                                             strcmp(w->nodes[t].name, w->nodes[best].name) < 0)));
        if (better)
            best = (long)t, be = e;
    }
    return best;
}

/* How much of resource r must leave s (in state st) for it to be predicted below the target;
 * INFINITY when no amount can (what it reads is not explained by its load). */
static double needed(const struct work *w, const struct state *st, size_t s, int r)
{
    double L = load_of(w, st, s, r),
           goal = rebalance_resource_curve(r, w->l0[r][s]) - (w->base[r][s] - w->target) / (100.0 * w->k[r][s]);
    if (isnan(L) || goal <= 0)
        return INFINITY;
    double lo = 0, hi = L;
    for (int i = 0; i < 50; i++) {
        double mid = (lo + hi) / 2;
        if (rebalance_resource_curve(r, mid) < goal)
            lo = mid;
        else
            hi = mid;
    }
    double need = st->dem[r][s] - lo * capacity(w, s, r);
    return need > 0 ? need : 0;
}

struct ranked {
    size_t cand;
    double d;
};

/* Order: the workloads that alone reach the target, smallest first; then the others, biggest
 * first; ties by smaller memory request (a cheaper migration), then by name. */
static bool ranked_before(const struct work *w, const struct ranked *x, const struct ranked *y, double need)
{
    bool xa = x->d >= need, ya = y->d >= need;
    if (xa != ya)
        return xa;
    if (x->d != y->d)
        return xa ? x->d < y->d : x->d > y->d;
    const struct rebalance_candidate *cx = &w->cands[x->cand], *cy = &w->cands[y->cand];
    if (cx->req_memory != cy->req_memory)
        return cx->req_memory < cy->req_memory;
    int c = strcmp(cx->ns ? cx->ns : "", cy->ns ? cy->ns : "");
    return (c ? c : strcmp(cx->name ? cx->name : "", cy->name ? cy->name : "")) < 0;
}

/* The candidates on s that may move in state st, ranked for resource r; their count. */
static size_t rank(struct work *w, const struct state *st, size_t s, int r, struct ranked *v)
{
    double need = needed(w, st, s, r);
    size_t n = 0;
    for (size_t i = 0; i < w->nc; i++) {
        const struct rebalance_candidate *c = &w->cands[i];
        if (c->node != s || st->cand_used[i] || c->blocked)
            continue;
        if (watched(w, REBALANCE_CPU) && isnan(c->demand)) {
            w->usage_unknown = true;
            continue;
        }
        double d = cand_demand(c, r);
        if (isnan(d) || d <= 0)
            continue;
        w->any_candidate = true;
        struct ranked k = {i, d};
        size_t j = n++;
        while (j > 0 && ranked_before(w, &k, &v[j - 1], need)) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = k;
    }
    return n;
}

/* Whether the limits leave room for candidate c off source s (evictor_room); limit_why says
 * which does not. */
static bool limits_allow(struct work *w, const struct rebalance_candidate *c, size_t s)
{
    const struct rebalance_params *p = w->p;
    const int *nsn = ns_slot(w, c->ns);
    struct evictor_limits l = {
        .max_total = p->max_total,
        .max_per_node = p->max_per_node,
        .max_per_namespace = p->max_per_namespace,
        .max_in_flight = p->max_in_flight,
        .in_flight = p->in_flight,
        .running = p->running,
        .per_cluster = p->kubevirt_per_cluster > 0 ? p->kubevirt_per_cluster : REBALANCE_KUBEVIRT_PER_CLUSTER,
        .per_node = p->kubevirt_per_node > 0 ? p->kubevirt_per_node : REBALANCE_KUBEVIRT_PER_NODE,
    };
    struct evictor_tally t = {
        .total = w->total,
        .node = w->nodes[s].name,
        .from_node = w->moved_from[s],
        .ns = c->ns,
        .in_namespace = nsn ? *nsn : 0,
        .outbound = w->outbound[s],
        .vm_moves = w->vm_moves,
    };
    return evictor_room(&l, &t, c->vm, w->limit_why, sizeof(w->limit_why)) == NULL;
}

/* The next move of the set off s in state st, into *mv; false when none is left. now: a move
 * made this cycle, so the limits must leave room for it and a destination that took an
 * eviction takes no other (limits_allow, dest_ok); otherwise a move of the whole set. */
static bool next_move(struct work *w, const struct state *st, size_t s, struct ranked *v, struct rebalance_move *mv,
                      bool now)
{
    int r = REBALANCE_CPU;
    hot(w, st, s, &r);
    size_t n = rank(w, st, s, r, v);
    w->emitting = now;
    for (size_t k = 0; k < n; k++) {
        if (now && !limits_allow(w, &w->cands[v[k].cand], s)) {
            w->limited = true;
            continue;
        }
        long t = best_destination(w, st, v[k].cand, s, r);
        if (t < 0)
            continue;
        *mv = (struct rebalance_move){.candidate = v[k].cand, .source = s, .destination = (size_t)t, .resource = r};
        w->emitting = false;
        return true;
    }
    w->emitting = false;
    return false;
}

/* Count move mv (candidate ci) against the limits and apply it to what is planned; what it
 * changed to *u when u is not NULL (undo). */
static int commit(struct work *w, size_t ci, size_t s, size_t t, struct undo *u)
{
    const struct rebalance_candidate *c = &w->cands[ci];
    if (ns_add(w, c->ns) < 0)
        return -1;
    if (u) {
        *u = (struct undo){.cand = ci, .s = s, .t = t, .dest_used = w->dest_used[t]};
        for (int r = 0; r < REBALANCE_NRES; r++)
            u->dem_s[r] = w->cur.dem[r][s], u->dem_t[r] = w->cur.dem[r][t];
        u->req_cpu = w->cur.req_cpu[t], u->req_mem = w->cur.req_mem[t], u->req_pods = w->cur.req_pods[t];
    }
    apply(w, &w->cur, ci, s, t);
    w->dest_used[t] = true;
    w->moved_from[s]++;
    w->total++;
    if (c->vm) {
        w->vm_moves++;
        w->outbound[s]++;
    }
    return 0;
}

/* Take back the moves planned since the plan held first of them (commit's undo records, the
 * latest first). */
static void take_back(struct work *w, size_t first)
{
    struct rebalance_plan *out = w->out;
    while (out->nmoves > first) {
        const struct undo *u = &w->undo[--out->nmoves - first];
        const struct rebalance_candidate *c = &w->cands[u->cand];
        for (int r = 0; r < REBALANCE_NRES; r++)
            w->cur.dem[r][u->s] = u->dem_s[r], w->cur.dem[r][u->t] = u->dem_t[r];
        w->cur.req_cpu[u->t] = u->req_cpu, w->cur.req_mem[u->t] = u->req_mem, w->cur.req_pods[u->t] = u->req_pods;
        w->cur.cand_used[u->cand] = false;
        w->dest_used[u->t] = u->dest_used;
        w->moved_from[u->s]--;
        w->total--;
        if (c->vm) {
            w->vm_moves--;
            w->outbound[u->s]--;
        }
        (*ns_slot(w, c->ns))--;
    }
}

/* Plan move mv (next_move's, made now): its figures, counted and applied, its undo record at
 * the plan's index less first. Returns 0, or -1 on no memory. */
static int emit(struct work *w, const struct rebalance_move *mv, size_t first)
{
    size_t ci = mv->candidate, s = mv->source, t = mv->destination;
    const struct rebalance_candidate *c = &w->cands[ci];
    struct rebalance_plan *out = w->out;
    if (BASE_GROW(out->moves, out->nmoves + 1, out->moves_cap) < 0)
        return -1;
    int r = (int)mv->resource;
    struct rebalance_move m = *mv;
    double before = hot(w, &w->cur, s, NULL);
    m.src_load = load_of(w, &w->cur, s, r);
    m.dst_load = load_of(w, &w->cur, t, r);
    m.demand = c->demand;
    m.mem = cand_demand(c, REBALANCE_MEMORY);
    if (commit(w, ci, s, t, &w->undo[out->nmoves - first]) < 0)
        return -1;
    m.src_load_after = load_of(w, &w->cur, s, r);
    m.dst_load_after = load_of(w, &w->cur, t, r);
    m.src_pressure_after = hot(w, &w->cur, s, NULL);
    m.dst_pressure_after = hot(w, &w->cur, t, NULL);
    m.relief = before - m.src_pressure_after;
    out->moves[out->nmoves++] = m;
    return 0;
}

/* Whether going from hot_now to hot_end relieves: below the target, or a trusted drop
 * (rebalance_trusted_drop) across another level (taintAbove, evictAbove). */
static bool contributes(const struct work *w, double hot_now, double hot_end)
{
    if (hot_end < w->target)
        return true;
    if (!rebalance_trusted_drop(hot_now, hot_end))
        return false;
    double levels[3] = {w->target, w->p->taint_above, w->p->evict_above};
    for (int i = 0; i < 3; i++)
        if (hot_now >= levels[i] && hot_end < levels[i])
            return true;
    return false;
}

/* Whether a source's whole set, crossing no level, still relieves it: above evictAbovePercent
 * and a trusted drop (plan.c, sheds). */
static bool sheds(const struct work *w, double hot_now, double hot_end)
{
    return hot_now > w->p->evict_above && rebalance_trusted_drop(hot_now, hot_end);
}

/* Whether the moves planned from the plan's index first on leave source s predicted no hotter
 * (within REBALANCE_NOISE) than the same number of moves of its whole set (w->set, nset
 * moves, each with the source's prediction after it): as good a start as the set's own. */
static bool as_good_as_set(const struct work *w, size_t first, size_t nset, double made_end)
{
    size_t made = w->out->nmoves - first;
    double set_end = w->set[(made < nset ? made : nset) - 1].src_pressure_after;
    return made_end <= set_end + REBALANCE_NOISE;
}

/* Make source s's moves this cycle, within the limits: chosen again as the whole set was, on
 * what is planned now, skipping the workloads the limits refuse and the destinations another
 * source took. They stay when they relieve s by themselves (contributes) or leave it as low as
 * as many moves of its whole set would (the next cycles go on with the rest); otherwise they are taken back and
 * nothing starts off s: a part that cannot help is not made. Returns 0, or -1 on no memory. */
static int make_within_limits(struct work *w, size_t s, struct ranked *v, double hot_now, size_t nset)
{
    size_t first = w->out->nmoves;
    double made_end = hot_now;
    struct rebalance_move mv;
    while (made_end >= w->target && w->out->nmoves - first < w->nc && next_move(w, &w->cur, s, v, &mv, true)) {
        if (emit(w, &mv, first) < 0)
            return -1;
        made_end = hot(w, &w->cur, s, NULL);
    }
    if (w->out->nmoves == first || contributes(w, hot_now, made_end) || as_good_as_set(w, first, nset, made_end))
        return 0;
    take_back(w, first);
    w->limited = true;
    if (!w->limit_why[0])
        snprintf(w->limit_why, sizeof(w->limit_why),
                 "the moves left to %s after the other sources' would not relieve it by themselves", w->nodes[s].name);
    return 0;
}

/* Plan the set of moves that relieves source s as a whole; when it does, make of it what the
 * limits allow now (make_within_limits). */
static int plan_source(struct work *w, size_t s, struct ranked *v)
{
    for (int r = 0; r < REBALANCE_NRES; r++)
        memcpy(w->sim.dem[r], w->cur.dem[r], w->nn * sizeof(double));
    memcpy(w->sim.req_cpu, w->cur.req_cpu, w->nn * sizeof(double));
    memcpy(w->sim.req_mem, w->cur.req_mem, w->nn * sizeof(double));
    memcpy(w->sim.req_pods, w->cur.req_pods, w->nn * sizeof(double));
    memcpy(w->sim.cand_used, w->cur.cand_used, w->nc * sizeof(bool));
    double hot_now = hot(w, &w->cur, s, NULL), hot_end = hot_now;
    size_t nset = 0;
    while (hot_end >= w->target && nset < w->nc && next_move(w, &w->sim, s, v, &w->set[nset], false)) {
        apply(w, &w->sim, w->set[nset].candidate, s, w->set[nset].destination);
        hot_end = hot(w, &w->sim, s, NULL);
        w->set[nset++].src_pressure_after = hot_end;
    }
    w->reached = nset > 0 && hot_end < w->target;
    if (!nset)
        return 0;
    if (!contributes(w, hot_now, hot_end) && !sheds(w, hot_now, hot_end)) {
        snprintf(w->useless_why, sizeof(w->useless_why),
                 "the %zu move%s that can go would leave %s predicted at %.0f%%, above every level it is above now",
                 nset, nset == 1 ? "" : "s", w->nodes[s].name, hot_end);
        return 0;
    }
    return make_within_limits(w, s, v, hot_now, nset);
}

static int state_init(struct state *st, size_t nn, size_t nc)
{
    double *d = calloc(5 * (nn ? nn : 1), sizeof(double));
    st->cand_used = calloc(nc ? nc : 1, sizeof(bool));
    if (!d || !st->cand_used) {
        free(d);
        free(st->cand_used);
        st->cand_used = NULL;
        st->dem[0] = NULL;
        return -1;
    }
    size_t n1 = nn ? nn : 1;
    st->dem[REBALANCE_CPU] = d, st->dem[REBALANCE_MEMORY] = d + n1;
    st->req_cpu = d + 2 * n1, st->req_mem = d + 3 * n1, st->req_pods = d + 4 * n1;
    return 0;
}

static void state_free(struct state *st)
{
    free(st->dem[0]);
    free(st->cand_used);
}

/* Allocate w's arrays and fill them from the nodes as measured. Returns 0 or -1. */
static int work_init(struct work *w)
{
    size_t n1 = w->nn ? w->nn : 1, c1 = w->nc ? w->nc : 1;
    double *d = calloc(3 * REBALANCE_NRES * n1, sizeof(double));
    w->source = calloc(n1, sizeof(bool));
    w->dest_used = calloc(n1, sizeof(bool));
    w->moved_from = calloc(n1, sizeof(int));
    w->outbound = calloc(n1, sizeof(int));
    w->set = calloc(c1, sizeof(*w->set));
    w->undo = calloc(c1, sizeof(*w->undo));
    int rc = state_init(&w->cur, w->nn, w->nc) | state_init(&w->sim, w->nn, w->nc);
    w->base[0] = d;
    if (!d || !w->source || !w->dest_used || !w->moved_from || !w->outbound || !w->set || !w->undo || rc)
        return -1;
    for (int r = 0; r < REBALANCE_NRES; r++) {
        w->base[r] = d + (size_t)(3 * r) * n1;
        w->l0[r] = d + (size_t)(3 * r + 1) * n1;
        w->k[r] = d + (size_t)(3 * r + 2) * n1;
    }
    for (size_t i = 0; i < w->nn; i++) {
        const struct rebalance_node *n = &w->nodes[i];
        w->cur.dem[REBALANCE_CPU][i] = known(n->cpus) ? n->demand : NAN;
        w->cur.dem[REBALANCE_MEMORY][i] = rebalance_node_memory_demand(n->mem_used, n->memory, n->mem_pressure);
        w->cur.req_cpu[i] = n->req_cpu, w->cur.req_mem[i] = n->req_memory, w->cur.req_pods[i] = n->req_pods;
        w->outbound[i] = n->outbound;
        w->source[i] = ref_is_source(w->p, n);
    }
    /* what the caps took off the workloads, their node does not want either */
    for (size_t j = 0; j < w->nc; j++) {
        const struct rebalance_candidate *c = &w->cands[j];
        if (c->node < w->nn && !isnan(c->demand))
            w->cur.dem[REBALANCE_CPU][c->node] -= c->demand - cand_demand(c, REBALANCE_CPU);
    }
    calibrate_nodes(w);
    /* the moves of earlier rounds: applied, and counted against the limits */
    for (size_t k = 0; k < w->p->nmade; k++) {
        const struct rebalance_move *m = &w->p->made[k];
        if (m->candidate < w->nc && m->source < w->nn && m->destination < w->nn &&
            commit(w, m->candidate, m->source, m->destination, NULL) < 0)
            return -1;
    }
    return 0;
}

static void work_free(struct work *w)
{
    free(w->base[0]);
    free(w->source);
    free(w->dest_used);
    free(w->moved_from);
    free(w->outbound);
    free(w->set);
    free(w->undo);
    free(w->ns);
    state_free(&w->cur);
    state_free(&w->sim);
}

/* Append a formatted piece to the plan's message (cut when full). */
static void msg_add(struct rebalance_plan *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg_add(struct rebalance_plan *out, const char *fmt, ...)
{
    size_t used = strlen(out->message);
    if (used + 1 >= sizeof(out->message))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->message + used, sizeof(out->message) - used, fmt, ap);
    va_end(ap);
}

/* "worker-0, worker-1" (no readings: the message stays the same while the situation does) */
static void list_nodes(struct rebalance_plan *out, const struct work *w, const size_t *idx, size_t n)
{
    for (size_t i = 0; i < n && i < 8; i++)
        msg_add(out, "%s%s", i ? ", " : "", w->nodes[idx[i]].name);
    if (n > 8)
        msg_add(out, " and %zu more", n - 8);
}

/* Why nothing may move off the sources: the reasons counted. */
static void explain_blocked(struct rebalance_plan *out, const struct work *w, const size_t *src, size_t ns)
{
    const char *reasons[16];
    int counts[16];
    size_t nr = 0, total = 0, unknown = 0;
    for (size_t i = 0; i < w->nc; i++) {
        const struct rebalance_candidate *c = &w->cands[i];
        bool on_source = false;
        for (size_t k = 0; k < ns && !on_source; k++)
            on_source = c->node == src[k];
        if (!on_source)
            continue;
        total++;
        const char *why = c->blocked;
        if (!why && isnan(c->demand)) {
            unknown++;
            continue;
        }
        if (!why)
            why = "without a move that helps";
        size_t k = 0;
        while (k < nr && strcmp(reasons[k], why) != 0)
            k++;
        if (k == nr && nr < 16)
            reasons[nr] = why, counts[nr++] = 0;
        if (k < nr)
            counts[k]++;
    }
    if (!total) {
        msg_add(out, "; no pod there matches spec.eviction.podSelector");
        return;
    }
    msg_add(out, "; of %zu pods there:", total);
    for (size_t k = 0; k < nr; k++)
        msg_add(out, "%s %d %s", k ? "," : "", counts[k], reasons[k]);
    if (unknown)
        msg_add(out, "%s %zu without a CPU usage reading", nr ? "," : "", unknown);
}

static void explain_destinations(struct rebalance_plan *out, const struct work *w)
{
    size_t shown = 0;
    for (size_t t = 0; t < w->nn; t++) {
        if (!w->nodes[t].selected || ref_is_source(w->p, &w->nodes[t]))
            continue;
        char why[256];
        struct rebalance_node dst = current(w, &w->cur, t);
        const char *r = ref_destination_check(w->p, &dst, why, sizeof(why));
        if (!r)
            continue;
        if (shown < 8)
            msg_add(out, "%s %s: %s", shown ? ";" : "", dst.name, r);
        shown++;
    }
    if (shown > 8)
        msg_add(out, "; and %zu more", shown - 8);
    if (!shown)
        msg_add(out, " every other selected node is a source too");
}

/* The sources, hottest first (by name on ties); the ones waiting to settle to waiting. */
static void order_sources(const struct work *w, size_t *sources, size_t *nsrc, size_t *waiting, size_t *nwait)
{
    *nsrc = *nwait = 0;
    for (size_t i = 0; i < w->nn; i++) {
        if (!w->source[i])
            continue;
        if (w->nodes[i].settling) {
            waiting[(*nwait)++] = i;
            continue;
        }
        size_t j = (*nsrc)++;
        const struct rebalance_node *n = &w->nodes[i];
        while (j > 0 && (w->nodes[sources[j - 1]].pressure < n->pressure ||
                         (w->nodes[sources[j - 1]].pressure == n->pressure &&
                          strcmp(w->nodes[sources[j - 1]].name, n->name) > 0))) {
            sources[j] = sources[j - 1];
            j--;
        }
        sources[j] = i;
    }
}

/* The plan's reason and message when no move is planned (sources: nsrc of them, waiting: nwait). */
static void explain(struct rebalance_plan *out, const struct work *w, const size_t *sources, size_t nsrc,
                    const size_t *waiting, size_t nwait)
{
    const struct rebalance_params *p = w->p;
    const char *is = nsrc == 1 ? "is" : "are";
    if (nsrc == 0 && nwait == 0) {
        out->reason = REBALANCE_NO_PRESSURE;
        msg_add(out, "no selected node stayed above evictAbovePercent %.0f%% for the sustain window", p->evict_above);
        return;
    }
    if (nsrc == 0) {
        out->reason = REBALANCE_SETTLING;
        list_nodes(out, w, waiting, nwait);
        msg_add(out,
                " %s above the relief target but a recent move touched %s: waiting for the pressure readings "
                "to settle",
                nwait == 1 ? "is" : "are", nwait == 1 ? "it" : "them");
        return;
    }
    list_nodes(out, w, sources, nsrc);
    if (w->usage_unknown && !w->any_candidate) {
        out->reason = REBALANCE_USAGE_UNKNOWN;
        msg_add(out, " %s to be relieved but there is no usage reading to predict a move with", is);
    } else if (!w->any_candidate) {
        out->reason = REBALANCE_NO_CANDIDATE;
        msg_add(out, " %s to be relieved but nothing there may move", is);
        explain_blocked(out, w, sources, nsrc);
    } else if (w->limited && !w->any_destination) {
        out->reason = REBALANCE_LIMITED;
        msg_add(out, " %s to be relieved but no move may start now: %s", is, w->limit_why);
    } else if (!w->any_destination) {
        out->reason = REBALANCE_NO_DESTINATION;
        msg_add(out, " %s to be relieved but no node can take a workload, so nothing is evicted:", is);
        explain_destinations(out, w);
    } else if (w->limited) {
        out->reason = REBALANCE_LIMITED;
        msg_add(out, " %s to be relieved but no move may start now: %s", is, w->limit_why);
    } else if (w->held) {
        out->reason = REBALANCE_OSCILLATION;
        msg_add(out, " %s to be relieved but the only moves left would undo recent ones: %s", is, out->held_message);
    } else {
        out->reason = REBALANCE_NO_IMPROVEMENT;
        msg_add(out, " %s to be relieved below %.0f%% but ", is, w->target);
        if (w->useless_why[0])
            msg_add(out, "%s, so none is made", w->useless_why);
        else
            msg_add(out,
                    "no move to a node that can take it lowers the pair's maximum load by the margin or its "
                    "pressure by %.0f points while keeping that node below taintAbovePercent %.0f%%",
                    REBALANCE_MIN_RELIEF, p->taint_above);
        if (!w->any_fit && w->fit_why[0])
            msg_add(out, " (%s)", w->fit_why);
        explain_blocked(out, w, sources, nsrc);
    }
}

/* A whole plan of the cycle with the sources in the order given: into *w (its moves in *out),
 * with gain[i] 0 when no move was planned off node i, 2 when moves were and its whole set got it
 * below the target, 1 when they were but it did not; *upto: how many sources of the order it
 * planned before the move limit stopped it. Returns 0, or -1 on no memory. */
static int plan_in_order(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nnodes,
                         const struct rebalance_candidate *cands, size_t ncands, const size_t *order, size_t nsrc,
                         struct work *w, struct rebalance_plan *out, int *gain, size_t *upto, struct ranked *v)
{
    memset(out, 0, sizeof(*out));
    memset(gain, 0, (nnodes ? nnodes : 1) * sizeof(int));
    *w = (struct work){.p = p, .nodes = nodes, .nn = nnodes, .cands = cands, .nc = ncands, .out = out};
    w->res = resources_of(p);
    w->target = ref_target(p);
    if (work_init(w) < 0)
        return -1;
    for (*upto = 0; *upto < nsrc; ++*upto) {
        size_t k = *upto;
        if (out->nmoves && w->total >= p->max_total)
            break; /* the cycle's move limit is used: no later source can move */
        if (isnan(w->cur.dem[REBALANCE_CPU][order[k]]) && watched(w, REBALANCE_CPU)) {
            w->usage_unknown = true;
            continue;
        }
        size_t had = out->nmoves;
        if (plan_source(w, order[k], v) < 0)
            return -1;
        if (out->nmoves > had)
            gain[order[k]] = w->reached ? 2 : 1;
    }
    return 0;
}

int ref_plan(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nnodes,
             const struct rebalance_candidate *cands, size_t ncands, struct rebalance_plan *out)
{
    size_t n1 = nnodes ? nnodes : 1;
    size_t *sources = calloc(n1, sizeof(size_t)), *waiting = calloc(n1, sizeof(size_t)),
           *order = calloc(n1, sizeof(size_t));
    int *gain = calloc(n1, sizeof(int)), *gain2 = calloc(n1, sizeof(int));
    struct ranked *v = calloc(ncands ? ncands : 1, sizeof(*v));
    struct work w = {0}, w2 = {0};
    struct rebalance_plan out2 = {0};
    int rc = -1;
    memset(out, 0, sizeof(*out));
    if (!sources || !waiting || !order || !gain || !gain2 || !v)
        goto done;
    /* the sources in their order, hottest first */
    w = (struct work){.p = p, .nodes = nodes, .nn = nnodes, .cands = cands, .nc = ncands, .out = out};
    w.res = resources_of(p);
    w.target = ref_target(p);
    if (work_init(&w) < 0)
        goto done;
    size_t nsrc, nwait;
    order_sources(&w, sources, &nsrc, waiting, &nwait);
    work_free(&w);
    size_t upto, upto2;
    if (plan_in_order(p, nodes, nnodes, cands, ncands, sources, nsrc, &w, out, gain, &upto, v) < 0)
        goto done;
    /* each source after the first one with moves that is left with no move or stopped short, up
     * to REBALANCE_PROMOTIONS of them among those planned before the move limit stopped the plan
     * kept, planned first: kept when that plan gains more on it and no less on any node */
    size_t first = 0, tries = 0;
    while (first < nsrc && !gain[sources[first]])
        first++;
    for (size_t k = first + 1; k < upto && tries < REBALANCE_PROMOTIONS; k++) {
        size_t u = sources[k];
        if (gain[u] == 2 || (isnan(w.cur.dem[REBALANCE_CPU][u]) && watched(&w, REBALANCE_CPU)))
            continue;
        tries++;
        size_t o = 0;
        order[o++] = u;
        for (size_t j = 0; j < nsrc; j++)
            if (j != k)
                order[o++] = sources[j];
        if (plan_in_order(p, nodes, nnodes, cands, ncands, order, nsrc, &w2, &out2, gain2, &upto2, v) < 0)
            goto done;
        bool better = gain2[u] > gain[u];
        for (size_t i = 0; better && i < nnodes; i++)
            better = gain2[i] >= gain[i];
        if (better) {
            work_free(&w);
            ref_plan_free(out);
            w = w2, *out = out2, w.out = out;
            memcpy(gain, gain2, n1 * sizeof(int));
            upto = upto2;
            memcpy(sources, order, nsrc * sizeof(size_t));
        } else {
            work_free(&w2);
            ref_plan_free(&out2);
        }
        w2 = (struct work){0}, out2 = (struct rebalance_plan){0};
    }
    out->held = w.held;
    if (out->nmoves) {
        out->reason = REBALANCE_MOVING;
        msg_add(out, "%zu move%s planned off ", out->nmoves, out->nmoves == 1 ? "" : "s");
        list_nodes(out, &w, sources, nsrc);
    } else {
        explain(out, &w, sources, nsrc, waiting, nwait);
    }
    rc = 0;
done:
    work_free(&w);
    work_free(&w2);
    ref_plan_free(&out2);
    if (rc < 0)
        ref_plan_free(out);
    free(sources);
    free(waiting);
    free(order);
    free(gain);
    free(gain2);
    free(v);
    return rc;
}

void ref_plan_free(struct rebalance_plan *plan)
{
    free(plan->moves);
    plan->moves = NULL;
    plan->nmoves = 0;
    plan->moves_cap = 0;
}
