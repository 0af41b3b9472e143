/* plan: sources, candidates, destinations, the convergence rule and limits (see plan.h). */
#include "reconcile/move/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"
#include "base/util.h"
#include "reconcile/move/evictor.h"

/* ---- nodes ---- */

static double margin_of(const struct rebalance_params *p)
{
    return p->margin > 0 ? p->margin : REBALANCE_MARGIN;
}

double rebalance_target(const struct rebalance_params *p)
{
    return p->target > 0 ? p->target : p->untaint_below;
}

bool rebalance_is_source(const struct rebalance_params *p, const struct rebalance_node *n)
{
    if (!n->selected || n->held || isnan(n->pressure))
        return false;
    if (n->sustained && n->pressure > p->evict_above)
        return true;
    if (n->tainted && n->pressure > p->taint_above) /* the band: tainted, not yet above evict */
        return true;
    return n->relieving && n->pressure >= rebalance_target(p);
}

static bool known(double v)
{
    return !isnan(v) && v > 0;
}

static unsigned resources_of(const struct rebalance_params *p)
{
    return p->resources ? p->resources : REBALANCE_RES_CPU;
}

/* Why n may not be a destination, as a fixed phrase, or NULL when it may be one or when only
 * its pressure against untaintBelowPercent stops it (*too_warm then says so). Formats nothing. */
static const char *destination_refusal(const struct rebalance_params *p, const struct rebalance_node *n, bool *too_warm)
{
    bool mem = resources_of(p) & REBALANCE_RES_MEMORY;
    *too_warm = false;
    if (!n->selected)
        return "not selected";
    if (n->tainted)
        return "tainted";
    if (n->unschedulable)
        return "cordoned";
    if (n->held)
        return n->held;
    if (isnan(n->pressure) || (mem && isnan(n->mem_pressure)))
        return "pressure unknown";
    if (n->settling)
        return "settling after a move";
    if (!known(n->cpus) || isnan(n->demand))
        return "usage unknown";
    if (mem && (!known(n->memory) || isnan(n->mem_used)))
        return "memory in use unknown";
    if (n->pressure >= p->untaint_below) {
        *too_warm = true;
        return NULL;
    }
    if (isnan(n->req_cpu))
        return "requests not read";
    return NULL;
}

/* Whether n may be a destination before any workload is looked at (rebalance_destination_check
 * returns NULL), without formatting why not. */
static bool destination_eligible(const struct rebalance_params *p, const struct rebalance_node *n)
{
    bool too_warm;
    return !destination_refusal(p, n, &too_warm) && !too_warm;
}

