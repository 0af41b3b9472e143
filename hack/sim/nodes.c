/* nodes: preparing, sizing and cordoning the simulated nodes (see nodes.h). */
#include "hack/sim/nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "base/grow.h"
#include "base/jx.h"
#include "hack/sim/quantity_format.h"
#include "base/logging.h"

/* What the simulator changed on a node's status: cpu and memory capacity and allocatable
 * before the change (NULL: unchanged). */
struct resource_orig {
    char *capacity, *allocatable;
};

struct prepared {
    char *name;
    struct resource_orig cpu, memory;
};

struct nodes {
    struct sim *s;
    struct prepared *p;
    size_t n, n_cap;
};

struct nodes *nodes_new(struct sim *s)
{
    struct nodes *n = calloc(1, sizeof(*n));
    if (n)
        n->s = s;
    return n;
}

static struct prepared *find(const struct nodes *n, const char *name)
{
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->p[i].name, name) == 0)
            return &n->p[i];
    return NULL;
}

/* Set status.capacity and status.allocatable of resource (cpu or memory) on node. */
static int patch_resource(struct sim *s, const char *node, const char *resource, const char *capacity,
                          const char *allocatable)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(st, "capacity"), resource, capacity);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(st, "allocatable"), resource, allocatable);
    char *path = kube_path("v1", NULL, "nodes", node, "status");
    int rc = sim_merge_patch(s, path, patch, node);
    free(path);
    cJSON_Delete(patch);
    return rc;
}

/* Give node's resource the capacity want (formatted), remembering what it had in orig.
 * Returns 0 (also when it already has it) or -1. */
static int apply_resource(struct sim *s, const cJSON *node, const char *key, const char *resource, const char *want,
                          struct resource_orig *orig)
{
    char path[64];
    snprintf(path, sizeof(path), "status.capacity.%s", resource);
    const char *cap = jx_str(node, path);
    snprintf(path, sizeof(path), "status.allocatable.%s", resource);
    const char *alloc = jx_str(node, path);
    if (jx_eq(cap, want) && jx_eq(alloc, want))
        return 0;
    if (patch_resource(s, key, resource, want, want) < 0)
        return -1;
    orig->capacity = strdup(cap ? cap : want);
    orig->allocatable = strdup(alloc ? alloc : want);
    log_info("node capacity set", "node", key, "resource", resource, "to", want, "was", cap ? cap : "");
    return 0;
}

/* The scenario's sizes on node (nodes.cpus, nodes.memory, nodes.sizes), when it applies them. */
static int apply_capacity(struct sim *s, const cJSON *node, const char *key, struct prepared *p)
{
    double cpus, memory;
    scenario_node_size(s->sc, key, &cpus, &memory);
    char want[32];
    if (cpus > 0) {
        quantity_format_cpu(cpus, want, sizeof(want));
        if (apply_resource(s, node, key, "cpu", want, &p->cpu) < 0)
            return -1;
    }
    if (memory > 0) {
        quantity_format_bytes(memory, want, sizeof(want));
        if (apply_resource(s, node, key, "memory", want, &p->memory) < 0)
            return -1;
    }
    return 0;
}

/* Put back what apply_capacity changed on node, and forget it. */
static void restore(struct sim *s, const char *node, struct prepared *p)
{
    struct resource_orig *o[] = {&p->cpu, &p->memory};
    static const char *const names[] = {"cpu", "memory"};
    for (size_t k = 0; k < 2; k++) {
        if (o[k]->capacity && patch_resource(s, node, names[k], o[k]->capacity, o[k]->allocatable) == 0)
            log_info("node capacity restored", "node", node, "resource", names[k], "to", o[k]->capacity);
        free(o[k]->capacity);
        free(o[k]->allocatable);
        o[k]->capacity = o[k]->allocatable = NULL;
    }
}

static int prepare_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv;
    struct nodes *n = ud;
    struct sim *s = n->s;
    const cJSON *node = obj;
    if (find(n, key))
        return 0;
    if (!jx_eq(jx_label(node, SIM_SCHEDULABLE_LABEL), "true")) {
        cJSON *patch = cJSON_CreateObject();
        cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "labels"),
                                SIM_SCHEDULABLE_LABEL, "true");
        char *path = kube_path("v1", NULL, "nodes", key, NULL);
        int rc = sim_merge_patch(s, path, patch, key);
        free(path);
        cJSON_Delete(patch);
        if (rc < 0)
            return 0;
    }
    struct prepared p = {0};
    if (s->sc->apply_capacity && apply_capacity(s, node, key, &p) < 0) {
        restore(s, key, &p);
        return 0;
    }
    if (BASE_GROW(n->p, n->n + 1, n->n_cap) < 0) {
        restore(s, key, &p);
        return 1;
    }
    p.name = strdup(key);
    n->p[n->n++] = p;
    return 0;
}

void nodes_sync(struct nodes *n)
{
    if (kube_informer_synced(n->s->nodes))
        kube_informer_foreach(n->s->nodes, prepare_cb, n);
}

bool nodes_ready(const struct nodes *n)
{
    size_t have = kube_informer_len(n->s->nodes);
    size_t want = n->s->sc->node_count > 0 ? (size_t)n->s->sc->node_count : 1;
    if (!kube_informer_synced(n->s->nodes) || have < want)
        return false;
    size_t prepared = 0;
    for (size_t i = 0; i < n->n; i++)
        prepared += kube_informer_get(n->s->nodes, NULL, n->p[i].name) != NULL;
    return prepared >= have;
}

void nodes_capacity(const struct nodes *n, const char *node, double *cpus, double *memory)
{
    const cJSON *obj = sim_node(n->s, node);
    double v;
    scenario_node_size(n->s->sc, node, cpus, memory);
    if (*cpus <= 0)
        *cpus = api_quantity_parse(jx_str0(obj, "status.capacity.cpu"), &v, NULL, 0) == 0 ? v : 1;
    if (*memory <= 0)
        *memory = api_quantity_parse(jx_str0(obj, "status.capacity.memory"), &v, NULL, 0) == 0 ? v : 1;
}

int nodes_cordon(struct sim *s, const char *node, bool cordon)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON *spec = cJSON_AddObjectToObject(patch, "spec");
    if (cordon)
        cJSON_AddTrueToObject(spec, "unschedulable");
    else
        cJSON_AddNullToObject(spec, "unschedulable");
    char *path = kube_path("v1", NULL, "nodes", node, NULL);
    int rc = sim_merge_patch(s, path, patch, node);
    free(path);
    cJSON_Delete(patch);
    if (rc == 0)
        log_info(cordon ? "node cordoned" : "node uncordoned", "node", node);
    return rc;
}

void nodes_restore(struct nodes *n)
{
    for (size_t i = 0; n && i < n->n; i++)
        restore(n->s, n->p[i].name, &n->p[i]);
}

void nodes_free(struct nodes *n)
{
    if (!n)
        return;
    nodes_restore(n);
    for (size_t i = 0; i < n->n; i++)
        free(n->p[i].name);
    free(n->p);
    free(n);
}
