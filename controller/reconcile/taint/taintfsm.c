/* taintfsm: per-node taint hysteresis and the maxTaintedPercent cap (rules in taintfsm.h). */
#include "reconcile/taint/taintfsm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void taintfsm_params_from_spec(const struct api_spec *spec, struct taintfsm_params *p)
{
    memset(p, 0, sizeof(*p));
    p->taint_above = (double)spec->pressure.taint_above_percent;
    p->untaint_below = (double)spec->pressure.untaint_below_percent;
    p->sustain_ms = spec->pressure.sustain_ms;
    p->max_tainted_percent = spec->pressure.max_tainted_percent;
    p->utilization_floor = spec->pressure.has_utilization_floor ? (double)spec->pressure.utilization_floor_percent : 0;
    p->swap_margin = p->taint_above - p->untaint_below;
    if (p->swap_margin < 1)
        p->swap_margin = 1;
}

size_t taintfsm_cap(size_t n, int64_t max_tainted_percent)
{
    if (n == 0 || max_tainted_percent <= 0)
        return 0;
    size_t pct = max_tainted_percent > 100 ? 100 : (size_t)max_tainted_percent;
    size_t cap = n / 100 * pct + n % 100 * pct / 100; /* floor(n * pct / 100) without overflow */
    return cap > n - 1 ? n - 1 : cap;
}

const char *taintfsm_op_name(enum taintfsm_op op)
{
    return op == TAINTFSM_ADD ? "add" : "remove";
}

const char *taintfsm_why_name(enum taintfsm_why why)
{
    switch (why) {
    case TAINTFSM_WHY_PRESSURE: return "Pressure";
    case TAINTFSM_WHY_COOLED: return "Cooled";
    case TAINTFSM_WHY_CAP: return "Cap";
    case TAINTFSM_WHY_UNSELECTED: return "Unselected";
    case TAINTFSM_WHY_RESTORE: return "Restore";
    }
    return "Unknown";
}

void taintfsm_result_free(struct taintfsm_result *r)
{
    if (!r)
        return;
    free(r->nodes);
    free(r->actions);
    memset(r, 0, sizeof(*r));
}

double taintfsm_effective_pressure(const struct taintfsm_params *p, double pressure, double utilization)
{
    if (!isfinite(pressure))
        return NAN;
    if (p->utilization_floor > 0) {
        if (!isfinite(utilization))
            return NAN;
        if (utilization <= p->utilization_floor)
            return 0;
    }
    return pressure < 0 ? 0 : pressure;
}

static bool wants_taint(enum api_node_state s)
{
    return s == API_NODE_TAINTED || s == API_NODE_COOLING;
}

/* What a selected node is for the cap once its own transitions are done. */
enum role {
    ROLE_NONE,     /* neither holds nor wants the taint */
    ROLE_HOLDER,   /* Tainted or Cooling: holds the taint, pressure known */
    ROLE_HELD,     /* Unknown, taint held as found on the node */
    ROLE_NEWCOMER, /* Pressured, sustain passed: wants the taint */
};

/* Per-node working state during a step. */
struct work {
    enum role role;
    enum taintfsm_why add_why; /* why the taint would be added (PRESSURE or RESTORE) */
    bool cooled;               /* left the taint by cooling this cycle */
    bool lost_place;           /* lost the taint to the cap */
};

