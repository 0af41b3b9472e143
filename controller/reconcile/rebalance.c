/* rebalance: candidates, fit, prediction, the convergence rule and limits (see rebalance.h). */
#include "rebalance.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evictor.h"

/* ---- small JSON helpers ---- */

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* ---- prediction ---- */

double rebalance_demand(double usage, double cpu_pressure)
{
    double stall = isnan(cpu_pressure) || cpu_pressure < 0 ? 0 : cpu_pressure / 100.0;
    if (stall > REBALANCE_MAX_STALL)
        stall = REBALANCE_MAX_STALL;
    return usage / (1.0 - stall);
}

double rebalance_node_demand(double usage, double cpus, double cpu_pressure)
{
    if (isnan(usage) || isnan(cpus) || cpus <= 0)
        return NAN;
    if (usage >= REBALANCE_SATURATED * cpus && usage < cpus)
        usage = cpus;
    return rebalance_demand(usage, cpu_pressure);
}

double rebalance_predicted_pressure(double load)
{
    if (isnan(load) || load <= 1.0)
        return 0.0;
    return 100.0 * (1.0 - 1.0 / load);
}

/* ---- fit ---- */

bool rebalance_tolerates(const cJSON *tolerations, const cJSON *taint)
{
    const char *key = str(taint, "key"), *value = str(taint, "value"), *effect = str(taint, "effect");
    const cJSON *t;
    cJSON_ArrayForEach(t, tolerations) {
        const char *tk = str(t, "key"), *tv = str(t, "value"), *te = str(t, "effect"), *op = str(t, "operator");
        if (te && *te && !eq(te, effect))
            continue;
        bool exists = eq(op, "Exists");
        if (!tk || !*tk) {
            if (exists)
                return true; /* empty key with Exists tolerates everything */
            continue;
        }
        if (!eq(tk, key))
            continue;
        if (exists || strcmp(tv ? tv : "", value ? value : "") == 0)
            return true;
    }
    return false;
}

static bool parse_long(const char *s, long long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end)
        return false;
    *out = v;
    return true;
}

/* One node selector requirement against a value (NULL: the label/field is absent). */
static bool requirement_matches(const cJSON *req, const char *value)
{
    const char *op = str(req, "operator");
    const cJSON *values = get(req, "values"), *v;
    if (eq(op, "Exists"))
        return value != NULL;
    if (eq(op, "DoesNotExist"))
        return value == NULL;
    if (eq(op, "In") || eq(op, "NotIn")) {
        bool in = false;
        cJSON_ArrayForEach(v, values)
            if (value && cJSON_IsString(v) && strcmp(v->valuestring, value) == 0)
                in = true;
        return eq(op, "In") ? in : !in;
    }
    if (eq(op, "Gt") || eq(op, "Lt")) {
        long long have, want;
        const cJSON *first = cJSON_GetArrayItem(values, 0);
        if (!parse_long(value, &have) || !cJSON_IsString(first) || !parse_long(first->valuestring, &want))
            return false;
        return eq(op, "Gt") ? have > want : have < want;
    }
    return false;
}

static bool term_matches(const cJSON *term, const cJSON *labels, const char *node_name)
{
    const cJSON *exprs = get(term, "matchExpressions"), *fields = get(term, "matchFields"), *r;
    if (cJSON_GetArraySize(exprs) == 0 && cJSON_GetArraySize(fields) == 0)
        return false; /* an empty term matches no node */
    cJSON_ArrayForEach(r, exprs)
        if (!requirement_matches(r, str(labels, str(r, "key") ? str(r, "key") : "")))
            return false;
    cJSON_ArrayForEach(r, fields) {
        const char *key = str(r, "key");
        if (!requirement_matches(r, eq(key, "metadata.name") ? node_name : NULL))
            return false;
    }
    return true;
}

