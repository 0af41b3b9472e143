/* nodelabels: a node's labels as shared strings (see nodelabels.h). */
#include "reconcile/status/nodelabels.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared strings: one table, reference-counted ---- */

struct shared {
    struct shared *next;
    size_t refs;
    uint32_t hash;
    char s[];
};

static struct {
    struct shared **b;
    size_t nb, n;
} table;

static uint32_t hash_of(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Twice the buckets once there are twice as many strings. Returns 0, or -1 on no memory. */
static int table_grow(void)
{
    size_t nb = table.nb ? table.nb * 2 : 256;
    struct shared **b = calloc(nb, sizeof(*b));
    if (!b)
        return -1;
    for (size_t i = 0; i < table.nb; i++)
        while (table.b[i]) {
            struct shared *e = table.b[i];
            table.b[i] = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    free(table.b);
    table.b = b;
    table.nb = nb;
    return 0;
}

/* The shared copy of s, one more reference to it; NULL on no memory. */
static char *share(const char *s)
{
    if ((table.n >= 2 * table.nb) && table_grow() < 0 && !table.nb)
        return NULL;
    uint32_t h = hash_of(s);
    struct shared **head = &table.b[h & (table.nb - 1)];
    for (struct shared *e = *head; e; e = e->next)
        if (e->hash == h && strcmp(e->s, s) == 0) {
            e->refs++;
            return e->s;
        }
    size_t len = strlen(s);
    struct shared *e = malloc(sizeof(*e) + len + 1);
    if (!e)
        return NULL;
    *e = (struct shared){*head, 1, h};
    memcpy(e->s, s, len + 1);
    *head = e;
    table.n++;
    return e->s;
}

/* Drop a reference to s (a pointer share returned); the last one frees it. */
static void unshare(const char *s)
{
    struct shared **p = &table.b[hash_of(s) & (table.nb - 1)];
    for (; *p; p = &(*p)->next) {
        if ((*p)->s != s)
            continue;
        struct shared *e = *p;
        if (--e->refs == 0) {
            *p = e->next;
            free(e);
            table.n--;
        }
        return;
    }
}

size_t nodelabels_shared_strings(void)
{
    return table.n;
}

/* ---- label sets ---- */

void nodelabels_free(struct nodelabels *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        unshare(l->v[i].key);
        unshare(l->v[i].value);
    }
    free(l);
}

struct nodelabels *nodelabels_new(const cJSON *labels, bool *oom)
{
    *oom = false;
    if (!cJSON_IsObject(labels))
        return NULL;
    size_t n = 0;
    const cJSON *l;
    cJSON_ArrayForEach (l, labels)
        if (cJSON_IsString(l) && l->string)
            n++;
    if (n == 0)
        return NULL;
    struct nodelabels *out = malloc(sizeof(*out) + n * sizeof(out->v[0]));
    if (!out) {
        *oom = true;
        return NULL;
    }
    out->n = 0;
    cJSON_ArrayForEach (l, labels) {
        if (!cJSON_IsString(l) || !l->string)
            continue;
        const char *k = share(l->string);
        const char *v = k ? share(l->valuestring) : NULL;
        if (!v) {
            if (k)
                unshare(k);
            nodelabels_free(out);
            *oom = true;
            return NULL;
        }
        out->v[out->n++] = (struct nodelabel){k, v};
    }
    return out;
}

const char *nodelabels_get(const struct nodelabels *l, const char *key)
{
    for (size_t i = 0; l && key && i < l->n; i++)
        if (strcmp(l->v[i].key, key) == 0)
            return l->v[i].value;
    return NULL;
}

const char *nodelabels_lookup(const void *labels, const char *key)
{
    return nodelabels_get(labels, key);
}

bool nodelabels_equal(const struct nodelabels *a, const struct nodelabels *b)
{
    size_t na = a ? a->n : 0, nb = b ? b->n : 0;
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (a->v[i].key != b->v[i].key || a->v[i].value != b->v[i].value)
            return false;
    return true;
}

cJSON *nodelabels_json(const struct nodelabels *l)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && l && i < l->n; i++) {
        cJSON *v = cJSON_CreateStringReference(l->v[i].value);
        if (!v) {
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObjectCS(o, l->v[i].key, v);
    }
    return o;
}
