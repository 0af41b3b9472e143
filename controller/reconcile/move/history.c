/* history: what rebalancing remembers between cycles (see history.h). */
#include "reconcile/move/history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/util.h"
#include "reconcile/move/budget.h"
#include "reconcile/move/moves.h"

static int64_t clock_now(void *ud)
{
    return ((struct history *)ud)->clock_ms;
}

struct history *history_new(void)
{
    struct history *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->params = (struct cooldown_params){600000, 7200000, 86400000};
    struct cooldown_clock clk = {clock_now, h};
    h->cool = cooldown_new(&h->params, &clk);
    h->dry_cool = cooldown_new(&h->params, &clk);
    h->refusals = cooldown_new(&h->params, &clk);
    if (!h->cool || !h->dry_cool || !h->refusals) {
        history_free(h);
        return NULL;
    }
    return h;
}

static void virt_clear(struct history *h)
{
    for (size_t i = 0; i < h->nvirt; i++) {
        free(h->virt[i].key);
        free(h->virt[i].source);
        free(h->virt[i].destination);
    }
    free(h->virt);
    h->virt = NULL;
    h->nvirt = h->virt_cap = 0;
}

void history_free(struct history *h)
{
    if (!h)
        return;
    api_status_free(&h->status);
    for (size_t i = 0; i < h->nnodes; i++)
        free(h->nodes[i].name);
    free(h->nodes);
    virt_clear(h);
    cooldown_free(h->cool);
    cooldown_free(h->dry_cool);
    cooldown_free(h->refusals);
    free(h);
}

char *history_key(const char *kind, const char *ns, const char *name)
{
    char *k = NULL;
    if (asprintf(&k, "%s %s/%s", kind ? kind : "Pod", ns ? ns : "", name ? name : "") < 0)
        return NULL;
    return k;
}

static char *move_key(const struct api_move *m)
{
    return history_key(m->kind, m->ns, m->name);
}

/* Append {workload, source, destination} (copied; destination may be NULL) to v. */
static int add_recent(struct rebalance_recent *v, size_t *n, const char *workload, const char *source,
                      const char *destination)
{
    char *w = strdup(workload), *s = strdup(source), *d = destination ? strdup(destination) : NULL;
    if (!w || !s || (destination && !d)) {
        free(w);
        free(s);
        free(d);
        return -1;
    }
    v[(*n)++] = (struct rebalance_recent){w, s, d};
    return 0;
}

int history_recent(const struct history *h, int64_t since_s, struct rebalance_recent **out, size_t *n)
{
    const struct api_move_history *mh = &h->status.move_history;
    size_t cap = mh->npairs;
    for (size_t i = 0; i < mh->nworkloads; i++)
        cap += mh->workloads[i].nleft;
    *out = calloc(cap ? cap : 1, sizeof(**out));
    *n = 0;
    if (!*out)
        return -1;
    int rc = 0;
    /* a workload's nodes left: it does not go back (no destination: matches no pair) */
    for (size_t i = 0; rc == 0 && i < mh->nworkloads; i++) {
        const struct api_move_workload *w = &mh->workloads[i];
        for (size_t k = 0; rc == 0 && k < w->nleft; k++)
            if (w->left[k].at >= since_s)
                rc = add_recent(*out, n, w->key, w->left[k].node, NULL);
    }
    /* load sent between nodes: none goes back (an empty workload matches no candidate) */
    for (size_t i = 0; rc == 0 && i < mh->npairs; i++) {
        const char *key = mh->pairs[i].key, *gt = strchr(key, '>');
        if (!gt || mh->pairs[i].at < since_s)
            continue;
        char *src = strndup(key, (size_t)(gt - key));
        rc = src ? add_recent(*out, n, "", src, gt + 1) : -1;
        free(src);
    }
    if (rc < 0) {
        history_recent_free(*out, *n);
        *out = NULL, *n = 0;
    }
    return rc;
}

void history_recent_free(struct rebalance_recent *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free((char *)v[i].workload);
        free((char *)v[i].source);
        free((char *)v[i].destination);
    }
    free(v);
}

