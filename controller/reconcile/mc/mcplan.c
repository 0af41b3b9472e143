/* mcplan: the MachineConfigs for the selected nodes' pools (see mcplan.h). */
#include "reconcile/mc/mcplan.h"

#include <stdlib.h>
#include <string.h>

#include "api/selector.h"
#include "base/grow.h"
#include "base/jx.h"
#include "base/util.h"
#include "reconcile/mc/machineconfig.h"

static const char *obj_name(const cJSON *pool)
{
    const cJSON *v = jx_at(jx_at(pool, "metadata"), "name");
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Decode pool's spec.<field> into *sel; false when absent or not a valid selector. */
static bool decode_selector(const cJSON *pool, const char *field, struct api_selector *sel)
{
    const cJSON *json = jx_at(jx_at(pool, "spec"), field);
    struct api_errors errs = {0};
    bool ok = cJSON_IsObject(json) && api_selector_decode(json, field, sel, &errs, NULL) == 0;
    api_errors_free(&errs);
    if (!ok)
        api_selector_free(sel);
    return ok;
}

/* The pools' node selectors, decoded once; NULL where one selects nothing. */
struct node_selectors {
    struct api_selector *sel;
    bool *usable;
};

static int node_selectors_init(struct node_selectors *ns, const cJSON *const *pools, size_t n)
{
    ns->sel = calloc(n ? n : 1, sizeof(*ns->sel));
    ns->usable = calloc(n ? n : 1, sizeof(*ns->usable));
    if (!ns->sel || !ns->usable)
        return -1;
    for (size_t i = 0; i < n; i++) {
        ns->usable[i] = decode_selector(pools[i], "nodeSelector", &ns->sel[i]);
        /* an empty selector matches nothing here, as the MachineConfig operator has it */
        ns->usable[i] = ns->usable[i] && (ns->sel[i].nlabels || ns->sel[i].nexprs);
    }
    return 0;
}

static void node_selectors_free(struct node_selectors *ns, size_t n)
{
    for (size_t i = 0; ns->sel && i < n; i++)
        api_selector_free(&ns->sel[i]);
    free(ns->sel);
    free(ns->usable);
}

static const cJSON *node_pool(const cJSON *const *pools, size_t n, const struct node_selectors *ns, const cJSON *node)
{
    const cJSON *labels = jx_at(jx_at(node, "metadata"), "labels");
    const cJSON *master = NULL, *worker = NULL, *custom = NULL;
    size_t ncustom = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ns->usable[i] || !api_selector_matches(&ns->sel[i], labels))
            continue;
        const char *name = obj_name(pools[i]);
        if (base_same(name, "master"))
            master = pools[i];
        else if (base_same(name, "worker"))
            worker = pools[i];
        else if (name) {
            custom = pools[i];
            ncustom++;
        }
    }
    if (ncustom > 1)
        return NULL;
    if (master)
        return master;
    return ncustom == 1 ? custom : worker;
}

const cJSON *mcplan_node_pool(const cJSON *const *pools, size_t n, const cJSON *node)
{
    struct node_selectors ns = {0};
    const cJSON *p = node_selectors_init(&ns, pools, n) == 0 ? node_pool(pools, n, &ns, node) : NULL;
    node_selectors_free(&ns, n);
    return p;
}

bool mcplan_pool_selects_role(const cJSON *pool, const char *role)
{
    struct api_selector sel = {0};
    if (!decode_selector(pool, "machineConfigSelector", &sel))
        return false;
    cJSON *labels = cJSON_CreateObject();
    bool match = labels && cJSON_AddStringToObject(labels, MACHINECONFIG_ROLE_LABEL, role) &&
                 cJSON_AddStringToObject(labels, MACHINECONFIG_MANAGED_BY_LABEL, MACHINECONFIG_MANAGED_BY) &&
                 api_selector_matches(&sel, labels);
    cJSON_Delete(labels);
    api_selector_free(&sel);
    return match;
}

bool mcplan_has_role(const struct mcplan *plan, const char *role)
{
    for (size_t i = 0; i < plan->nroles; i++)
        if (base_same(plan->roles[i], role))
            return true;
    return false;
}

