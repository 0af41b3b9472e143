/* nodestatus: bounded status.nodes and the summary counts (see nodestatus.h). */
#include "reconcile/status/nodestatus.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Selection class: lower is listed first; CLASS_NONE is not listed. */
enum { CLASS_TAINTED, CLASS_PRESSURED, CLASS_UNKNOWN, CLASS_MOVED, CLASS_HOT, CLASS_NONE };

static int class_of(enum api_node_state s)
{
    switch (s) {
    case API_NODE_TAINTED:
    case API_NODE_COOLING: return CLASS_TAINTED;
    case API_NODE_PRESSURED: return CLASS_PRESSURED;
    case API_NODE_UNKNOWN: return CLASS_UNKNOWN;
    case API_NODE_NORMAL: break;
    }
    return CLASS_NONE;
}

/* A node of r with its class. */
struct cand {
    const struct taintfsm_node *fn;
    int cls;
};

/* Hottest first (no reading last), ties by name. */
static int cmp_hot(const struct taintfsm_node *a, const struct taintfsm_node *b)
{
    bool na = isnan(a->pressure), nb = isnan(b->pressure);
    if (na != nb)
        return na ? 1 : -1;
    if (!na && a->pressure != b->pressure)
        return a->pressure > b->pressure ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int cmp_cand_hot(const void *x, const void *y)
{
    return cmp_hot(((const struct cand *)x)->fn, ((const struct cand *)y)->fn);
}

static int cmp_priority(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    if (a->cls == CLASS_MOVED)
        return strcmp(a->fn->name, b->fn->name);
    return cmp_hot(a->fn, b->fn);
}

static int cmp_name(const void *x, const void *y)
{
    return strcmp(((const struct cand *)x)->fn->name, ((const struct cand *)y)->fn->name);
}

static int cmp_old_node(const void *x, const void *y)
{
    const struct api_node_status *a = *(const struct api_node_status *const *)x;
    const struct api_node_status *b = *(const struct api_node_status *const *)y;
    return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* The old entry named name among sorted[0..n), or NULL. */
static const struct api_node_status *find_old(const struct api_node_status *const *sorted, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sorted[mid]->name ? sorted[mid]->name : "", name);
        if (c == 0)
            return sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static size_t digits(int64_t v)
{
    char buf[32];
    return (size_t)snprintf(buf, sizeof(buf), "%lld", (long long)v);
}

static size_t reading_size(const char *key, double v)
{
    char buf[64];
    if (isnan(v))
        return 0;
    /* "key":"12.3", */
    return strlen(key) + 6 + (size_t)snprintf(buf, sizeof(buf), "%.1f", v < 0 ? 0.0 : v);
}

size_t nodestatus_entry_size(const struct api_node_status *n)
{
    static const char *const keys[API_RESOURCES] = {"cpu", "memory", "io"};
    size_t size = 1 + 2;                         /* separating comma and the braces */
    size += 10 + strlen(n->name ? n->name : ""); /* "name":"...", */
    size_t pressure = 0;
    for (int k = 0; k < API_RESOURCES; k++)
        pressure += reading_size(keys[k], n->pressure[k]);
    if (pressure)
        size += 13 + pressure; /* "pressure":{...}, */
    size += reading_size("utilization", n->utilization);
    if (n->demand_source[0])
        size += 18 + strlen(n->demand_source) + 18; /* "demandSource":"...", "saturated":false, */
    if (n->nworkloads)
        size += 14; /* "workloads":[], */
    for (size_t i = 0; i < n->nworkloads; i++) {
        const struct api_node_workload *w = &n->workloads[i];
        /* {"kind":"..","namespace":"..","name":"..","role":"Suffers","cpu":"100.0","memory":"100.0",
         * "usageCores":"..","demandCores":"..","demandFrom":"NodePressure"}, with up to 9 digits of cores */
        size += 170 + strlen(w->kind) + strlen(w->ns) + strlen(w->name);
    }
    size += 11 + strlen(api_node_state_name(n->state)); /* "state":"Normal", */
    if (n->since)
        size += 31; /* "since":"2025-01-01T00:00:00Z", */
    if (n->tainted_since)
        size += 38;                    /* "taintedSince":"2025-01-01T00:00:00Z", */
    size += 13 + digits(n->evictions); /* "evictions":0, */
    size += 49 + digits(n->migrations.succeeded) + digits(n->migrations.failed) +
            digits(n->migrations.in_flight); /* "migrations":{...} */
    return size;
}

/* Whether a move of st names node as its source, destination or target. */
static bool moved(const struct api_status *st, const char *node)
{
    for (size_t i = 0; i < st->nmoves; i++) {
        const struct api_move *m = &st->moves[i];
        if ((m->source_node && strcmp(m->source_node, node) == 0) ||
            (m->destination_node && strcmp(m->destination_node, node) == 0) ||
            (m->target_node && strcmp(m->target_node, node) == 0))
            return true;
    }
    return false;
}

/* The class of every node of r into c (old: st's entries sorted by name). */
static void classify(const struct api_status *st, const struct taintfsm_result *r,
                     const struct api_node_status *const *old, struct cand *c)
{
    size_t nnormal = 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        c[i] = (struct cand){&r->nodes[i], class_of(r->nodes[i].state)};
        if (c[i].cls == CLASS_NONE && moved(st, r->nodes[i].name))
            c[i].cls = CLASS_MOVED;
        nnormal += c[i].cls == CLASS_NONE;
    }
    /* The Normal nodes, hottest first, at the end of c for a moment. */
    struct cand *normal = c + r->nnodes - nnormal;
    size_t k = 0;
    for (size_t i = 0; i < r->nnodes; i++)
        if (c[i].cls != CLASS_NONE)
            c[k++] = c[i];
    for (size_t i = 0, j = 0; i < r->nnodes && j < nnormal; i++)
        if (class_of(r->nodes[i].state) == CLASS_NONE && !moved(st, r->nodes[i].name))
            normal[j++] = (struct cand){&r->nodes[i], CLASS_NONE};
    qsort(normal, nnormal, sizeof(*normal), cmp_cand_hot);
    for (size_t i = 0; i < nnormal && i < 2 * NODESTATUS_HOTTEST; i++)
        if (i < NODESTATUS_HOTTEST || find_old(old, st->nnodes, normal[i].fn->name))
            normal[i].cls = CLASS_HOT;
}

/* Fill *ns for fn, its name borrowed. */
static void fill_entry(struct api_node_status *ns, const struct taintfsm_node *fn,
                       const struct nodestatus_reading *readings, const struct api_node_status *prev)
{
    *ns = (struct api_node_status){.name = (char *)(uintptr_t)fn->name, .utilization = NAN};
    for (int k = 0; k < API_RESOURCES; k++)
        ns->pressure[k] = NAN;
    if (readings) {
        const struct nodestatus_reading *rd = &readings[fn->input];
        for (int k = 0; k < API_RESOURCES; k++)
            ns->pressure[k] = isfinite(rd->pressure[k]) ? rd->pressure[k] : NAN;
        ns->utilization = isfinite(rd->utilization) ? rd->utilization : NAN;
    }
    ns->state = fn->state;
    ns->since = fn->since_ms > 0 ? fn->since_ms / 1000 : 0;
    ns->tainted_since = fn->tainted_since_ms > 0 ? fn->tainted_since_ms / 1000 : 0;
    if (prev) {
        ns->evictions = prev->evictions;
        ns->migrations = prev->migrations;
        memcpy(ns->demand_source, prev->demand_source, sizeof(ns->demand_source));
        ns->saturated = prev->saturated;
        memcpy(ns->workloads, prev->workloads, sizeof(ns->workloads));
        ns->nworkloads = prev->nworkloads;
    }
}

static void count_states(struct api_summary *s, const struct taintfsm_result *r)
{
    s->nodes = (int64_t)r->nnodes;
    s->pressured = (int64_t)r->pressured;
    s->tainted = (int64_t)r->tainted;
    memset(&s->node_states, 0, sizeof(s->node_states));
    for (size_t i = 0; i < r->nnodes; i++)
        s->node_states[r->nodes[i].state]++;
}

int nodestatus_build(struct api_status *st, const struct taintfsm_result *r, const struct nodestatus_reading *readings,
                     struct nodestatus_info *info)
{
    size_t n = r->nnodes;
    struct cand *c = malloc((n ? n : 1) * sizeof(*c));
    const struct api_node_status **old = malloc((st->nnodes ? st->nnodes : 1) * sizeof(*old));
    struct api_node_status *listed_v = NULL;
    if (!c || !old)
        goto oom;
    for (size_t i = 0; i < st->nnodes; i++)
        old[i] = &st->nodes[i];
    qsort(old, st->nnodes, sizeof(*old), cmp_old_node);
    classify(st, r, old, c);
    qsort(c, n, sizeof(*c), cmp_priority);

    /* Take them in order while both bounds hold. */
    size_t listed = 0, wanted = 0, bytes = 1; /* the brackets, one comma fewer than entries */
    for (size_t i = 0; i < n && c[i].cls != CLASS_NONE; i++) {
        wanted += c[i].cls != CLASS_HOT;
        if (listed == i && listed < NODESTATUS_MAX_NODES) {
            struct api_node_status e;
            fill_entry(&e, c[i].fn, readings, find_old(old, st->nnodes, c[i].fn->name));
            size_t sz = nodestatus_entry_size(&e);
            if (bytes + sz <= NODESTATUS_MAX_BYTES) {
                bytes += sz;
                listed++;
            }
        }
    }
    qsort(c, listed, sizeof(*c), cmp_name);
    listed_v = calloc(listed ? listed : 1, sizeof(*listed_v));
    if (!listed_v)
        goto oom;
    size_t made = 0;
    for (; made < listed; made++) {
        fill_entry(&listed_v[made], c[made].fn, readings, find_old(old, st->nnodes, c[made].fn->name));
        if (!(listed_v[made].name = strdup(c[made].fn->name)))
            goto oom_made;
    }

    /* Swap the new entries in. */
    for (size_t i = 0; i < st->nnodes; i++)
        free(st->nodes[i].name);
    free(st->nodes);
    st->nodes = listed ? listed_v : NULL;
    st->nnodes = listed;
    if (!listed)
        free(listed_v);
    count_states(&st->summary, r);
    if (info) {
        info->listed = listed;
        info->omitted = wanted > listed ? wanted - listed : 0;
    }
    free(c);
    free(old);
    return 0;
oom_made:
    for (size_t i = 0; i < made; i++)
        free(listed_v[i].name);
oom:
    free(listed_v);
    free(c);
    free(old);
    return -1;
}