bool rebalance_affinity_matches(const cJSON *affinity, const cJSON *labels, const char *node_name)
{
    const cJSON *req = get(get(affinity, "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution");
    if (!req || cJSON_IsNull(req))
        return true;
    const cJSON *term;
    cJSON_ArrayForEach(term, get(req, "nodeSelectorTerms"))
        if (term_matches(term, labels, node_name))
            return true;
    return false;
}

const char *rebalance_fit(const struct rebalance_candidate *c, const struct rebalance_node *n, char *why, size_t len)
{
    if (n->unschedulable) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "key", "node.kubernetes.io/unschedulable");
        cJSON_AddStringToObject(t, "effect", "NoSchedule");
        bool ok = t && rebalance_tolerates(c->tolerations, t);
        cJSON_Delete(t);
        if (!ok) {
            snprintf(why, len, "cordoned");
            return why;
        }
    }
    if (!isnan(n->alloc_cpu) && !isnan(n->req_cpu) && n->req_cpu + c->req_cpu > n->alloc_cpu + 1e-9) {
        snprintf(why, len, "insufficient cpu (%.2f of %.2f cores requested, the pod wants %.2f)", n->req_cpu,
                 n->alloc_cpu, c->req_cpu);
        return why;
    }
    if (!isnan(n->alloc_memory) && !isnan(n->req_memory) && n->req_memory + c->req_memory > n->alloc_memory + 0.5) {
        snprintf(why, len, "insufficient memory (%.0f Mi of %.0f Mi requested, the pod wants %.0f Mi)",
                 n->req_memory / 1048576.0, n->alloc_memory / 1048576.0, c->req_memory / 1048576.0);
        return why;
    }
    if (!isnan(n->alloc_pods) && !isnan(n->req_pods) && n->req_pods + 1 > n->alloc_pods + 1e-9) {
        snprintf(why, len, "too many pods");
        return why;
    }
    const cJSON *sel;
    cJSON_ArrayForEach(sel, c->node_selector) {
        const char *have = str(n->labels, sel->string);
        if (!cJSON_IsString(sel) || !have || strcmp(have, sel->valuestring) != 0) {
            snprintf(why, len, "node selector %s does not match", sel->string);
            return why;
        }
    }
    if (!rebalance_affinity_matches(c->affinity, n->labels, n->name)) {
        snprintf(why, len, "required node affinity does not match");
        return why;
    }
    const cJSON *t;
    cJSON_ArrayForEach(t, n->taints) {
        const char *effect = str(t, "effect");
        if (!eq(effect, "NoSchedule") && !eq(effect, "NoExecute"))
            continue;
        if (!rebalance_tolerates(c->tolerations, t)) {
            snprintf(why, len, "untolerated taint %s:%s", str(t, "key") ? str(t, "key") : "", effect);
            return why;
        }
    }
    return NULL;
}

/* ---- nodes ---- */

static double margin_of(const struct rebalance_params *p) { return p->margin > 0 ? p->margin : REBALANCE_MARGIN; }

bool rebalance_is_source(const struct rebalance_params *p, const struct rebalance_node *n)
{
    return n->selected && n->sustained && !isnan(n->pressure) && n->pressure > p->evict_above;
}

static bool cpus_known(const struct rebalance_node *n) { return !isnan(n->cpus) && n->cpus > 0; }

const char *rebalance_destination_check(const struct rebalance_params *p, const struct rebalance_node *n, char *why,
                                        size_t len)
{
    const char *w = NULL;
    if (!n->selected)
        w = "not selected";
    else if (n->tainted)
        w = "tainted";
    else if (n->unschedulable)
        w = "cordoned";
    else if (isnan(n->pressure))
        w = "pressure unknown";
    else if (n->settling)
        w = "settling after a move";
    else if (!cpus_known(n) || isnan(n->demand))
        w = "usage unknown";
    else if (isnan(n->req_cpu))
        w = "requests not read";
    if (w) {
        snprintf(why, len, "%s", w);
        return why;
    }
    if (n->pressure >= p->untaint_below) {
        snprintf(why, len, "pressure not below untaintBelowPercent %.0f%%", p->untaint_below);
        return why;
    }
    return NULL;
}

