/* mcsync: the MachineConfigs of one PsiRebalance on the API (see mcsync.h). */
#include "reconcile/mcsync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Views of nodes (node_view). */
struct node_views {
    cJSON **v;
    size_t n, cap;
    bool failed;
};

static void node_view_add(struct node_views *c, const struct nodeproj *p)
{
    if (BASE_GROW(c->v, c->n + 1, c->cap) < 0 || !(c->v[c->n] = node_view(p)))
        c->failed = true;
    else
        c->n++;
}

static void node_views_free(struct node_views *c)
{
    for (size_t i = 0; i < c->n; i++)
        cJSON_Delete(c->v[i]);
    free(c->v);
}

/* Create or update the MachineConfig name for want. Returns 0, 1 when a MachineConfig of that
 * name is someone else's (left alone), or -1 when a write failed. */
static int ensure_one(const struct mcsync *m, const struct mcsync_in *in, const struct machineconfig_want *asked,
                      const char *name)
{
    const cJSON *existing = kube_informer_get(m->machineconfigs, NULL, name);
    struct machineconfig_want kept = machineconfig_keep(existing, asked);
    const struct machineconfig_want *want = &kept;
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