struct history_node *history_node(struct history *h, const char *name)
{
    size_t lo = 0, hi = h->nnodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(h->nodes[mid].name, name);
        if (c == 0)
            return &h->nodes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    char *n = strdup(name);
    if (!n || BASE_GROW(h->nodes, h->nnodes + 1, h->nodes_cap) < 0) {
        free(n);
        return NULL;
    }
    struct history_node *v = h->nodes;
    memmove(&v[lo + 1], &v[lo], (h->nnodes - lo) * sizeof(*v));
    memset(&v[lo], 0, sizeof(*v));
    v[lo].name = n;
    h->nnodes++;
    return &v[lo];
}

/* Read back what the status holds: moves (and with them the cooldowns), the hold's and the
 * budgets' memory, and counters. A status written before moveHistory existed seeds the memory
 * from its moves. */
static void load(struct history *h, const struct api_status *st)
{
    h->loaded = true;
    h->status.summary = st->summary;
    if (api_move_history_copy(&h->status.move_history, &st->move_history) < 0)
        memset(&h->status.move_history, 0, sizeof(h->status.move_history));
    bool seed = api_move_history_empty(&st->move_history);
    for (size_t i = 0; i < st->nmoves; i++) {
        struct api_move *m = api_status_add_move(&h->status);
        if (!m || api_move_copy(m, &st->moves[i]) < 0) {
            if (m)
                h->status.nmoves--;
            continue;
        }
        char *key = move_key(m);
        struct cooldown *c = m->phase == API_MOVE_WOULD_MOVE ? h->dry_cool : h->cool;
        if (key && seed && m->phase != API_MOVE_FAILED && m->source_node)
            api_move_history_record(&h->status.move_history, key, m->source_node,
                                    m->target_node ? m->target_node : m->destination_node, m->time);
        if (key) {
            cooldown_record_at(c, key, m->time * 1000);
            for (int64_t f = 0; f < m->failures && f < COOLDOWN_MAX_HISTORY; f++)
                cooldown_record_at(c, key, (m->end_time ? m->end_time : m->time) * 1000);
        }
        free(key);
    }
    for (size_t i = 0; i < st->nnodes; i++) {
        struct history_node *ns = history_node(h, st->nodes[i].name);
        if (!ns)
            continue;
        ns->evictions = st->nodes[i].evictions;
        ns->succeeded = st->nodes[i].migrations.succeeded;
        ns->failed = st->nodes[i].migrations.failed;
    }
}

/* What the memory keeps: the window, and the last hour at least (maxMovesPerHour counts it). */
static int64_t memory_since(int64_t now_ms, int64_t history_ms)
{
    int64_t keep_ms = history_ms > BUDGET_HOUR_S * 1000 ? history_ms : BUDGET_HOUR_S * 1000;
    return (now_ms - keep_ms) / 1000;
}

void history_begin(struct history *h, const struct cooldown_params *cp, int64_t now_ms, const struct api_status *st)
{
    h->clock_ms = now_ms;
    h->params = *cp;
    cooldown_set_params(h->cool, cp);
    cooldown_set_params(h->dry_cool, cp);
    cooldown_set_params(h->refusals, cp);
    if (!h->loaded)
        load(h, st);
    api_move_history_prune(&h->status.move_history, memory_since(now_ms, cp->history_ms));
    cooldown_prune(h->cool);
    cooldown_prune(h->dry_cool);
    cooldown_prune(h->refusals);
}

void history_forget_dry_run(struct history *h)
{
    struct cooldown_clock clk = {clock_now, h};
    struct cooldown *fresh = cooldown_new(&h->params, &clk);
    if (fresh) {
        cooldown_free(h->dry_cool);
        h->dry_cool = fresh;
    }
    virt_clear(h);
    for (size_t i = 0; i < h->nnodes; i++)
        h->nodes[i].settle_until_ms = 0;
}

bool history_under_way(const struct api_move *m, int64_t now_ms)
{
    return m->phase == API_MOVE_MIGRATING ||
           (m->phase == API_MOVE_REQUESTED && now_ms - m->time * 1000 < HISTORY_REQUESTED_IN_FLIGHT_MS);
}

