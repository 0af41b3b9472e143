/* nodeproj: what the operator keeps of a Node, compact (see nodeproj.h). */
#include "reconcile/status/nodeproj.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "base/util.h"
#include "reconcile/move/resources.h"

/* ---- the projection ---- */

static void copy_text(char *dst, size_t len, const char *src)
{
    if (src && strlen(src) < len)
        snprintf(dst, len, "%s", src);
}

/* A copy of node's annotation key into *out (NULL when absent or empty). Returns 0, or -1 on
 * no memory. */
static int copy_annotation(const cJSON *node, const char *key, char **out)
{
    const char *v = base_nonempty(jx_annotation(node, key));
    *out = v ? strdup(v) : NULL;
    return v && !*out ? -1 : 0;
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
    p->labels = nodelabels_new(jx_get(node, "metadata.labels"), &oom);
    const cJSON *taints = jx_get(node, "spec.taints");
    if (cJSON_IsArray(taints) && taints->child && !(p->taints = cJSON_Duplicate(taints, 1)))
        oom = true;
    if (copy_annotation(node, NODEPROJ_MC_CURRENT, &p->mc_current) < 0 ||
        copy_annotation(node, NODEPROJ_MC_DESIRED, &p->mc_desired) < 0 ||
        copy_annotation(node, NODEPROJ_MC_STATE, &p->mc_state) < 0)
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
    nodelabels_free(p->labels);
    cJSON_Delete(p->taints);
    free(p->mc_current);
    free(p->mc_desired);
    free(p->mc_state);
    free(p);
}

/* Equal numbers, NAN equal to NAN. */
static bool same_number(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* Equal strings, NULL equal to NULL. */
static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
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
           !nodelabels_equal(a->labels, b->labels) || !same_json(a->taints, b->taints) ||
           !same_text(a->mc_current, b->mc_current) || !same_text(a->mc_desired, b->mc_desired) ||
           !same_text(a->mc_state, b->mc_state);
}
