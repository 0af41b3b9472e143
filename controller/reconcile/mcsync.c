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
#include "logging.h"
#include "reconcile/conditions.h"
#include "reconcile/machineconfig.h"
#include "reconcile/notify.h"

#define MC_GV MACHINECONFIG_API_VERSION

static void event(const struct mcsync *m, const struct mcsync_in *in, const char *reason, const char *action,
                  const char *note)
{
    const cJSON *meta = jx_at(in->obj, "metadata");
    struct kube_event_ref ref = {API_API_VERSION, API_KIND, NULL, jx_str(meta, "name"), jx_str(meta, "uid")};
    notify_event(m->events, &ref, "Normal", reason, action, note, in->now_ms);
}

/* ---- ensure ---- */

struct pools_ctx {
    const cJSON **v;
    size_t n, cap;
};

static int collect_pool(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct pools_ctx *c = ud;
    if (BASE_GROW(c->v, c->n + 1, c->cap) < 0)
        return -1;
    c->v[c->n++] = obj;
    return 0;
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

int mcsync_ensure(const struct mcsync *m, const struct mcsync_in *in, struct api_status *next)
{
    const struct api_spec *spec = in->spec;
    const char *owner = jx_str(in->obj, "metadata.name");
    bool api = m->machineconfigs != NULL;
    size_t nroles = spec->machine_config.enabled && api ? spec->machine_config.nroles : 0;
    struct machineconfig_pool_eval *evs = calloc(nroles ? nroles : 1, sizeof(*evs));
    struct pools_ctx pools = {0};
    int rc = 0;
    if (!evs)
        return -1;
    if (nroles && kube_informer_foreach(m->pools, collect_pool, &pools) != 0)
        rc = -1;
    for (size_t i = 0; i < nroles; i++) {
        const char *role = spec->machine_config.roles[i];
        struct machineconfig_want want = {role, owner, spec->machine_config.schedstats};
        char *name = machineconfig_name(role);
        if (!name) {
            rc = -1;
            continue;
        }
        int ensured = ensure_one(m, in, &want, name);
        if (ensured < 0)
            rc = -1;
        const cJSON *pool = machineconfig_pool_for_role(pools.v, pools.n, role);
        machineconfig_pool_eval(pool, role, name, &evs[i]);
        if (ensured == 1)
            machineconfig_not_owned(role, name, &evs[i]);
        machineconfig_status_entry(next, role, name, &evs[i]);
        free(name);
    }
    char msg[1024];
    struct machineconfig_psi psi = {.msg = msg, .msglen = sizeof(msg)};
    machineconfig_psi_enabled(evs, nroles, api, spec->machine_config.enabled, &psi);
    conditions_set(next, API_CONDITION_PSI_ENABLED, psi.status, psi.reason, msg, in->generation, in->now_ms / 1000);
    free(pools.v);
    free(evs);
    return rc;
}

/* ---- retire ---- */

/* The roles that living PsiRebalances with machineConfig enabled ask for. A spec that does
 * not decode counts with the roles it seems to ask for: when in doubt, a MachineConfig stays. */
struct wanted_roles {
    char **v;
    size_t n, cap;
    bool failed;
};

static int collect_wanted_roles(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct wanted_roles *w = ud;
    if (jx_get(obj, "metadata.deletionTimestamp"))
        return 0;
    struct api_spec spec = {0};
    struct api_errors errs = {0};
    api_spec_decode(jx_at(obj, "spec"), &spec, &errs, NULL);
    for (size_t i = 0; spec.machine_config.enabled && i < spec.machine_config.nroles && !w->failed; i++) {
        if (BASE_GROW(w->v, w->n + 1, w->cap) < 0 || !(w->v[w->n] = strdup(spec.machine_config.roles[i])))
            w->failed = true;
        else
            w->n++;
    }
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
    struct wanted_roles wanted = {0};
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
    return rc;
}
