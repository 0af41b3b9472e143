/* nodes: preparing, sizing and cordoning the simulated nodes (see nodes.h). */
#include "hack/sim/nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "base/grow.h"
#include "base/jx.h"
#include "hack/sim/quantity_format.h"
#include "logging.h"

struct prepared {
    char *name;
    char *orig_capacity; /* status.capacity.cpu before we changed it (NULL: unchanged) */
    char *orig_allocatable;
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

static int patch_cpu(struct sim *s, const char *node, const char *capacity, const char *allocatable)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(st, "capacity"), "cpu", capacity);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(st, "allocatable"), "cpu", allocatable);
    char *path = kube_path("v1", NULL, "nodes", node, "status");
    int rc = sim_merge_patch(s, path, patch, node);
    free(path);
    cJSON_Delete(patch);
    return rc;
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
    if (s->sc->apply_capacity) {
        char want[32];
        quantity_format_cpu(s->sc->node_cpus, want, sizeof(want));
        const char *cap = jx_str(node, "status.capacity.cpu");
        const char *alloc = jx_str(node, "status.allocatable.cpu");
        if (!jx_eq(cap, want) || !jx_eq(alloc, want)) {
            if (patch_cpu(s, key, want, want) < 0)
                return 0;
            p.orig_capacity = strdup(cap ? cap : want);
            p.orig_allocatable = strdup(alloc ? alloc : want);
            log_info("node capacity set", "node", key, "cpu", want, "was", cap ? cap : "");
        }
    }
    if (BASE_GROW(n->p, n->n + 1, n->n_cap) < 0)
        return 1;
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
    *cpus = n->s->sc->node_cpus;
    *memory = n->s->sc->node_memory;
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
    for (size_t i = 0; n && i < n->n; i++) {
        struct prepared *p = &n->p[i];
        if (!p->orig_capacity)
            continue;
        if (patch_cpu(n->s, p->name, p->orig_capacity, p->orig_allocatable) == 0)
            log_info("node capacity restored", "node", p->name, "cpu", p->orig_capacity);
        free(p->orig_capacity);
        free(p->orig_allocatable);
        p->orig_capacity = p->orig_allocatable = NULL;
    }
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