void mcplan_free(struct mcplan *plan)
{
    for (size_t i = 0; i < plan->nroles; i++)
        free(plan->roles[i]);
    free(plan->roles);
    free(plan->pools);
    memset(plan, 0, sizeof(*plan));
}

/* ---- the pools of the selected nodes ---- */

static int by_pool_name(const void *a, const void *b)
{
    return strcmp(((const struct mcplan_pool *)a)->name, ((const struct mcplan_pool *)b)->name);
}

/* Fill out->pools and the orphans from the nodes. */
static int gather_pools(const cJSON *const *pools, size_t npools, const cJSON *const *nodes, size_t nnodes,
                        struct mcplan *out)
{
    struct node_selectors ns = {0};
    out->pools = calloc(npools ? npools : 1, sizeof(*out->pools));
    int rc = out->pools && node_selectors_init(&ns, pools, npools) == 0 ? 0 : -1;
    for (size_t k = 0; rc == 0 && k < nnodes; k++) {
        const cJSON *p = node_pool(pools, npools, &ns, nodes[k]);
        if (!p) {
            if (out->norphans < MCPLAN_MAX_ORPHAN_NAMES)
                out->orphans[out->norphans] = obj_name(nodes[k]); /* a node's name, same place */
            out->norphans++;
            continue;
        }
        size_t i = 0;
        while (i < out->npools && out->pools[i].pool != p)
            i++;
        if (i == out->npools)
            out->pools[out->npools++] = (struct mcplan_pool){p, obj_name(p), NULL, 0};
        out->pools[i].nodes++;
    }
    node_selectors_free(&ns, npools);
    if (rc == 0 && out->npools > 1)
        qsort(out->pools, out->npools, sizeof(*out->pools), by_pool_name);
    return rc;
}

/* ---- roles ---- */

struct candidates {
    const char **v;
    size_t n, cap;
};

static int add_candidate(struct candidates *c, const char *role)
{
    if (!role || !*role)
        return 0;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i], role) == 0)
            return 0;
    if (BASE_GROW(c->v, c->n + 1, c->cap) < 0)
        return -1;
    c->v[c->n++] = role;
    return 0;
}

/* The role values pool's machineConfigSelector names. */
static int add_selector_roles(struct candidates *c, const cJSON *pool)
{
    const cJSON *sel = jx_at(jx_at(pool, "spec"), "machineConfigSelector");
    const cJSON *ml = jx_at(jx_at(sel, "matchLabels"), MACHINECONFIG_ROLE_LABEL);
    if (cJSON_IsString(ml) && add_candidate(c, ml->valuestring) < 0)
        return -1;
    const cJSON *e, *exprs = jx_at(sel, "matchExpressions");
    cJSON_ArrayForEach (e, (cJSON_IsArray(exprs) ? exprs : NULL)) {
        const cJSON *key = jx_at(e, "key"), *op = jx_at(e, "operator"), *v, *values = jx_at(e, "values");
        if (!cJSON_IsString(key) || !base_same(key->valuestring, MACHINECONFIG_ROLE_LABEL) || !cJSON_IsString(op) ||
            !base_same(op->valuestring, "In"))
            continue;
        cJSON_ArrayForEach (v, (cJSON_IsArray(values) ? values : NULL))
            if (cJSON_IsString(v) && add_candidate(c, v->valuestring) < 0)
                return -1;
    }
    return 0;
}

/* Which plan pools role reaches (reach[i] for plan->pools[i]); returns how many pools outside
 * the plan it reaches too. */
static size_t role_reach(const char *role, const cJSON *const *pools, size_t npools, const struct mcplan *plan,
                         bool *reach)
{
    size_t extra = 0;
    memset(reach, 0, plan->npools * sizeof(*reach));
    for (size_t i = 0; i < npools; i++) {
        if (!mcplan_pool_selects_role(pools[i], role))
            continue;
        size_t k = 0;
        while (k < plan->npools && plan->pools[k].pool != pools[i])
            k++;
        if (k == plan->npools)
            extra++;
        else
            reach[k] = true;
    }
    return extra;
}

