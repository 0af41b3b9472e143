/* cooldown: per-workload hold after a move, doubling on repeats (see cooldown.h). */
#include "reconcile/move/cooldown.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

struct history {
    char *key;
    int64_t at[COOLDOWN_MAX_HISTORY]; /* ascending */
    int n;
};

struct cooldown {
    struct cooldown_params p;
    struct cooldown_clock clock;
    struct history *v; /* sorted by key */
    size_t n, cap;
};

struct cooldown *cooldown_new(const struct cooldown_params *p, const struct cooldown_clock *clock)
{
    struct cooldown *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->p = *p;
    c->clock = *clock;
    return c;
}

void cooldown_free(struct cooldown *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].key);
    free(c->v);
    free(c);
}

void cooldown_set_params(struct cooldown *c, const struct cooldown_params *p)
{
    c->p = *p;
}

int64_t cooldown_hold_ms(const struct cooldown_params *p, int k)
{
    int64_t hold = p->initial_ms;
    for (int i = 1; i < k && hold < p->max_ms; i++)
        hold *= 2;
    return hold < p->max_ms ? hold : p->max_ms;
}

static int64_t now(const struct cooldown *c)
{
    return c->clock.now_ms(c->clock.ud);
}

/* Index of key, or where it would go (*found false). */
static size_t find(const struct cooldown *c, const char *key, int *found)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(c->v[mid].key, key);
        if (cmp == 0) {
            *found = 1;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

int cooldown_record_at(struct cooldown *c, const char *key, int64_t at_ms)
{
    int found;
    size_t i = find(c, key, &found);
    if (!found) {
        if (BASE_GROW(c->v, c->n + 1, c->cap) < 0)
            return -1;
        char *k = strdup(key);
        if (!k)
            return -1;
        memmove(&c->v[i + 1], &c->v[i], (c->n - i) * sizeof(*c->v));
        memset(&c->v[i], 0, sizeof(c->v[i]));
        c->v[i].key = k;
        c->n++;
    }
    struct history *h = &c->v[i];
    if (h->n == COOLDOWN_MAX_HISTORY) { /* drop the oldest */
        memmove(&h->at[0], &h->at[1], (COOLDOWN_MAX_HISTORY - 1) * sizeof(h->at[0]));
        h->n--;
    }
    int pos = h->n;
    while (pos > 0 && h->at[pos - 1] > at_ms) {
        h->at[pos] = h->at[pos - 1];
        pos--;
    }
    h->at[pos] = at_ms;
    h->n++;
    return 0;
}

int cooldown_record(struct cooldown *c, const char *key)
{
    return cooldown_record_at(c, key, now(c));
}

/* Moves of h inside the window ending at t. */
static int recent(const struct cooldown *c, const struct history *h, int64_t t)
{
    int k = 0;
    for (int i = 0; i < h->n; i++)
        k += h->at[i] > t - c->p.history_ms; /* one "in the future" (the clock stepped back) counts too */
    return k;
}

int cooldown_moves(const struct cooldown *c, const char *key)
{
    int found;
    size_t i = find(c, key, &found);
    return found ? recent(c, &c->v[i], now(c)) : 0;
}

int64_t cooldown_until(const struct cooldown *c, const char *key)
{
    int found;
    size_t i = find(c, key, &found);
    if (!found)
        return 0;
    const struct history *h = &c->v[i];
    int64_t t = now(c);
    int k = recent(c, h, t);
    if (k == 0)
        return 0;
    int64_t until = h->at[h->n - 1] + cooldown_hold_ms(&c->p, k);
    return until > t ? until : 0;
}

void cooldown_prune(struct cooldown *c)
{
    int64_t t = now(c);
    size_t w = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct history *h = &c->v[i];
        int keep = 0;
        for (int j = 0; j < h->n; j++)
            if (h->at[j] > t - c->p.history_ms)
                h->at[keep++] = h->at[j];
        h->n = keep;
        if (keep == 0) {
            free(h->key);
            continue;
        }
        c->v[w++] = *h;
    }
    c->n = w;
}

size_t cooldown_size(const struct cooldown *c)
{
    return c->n;
}
