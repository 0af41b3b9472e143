/* nodeproj: what the operator keeps of a Node, compact (see nodeproj.h). */
#include "reconcile/nodeproj.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "base/util.h"
#include "reconcile/resources.h"

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

size_t nodeproj_shared_strings(void)
{
    return table.n;
}

/* ---- the projection ---- */

static void free_labels(cJSON *labels)
{
    const cJSON *l;
    cJSON_ArrayForEach (l, labels) {
        if (l->string)
            unshare(l->string);
        if (l->valuestring)
            unshare(l->valuestring);
    }
    cJSON_Delete(labels); /* its keys and values are references: not freed here */
}

/* metadata.labels with shared keys and values; NULL when none (or on no memory: *oom set). */
static cJSON *shared_labels(const cJSON *src, bool *oom)
{
    if (!cJSON_IsObject(src) || !src->child)
        return NULL;
    cJSON *out = cJSON_CreateObject();
    const cJSON *l;
    cJSON_ArrayForEach (l, src) {
        if (!out)
            break;
        if (!cJSON_IsString(l) || !l->string)
            continue;
        char *k = share(l->string);
        char *v = k ? share(l->valuestring) : NULL;
        cJSON *item = v ? cJSON_CreateStringReference(v) : NULL;
        if (item)
            cJSON_AddItemToObjectCS(out, k, item);
        if (!item) {
            if (k)
                unshare(k);
            if (v)
                unshare(v);
            free_labels(out);
            out = NULL;
        }
    }
    *oom = out == NULL;
    return out;
}

static void copy_text(char *dst, size_t len, const char *src)
{
    if (src && strlen(src) < len)
        snprintf(dst, len, "%s", src);
}

void *nodeproj_project(const cJSON *node, void *ud)
{
    (void)ud;
    const char *name = jx_nonempty(node, "metadata.name");
    if (!name)
        return NULL;
    size_t len = strlen(name);
    struct nodeproj *p = calloc(1, sizeof(*p) + len + 1);
    if (!p)
        return NULL;
    memcpy(p->name, name, len + 1);
    copy_text(p->rv, sizeof(p->rv), jx_str(node, "metadata.resourceVersion"));
    copy_text(p->created, sizeof(p->created), jx_str(node, "metadata.creationTimestamp"));
    const cJSON *a;
    cJSON_ArrayForEach (a, jx_get(node, "status.addresses"))
        if (!p->ip[0] && base_same(jx_nonempty(a, "type"), "InternalIP"))
            copy_text(p->ip, sizeof(p->ip), jx_nonempty(a, "address"));
    p->unschedulable = cJSON_IsTrue(jx_get(node, "spec.unschedulable"));
    const cJSON *cap = jx_get(node, "status.capacity"), *alloc = jx_get(node, "status.allocatable");
    p->cpus = resources_get(cap, "cpu");
    p->memory = resources_get(cap, "memory");
    p->alloc_cpu = resources_get(alloc, "cpu");
    p->alloc_memory = resources_get(alloc, "memory");
    p->alloc_pods = resources_get(alloc, "pods");
    bool oom = false;
    p->labels = shared_labels(jx_get(node, "metadata.labels"), &oom);
    const cJSON *taints = jx_get(node, "spec.taints");
    if (cJSON_IsArray(taints) && taints->child && !(p->taints = cJSON_Duplicate(taints, 1)))
        oom = true;
    if (oom) {
        nodeproj_free(p);
        return NULL;
    }
    return p;
}

void nodeproj_free(void *v)
{
    struct nodeproj *p = v;
    if (!p)
        return;
    free_labels(p->labels);
    cJSON_Delete(p->taints);
    free(p);
}

/* Equal numbers, NAN equal to NAN. */
static bool same_number(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* Equal JSON, NULL equal to NULL. */
static bool same_json(const cJSON *a, const cJSON *b)
{
    return (!a && !b) || (a && b && cJSON_Compare(a, b, true));
}

bool nodeproj_changed(const struct nodeproj *a, const struct nodeproj *b)
{
    if (!a || !b)
        return a != b;
    return strcmp(a->name, b->name) != 0 || strcmp(a->created, b->created) != 0 || strcmp(a->ip, b->ip) != 0 ||
           a->unschedulable != b->unschedulable || !same_number(a->cpus, b->cpus) ||
           !same_number(a->memory, b->memory) || !same_number(a->alloc_cpu, b->alloc_cpu) ||
           !same_number(a->alloc_memory, b->alloc_memory) || !same_number(a->alloc_pods, b->alloc_pods) ||
           !same_json(a->labels, b->labels) || !same_json(a->taints, b->taints);
}