size_t history_running(const struct history *h, int64_t now_ms)
{
    size_t n = 0;
    for (size_t i = 0; i < h->status.nmoves; i++)
        n += history_under_way(&h->status.moves[i], now_ms);
    return n;
}

bool history_move_running(const struct history *h, const char *key, int64_t now_ms)
{
    for (size_t i = 0; i < h->status.nmoves; i++) {
        const struct api_move *m = &h->status.moves[i];
        if (!history_under_way(m, now_ms))
            continue;
        char *k = move_key(m);
        bool same = k && strcmp(k, key) == 0;
        free(k);
        if (same)
            return true;
    }
    return false;
}

bool history_cooling(const struct history *h, const char *key, bool dry)
{
    return cooldown_until(dry ? h->dry_cool : h->cool, key) != 0;
}

bool history_refused(const struct history *h, const char *key)
{
    return cooldown_until(h->refusals, key) != 0;
}

void history_refusal(struct history *h, const char *key)
{
    cooldown_record(h->refusals, key);
}

/* The strings of a new move, copied from e; -1 on no memory. */
static int fill_move(struct api_move *m, const struct history_entry *e)
{
    m->kind = strdup(e->kind ? e->kind : "Pod");
    m->ns = e->ns ? strdup(e->ns) : NULL;
    m->name = strdup(e->workload ? e->workload : e->pod);
    m->pod = strdup(e->pod);
    m->source_node = strdup(e->source);
    m->destination_node = e->destination ? strdup(e->destination) : NULL;
    bool ok =
        m->kind && (m->ns || !e->ns) && m->name && m->pod && m->source_node && (m->destination_node || !e->destination);
    return ok ? 0 : -1;
}

struct api_move *history_record(struct history *h, const struct history_entry *e, int64_t now_ms)
{
    int64_t now_s = now_ms / 1000;
    struct cooldown *cool = e->phase == API_MOVE_WOULD_MOVE ? h->dry_cool : h->cool;
    cooldown_record(cool, e->key);
    if (api_move_history_record(&h->status.move_history, e->key, e->source, e->destination, now_s) < 0)
        return NULL;
    struct api_move *m = api_status_add_move(&h->status);
    if (!m)
        return NULL;
    if (fill_move(m, e) < 0) {
        api_move_free(m);
        h->status.nmoves--;
        return NULL;
    }
    m->time = now_s;
    m->phase = e->phase;
    m->end_time = e->phase == API_MOVE_WOULD_MOVE || e->phase == API_MOVE_EVICTED ? now_s : 0;
    int64_t until = cooldown_until(cool, e->key);
    m->cooldown_until = until ? until / 1000 : 0;
    /* Evictions are what they say: a pod the Eviction API evicted (or, in DryRun, would have).
     * A migration asked for counts as one once it ends (migrationsSucceeded, -Failed). */
    if (e->phase == API_MOVE_EVICTED || e->phase == API_MOVE_WOULD_MOVE) {
        h->status.summary.evictions++;
        struct history_node *ns = history_node(h, e->source);
        if (ns)
            ns->evictions++;
    }
    return m;
}

void history_settle(struct history *h, const char *source, const char *destination, int64_t until_ms)
{
    const char *both[] = {source, destination};
    for (int b = 0; b < 2; b++) {
        struct history_node *ns = history_node(h, both[b]); /* one at a time: a new one moves others */
        if (ns)
            ns->settle_until_ms = until_ms;
    }
}

void history_succeeded(struct history *h, const struct api_move *m)
{
    struct history_node *ns = history_node(h, m->source_node ? m->source_node : "");
    h->status.summary.migrations_succeeded++;
    if (ns)
        ns->succeeded++;
}

void history_failed(struct history *h, struct api_move *m)
{
    struct history_node *ns = history_node(h, m->source_node ? m->source_node : "");
    h->status.summary.migrations_failed++;
    if (ns)
        ns->failed++;
    char *key = move_key(m);
    if (key) {
        cooldown_record(h->cool, key);
        int64_t until = cooldown_until(h->cool, key);
        m->cooldown_until = until ? until / 1000 : m->cooldown_until;
    }
    free(key);
}

