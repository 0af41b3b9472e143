/* nodestatus: bounded status.nodes and the summary counts (see nodestatus.h). */
#include "reconcile/nodestatus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Selection class: lower is listed first. */
static int class_of(enum api_node_state s)
{
    switch (s) {
    case API_NODE_TAINTED:
    case API_NODE_COOLING:
        return 0;
    case API_NODE_PRESSURED:
        return 1;
    case API_NODE_UNKNOWN:
        return 2;
    case API_NODE_NORMAL:
        break;
    }
    return 3;
}

static int cmp_priority(const void *x, const void *y)
{
    const struct taintfsm_node *a = *(const struct taintfsm_node *const *)x;
    const struct taintfsm_node *b = *(const struct taintfsm_node *const *)y;
    int ca = class_of(a->state), cb = class_of(b->state);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    if (ca != 3) {
        bool na = isnan(a->pressure), nb = isnan(b->pressure);
        if (na != nb)
            return na ? 1 : -1;
        if (!na && a->pressure != b->pressure)
            return a->pressure > b->pressure ? -1 : 1;
    }
    return strcmp(a->name, b->name);
}

static int cmp_name(const void *x, const void *y)
{
    const struct taintfsm_node *a = *(const struct taintfsm_node *const *)x;
    const struct taintfsm_node *b = *(const struct taintfsm_node *const *)y;
    return strcmp(a->name, b->name);
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
    size_t size = 1 + 2; /* separating comma and the braces */
    size += 10 + strlen(n->name ? n->name : "");              /* "name":"...", */
    size_t pressure = 0;
    for (int k = 0; k < API_RESOURCES; k++)
        pressure += reading_size(keys[k], n->pressure[k]);
    if (pressure)
        size += 13 + pressure;                                   /* "pressure":{...}, */
    size += reading_size("utilization", n->utilization);
    size += 11 + strlen(api_node_state_name(n->state));          /* "state":"Normal", */
    if (n->since)
        size += 31;                                              /* "since":"2025-01-01T00:00:00Z", */
    size += 13 + digits(n->evictions);                           /* "evictions":0, */
    size += 49 + digits(n->migrations.succeeded) + digits(n->migrations.failed) +
            digits(n->migrations.in_flight);                     /* "migrations":{...} */
    return size;
}

int nodestatus_build(struct api_status *st, const struct taintfsm_result *r, const struct nodestatus_reading *readings,
                     struct nodestatus_info *info)
{
    size_t n = r->nnodes;
    const struct taintfsm_node **pick = malloc((n ? n : 1) * sizeof(*pick));
    const struct api_node_status **old = malloc((st->nnodes ? st->nnodes : 1) * sizeof(*old));
    struct api_node_status *all = calloc(n ? n : 1, sizeof(*all)); /* an entry per node, like r->nodes */
    struct api_node_status *listed_v = calloc(n ? n : 1, sizeof(*listed_v));
    size_t built = 0;
    if (!pick || !old || !all || !listed_v)
        goto oom;
    for (size_t i = 0; i < st->nnodes; i++)
        old[i] = &st->nodes[i];
    qsort(old, st->nnodes, sizeof(*old), cmp_old_node);

    /* Every entry, and what it would cost. */
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++, built++) {
        const struct taintfsm_node *fn = &r->nodes[i];
        struct api_node_status *ns = &all[i];
        ns->name = strdup(fn->name);
        if (!ns->name)
            goto oom;
        for (int k = 0; k < API_RESOURCES; k++)
            ns->pressure[k] = NAN;
        ns->utilization = NAN;
        if (readings) {
            const struct nodestatus_reading *rd = &readings[fn->input];
            for (int k = 0; k < API_RESOURCES; k++)
                ns->pressure[k] = isfinite(rd->pressure[k]) ? rd->pressure[k] : NAN;
            ns->utilization = isfinite(rd->utilization) ? rd->utilization : NAN;
        }
        ns->state = fn->state;
        ns->since = fn->since_ms > 0 ? fn->since_ms / 1000 : 0;
        const struct api_node_status *prev = find_old(old, st->nnodes, fn->name);
        if (prev) {
            ns->evictions = prev->evictions;
            ns->migrations = prev->migrations;
        }
        bytes += nodestatus_entry_size(ns);
        pick[i] = fn;
    }

    /* Choose the listed nodes (pick holds r's nodes; their index in r is their index in all). */
    size_t listed = 0;
    if (n <= NODESTATUS_MAX_NODES && bytes <= NODESTATUS_MAX_BYTES) {
        listed = n;
    } else {
        qsort(pick, n, sizeof(*pick), cmp_priority);
        bytes = 0;
        while (listed < n && listed < NODESTATUS_MAX_NODES) {
            size_t sz = nodestatus_entry_size(&all[pick[listed] - r->nodes]);
            if (bytes + sz > NODESTATUS_MAX_BYTES)
                break;
            bytes += sz;
            listed++;
        }
    }
    qsort(pick, listed, sizeof(*pick), cmp_name);
    for (size_t i = 0; i < listed; i++) {
        size_t k = (size_t)(pick[i] - r->nodes);
        listed_v[i] = all[k];
        all[k].name = NULL; /* moved */
    }

    /* Swap the new entries in. */
    for (size_t i = 0; i < st->nnodes; i++)
        free(st->nodes[i].name);
    free(st->nodes);
    st->nodes = listed_v;
    st->nnodes = listed;
    if (!listed) {
        free(listed_v);
        st->nodes = NULL;
    }
    st->summary.nodes = (int64_t)n;
    st->summary.pressured = (int64_t)r->pressured;
    st->summary.tainted = (int64_t)r->tainted;
    if (info) {
        info->listed = listed;
        info->omitted = n - listed;
    }
    for (size_t i = 0; i < n; i++)
        free(all[i].name);
    free(all);
    free(pick);
    free(old);
    return 0;
oom:
    for (size_t i = 0; all && i < built; i++)
        free(all[i].name);
    free(all);
    free(listed_v);
    free(pick);
    free(old);
    return -1;
}