/* Advance one selected node through the state machine (no cap yet). */
static void step_node(const struct taintfsm_params *p, const struct taintfsm_input *in, int64_t now,
                      struct taintfsm_node *o, struct work *w)
{
    double eff = taintfsm_effective_pressure(p, in->pressure, in->utilization);
    enum api_node_state st;
    int64_t since;
    bool resumed = !in->has_prev || in->state == API_NODE_UNKNOWN;
    if (resumed) {
        st = in->tainted ? API_NODE_TAINTED : API_NODE_NORMAL;
        since = now;
    } else {
        st = in->state;
        since = in->since_ms;
    }
    o->name = in->name;
    o->pressure = eff;
    if (isnan(eff)) {
        o->state = API_NODE_UNKNOWN;
        o->since_ms = in->has_prev && in->state == API_NODE_UNKNOWN ? in->since_ms : now;
        o->tainted = in->tainted;
        w->role = in->tainted ? ROLE_HELD : ROLE_NONE;
        return;
    }
    bool above = eff > p->taint_above, below = eff < p->untaint_below;
    bool newcomer = false;
    /* At most two transitions a cycle (Normal -> Pressured -> ready, Tainted -> Cooling -> Normal),
     * the second only when sustain is 0. */
    for (int i = 0; i < 2; i++) {
        enum api_node_state before = st;
        switch (st) {
        case API_NODE_NORMAL:
            if (above) {
                st = API_NODE_PRESSURED;
                since = now;
            }
            break;
        case API_NODE_PRESSURED:
            if (!above) {
                st = API_NODE_NORMAL;
                since = now;
            } else if (now - since >= p->sustain_ms) {
                newcomer = true;
            }
            break;
        case API_NODE_TAINTED:
            if (below) {
                st = API_NODE_COOLING;
                since = now;
            }
            break;
        case API_NODE_COOLING:
            if (!below) {
                st = API_NODE_TAINTED;
                since = now;
            } else if (now - since >= p->sustain_ms) {
                st = API_NODE_NORMAL;
                since = now;
                w->cooled = true;
            }
            break;
        case API_NODE_UNKNOWN: break;
        }
        if (st == before)
            break;
    }
    o->state = st;
    o->since_ms = since;
    o->tainted = wants_taint(st);
    if (o->tainted) {
        w->role = ROLE_HOLDER;
        w->add_why = TAINTFSM_WHY_RESTORE;
    } else if (newcomer) {
        w->role = ROLE_NEWCOMER;
        w->add_why = TAINTFSM_WHY_PRESSURE;
    } else {
        w->role = ROLE_NONE;
    }
}

struct rank {
    double pressure;
    const char *name;
    size_t node; /* index into result nodes */
};