bool rebalance_move_ok(const struct rebalance_params *p, const struct rebalance_node *s,
                       const struct rebalance_node *t, double d, double *s_after, double *t_after)
{
    double d_s = s->demand, d_t = t->demand;
    if (!cpus_known(s) || !cpus_known(t) || isnan(d_s) || isnan(d_t) || isnan(d) || d <= 0)
        return false;
    double ls = d_s / s->cpus, lt = d_t / t->cpus;
    double ls2 = (d_s - d) / s->cpus, lt2 = (d_t + d) / t->cpus;
    if (ls2 < 0)
        ls2 = 0;
    if (s_after)
        *s_after = ls2;
    if (t_after)
        *t_after = lt2;
    /* The convergence rule: the pair's predicted maximum must fall by the margin. With both
     * new loads below the old maximum, the sorted load vector strictly decreases with every
     * move, so rebalancing a static load ends and never ping-pongs (see rebalance.h). */
    double before = ls > lt ? ls : lt, after = ls2 > lt2 ? ls2 : lt2;
    if (after > before - margin_of(p))
        return false;
    /* ... and the destination must stay below the taint level. */
    return rebalance_predicted_pressure(lt2) < p->taint_above;
}

/* ---- plan ---- */

struct ns_count {
    const char *ns;
    int n;
};

struct work {
    const struct rebalance_params *p;
    const struct rebalance_node *nodes;
    size_t nn;
    const struct rebalance_candidate *cands;
    size_t nc;
    double *demand;      /* per node, updated by planned moves */
    double *pressure;    /* per node, predicted after planned moves */
    double *req_cpu, *req_mem, *req_pods;
    bool *dest_used, *cand_used;
    int *moved_from, *outbound;
    struct ns_count *ns;
    size_t nns;
    int total, vm_moves;
    /* what stood in the way, for the message */
    bool usage_unknown, any_candidate, any_destination, limited, any_fit;
    char limit_why[256];
    char fit_why[256];
};

static int *ns_slot(struct work *w, const char *ns)
{
    for (size_t i = 0; i < w->nns; i++)
        if (eq(w->ns[i].ns, ns))
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
    struct ns_count *v = realloc(w->ns, (w->nns + 1) * sizeof(*v));
    if (!v)
        return -1;
    w->ns = v;
    w->ns[w->nns++] = (struct ns_count){ns, 1};
    return 0;
}

/* A node as it stands after the moves planned so far. */
static struct rebalance_node current(const struct work *w, size_t i)
{
    struct rebalance_node n = w->nodes[i];
    n.demand = w->demand[i];
    n.req_cpu = w->req_cpu[i];
    n.req_memory = w->req_mem[i];
    n.req_pods = w->req_pods[i];
    return n;
}

struct ranked {
    size_t cand;
    double demand, relief, closeness;
};

static int cmp_ranked(const void *a, const void *b, void *ud)
{
    const struct ranked *x = a, *y = b;
    const struct rebalance_candidate *cands = ud;
    if (x->relief != y->relief)
        return x->relief > y->relief ? -1 : 1;
    if (x->closeness != y->closeness)
        return x->closeness < y->closeness ? -1 : 1;
    const struct rebalance_candidate *cx = &cands[x->cand], *cy = &cands[y->cand];
    if (cx->req_memory != cy->req_memory)
        return cx->req_memory < cy->req_memory ? -1 : 1;
    int c = strcmp(cx->ns ? cx->ns : "", cy->ns ? cy->ns : "");
    return c ? c : strcmp(cx->name ? cx->name : "", cy->name ? cy->name : "");
}

