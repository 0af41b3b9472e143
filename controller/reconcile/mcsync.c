/* mcsync: the MachineConfigs of one PsiRebalance on the API (see mcsync.h). */
#include "reconcile/mcsync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/errors.h"
#include "api/reasons.h"
#include "base/grow.h"
#include "base/jx.h"
#include "base/util.h"
#include "base/logging.h"
#include "reconcile/status/conditions.h"
#include "reconcile/mc/machineconfig.h"
#include "reconcile/mc/mcplan.h"
#include "reconcile/notify.h"
#include "reconcile/policyprobe.h"

#define MC_GV MACHINECONFIG_API_VERSION

/* Most status.machineConfigs entries (the CRD's maxItems). */
#define MCSYNC_MAX_POOLS 16

static void event(const struct mcsync *m, const struct mcsync_in *in, const char *reason, const char *action,
                  const char *note)
{
    const cJSON *meta = jx_at(in->obj, "metadata");
    struct kube_event_ref ref = {API_API_VERSION, API_KIND, NULL, jx_str(meta, "name"), jx_str(meta, "uid")};
    notify_event(m->events, &ref, "Normal", reason, action, note, in->now_ms);
}

/* ---- ensure ---- */

/* Objects from an informer, borrowed. */
struct objs {
    const cJSON **v;
    size_t n, cap;
};

static int collect_obj(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct objs *c = ud;
    if (BASE_GROW(c->v, c->n + 1, c->cap) < 0)
        return -1;
    c->v[c->n++] = obj;
    return 0;
}

/* A node (nodeproj.h) as mcplan reads one: metadata.name and metadata.labels, referring to the
 * kept record (cJSON_Delete frees the view, not the record); NULL on no memory. */