const char *rebalance_destination_check(const struct rebalance_params *p, const struct rebalance_node *n, char *why,
                                        size_t len)
{
    bool too_warm;
    const char *w = destination_refusal(p, n, &too_warm);
    if (too_warm) {
        snprintf(why, len, "pressure not below untaintBelowPercent %.0f%%", p->untaint_below);
        return why;
    }
    if (!w)
        return NULL;
    snprintf(why, len, "%s", w);
    return why;
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
    bool *may_take;   /* per node: not a source, and rebalance_destination_check passes (the check
                       * reads nothing planned moves change: it holds for the whole plan) */
    size_t *eligible; /* the nodes with may_take, in index order: the only ones a move is tried to */
    size_t neligible;
    size_t *cand_start, *cand_of; /* candidates by node: cand_of[cand_start[i] .. cand_start[i + 1]), in index order */
    struct state cur, sim;        /* what is planned this cycle; a source's set being tried */
    /* where sim may differ from cur (apply marks them): set back before the next source's set */
    bool *node_dirty, *cand_dirty;
    size_t *dirty_nodes, *dirty_cands;
    size_t ndirty_nodes, ndirty_cands;
    struct rebalance_move *set; /* the set being tried (up to nc moves) */
    struct undo *undo;          /* per move of the source's set made now (up to nc) */
    bool *dest_used;            /* took an eviction this cycle */
    int *moved_from, *outbound;
    struct ns_count *ns;
    size_t nns, ns_cap;
    int total, vm_moves;
    /* what stood in the way, for the message */
    bool usage_unknown, any_candidate, any_destination, limited, any_fit;
    char limit_why[256];
    /* the last refusal of a fit while none fit, formatted only for the message */
    bool fit_refused;
    size_t fit_cand;
    struct rebalance_node fit_node;
    /* the last set of moves that would not relieve its source, formatted only for the message */
    size_t useless_moves, useless_source;
    double useless_end;
    bool emitting;    /* judging what is planned now, not the set */
    bool set_reaches; /* the last source planned: its whole set takes it below the target */
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
            double k = rebalance_plan_scale(r, w->source[i], P, isnan(L) ? NAN : f, n->scale[r]);
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

static void mark_node(struct work *w, size_t i)
{
    if (!w->node_dirty[i]) {
        w->node_dirty[i] = true;
        w->dirty_nodes[w->ndirty_nodes++] = i;
    }
}

/* Candidate ci moves from s to t in state st (marked where sim may now differ from cur). */
static void apply(struct work *w, struct state *st, size_t ci, size_t s, size_t t)
{
    const struct rebalance_candidate *c = &w->cands[ci];
    mark_node(w, s);
    mark_node(w, t);
    if (!w->cand_dirty[ci]) {
        w->cand_dirty[ci] = true;
        w->dirty_cands[w->ndirty_cands++] = ci;
    }
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
    if (t == s || !w->may_take[t] || w->moved_from[t] > 0)
        return false;
    if (w->emitting && w->dest_used[t] && !(w->p->targeted && c->vm))
        return false; /* an eviction lands where the scheduler wants: one per destination and cycle */
    struct rebalance_node dst = current(w, st, t);
    w->any_destination = true;
    if (!rebalance_fits(c, &dst)) {
        if (!w->any_fit) {
            w->fit_refused = true;
            w->fit_cand = ci;
            w->fit_node = dst;
        }
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
    for (size_t k = 0; k < w->neligible; k++) {
        size_t t = w->eligible[k];
        struct eval e = {0};
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

/* A candidate's expected migration seconds, an unestimated one after every estimated one. */
static double migrate_key(const struct rebalance_candidate *c)
{
    return isnan(c->migrate_s) ? INFINITY : c->migrate_s;
}

/* A candidate's own CPU stall, 0 when not reported. */
static double stall_key(const struct rebalance_candidate *c)
{
    return isnan(c->stall) ? 0 : c->stall;
}

/* Order: the workloads that alone reach the target, smallest first; then the others, biggest
 * first; at equal relief the one whose own stall is higher (moving it removes that stall too:
 * more stall removed by the one migration); then the cheaper move: the shorter live migration
 * expected (one not estimated after every estimated one), then the smaller memory request;
 * then by name. */
static bool ranked_before(const struct work *w, const struct ranked *x, const struct ranked *y, double need)
{
    bool xa = x->d >= need, ya = y->d >= need;
    if (xa != ya)
        return xa;
    if (x->d != y->d)
        return xa ? x->d < y->d : x->d > y->d;
    const struct rebalance_candidate *cx = &w->cands[x->cand], *cy = &w->cands[y->cand];
    if (stall_key(cx) != stall_key(cy))
        return stall_key(cx) > stall_key(cy);
    if (migrate_key(cx) != migrate_key(cy))
        return migrate_key(cx) < migrate_key(cy);
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
    for (size_t at = w->cand_start[s]; at < w->cand_start[s + 1]; at++) {
        size_t i = w->cand_of[at];
        const struct rebalance_candidate *c = &w->cands[i];
        if (st->cand_used[i] || c->blocked)
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

bool rebalance_trusted_drop(double hot_now, double hot_end)
{
    if (hot_now >= 100.0 * REBALANCE_FLAT)
        hot_end = fmin(100.0, hot_end * REBALANCE_SAFETY);
    return hot_now - hot_end >= REBALANCE_MIN_RELIEF;
}

/* Whether going from hot_now to hot_end relieves: below the target, or a trusted drop across
 * another level (taintAbove, evictAbove). */
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

/* Whether a source's whole set, crossing no level, still relieves it: the source is above
 * evictAbovePercent and the set's drop is trusted. Every evictAbovePercent between the set's
 * end and the source's pressure would make that set cross it, and the crossing asks the same
 * trusted drop, so the answer is the same for every evictAbovePercent below the source: a lower
 * one never leaves the source with no move where a higher one relieves it (the level rule is
 * monotone). */
static bool sheds(const struct work *w, double hot_now, double hot_end)
{
    return hot_now > w->p->evict_above && rebalance_trusted_drop(hot_now, hot_end);
}

/* sim made equal to cur again where apply touched either since the last time. */
static void sync_sim(struct work *w)
{
    for (size_t k = 0; k < w->ndirty_nodes; k++) {
        size_t i = w->dirty_nodes[k];
        for (int r = 0; r < REBALANCE_NRES; r++)
            w->sim.dem[r][i] = w->cur.dem[r][i];
        w->sim.req_cpu[i] = w->cur.req_cpu[i];
        w->sim.req_mem[i] = w->cur.req_mem[i];
        w->sim.req_pods[i] = w->cur.req_pods[i];
        w->node_dirty[i] = false;
    }
    for (size_t k = 0; k < w->ndirty_cands; k++) {
        size_t i = w->dirty_cands[k];
        w->sim.cand_used[i] = w->cur.cand_used[i];
        w->cand_dirty[i] = false;
    }
    w->ndirty_nodes = w->ndirty_cands = 0;
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
    sync_sim(w);
    double hot_now = hot(w, &w->cur, s, NULL), hot_end = hot_now;
    size_t nset = 0;
    while (hot_end >= w->target && nset < w->nc && next_move(w, &w->sim, s, v, &w->set[nset], false)) {
        apply(w, &w->sim, w->set[nset].candidate, s, w->set[nset].destination);
        hot_end = hot(w, &w->sim, s, NULL);
        w->set[nset++].src_pressure_after = hot_end;
    }
    w->set_reaches = nset && hot_end < w->target;
    if (!nset)
        return 0;
    if (!contributes(w, hot_now, hot_end) && !sheds(w, hot_now, hot_end)) {
        w->useless_moves = nset, w->useless_source = s, w->useless_end = hot_end;
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

/* The candidates by the node they run on (cand_start, cand_of), each node's in index order;
 * those on no node of the plan are left out (no source is theirs). */
static void index_candidates(struct work *w)
{
    for (size_t j = 0; j < w->nc; j++)
        if (w->cands[j].node < w->nn)
            w->cand_start[w->cands[j].node + 1]++;
    for (size_t i = 0; i < w->nn; i++)
        w->cand_start[i + 1] += w->cand_start[i];
    for (size_t j = 0; j < w->nc; j++) {
        size_t i = w->cands[j].node;
        if (i < w->nn)
            w->cand_of[w->cand_start[i]++] = j;
    }
    /* cand_start[i] now ends node i's run: shifted up by one node, it starts node i's again */
    memmove(w->cand_start + 1, w->cand_start, w->nn * sizeof(size_t));
    w->cand_start[0] = 0;
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
    w->may_take = calloc(n1, sizeof(bool));
    w->eligible = calloc(n1, sizeof(size_t));
    w->cand_start = calloc(n1 + 1, sizeof(size_t));
    w->cand_of = calloc(c1, sizeof(size_t));
    w->node_dirty = calloc(n1, sizeof(bool));
    w->dirty_nodes = calloc(n1, sizeof(size_t));
    w->cand_dirty = calloc(c1, sizeof(bool));
    w->dirty_cands = calloc(c1, sizeof(size_t));
    int rc = state_init(&w->cur, w->nn, w->nc) | state_init(&w->sim, w->nn, w->nc);
    w->base[0] = d;
    if (!d || !w->source || !w->dest_used || !w->moved_from || !w->outbound || !w->set || !w->undo || !w->may_take ||
        !w->eligible || !w->cand_start || !w->cand_of || !w->node_dirty || !w->dirty_nodes || !w->cand_dirty ||
        !w->dirty_cands || rc)
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
        w->source[i] = rebalance_is_source(w->p, n);
    }
    /* what the caps took off the workloads, their node does not want either */
    for (size_t j = 0; j < w->nc; j++) {
        const struct rebalance_candidate *c = &w->cands[j];
        if (c->node < w->nn && !isnan(c->demand))
            w->cur.dem[REBALANCE_CPU][c->node] -= c->demand - cand_demand(c, REBALANCE_CPU);
    }
    index_candidates(w);
    for (size_t i = 0; i < w->nn; i++) {
        struct rebalance_node n = current(w, &w->cur, i);
        w->may_take[i] = !w->source[i] && destination_eligible(w->p, &n);
        if (w->may_take[i])
            w->eligible[w->neligible++] = i;
    }
    calibrate_nodes(w);
    /* the moves of earlier rounds: applied, and counted against the limits */
    for (size_t k = 0; k < w->p->nmade; k++) {
        const struct rebalance_move *m = &w->p->made[k];
        if (m->candidate < w->nc && m->source < w->nn && m->destination < w->nn &&
            commit(w, m->candidate, m->source, m->destination, NULL) < 0)
            return -1;
    }
    /* the trial state starts as what is planned; from here on only what apply marks differs */
    for (int r = 0; r < REBALANCE_NRES; r++)
        memcpy(w->sim.dem[r], w->cur.dem[r], n1 * sizeof(double));
    memcpy(w->sim.req_cpu, w->cur.req_cpu, n1 * sizeof(double));
    memcpy(w->sim.req_mem, w->cur.req_mem, n1 * sizeof(double));
    memcpy(w->sim.req_pods, w->cur.req_pods, n1 * sizeof(double));
    memcpy(w->sim.cand_used, w->cur.cand_used, c1 * sizeof(bool));
    for (size_t k = 0; k < w->ndirty_nodes; k++)
        w->node_dirty[w->dirty_nodes[k]] = false;
    for (size_t k = 0; k < w->ndirty_cands; k++)
        w->cand_dirty[w->dirty_cands[k]] = false;
    w->ndirty_nodes = w->ndirty_cands = 0;
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
    free(w->may_take);
    free(w->eligible);
    free(w->cand_start);
    free(w->cand_of);
    free(w->node_dirty);
    free(w->dirty_nodes);
    free(w->cand_dirty);
    free(w->dirty_cands);
    free(w->ns);
    state_free(&w->cur);
    state_free(&w->sim);
}

#define msg_add(out, ...) base_append((out)->message, sizeof((out)->message), __VA_ARGS__)

/* "worker-0, worker-1" (no readings: the message stays the same while the situation does) */
static void list_nodes(struct rebalance_plan *out, const struct work *w, const size_t *idx, size_t n)
{
    for (size_t i = 0; i < n && i < 8; i++)
        msg_add(out, "%s%s", i ? ", " : "", w->nodes[idx[i]].name);
    if (n > 8)
        msg_add(out, " and %zu more", n - 8);
}

/* Why the sources' pods did not move (order_sources': not settling), counted into
 * out->blocked and added to the message. */
static void explain_blocked(struct rebalance_plan *out, const struct work *w)
{
    const char *reasons[16];
    int counts[16];
    size_t nr = 0, total = 0, unknown = 0;
    for (size_t i = 0; i < w->nc; i++) {
        const struct rebalance_candidate *c = &w->cands[i];
        if (c->node >= w->nn || !w->source[c->node] || w->nodes[c->node].settling)
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
    char *b = out->blocked;
    size_t len = sizeof(out->blocked);
    if (!total) {
        base_append(b, len, "no pod there matches spec.eviction.podSelector");
    } else {
        base_append(b, len, "of %zu pods there:", total);
        for (size_t k = 0; k < nr; k++)
            base_append(b, len, "%s %d %s", k ? "," : "", counts[k], reasons[k]);
        if (unknown)
            base_append(b, len, "%s %zu without a CPU usage reading", nr ? "," : "", unknown);
    }
    msg_add(out, "; %s", b);
}

/* The selected nodes that may not be destinations at all, and why (the first 8 said). */
static void explain_destinations(struct rebalance_plan *out, const struct work *w)
{
    size_t shown = 0;
    for (size_t t = 0; t < w->nn; t++) {
        if (!w->nodes[t].selected || w->source[t] || w->may_take[t])
            continue;
        if (shown < 8) {
            char why[256];
            struct rebalance_node dst = current(w, &w->cur, t);
            msg_add(out, "%s %s: %s", shown ? ";" : "", dst.name,
                    rebalance_destination_check(w->p, &dst, why, sizeof(why)));
        }
        shown++;
    }
    if (shown > 8)
        msg_add(out, "; and %zu more", shown - 8);
    if (!shown)
        msg_add(out, " every other selected node is a source too");
}

/* The last refusal of a fit, as it would have read when it was made. */
static void explain_fit(struct rebalance_plan *out, const struct work *w)
{
    char why[256], said[256];
    const struct rebalance_candidate *c = &w->cands[w->fit_cand];
    rebalance_fit(c, &w->fit_node, why, sizeof(why));
    snprintf(said, sizeof(said), "%s on %s: %s", c->name, w->fit_node.name, why);
    msg_add(out, " (%s)", said);
}

struct source_key {
    double pressure;
    const char *name;
    size_t i;
};

/* Hottest first, then by name, then by index. */
static int source_cmp(const void *a, const void *b)
{
    const struct source_key *x = a, *y = b;
    if (x->pressure != y->pressure)
        return x->pressure > y->pressure ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The sources, hottest first (by name on ties); the ones waiting to settle to waiting.
 * Returns 0, or -1 on no memory. */
static int order_sources(const struct work *w, size_t *sources, size_t *nsrc, size_t *waiting, size_t *nwait)
{
    *nsrc = *nwait = 0;
    struct source_key *keys = calloc(w->nn ? w->nn : 1, sizeof(*keys));
    if (!keys)
        return -1;
    for (size_t i = 0; i < w->nn; i++) {
        if (!w->source[i])
            continue;
        if (w->nodes[i].settling)
            waiting[(*nwait)++] = i;
        else
            keys[(*nsrc)++] = (struct source_key){w->nodes[i].pressure, w->nodes[i].name, i};
    }
    qsort(keys, *nsrc, sizeof(*keys), source_cmp);
    for (size_t k = 0; k < *nsrc; k++)
        sources[k] = keys[k].i;
    free(keys);
    return 0;
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
        explain_blocked(out, w);
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
        if (w->useless_moves)
            msg_add(out,
                    "the %zu move%s that can go would leave %s predicted at %.0f%%, above every level it is above "
                    "now, so none is made",
                    w->useless_moves, w->useless_moves == 1 ? "" : "s", w->nodes[w->useless_source].name,
                    w->useless_end);
        else
            msg_add(out,
                    "no move to a node that can take it lowers the pair's maximum load by the margin or its "
                    "pressure by %.0f points while keeping that node below taintAbovePercent %.0f%%",
                    REBALANCE_MIN_RELIEF, p->taint_above);
        if (!w->any_fit && w->fit_refused)
            explain_fit(out, w);
        explain_blocked(out, w);
    }
}

/* Whether source s cannot be planned: CPU is balanced on and s has no CPU usage reading. */
static bool no_usage(const struct work *w, size_t s)
{
    return isnan(w->cur.dem[REBALANCE_CPU][s]) && watched(w, REBALANCE_CPU);
}

/* How far a plan relieves a source, in order: no move off it; moves, but its whole set leaves it
 * at or above the target (what its workloads fit stops it short); moves of a set that takes it
 * below the target (the limits may make only its start this cycle). */
enum relief { RELIEF_NONE, RELIEF_SHORT, RELIEF_REACHED };

/* One plan of the cycle: its work, its moves, how far it relieves each node (enum relief), and
 * how many sources of its order it went through before the cycle's move limit stopped it. */
struct attempt {
    struct work w;
    struct rebalance_plan out;
    unsigned char *relief;
    size_t visited;
};

/* Plan sources[0 .. nsrc) in that order (plan_source each) into a, up to the cycle's move limit.
 * With at_least, stop at the first source relieved less than at_least says, and return 1.
 * Returns 0, or -1 on no memory. */
static int plan_sources(struct attempt *a, const size_t *sources, size_t nsrc, struct ranked *v,
                        const unsigned char *at_least)
{
    struct work *w = &a->w;
    for (size_t k = 0; k < nsrc; k++) {
        size_t s = sources[k];
        if (w->out->nmoves && w->total >= w->p->max_total)
            break; /* the cycle's move limit is used: no later source can move */
        a->visited++;
        if (no_usage(w, s)) {
            w->usage_unknown = true;
            continue;
        }
        size_t before = w->out->nmoves;
        if (plan_source(w, s, v) < 0)
            return -1;
        a->relief[s] = w->out->nmoves == before ? RELIEF_NONE : w->set_reaches ? RELIEF_REACHED : RELIEF_SHORT;
        if (at_least && a->relief[s] < at_least[s])
            return 1;
    }
    return 0;
}

static int attempt_start(struct attempt *a, const struct rebalance_params *p, const struct rebalance_node *nodes,
                         size_t nnodes, const struct rebalance_candidate *cands, size_t ncands)
{
    memset(a, 0, sizeof(*a));
    a->w = (struct work){.p = p, .nodes = nodes, .nn = nnodes, .cands = cands, .nc = ncands, .out = &a->out};
    a->w.res = resources_of(p);
    a->w.target = rebalance_target(p);
    a->relief = calloc(nnodes ? nnodes : 1, 1);
    return a->relief ? work_init(&a->w) : -1;
}

static void attempt_free(struct attempt *a)
{
    work_free(&a->w);
    rebalance_plan_free(&a->out);
    free(a->relief);
}

/* Whether b relieves every node as far as a does, and node u further. */
static bool relieves_more(const struct attempt *a, const struct attempt *b, size_t u)
{
    if (b->relief[u] <= a->relief[u])
        return false;
    for (size_t i = 0; i < a->w.nn; i++)
        if (b->relief[i] < a->relief[i])
            return false;
    return true;
}

/* Plan the sources across one another: a source left with no move, or with moves that stop
 * short of the target, may have been left so because hotter sources took the only destinations
 * its workloads fit, or the cycle's moves. The cycle is planned again with it first (the others
 * in their order after it), and that plan is kept when it relieves every node as far as the plan
 * before, and this one further. Up to REBALANCE_PROMOTIONS sources are tried a cycle, of those
 * the plan went through before the move limit stopped it (a later one was not planned at all,
 * and first it would take a move from one that was). *a is the plan kept and sources its
 * order. Returns 0, or -1 on no memory. */
static int promote_left_sources(struct attempt *a, size_t *sources, size_t nsrc, struct ranked *v)
{
    size_t *order = calloc(nsrc ? nsrc : 1, sizeof(size_t));
    if (!order)
        return -1;
    size_t first = 0; /* the sources before the first with moves saw the cluster as read: first, they get the same */
    while (first < nsrc && a->relief[sources[first]] == RELIEF_NONE)
        first++;
    int rc = 0;
    for (size_t k = first + 1, tries = 0; k < a->visited && tries < REBALANCE_PROMOTIONS; k++) {
        size_t u = sources[k];
        if (a->relief[u] == RELIEF_REACHED || no_usage(&a->w, u))
            continue;
        tries++;
        order[0] = u;
        memcpy(order + 1, sources, k * sizeof(size_t));
        memcpy(order + k + 1, sources + k + 1, (nsrc - k - 1) * sizeof(size_t));
        struct attempt b;
        rc = attempt_start(&b, a->w.p, a->w.nodes, a->w.nn, a->w.cands, a->w.nc);
        if (rc == 0)
            rc = plan_sources(&b, order, 1, v, NULL);
        if (rc == 0 && b.relief[u] > a->relief[u])
            rc = plan_sources(&b, order + 1, nsrc - 1, v, a->relief);
        if (rc == 0 && relieves_more(a, &b, u)) {
            struct attempt t = *a;
            *a = b, b = t;
            a->w.out = &a->out, b.w.out = &b.out; /* each its own plan again */
            memcpy(sources, order, nsrc * sizeof(size_t));
        }
        attempt_free(&b);
        if (rc < 0)
            break;
        rc = 0;
    }
    free(order);
    return rc;
}

int rebalance_plan(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nnodes,
                   const struct rebalance_candidate *cands, size_t ncands, struct rebalance_plan *out)
{
    memset(out, 0, sizeof(*out));
    size_t n1 = nnodes ? nnodes : 1;
    size_t *sources = calloc(n1, sizeof(size_t)), *waiting = calloc(n1, sizeof(size_t));
    struct ranked *v = calloc(ncands ? ncands : 1, sizeof(*v));
    struct attempt a;
    int rc = attempt_start(&a, p, nodes, nnodes, cands, ncands);
    size_t nsrc = 0, nwait = 0;
    if (!sources || !waiting || !v || rc < 0 || order_sources(&a.w, sources, &nsrc, waiting, &nwait) < 0 ||
        plan_sources(&a, sources, nsrc, v, NULL) < 0 || promote_left_sources(&a, sources, nsrc, v) < 0) {
        rc = -1;
        goto out;
    }
    a.out.held = a.w.held;
    if (a.out.nmoves) {
        a.out.reason = REBALANCE_MOVING;
        msg_add(&a.out, "%zu move%s planned off ", a.out.nmoves, a.out.nmoves == 1 ? "" : "s");
        list_nodes(&a.out, &a.w, sources, nsrc);
    } else {
        explain(&a.out, &a.w, sources, nsrc, waiting, nwait);
    }
    *out = a.out;
    a.out = (struct rebalance_plan){0};
out:
    attempt_free(&a);
    free(sources);
    free(waiting);
    free(v);
    return rc;
}

void rebalance_plan_free(struct rebalance_plan *plan)
{
    free(plan->moves);
    plan->moves = NULL;
    plan->nmoves = 0;
    plan->moves_cap = 0;
}