int history_add_virtual(struct history *h, const char *key, const char *source, const char *destination, double demand,
                        const double requests[2])
{
    if (BASE_GROW(h->virt, h->nvirt + 1, h->virt_cap) < 0)
        return -1;
    struct history_virtual c = {strdup(key), strdup(source), strdup(destination), demand, requests[0], requests[1]};
    if (!c.key || !c.source || !c.destination) {
        free(c.key);
        free(c.source);
        free(c.destination);
        return -1;
    }
    h->virt[h->nvirt++] = c;
    return 0;
}

void history_prune_virtual(struct history *h)
{
    size_t w = 0;
    for (size_t i = 0; i < h->nvirt; i++) {
        if (cooldown_until(h->dry_cool, h->virt[i].key) == 0) {
            free(h->virt[i].key);
            free(h->virt[i].source);
            free(h->virt[i].destination);
            continue;
        }
        h->virt[w++] = h->virt[i];
    }
    h->nvirt = w;
}

/* Replace next's moves with a copy of the history's. */
static void copy_moves(const struct history *h, struct api_status *next)
{
    for (size_t i = 0; i < next->nmoves; i++)
        api_move_free(&next->moves[i]);
    free(next->moves);
    next->moves = NULL;
    next->nmoves = 0;
    for (size_t i = 0; i < h->status.nmoves; i++) {
        struct api_move *m = api_status_add_move(next);
        if (!m || api_move_copy(m, &h->status.moves[i]) < 0) {
            if (m)
                next->nmoves--;
            break;
        }
    }
}

bool history_judge(struct history *h, const struct api_move *m, int64_t now_ms)
{
    if (!budget_move_unhelpful(m->source_before, m->predicted_source, m->observed_source))
        return false;
    char *key = move_key(m);
    if (key)
        api_move_history_mark_unhelpful(&h->status.move_history, key, now_ms / 1000);
    free(key);
    return true;
}

/* The memory: where moves landed (a live migration's target, once known), pruned to the window
 * and bounded, into next. */
static void fill_memory(struct history *h, int64_t now_ms, int64_t history_ms, struct api_status *next)
{
    struct api_move_history *mh = &h->status.move_history;
    for (size_t i = 0; i < h->status.nmoves; i++) {
        const struct api_move *m = &h->status.moves[i];
        if (m->target_node && m->source_node && m->phase != API_MOVE_FAILED && strcmp(m->source_node, m->target_node))
            api_move_history_sent(mh, m->source_node, m->target_node, m->time);
    }
    api_move_history_prune(mh, memory_since(now_ms, history_ms));
    api_move_history_bound(mh, API_MOVE_HISTORY_MAX_BYTES);
    api_move_history_release(&next->move_history);
    if (api_move_history_copy(&next->move_history, mh) < 0)
        memset(&next->move_history, 0, sizeof(next->move_history));
}

void history_fill_status(struct history *h, int64_t now_ms, int64_t history_ms, struct api_status *next)
{
    moves_prune(&h->status, now_ms / 1000, history_ms / 1000);
    fill_memory(h, now_ms, history_ms, next);
    next->summary.evictions = h->status.summary.evictions;
    next->summary.migrations_succeeded = h->status.summary.migrations_succeeded;
    next->summary.migrations_failed = h->status.summary.migrations_failed;
    next->summary.migrations_in_flight = (int64_t)history_running(h, now_ms);
    for (size_t i = 0; i < next->nnodes; i++) {
        struct api_node_status *n = &next->nodes[i];
        struct history_node *ns = history_node(h, n->name);
        if (!ns)
            continue;
        n->evictions = ns->evictions;
        n->migrations.succeeded = ns->succeeded;
        n->migrations.failed = ns->failed;
        n->migrations.in_flight = 0;
        for (size_t k = 0; k < h->status.nmoves; k++) {
            const struct api_move *m = &h->status.moves[k];
            if (history_under_way(m, now_ms) && base_same(m->source_node, n->name))
                n->migrations.in_flight++;
        }
    }
    copy_moves(h, next);
}