/* Score of a role reaching only plan pools: pools it covers that are not yet covered, times
 * two, plus one when it is named after one of them. */
static size_t role_score(const char *role, const struct mcplan *plan, const bool *reach)
{
    size_t covers = 0;
    bool named = false;
    for (size_t k = 0; k < plan->npools; k++)
        if (reach[k] && !plan->pools[k].role) {
            covers++;
            named = named || base_same(plan->pools[k].name, role);
        }
    return covers ? 2 * covers + named : 0;
}

/* The best role among c reaching only plan pools (rule in mcplan.h), NULL when none covers
 * anything new; best_reach gets what it reaches. */
static const char *best_role(const struct candidates *c, const cJSON *const *pools, size_t npools,
                             const struct mcplan *plan, bool *reach, bool *best_reach)
{
    const char *best = NULL;
    size_t best_score = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (role_reach(c->v[i], pools, npools, plan, reach) > 0)
            continue;
        size_t s = role_score(c->v[i], plan, reach);
        if (s > best_score || (s && s == best_score && strcmp(c->v[i], best) < 0)) {
            best = c->v[i];
            best_score = s;
            memcpy(best_reach, reach, plan->npools * sizeof(*reach));
        }
    }
    return best;
}

/* Whether some role of c reaches plan pool k and no pool outside the plan. */
static bool contained_role_exists(const struct candidates *c, const cJSON *const *pools, size_t npools,
                                  const struct mcplan *plan, size_t k, bool *reach)
{
    for (size_t i = 0; i < c->n; i++)
        if (role_reach(c->v[i], pools, npools, plan, reach) == 0 && reach[k])
            return true;
    return false;
}

/* Add role to the plan, covering the plan pools reach marks. Returns 0 or -1. */
static int take_role(struct mcplan *out, const char *role, const bool *reach)
{
    char *copy = strdup(role);
    if (!copy)
        return -1;
    out->roles[out->nroles++] = copy;
    for (size_t k = 0; k < out->npools; k++)
        if (reach[k] && !out->pools[k].role)
            out->pools[k].role = copy;
    return 0;
}

/* First the pools only their own role reaches (one the pools inheriting it pick up too, as
 * custom pools do the worker role's), then the greedy cover by roles reaching only plan
 * pools. */
static int cover(const struct candidates *c, const cJSON *const *pools, size_t npools, struct mcplan *out, bool *reach,
                 bool *best_reach)
{
    for (size_t k = 0; k < out->npools; k++) {
        const struct mcplan_pool *p = &out->pools[k];
        if (p->role || contained_role_exists(c, pools, npools, out, k, reach) ||
            !mcplan_pool_selects_role(p->pool, p->name))
            continue;
        role_reach(p->name, pools, npools, out, reach);
        if (take_role(out, p->name, reach) < 0)
            return -1;
    }
    const char *role;
    while ((role = best_role(c, pools, npools, out, reach, best_reach)) != NULL)
        if (take_role(out, role, best_reach) < 0)
            return -1;
    return 0;
}

static int choose_roles(const cJSON *const *pools, size_t npools, struct mcplan *out)
{
    struct candidates c = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < npools; i++)
        rc = add_candidate(&c, obj_name(pools[i])) < 0 || add_selector_roles(&c, pools[i]) < 0 ? -1 : 0;
    bool *reach = calloc(out->npools ? out->npools : 1, sizeof(*reach));
    bool *best_reach = calloc(out->npools ? out->npools : 1, sizeof(*best_reach));
    out->roles = calloc(out->npools ? out->npools : 1, sizeof(*out->roles));
    if (!reach || !best_reach || !out->roles || rc < 0)
        rc = -1;
    else
        rc = cover(&c, pools, npools, out, reach, best_reach);
    free(reach);
    free(best_reach);
    free(c.v);
    return rc;
}

int mcplan_build(const cJSON *const *pools, size_t npools, const cJSON *const *nodes, size_t nnodes, struct mcplan *out)
{
    memset(out, 0, sizeof(*out));
    if (gather_pools(pools, npools, nodes, nnodes, out) < 0 || choose_roles(pools, npools, out) < 0) {
        mcplan_free(out);
        return -1;
    }
    return 0;
}