/* Hottest first; ties by name. */
static int cmp_hot_first(const void *x, const void *y)
{
    const struct rank *a = x, *b = y;
    if (a->pressure != b->pressure)
        return a->pressure > b->pressure ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Coolest first; ties by name (reverse), so the order is the exact reverse of hottest-first. */
static int cmp_cool_first(const void *x, const void *y)
{
    return cmp_hot_first(y, x);
}

/* Take the taint off node k because of the cap. */
static void lose_place(const struct taintfsm_params *p, struct taintfsm_node *o, struct work *w, int64_t now)
{
    o->tainted = false;
    w->lost_place = true;
    w->role = ROLE_NONE;
    if (o->state == API_NODE_UNKNOWN)
        return;
    o->state = o->pressure > p->taint_above ? API_NODE_PRESSURED : API_NODE_NORMAL;
    o->since_ms = now;
}

static void gain_place(struct taintfsm_node *o, struct work *w, int64_t now)
{
    o->state = API_NODE_TAINTED;
    o->since_ms = now;
    o->tainted = true;
    w->role = ROLE_HOLDER;
}

/* Apply the cap over the stepped nodes (see the header for the order). */
static int apply_cap(const struct taintfsm_params *p, struct taintfsm_result *r, struct work *w, int64_t now)
{
    size_t n = r->nnodes, nh = 0, nu = 0, nn = 0;
    struct rank *holders = malloc((n ? n : 1) * sizeof(*holders));
    struct rank *held = malloc((n ? n : 1) * sizeof(*held));
    struct rank *newcomers = malloc((n ? n : 1) * sizeof(*newcomers));
    if (!holders || !held || !newcomers) {
        free(holders);
        free(held);
        free(newcomers);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        struct rank rk = {r->nodes[k].pressure, r->nodes[k].name, k};
        if (w[k].role == ROLE_HOLDER)
            holders[nh++] = rk;
        else if (w[k].role == ROLE_HELD)
            held[nu++] = rk;
        else if (w[k].role == ROLE_NEWCOMER)
            newcomers[nn++] = rk;
    }
    qsort(holders, nh, sizeof(*holders), cmp_cool_first);
    qsort(newcomers, nn, sizeof(*newcomers), cmp_hot_first);
    size_t cap = r->cap, first = 0; /* holders[first..nh) still hold the taint */
    /* 1. The cap shrank below the incumbents: coolest known holders go first, Unknown last. */
    while (nh - first + nu > cap && first < nh) {
        size_t k = holders[first++].node;
        lose_place(p, &r->nodes[k], &w[k], now);
    }
    while (nu > cap) {
        size_t k = held[--nu].node;
        lose_place(p, &r->nodes[k], &w[k], now);
    }
    /* 2. Free places to the hottest newcomers. */
    size_t used = nh - first + nu, next = 0;
    while (next < nn && used < cap) {
        size_t k = newcomers[next++].node;
        gain_place(&r->nodes[k], &w[k], now);
        used++;
    }
    /* 3. Remaining newcomers (hottest first) against the coolest holders, with the margin. */
    while (next < nn && first < nh) {
        const struct rank *nc = &newcomers[next], *inc = &holders[first];
        if (!(nc->pressure >= inc->pressure + p->swap_margin))
            break;
        lose_place(p, &r->nodes[inc->node], &w[inc->node], now);
        gain_place(&r->nodes[nc->node], &w[nc->node], now);
        first++;
        next++;
    }
    free(holders);
    free(held);
    free(newcomers);
    return 0;
}

static void add_action(struct taintfsm_result *r, const struct taintfsm_input *in, size_t input, enum taintfsm_op op,
                       enum taintfsm_why why)
{
    struct taintfsm_action *a = &r->actions[r->nactions++];
    a->node = in[input].name;
    a->input = input;
    a->op = op;
    a->why = why;
}

int taintfsm_step(const struct taintfsm_params *p, const struct taintfsm_input *in, size_t n, int64_t now_ms,
                  struct taintfsm_result *out)
{
    memset(out, 0, sizeof(*out));
    size_t nsel = 0;
    for (size_t i = 0; i < n; i++)
        nsel += in[i].selected;
    out->nodes = calloc(nsel ? nsel : 1, sizeof(*out->nodes));
    out->actions = calloc(n ? n : 1, sizeof(*out->actions)); /* at most one action per node */
    struct work *w = calloc(nsel ? nsel : 1, sizeof(*w));
    if (!out->nodes || !out->actions || !w)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        if (!in[i].selected)
            continue;
        struct taintfsm_node *o = &out->nodes[out->nnodes];
        step_node(p, &in[i], now_ms, o, &w[out->nnodes]);
        o->input = i;
        out->nnodes++;
    }
    out->cap = taintfsm_cap(nsel, p->max_tainted_percent);
    if (apply_cap(p, out, w, now_ms) < 0)
        goto oom;
    for (size_t k = 0; k < out->nnodes; k++) {
        struct taintfsm_node *o = &out->nodes[k];
        const struct taintfsm_input *i = &in[o->input];
        o->tainted_since_ms = !o->tainted ? 0 : i->tainted && i->tainted_since_ms > 0 ? i->tainted_since_ms : now_ms;
    }
    /* Removals first, so a caller applying them in order never exceeds the cap midway. */
    for (size_t i = 0; i < n; i++)
        if (!in[i].selected && in[i].tainted)
            add_action(out, in, i, TAINTFSM_REMOVE, TAINTFSM_WHY_UNSELECTED);
    for (size_t k = 0; k < out->nnodes; k++) {
        const struct taintfsm_node *o = &out->nodes[k];
        if (in[o->input].tainted && !o->tainted)
            add_action(out, in, o->input, TAINTFSM_REMOVE,
                       w[k].lost_place ? TAINTFSM_WHY_CAP
                       : w[k].cooled   ? TAINTFSM_WHY_COOLED
                                       : TAINTFSM_WHY_RESTORE);
    }
    for (size_t k = 0; k < out->nnodes; k++) {
        const struct taintfsm_node *o = &out->nodes[k];
        if (!in[o->input].tainted && o->tainted)
            add_action(out, in, o->input, TAINTFSM_ADD, w[k].add_why);
        out->tainted += o->tainted;
        out->pressured += !isnan(o->pressure) && o->pressure > p->taint_above;
    }
    free(w);
    return 0;
oom:
    free(w);
    taintfsm_result_free(out);
    return -1;
}