static cJSON *node_view(const struct nodeproj *p)
{
    cJSON *v = cJSON_CreateObject();
    cJSON *meta = v ? cJSON_AddObjectToObject(v, "metadata") : NULL;
    bool ok = meta && cJSON_AddItemToObject(meta, "name", cJSON_CreateStringReference(p->name));
    if (ok && p->labels)
        ok = cJSON_AddItemToObject(meta, "labels", nodelabels_json(p->labels));
    if (!ok) {
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

/* Views of nodes (node_view), only those sel matches (NULL: all). */
struct node_views {
    cJSON **v;
    size_t n, cap;
    const struct api_selector *sel;
    bool failed;
};

static void node_view_add(struct node_views *c, const struct nodeproj *p)
{
    if (c->sel && !api_selector_matches_with(c->sel, nodelabels_lookup, p->labels))
        return;
    if (BASE_GROW(c->v, c->n + 1, c->cap) < 0 || !(c->v[c->n] = node_view(p)))
        c->failed = true;
    else
        c->n++;
}

static int collect_node_view(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    if (obj)
        node_view_add(ud, obj);
    return 0;
}

static void node_views_free(struct node_views *c)
{
    for (size_t i = 0; i < c->n; i++)
        cJSON_Delete(c->v[i]);
    free(c->v);
}

/* Create or update the MachineConfig name for want. Returns 0, 1 when a MachineConfig of that
 * name is someone else's (left alone), or -1 when a write failed. */
static int ensure_one(const struct mcsync *m, const struct mcsync_in *in, const struct machineconfig_want *want,
                      const char *name)
{
    const cJSON *existing = kube_informer_get(m->machineconfigs, NULL, name);
    struct kube_err err;
    kube_err_clear(&err);
    cJSON *mc = NULL, *reply = NULL;
    char *path = NULL;
    bool create = !existing;
    if (create) {
        mc = machineconfig_build(want);
        path = kube_path(MC_GV, NULL, "machineconfigs", NULL, NULL);
    } else {
        enum machineconfig_diff d = machineconfig_diff(existing, want);
        if (d == MACHINECONFIG_FOREIGN) {
            log_warn("machineconfig exists and is not ours: left alone", "machineconfig", name, "psirebalance",
                     want->owner);
            return 1;
        }
        if (d != MACHINECONFIG_NEEDS_UPDATE)
            return 0;
        mc = machineconfig_apply(existing, want);
        path = kube_path(MC_GV, NULL, "machineconfigs", name, NULL);
    }
    if (!mc || !path)
        kube_err_set(&err, 0, "Encode", "MachineConfig %s: out of memory", name);
    else if (create)
        reply = kube_rest_create(m->client, path, mc, NULL, &err);
    else
        reply = kube_rest_update(m->client, path, mc, NULL, &err);
    cJSON_Delete(mc);
    free(path);
    if (!reply) {
        if (create && err.status == 409)
            return 0; /* created meanwhile: the informer shows it next time */
        log_error("machineconfig not written", "machineconfig", name, "error", err.msg);
        return -1;
    }
    cJSON_Delete(reply);
    const char *verb = create ? "created" : "updated";
    log_info(create ? "machineconfig created" : "machineconfig updated", "machineconfig", name, "role", want->role);
    char note[512];
    snprintf(note, sizeof(note), "MachineConfig %s %s with kernel arguments %s%s for role %s", name, verb,
             MACHINECONFIG_KARG_PSI, want->schedstats ? " " MACHINECONFIG_KARG_SCHEDSTATS : "", want->role);
    event(m, in, create ? API_EVENT_MACHINE_CONFIG_CREATED : API_EVENT_MACHINE_CONFIG_UPDATED, "Configure", note);
    return 0;
}

/* The plan for this PsiRebalance's owned nodes into *plan, the pools listed into *pools. */
static int plan_owned(const struct mcsync *m, const struct mcsync_in *in, struct objs *pools, struct mcplan *plan)
{
    struct node_views nodes = {0};
    int rc = kube_informer_foreach(m->pools, collect_obj, pools) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && in->nodes && i < in->nodes->n; i++)
        if (in->nodes->v[i].owned)
            node_view_add(&nodes, in->nodes->v[i].node);
    if (rc == 0 && !nodes.failed)
        rc = mcplan_build(pools->v, pools->n, (const cJSON *const *)nodes.v, nodes.n, plan);
    else
        rc = -1;
    node_views_free(&nodes);
    return rc;
}

/* Ensure each role's MachineConfig; *foreign[i] set for a role whose name is someone else's.
 * Returns 0, or -1 when a write failed. */
static int ensure_roles(const struct mcsync *m, const struct mcsync_in *in, const struct mcplan *plan, bool *foreign)
{
    int rc = 0;
    const char *owner = jx_str(in->obj, "metadata.name");
    for (size_t i = 0; i < plan->nroles; i++) {
        struct machineconfig_want want = {plan->roles[i], owner, in->spec->machine_config.schedstats};
        char *name = machineconfig_name(plan->roles[i]);
        int ensured = name ? ensure_one(m, in, &want, name) : -1;
        foreign[i] = ensured == 1;
        rc = ensured < 0 ? -1 : rc;
        free(name);
    }
    return rc;
}

/* Evaluate plan pool p into *ev and add its status entry. Returns 0, or -1 on no memory. */
static int eval_pool(const struct mcplan *plan, const struct mcplan_pool *p, const bool *foreign,
                     struct machineconfig_pool_eval *ev, struct api_status *next)
{
    if (!p->role) {
        machineconfig_not_covered(p->name, ev);
        return next->nmachine_configs < MCSYNC_MAX_POOLS ? machineconfig_status_entry(next, NULL, NULL, ev) : 0;
    }
    char *name = machineconfig_name(p->role);
    if (!name)
        return -1;
    machineconfig_pool_eval(p->pool, name, ev);
    for (size_t i = 0; i < plan->nroles; i++)
        if (foreign[i] && strcmp(plan->roles[i], p->role) == 0)
            machineconfig_not_owned(p->role, name, ev);
    int rc = next->nmachine_configs < MCSYNC_MAX_POOLS ? machineconfig_status_entry(next, p->role, name, ev) : 0;
    free(name);
    return rc;
}

/* Whether the admission policy confining MachineConfig writes is in force; when it is not,
 * next's PSIEnabled says so (False, its reason and message) and false is returned. */
static bool policies_in_force(const struct mcsync *m, const struct mcsync_in *in, struct api_status *next)
{
    char msg[1024];
    struct policyguard_result verdict = {.msg = msg, .msglen = sizeof(msg)};
    policyprobe_check(m->client, policyprobe_machineconfig_mode, policyprobe_machineconfig_mode_n,
                      "MachineConfig mode refused, no MachineConfig written", &verdict);
    if (verdict.verdict == POLICYGUARD_ENFORCED)
        return true;
    log_debug("machineconfig mode refused", "psirebalance", jx_str(in->obj, "metadata.name"), "reason", verdict.reason);
    conditions_set(next, API_CONDITION_PSI_ENABLED, API_CONDITION_FALSE, verdict.reason, msg, in->generation,
                   in->now_ms / 1000);
    return false;
}

int mcsync_ensure(const struct mcsync *m, const struct mcsync_in *in, struct api_status *next)
{
    bool api = m->machineconfigs != NULL, enabled = in->spec->machine_config.enabled;
    if (api && enabled && !policies_in_force(m, in, next))
        return 0;
    struct objs pools = {0};
    struct mcplan plan = {0};
    if (api && enabled && plan_owned(m, in, &pools, &plan) < 0) {
        free(pools.v); /* PSIEnabled stays as it was: nothing was learnt */
        return -1;
    }
    int rc = 0;
    size_t n = plan.npools + (plan.norphans > 0);
    struct machineconfig_pool_eval *evs = calloc(n ? n : 1, sizeof(*evs));
    bool *foreign = calloc(plan.nroles ? plan.nroles : 1, sizeof(*foreign));
    if (!evs || !foreign)
        rc = -1;
    if (rc == 0)
        rc = ensure_roles(m, in, &plan, foreign);
    for (size_t i = 0; evs && foreign && i < plan.npools; i++)
        if (eval_pool(&plan, &plan.pools[i], foreign, &evs[i], next) < 0)
            rc = -1;
    if (evs && plan.norphans)
        machineconfig_orphans(plan.orphans,
                              plan.norphans < MCPLAN_MAX_ORPHAN_NAMES ? plan.norphans : MCPLAN_MAX_ORPHAN_NAMES,
                              plan.norphans, &evs[plan.npools]);
    char msg[1024];
    struct machineconfig_psi psi = {.msg = msg, .msglen = sizeof(msg)};
    machineconfig_psi_enabled(evs, evs ? n : 0, api, enabled, &psi);
    conditions_set(next, API_CONDITION_PSI_ENABLED, psi.status, psi.reason, msg, in->generation, in->now_ms / 1000);
    free(foreign);
    free(evs);
    mcplan_free(&plan);
    free(pools.v);
    return rc;
}

/* ---- retire ---- */

/* The roles in the plans of the living PsiRebalances with machineConfig enabled, each over
 * the nodes its nodeSelector matches, this one over its owned nodes as mcsync_ensure plans
 * (a plan over more nodes may choose other roles: what ensure makes, retire must keep). A
 * spec that does not decode counts with what it seems to ask for: when in doubt, a
 * MachineConfig stays. */
struct wanted_roles {
    const struct mcsync *m;
    const struct objs *pools;
    const char *self; /* this PsiRebalance, counted from its owned nodes instead (NULL: not) */
    char **v;
    size_t n, cap;
    bool failed;
};

/* Add plan's roles to w. */
static void want_roles(struct wanted_roles *w, const struct mcplan *plan)
{
    for (size_t i = 0; i < plan->nroles && !w->failed; i++) {
        if (BASE_GROW(w->v, w->n + 1, w->cap) < 0 || !(w->v[w->n] = strdup(plan->roles[i])))
            w->failed = true;
        else
            w->n++;
    }
}

static int collect_wanted_roles(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct wanted_roles *w = ud;
    if (jx_get(obj, "metadata.deletionTimestamp") || (w->self && jx_eq(jx_str(obj, "metadata.name"), w->self)))
        return 0;
    struct api_spec spec = {0};
    struct api_errors errs = {0};
    api_spec_decode(jx_at(obj, "spec"), &spec, &errs, NULL);
    struct node_views nodes = {.sel = &spec.node_selector};
    struct mcplan plan = {0};
    if (spec.machine_config.enabled &&
        (kube_informer_foreach(w->m->nodes, collect_node_view, &nodes) != 0 || nodes.failed ||
         mcplan_build(w->pools->v, w->pools->n, (const cJSON *const *)nodes.v, nodes.n, &plan) < 0))
        w->failed = true;
    want_roles(w, &plan);
    mcplan_free(&plan);
    node_views_free(&nodes);
    api_spec_free(&spec);
    api_errors_free(&errs);
    return 0;
}

/* A MachineConfig to delete: name, uid and resourceVersion (the delete's preconditions). */
struct retiree {
    char *name, *uid, *rv;
};

struct retirees {
    const char *owner;
    const struct wanted_roles *wanted;
    struct retiree *v;
    size_t n, cap;
    bool failed;
};

static int collect_retirees(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct retirees *c = ud;
    if (!machineconfig_unneeded(obj, c->owner, c->wanted->v, c->wanted->n))
        return 0;
    if (BASE_GROW(c->v, c->n + 1, c->cap) < 0) {
        c->failed = true;
        return 0;
    }
    const cJSON *meta = jx_at(obj, "metadata");
    c->v[c->n++] = (struct retiree){base_strdup_or_null(jx_str(meta, "name")), base_strdup_or_null(jx_str(meta, "uid")),
                                    base_strdup_or_null(jx_str(meta, "resourceVersion"))};
    return 0;
}

/* Delete MachineConfig x with preconditions. Returns 0, or -1 (logged). */
static int retire_one(const struct mcsync *m, const struct mcsync_in *in, const struct retiree *x)
{
    struct kube_err err;
    kube_err_clear(&err);
    char *path = x->name && x->uid && x->rv ? kube_path(MC_GV, NULL, "machineconfigs", x->name, NULL) : NULL;
    cJSON *opts = cJSON_CreateObject(), *pre = cJSON_AddObjectToObject(opts, "preconditions");
    bool built = path && pre && cJSON_AddStringToObject(opts, "kind", "DeleteOptions") &&
                 cJSON_AddStringToObject(opts, "apiVersion", "v1") && cJSON_AddStringToObject(pre, "uid", x->uid) &&
                 cJSON_AddStringToObject(pre, "resourceVersion", x->rv);
    if (!built)
        kube_err_set(&err, 0, "Encode", "out of memory");
    cJSON *reply = built ? kube_rest_delete(m->client, path, opts, NULL, &err) : NULL;
    int rc = 0;
    if (reply || err.status == 404) {
        log_info("machineconfig deleted: no PsiRebalance needs it", "machineconfig", x->name, "psirebalance",
                 jx_str(in->obj, "metadata.name"));
        char note[512];
        snprintf(note, sizeof(note),
                 "MachineConfig %s deleted (deletionPolicy Delete): its pool reboots its machines without %s", x->name,
                 MACHINECONFIG_KARG_PSI);
        event(m, in, API_EVENT_MACHINE_CONFIG_DELETED, "Delete", note);
    } else {
        log_error("machineconfig not deleted", "machineconfig", x->name ? x->name : "", "error", err.msg);
        rc = -1;
    }
    cJSON_Delete(reply);
    cJSON_Delete(opts);
    free(path);
    return rc;
}

int mcsync_retire(const struct mcsync *m, const struct mcsync_in *in)
{
    if (in->spec->machine_config.deletion_policy != API_DELETION_DELETE || !m->machineconfigs)
        return 0;
    struct objs pools = {0};
    int listed = kube_informer_foreach(m->pools, collect_obj, &pools);
    if (listed != 0 || pools.n == 0) {
        free(pools.v);
        return listed != 0 ? -1 : 0; /* no pool listed (yet): nothing is known to be unneeded */
    }
    struct wanted_roles wanted = {.m = m, .pools = &pools};
    if (in->nodes && in->spec->machine_config.enabled) {
        struct objs self_pools = {0};
        struct mcplan plan = {0};
        wanted.self = jx_str(in->obj, "metadata.name");
        if (plan_owned(m, in, &self_pools, &plan) < 0)
            wanted.failed = true;
        want_roles(&wanted, &plan);
        mcplan_free(&plan);
        free(self_pools.v);
    }
    if (kube_informer_foreach(m->psirebalances, collect_wanted_roles, &wanted) != 0)
        wanted.failed = true;
    struct retirees c = {jx_str(in->obj, "metadata.name"), &wanted, NULL, 0, 0, wanted.failed};
    if (!c.failed && kube_informer_foreach(m->machineconfigs, collect_retirees, &c) != 0)
        c.failed = true;
    int rc = c.failed ? -1 : 0;
    for (size_t i = 0; i < c.n; i++) {
        if (retire_one(m, in, &c.v[i]) < 0)
            rc = -1;
        free(c.v[i].name);
        free(c.v[i].uid);
        free(c.v[i].rv);
    }
    free(c.v);
    for (size_t i = 0; i < wanted.n; i++)
        free(wanted.v[i]);
    free(wanted.v);
    free(pools.v);
    return rc;
}
