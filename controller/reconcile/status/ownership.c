/* ownership: which nodes a PsiRebalance owns (see ownership.h). */
#include "reconcile/status/ownership.h"

#include <stdlib.h>
#include <string.h>

#include "api/errors.h"
#include "api/psirebalance.h"
#include "base/grow.h"
#include "base/jx.h"

bool ownership_older(const char *created_a, const char *name_a, const char *created_b, const char *name_b)
{
    int c = strcmp(created_a ? created_a : "", created_b ? created_b : "");
    return c < 0 || (c == 0 && strcmp(name_a ? name_a : "", name_b ? name_b : "") < 0);
}

int ownership_add_node(struct ownership_nodes *nodes, const struct nodeproj *node)
{
    if (BASE_GROW(nodes->v, nodes->n + 1, nodes->cap) < 0)
        return -1;
    nodes->v[nodes->n++] = (struct ownership_node){node, node->name, false};
    return 0;
}

/* The node selector of spec: decoded, or the default one when absent. */
static void rival_selector(const cJSON *spec, struct api_selector *out)
{
    const cJSON *sel = jx_at(spec, "nodeSelector");
    struct api_errors errs = {0};
    if (sel) {
        api_selector_decode(sel, "spec.nodeSelector", out, &errs, NULL);
    } else {
        struct api_spec defaults = {0};
        api_spec_defaults(&defaults);
        *out = defaults.node_selector;
        memset(&defaults.node_selector, 0, sizeof(defaults.node_selector));
        api_spec_free(&defaults);
    }
    api_errors_free(&errs);
}

int ownership_add_rival(struct ownership_rivals *rivals, const cJSON *psirebalance, const char *self,
                        const char *self_created)
{
    const cJSON *meta = jx_at(psirebalance, "metadata");
    const char *name = jx_str(meta, "name"), *created = jx_str(meta, "creationTimestamp");
    if (!name || strcmp(name, self) == 0 || !ownership_older(created, name, self_created, self))
        return 0;
    if (BASE_GROW(rivals->v, rivals->n + 1, rivals->cap) < 0)
        return -1;
    struct ownership_rival *rv = &rivals->v[rivals->n];
    memset(rv, 0, sizeof(*rv));
    if (!(rv->name = strdup(name)))
        return -1;
    rival_selector(jx_at(psirebalance, "spec"), &rv->sel);
    rivals->n++;
    return 0;
}

void ownership_rivals_free(struct ownership_rivals *rivals)
{
    for (size_t k = 0; k < rivals->n; k++) {
        api_selector_free(&rivals->v[k].sel);
        free(rivals->v[k].name);
    }
    free(rivals->v);
    rivals->v = NULL;
    rivals->n = rivals->cap = 0;
}

static int cmp_node(const void *a, const void *b)
{
    return strcmp(((const struct ownership_node *)a)->name, ((const struct ownership_node *)b)->name);
}

size_t ownership_mark(struct ownership_nodes *nodes, const struct api_selector *sel,
                      const struct ownership_rivals *rivals, const char **owner)
{
    size_t conflicts = 0;
    *owner = NULL;
    if (nodes->n)
        qsort(nodes->v, nodes->n, sizeof(*nodes->v), cmp_node);
    for (size_t i = 0; i < nodes->n; i++) {
        const struct nodelabels *labels = nodes->v[i].node->labels;
        nodes->v[i].owned = false;
        if (!api_selector_matches_with(sel, nodelabels_lookup, labels))
            continue;
        const char *by = NULL;
        for (size_t k = 0; k < rivals->n && !by; k++)
            if (api_selector_matches_with(&rivals->v[k].sel, nodelabels_lookup, labels))
                by = rivals->v[k].name;
        if (by) {
            conflicts++;
            *owner = by;
        } else {
            nodes->v[i].owned = true;
        }
    }
    return conflicts;
}
