/* nodestatus: bounded status.nodes and the summary counts (see nodestatus.h). */
#include "nodestatus.h"

#include <math.h>
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

static size_t entry_bytes(const struct taintfsm_node *n)
{
    return NODESTATUS_ENTRY_BYTES + strlen(n->name);
}

int nodestatus_build(struct api_status *st, const struct taintfsm_result *r, const struct nodestatus_reading *readings,
                     struct nodestatus_info *info)
{
    size_t n = r->nnodes;
    const struct taintfsm_node **pick = malloc((n ? n : 1) * sizeof(*pick));
    const struct api_node_status **old = malloc((st->nnodes ? st->nnodes : 1) * sizeof(*old));
    struct api_status fresh = {0}; /* collects the new node entries */
    if (!pick || !old)
        goto oom;
    for (size_t i = 0; i < st->nnodes; i++)
        old[i] = &st->nodes[i];
    qsort(old, st->nnodes, sizeof(*old), cmp_old_node);

    /* Choose the listed nodes. */
    size_t bytes = 0, listed = 0;
    for (size_t i = 0; i < n; i++) {
        pick[i] = &r->nodes[i];
        bytes += entry_bytes(&r->nodes[i]);
    }
    if (n <= NODESTATUS_MAX_NODES && bytes <= NODESTATUS_MAX_BYTES) {
        listed = n;
    } else {
        qsort(pick, n, sizeof(*pick), cmp_priority);
        bytes = 0;
        while (listed < n && listed < NODESTATUS_MAX_NODES && bytes + entry_bytes(pick[listed]) <= NODESTATUS_MAX_BYTES)
            bytes += entry_bytes(pick[listed++]);
    }
    qsort(pick, listed, sizeof(*pick), cmp_name);

    for (size_t i = 0; i < listed; i++) {
        const struct taintfsm_node *fn = pick[i];
        struct api_node_status *ns = api_status_add_node(&fresh, fn->name);
        if (!ns)
            goto oom;
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
    }

    /* Swap the new entries in. */
    for (size_t i = 0; i < st->nnodes; i++)
        free(st->nodes[i].name);
    free(st->nodes);
    st->nodes = fresh.nodes;
    st->nnodes = fresh.nnodes;
    st->summary.nodes = (int64_t)n;
    st->summary.pressured = (int64_t)r->pressured;
    st->summary.tainted = (int64_t)r->tainted;
    if (info) {
        info->listed = listed;
        info->omitted = n - listed;
    }
    free(pick);
    free(old);
    return 0;
oom:
    api_status_free(&fresh);
    free(pick);
    free(old);
    return -1;
}