/* Insertion sort with a context (qsort_r differs between libcs; the lists are short). */
static void sort_ranked(struct ranked *v, size_t n, const struct rebalance_candidate *cands)
{
    for (size_t i = 1; i < n; i++) {
        struct ranked k = v[i];
        size_t j = i;
        while (j > 0 && cmp_ranked(&v[j - 1], &k, (void *)cands) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = k;
    }
}

/* Whether the limits leave room for candidate c off source s (evictor_room); why says which
 * does not. */
static bool limits_allow(struct work *w, const struct rebalance_candidate *c, size_t s)
{
    const struct rebalance_params *p = w->p;
    const int *nsn = ns_slot(w, c->ns);
    struct evictor_limits l = {
        .max_per_namespace = p->max_per_namespace,
        .max_in_flight = p->max_in_flight,
        .in_flight = p->in_flight,
        .running = p->running,
        .per_cluster = p->kubevirt_per_cluster > 0 ? p->kubevirt_per_cluster : REBALANCE_KUBEVIRT_PER_CLUSTER,
        .per_node = p->kubevirt_per_node > 0 ? p->kubevirt_per_node : REBALANCE_KUBEVIRT_PER_NODE,
    };
    struct evictor_tally t = {c->ns, nsn ? *nsn : 0, w->nodes[s].name, w->outbound[s], w->vm_moves};
    return evictor_room(&l, &t, c->vm, w->limit_why, sizeof(w->limit_why)) == NULL;
}

/* The best destination for demand d of candidate c off source s, or -1. */
static long best_destination(struct work *w, const struct rebalance_candidate *c, size_t s, double d,
                             double *s_after, double *t_after)
{
    long best = -1;
    double best_max = INFINITY, best_t = INFINITY;
    struct rebalance_node src = current(w, s);
    for (size_t t = 0; t < w->nn; t++) {
        /* an evicted pod lands where the scheduler wants (the emptiest node): one per
         * destination; a targeted migration lands where it is sent, predicted on top */
        if (t == s || (w->dest_used[t] && !(w->p->targeted && c->vm)) || w->moved_from[t] > 0)
            continue;
        char why[256];
        struct rebalance_node dst = current(w, t);
        if (rebalance_is_source(w->p, &w->nodes[t]) || rebalance_destination_check(w->p, &dst, why, sizeof(why)))
            continue;
        w->any_destination = true;
        if (rebalance_fit(c, &dst, why, sizeof(why))) {
            snprintf(w->fit_why, sizeof(w->fit_why), "%s on %s: %s", c->name, dst.name, why);
            continue;
        }
        w->any_fit = true;
        double ls2, lt2;
        if (!rebalance_move_ok(w->p, &src, &dst, d, &ls2, &lt2))
            continue;
        double mx = ls2 > lt2 ? ls2 : lt2;
        if (mx < best_max - 1e-12 || (fabs(mx - best_max) <= 1e-12 && lt2 < best_t - 1e-12)) {
            best = (long)t, best_max = mx, best_t = lt2;
            *s_after = ls2, *t_after = lt2;
        }
    }
    return best;
}

/* Plan moves off source s while it stays a source and the limits allow. */
static int plan_source(struct work *w, size_t s, struct rebalance_plan *out)
{
    const struct rebalance_params *p = w->p;
    const struct rebalance_node *src = &w->nodes[s];
    struct ranked *r = calloc(w->nc ? w->nc : 1, sizeof(*r));
    if (!r)
        return -1;
    int rc = 0;
    while (w->moved_from[s] < p->max_per_node && w->total < p->max_total && w->pressure[s] > p->evict_above) {
        size_t nr = 0;
        double excess = w->demand[s] - src->cpus;
        for (size_t i = 0; i < w->nc; i++) {
            const struct rebalance_candidate *c = &w->cands[i];
            if (c->node != s || w->cand_used[i] || c->blocked)
                continue;
            double d = c->demand;
            if (isnan(d)) {
                w->usage_unknown = true;
                continue;
            }
            if (d <= 0)
                continue;
            w->any_candidate = true;
            double relief = excess > 0 ? (d < excess ? d : excess) : d;
            r[nr++] = (struct ranked){i, d, relief, excess > 0 ? fabs(d - excess) : 0};
        }
        sort_ranked(r, nr, w->cands);
        long dest = -1;
        size_t pick = 0;
        double ls2 = 0, lt2 = 0;
        for (size_t k = 0; k < nr && dest < 0; k++) {
            const struct rebalance_candidate *c = &w->cands[r[k].cand];
            if (!limits_allow(w, c, s)) {
                w->limited = true;
                continue;
            }
            dest = best_destination(w, c, s, r[k].demand, &ls2, &lt2);
            pick = k;
        }
        if (dest < 0)
            break;
        const struct rebalance_candidate *c = &w->cands[r[pick].cand];
        struct rebalance_move *v = realloc(out->moves, (out->nmoves + 1) * sizeof(*v));
        if (!v || ns_add(w, c->ns) < 0) {
            if (v)
                out->moves = v;
            rc = -1;
            break;
        }
        out->moves = v;
        size_t t = (size_t)dest;
        double ls = w->demand[s] / src->cpus, lt = w->demand[t] / w->nodes[t].cpus;
        double drop = rebalance_predicted_pressure(ls) - rebalance_predicted_pressure(ls2);
        double after = w->pressure[s] - (drop > 0 ? drop : 0);
        if (after < 0)
            after = 0;
        out->moves[out->nmoves++] = (struct rebalance_move){
            .candidate = r[pick].cand,
            .source = s,
            .destination = t,
            .demand = r[pick].demand,
            .relief = r[pick].relief,
            .src_load = ls,
            .src_load_after = ls2,
            .dst_load = lt,
            .dst_load_after = lt2,
            .src_pressure_after = after,
        };
        w->pressure[s] = after;
        w->demand[s] -= r[pick].demand;
        w->demand[t] += r[pick].demand;
        w->req_cpu[t] += c->req_cpu;
        w->req_mem[t] += c->req_memory;
        w->req_pods[t] += 1;
        w->dest_used[t] = true;
        w->cand_used[r[pick].cand] = true;
        w->moved_from[s]++;
        w->total++;
        if (c->vm) {
            w->vm_moves++;
            w->outbound[s]++;
        }
    }
    free(r);
    return rc;
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
        if (!w->nodes[t].selected || rebalance_is_source(w->p, &w->nodes[t]))
            continue;
        char why[256];
        struct rebalance_node dst = current(w, t);
        const char *r = rebalance_destination_check(w->p, &dst, why, sizeof(why));
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

int rebalance_plan(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nnodes,
                   const struct rebalance_candidate *cands, size_t ncands, struct rebalance_plan *out)
{
    memset(out, 0, sizeof(*out));
    size_t n1 = nnodes ? nnodes : 1;
    struct work w = {.p = p, .nodes = nodes, .nn = nnodes, .cands = cands, .nc = ncands};
    w.demand = calloc(n1, sizeof(double));
    w.pressure = calloc(n1, sizeof(double));
    w.req_cpu = calloc(n1, sizeof(double));
    w.req_mem = calloc(n1, sizeof(double));
    w.req_pods = calloc(n1, sizeof(double));
    w.dest_used = calloc(n1, sizeof(bool));
    w.moved_from = calloc(n1, sizeof(int));
    w.outbound = calloc(n1, sizeof(int));
    w.cand_used = calloc(ncands ? ncands : 1, sizeof(bool));
    size_t *sources = calloc(n1, sizeof(size_t)), *waiting = calloc(n1, sizeof(size_t));
    int rc = -1;
    if (!w.demand || !w.pressure || !w.req_cpu || !w.req_mem || !w.req_pods || !w.dest_used || !w.moved_from ||
        !w.outbound || !w.cand_used || !sources || !waiting)
        goto out;
    size_t nsrc = 0, nwait = 0;
    for (size_t i = 0; i < nnodes; i++) {
        const struct rebalance_node *n = &nodes[i];
        w.demand[i] = cpus_known(n) ? n->demand : NAN;
        w.pressure[i] = n->pressure;
        w.req_cpu[i] = n->req_cpu, w.req_mem[i] = n->req_memory, w.req_pods[i] = n->req_pods;
        w.outbound[i] = n->outbound;
        if (!rebalance_is_source(p, n))
            continue;
        if (n->settling)
            waiting[nwait++] = i;
        else
            sources[nsrc++] = i;
    }
    /* hottest first */
    for (size_t i = 1; i < nsrc; i++) {
        size_t k = sources[i], j = i;
        while (j > 0 && (nodes[sources[j - 1]].pressure < nodes[k].pressure ||
                         (nodes[sources[j - 1]].pressure == nodes[k].pressure &&
                          strcmp(nodes[sources[j - 1]].name, nodes[k].name) > 0))) {
            sources[j] = sources[j - 1];
            j--;
        }
        sources[j] = k;
    }
    rc = 0;
    for (size_t k = 0; k < nsrc && rc == 0; k++) {
        if (isnan(w.demand[sources[k]])) {
            w.usage_unknown = true;
            continue;
        }
        rc = plan_source(&w, sources[k], out);
    }
    if (rc < 0)
        goto out;
    if (out->nmoves) {
        out->reason = REBALANCE_MOVING;
        msg_add(out, "%zu move%s planned off ", out->nmoves, out->nmoves == 1 ? "" : "s");
        list_nodes(out, &w, sources, nsrc);
    } else if (nsrc == 0 && nwait == 0) {
        out->reason = REBALANCE_NO_PRESSURE;
        msg_add(out, "no selected node stayed above evictAbovePercent %.0f%% for the sustain window", p->evict_above);
    } else if (nsrc == 0) {
        out->reason = REBALANCE_SETTLING;
        list_nodes(out, &w, waiting, nwait);
        msg_add(out, " %s above evictAbovePercent %.0f%% but a recent move touched %s: waiting for the pressure "
                     "readings to settle",
                nwait == 1 ? "is" : "are", p->evict_above, nwait == 1 ? "it" : "them");
    } else if (w.usage_unknown && !w.any_candidate) {
        out->reason = REBALANCE_USAGE_UNKNOWN;
        list_nodes(out, &w, sources, nsrc);
        msg_add(out, " %s above evictAbovePercent %.0f%% but there is no CPU usage reading to predict a move with",
                nsrc == 1 ? "is" : "are", p->evict_above);
    } else if (!w.any_candidate) {
        out->reason = REBALANCE_NO_CANDIDATE;
        list_nodes(out, &w, sources, nsrc);
        msg_add(out, " %s above evictAbovePercent %.0f%% but nothing there may move", nsrc == 1 ? "is" : "are",
                p->evict_above);
        explain_blocked(out, &w, sources, nsrc);
    } else if (w.limited && !w.any_destination) {
        out->reason = REBALANCE_LIMITED;
        list_nodes(out, &w, sources, nsrc);
        msg_add(out, " %s above evictAbovePercent %.0f%% but no move may start now: %s", nsrc == 1 ? "is" : "are",
                p->evict_above, w.limit_why);
    } else if (!w.any_destination) {
        out->reason = REBALANCE_NO_DESTINATION;
        list_nodes(out, &w, sources, nsrc);
        msg_add(out, " %s above evictAbovePercent %.0f%% but no node can take a workload, so nothing is evicted:",
                nsrc == 1 ? "is" : "are", p->evict_above);
        explain_destinations(out, &w);
    } else {
        out->reason = REBALANCE_NO_IMPROVEMENT;
        list_nodes(out, &w, sources, nsrc);
        msg_add(out, " %s above evictAbovePercent %.0f%% but no move to a node that can take it lowers the "
                     "predicted maximum load by the margin while keeping that node below taintAbovePercent %.0f%%",
                nsrc == 1 ? "is" : "are", p->evict_above, p->taint_above);
        if (!w.any_fit && w.fit_why[0])
            msg_add(out, " (%s)", w.fit_why);
        if (w.limited)
            msg_add(out, "; also %s", w.limit_why);
        explain_blocked(out, &w, sources, nsrc);
    }
out:
    free(w.demand);
    free(w.pressure);
    free(w.req_cpu);
    free(w.req_mem);
    free(w.req_pods);
    free(w.dest_used);
    free(w.moved_from);
    free(w.outbound);
    free(w.cand_used);
    free(w.ns);
    free(sources);
    free(waiting);
    if (rc < 0)
        rebalance_plan_free(out);
    return rc;
}

void rebalance_plan_free(struct rebalance_plan *plan)
{
    free(plan->moves);
    plan->moves = NULL;
    plan->nmoves = 0;
}

/* ---- the Eviction API's answer ---- */

enum rebalance_evict_outcome rebalance_evict_outcome(long http_status, const char *message)
{
    if (http_status == 0 || http_status == 200 || http_status == 201)
        return REBALANCE_EVICTED;
    if (http_status == 404)
        return REBALANCE_GONE;
    if (http_status == 429) {
        if (message && (strstr(message, "Eviction triggered evacuation") || strstr(message, "Evacuation in progress")))
            return REBALANCE_MIGRATING;
        return REBALANCE_REFUSED;
    }
    return REBALANCE_ERROR;
}
