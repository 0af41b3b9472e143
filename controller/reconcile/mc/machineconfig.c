/* machineconfig: the psi=1 MachineConfig per role and the pools' rollout (see machineconfig.h). */
#include "reconcile/mc/machineconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "base/jx.h"
#include "base/util.h"
#include "base/num.h"

char *machineconfig_name(const char *role)
{
    char *s = NULL;
    return asprintf(&s, "99-%s-psi-rebalancer", role) < 0 ? NULL : s;
}

struct machineconfig_want machineconfig_keep(const cJSON *existing, const struct machineconfig_want *w)
{
    struct machineconfig_want kept = *w;
    const cJSON *a, *have = jx_at(jx_at(existing, "spec"), "kernelArguments");
    if (cJSON_IsArray(have))
        cJSON_ArrayForEach (a, have) {
            if (cJSON_IsString(a) && strcmp(a->valuestring, MACHINECONFIG_KARG_SCHEDSTATS) == 0)
                kept.schedstats = true;
        }
    return kept;
}

/* The kernel arguments w asks for, NULL-terminated, static strings. */
static void wanted_kargs(const struct machineconfig_want *w, const char *out[3])
{
    out[0] = MACHINECONFIG_KARG_PSI;
    out[1] = w->schedstats ? MACHINECONFIG_KARG_SCHEDSTATS : NULL;
    out[2] = NULL;
}

/* Set obj[key] to item (replacing any), taking item; false on failure (item freed then). */
static bool put(cJSON *obj, const char *key, cJSON *item)
{
    if (!item)
        return false;
    bool ok = cJSON_GetObjectItemCaseSensitive(obj, key) ? cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item)
                                                         : cJSON_AddItemToObject(obj, key, item);
    if (!ok) {
        cJSON_Delete(item);
        return false;
    }
    return true;
}

/* obj[key] as an object, created (or replacing a non-object) when needed; NULL on no memory. */
static cJSON *child_object(cJSON *obj, const char *key)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsObject(c))
        return c;
    c = cJSON_CreateObject();
    return put(obj, key, c) ? c : NULL;
}

/* Write the fields we own into mc (an object). */
static bool set_owned(cJSON *mc, const struct machineconfig_want *w)
{
    cJSON *meta = child_object(mc, "metadata");
    cJSON *labels = meta ? child_object(meta, "labels") : NULL;
    cJSON *spec = child_object(mc, "spec");
    if (!labels || !spec)
        return false;
    bool ok = put(labels, MACHINECONFIG_ROLE_LABEL, cJSON_CreateString(w->role)) &&
              put(labels, MACHINECONFIG_MANAGED_BY_LABEL, cJSON_CreateString(MACHINECONFIG_MANAGED_BY)) &&
              put(labels, MACHINECONFIG_OWNER_LABEL, cJSON_CreateString(w->owner ? w->owner : ""));
    if (!ok)
        return false;
    const char *kargs[3];
    wanted_kargs(w, kargs);
    cJSON *arr = cJSON_CreateArray();
    bool built = arr != NULL;
    for (int i = 0; built && kargs[i]; i++) {
        cJSON *s = cJSON_CreateString(kargs[i]);
        built = s && cJSON_AddItemToArray(arr, s);
        if (!built)
            cJSON_Delete(s);
    }
    if (!built) {
        cJSON_Delete(arr);
        return false;
    }
    if (!put(spec, "kernelArguments", arr))
        return false;
    cJSON *config = child_object(spec, "config");
    cJSON *ign = config ? child_object(config, "ignition") : NULL;
    if (!ign)
        return false;
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ign, "version")))
        return put(ign, "version", cJSON_CreateString(MACHINECONFIG_IGNITION_VERSION));
    return true;
}

cJSON *machineconfig_build(const struct machineconfig_want *w)
{
    char *name = machineconfig_name(w->role);
    cJSON *mc = name ? cJSON_CreateObject() : NULL;
    bool ok = mc && cJSON_AddStringToObject(mc, "apiVersion", MACHINECONFIG_API_VERSION) &&
              cJSON_AddStringToObject(mc, "kind", MACHINECONFIG_KIND);
    cJSON *meta = ok ? cJSON_AddObjectToObject(mc, "metadata") : NULL;
    ok = ok && meta && cJSON_AddStringToObject(meta, "name", name) && set_owned(mc, w);
    free(name);
    if (!ok) {
        cJSON_Delete(mc);
        return NULL;
    }
    return mc;
}

enum machineconfig_diff machineconfig_diff(const cJSON *existing, const struct machineconfig_want *w)
{
    const cJSON *labels = jx_at(jx_at(existing, "metadata"), "labels");
    if (!base_same(jx_at_str(labels, MACHINECONFIG_MANAGED_BY_LABEL), MACHINECONFIG_MANAGED_BY))
        return MACHINECONFIG_FOREIGN;
    const char *owner = jx_at_str(labels, MACHINECONFIG_OWNER_LABEL);
    if (owner && !base_same(owner, w->owner ? w->owner : ""))
        return MACHINECONFIG_FOREIGN;
    if (!owner || !base_same(jx_at_str(labels, MACHINECONFIG_ROLE_LABEL), w->role))
        return MACHINECONFIG_NEEDS_UPDATE;
    const cJSON *spec = jx_at(existing, "spec");
    const cJSON *have = jx_at(spec, "kernelArguments");
    const char *kargs[3];
    wanted_kargs(w, kargs);
    int n = 0;
    while (kargs[n])
        n++;
    if (!cJSON_IsArray(have) || cJSON_GetArraySize(have) != n)
        return MACHINECONFIG_NEEDS_UPDATE;
    for (int i = 0; i < n; i++) {
        const cJSON *a = cJSON_GetArrayItem(have, i);
        if (!cJSON_IsString(a) || strcmp(a->valuestring, kargs[i]) != 0)
            return MACHINECONFIG_NEEDS_UPDATE;
    }
    if (!cJSON_IsString(jx_at(jx_at(jx_at(spec, "config"), "ignition"), "version")))
        return MACHINECONFIG_NEEDS_UPDATE;
    return MACHINECONFIG_UP_TO_DATE;
}

cJSON *machineconfig_apply(const cJSON *existing, const struct machineconfig_want *w)
{
    if (!cJSON_IsObject(existing))
        return NULL;
    cJSON *mc = cJSON_Duplicate(existing, true);
    if (!mc || !set_owned(mc, w)) {
        cJSON_Delete(mc);
        return NULL;
    }
    return mc;
}

/* The pool condition of this type, or NULL. */
static const cJSON *pool_condition(const cJSON *status, const char *type)
{
    const cJSON *it, *conds = jx_at(status, "conditions");
    if (!cJSON_IsArray(conds))
        return NULL;
    cJSON_ArrayForEach (it, conds) {
        if (base_same(jx_at_str(it, "type"), type))
            return it;
    }
    return NULL;
}

/* configuration.source names mc_name. */
static bool source_has(const cJSON *configuration, const char *mc_name)
{
    const cJSON *it, *source = jx_at(configuration, "source");
    if (!cJSON_IsArray(source))
        return false;
    cJSON_ArrayForEach (it, source) {
        if (base_same(jx_at_str(it, "name"), mc_name))
            return true;
    }
    return false;
}

static bool condition_true(const cJSON *c)
{
    return c && base_same(jx_at_str(c, "status"), "True");
}

static int64_t get_count(const cJSON *obj, const char *key)
{
    const cJSON *v = jx_at(obj, key);
    return kube_num_int_or(v, 0, INT32_MAX, 0); /* machine counts are int32 */
}

void machineconfig_pool_eval(const cJSON *pool, const char *mc_name, struct machineconfig_pool_eval *out)
{
    memset(out, 0, sizeof(*out));
    out->status = API_CONDITION_FALSE;
    const char *name = jx_at_str(jx_at(pool, "metadata"), "name");
    snprintf(out->pool, sizeof(out->pool), "%s", name ? name : "");
    const cJSON *status = jx_at(pool, "status");
    const cJSON *configuration = jx_at(status, "configuration");
    const cJSON *target_conf = jx_at(jx_at(pool, "spec"), "configuration");
    out->rendered = source_has(configuration, mc_name);
    bool targeted = out->rendered || source_has(target_conf, mc_name);
    out->machines = get_count(status, "machineCount");
    out->updated_machines = get_count(status, "updatedMachineCount");
    out->degraded_machines = get_count(status, "degradedMachineCount");
    /* A rendered configuration the pool targets but has not reached yet (spec.configuration
     * ahead of status.configuration) means machines are about to update. */
    const char *target = jx_at_str(target_conf, "name");
    const char *current = jx_at_str(configuration, "name");
    bool pending = target && current && strcmp(target, current) != 0;
    const cJSON *degraded = pool_condition(status, "Degraded");
    if (condition_true(degraded)) {
        const char *m = jx_at_str(degraded, "message");
        out->reason = MACHINECONFIG_REASON_POOL_DEGRADED;
        snprintf(out->message, sizeof(out->message), "pool %s is degraded (%lld of %lld machines degraded)%s%s",
                 out->pool, (long long)out->degraded_machines, (long long)out->machines, m && *m ? ": " : "",
                 m ? m : "");
        return;
    }
    /* The pool holds a selected node: no machine counted yet is the operator lagging. */
    bool pool_updated = condition_true(pool_condition(status, "Updated")) && out->machines > 0 &&
                        out->updated_machines == out->machines && !pending;
    if (out->rendered && pool_updated) {
        out->status = API_CONDITION_TRUE;
        out->updated = true;
        out->reason = MACHINECONFIG_REASON_ENABLED;
        snprintf(out->message, sizeof(out->message), "pool %s: all %lld machines run %s", out->pool,
                 (long long)out->machines, mc_name);
        return;
    }
    if (cJSON_IsTrue(jx_at(jx_at(pool, "spec"), "paused"))) {
        out->reason = MACHINECONFIG_REASON_POOL_PAUSED;
        snprintf(out->message, sizeof(out->message),
                 "pool %s is paused: its machines do not update to a configuration with %s until it is unpaused "
                 "(%lld of %lld updated)",
                 out->pool, mc_name, (long long)(targeted ? out->updated_machines : 0), (long long)out->machines);
        if (!targeted)
            out->updated_machines = 0;
        return;
    }
    out->reason = MACHINECONFIG_REASON_PROGRESSING;
    if (out->machines == 0) {
        snprintf(out->message, sizeof(out->message), "pool %s counts no machine yet", out->pool);
    } else if (!targeted) {
        /* The pool's counts are about a configuration without ours: none runs ours yet. */
        out->updated_machines = 0;
        snprintf(out->message, sizeof(out->message), "pool %s has not rendered %s yet", out->pool, mc_name);
    } else {
        snprintf(out->message, sizeof(out->message),
                 "pool %s: %lld of %lld machines updated to a configuration with %s", out->pool,
                 (long long)out->updated_machines, (long long)out->machines, mc_name);
    }
}

void machineconfig_not_owned(const char *role, const char *mc_name, struct machineconfig_pool_eval *out)
{
    out->status = API_CONDITION_FALSE;
    out->reason = MACHINECONFIG_REASON_NOT_OWNED;
    out->updated = false;
    snprintf(out->message, sizeof(out->message),
             "pool %s: MachineConfig %s (role %s) exists but was not made by psi-rebalancer (no %s=%s label): it is "
             "left alone and says nothing about PSI; delete or rename it",
             out->pool, mc_name, role, MACHINECONFIG_MANAGED_BY_LABEL, MACHINECONFIG_MANAGED_BY);
}

void machineconfig_not_covered(const char *pool, struct machineconfig_pool_eval *out)
{
    memset(out, 0, sizeof(*out));
    out->status = API_CONDITION_FALSE;
    out->reason = MACHINECONFIG_REASON_POOL_NOT_COVERED;
    snprintf(out->pool, sizeof(out->pool), "%s", pool ? pool : "");
    snprintf(out->message, sizeof(out->message),
             "pool %s picks up MachineConfigs of no role that only pools of selected nodes pick up: a MachineConfig "
             "for it would reboot nodes this PsiRebalance does not select; select those nodes too, or give the pool "
             "a role of its own in its machineConfigSelector",
             out->pool);
}

void machineconfig_orphans(const char *const *names, size_t shown, size_t total, struct machineconfig_pool_eval *out)
{
    memset(out, 0, sizeof(*out));
    out->status = API_CONDITION_FALSE;
    out->reason = MACHINECONFIG_REASON_POOL_NOT_FOUND;
    int len = snprintf(out->message, sizeof(out->message),
                       "%zu selected node%s in no MachineConfigPool (none selects %s, or several custom pools do, "
                       "which the MachineConfig operator refuses):",
                       total, total == 1 ? " is" : "s are", total == 1 ? "it" : "them");
    for (size_t i = 0; i < shown && len > 0 && (size_t)len < sizeof(out->message); i++)
        len += snprintf(out->message + len, sizeof(out->message) - (size_t)len, "%s %s", i ? "," : "",
                        names[i] ? names[i] : "");
    if (total > shown && len > 0 && (size_t)len < sizeof(out->message))
        snprintf(out->message + len, sizeof(out->message) - (size_t)len, " and %zu more", total - shown);
}

int machineconfig_status_entry(struct api_status *st, const char *role, const char *mc_name,
                               const struct machineconfig_pool_eval *ev)
{
    struct api_machine_config_status *m = api_status_add_machine_config(st, ev->pool);
    if (!m)
        return -1;
    m->role = role ? strdup(role) : NULL;
    m->name = mc_name ? strdup(mc_name) : NULL;
    m->updated = ev->updated;
    m->updated_machines = ev->updated_machines;
    m->machines = ev->machines;
    return (role && !m->role) || (mc_name && !m->name) ? -1 : 0;
}

void machineconfig_psi_enabled(const struct machineconfig_pool_eval *ev, size_t n, bool api_available, bool enabled,
                               struct machineconfig_psi *out)
{
    enum api_condition_status *status = &out->status;
    const char **reason = &out->reason;
    char *msg = out->msg;
    size_t msglen = out->msglen;
    if (!enabled) {
        *status = API_CONDITION_UNKNOWN;
        *reason = MACHINECONFIG_REASON_DISABLED;
        snprintf(msg, msglen, "spec.machineConfig.enabled is false: PSI is expected to be on already");
        return;
    }
    if (!api_available) {
        *status = API_CONDITION_UNKNOWN;
        *reason = MACHINECONFIG_REASON_API_UNAVAILABLE;
        snprintf(msg, msglen,
                 "the cluster has no %s API (not OpenShift): turn PSI on with the psi=1 kernel argument by other means",
                 MACHINECONFIG_API_VERSION);
        return;
    }
    if (n == 0) {
        *status = API_CONDITION_UNKNOWN;
        *reason = MACHINECONFIG_REASON_NO_SELECTED_NODES;
        snprintf(msg, msglen, "the PsiRebalance selects no node: no MachineConfigPool to turn PSI on in");
        return;
    }
    static const char *const order[] = {MACHINECONFIG_REASON_NOT_OWNED,      MACHINECONFIG_REASON_POOL_DEGRADED,
                                        MACHINECONFIG_REASON_POOL_NOT_FOUND, MACHINECONFIG_REASON_POOL_NOT_COVERED,
                                        MACHINECONFIG_REASON_POOL_PAUSED,    MACHINECONFIG_REASON_PROGRESSING};
    *status = API_CONDITION_TRUE;
    *reason = MACHINECONFIG_REASON_ENABLED;
    for (size_t k = 0; k < sizeof(order) / sizeof(order[0]) && *status == API_CONDITION_TRUE; k++)
        for (size_t i = 0; i < n; i++)
            if (base_same(ev[i].reason, order[k])) {
                *status = API_CONDITION_FALSE;
                *reason = order[k];
                break;
            }
    /* The message: every pool's state, "; "-joined, those in the reported state first. */
    size_t len = 0;
    if (msglen)
        msg[0] = '\0';
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n && len + 1 < msglen; i++) {
            if (base_same(ev[i].reason, *reason) != (pass == 0))
                continue;
            int w = snprintf(msg + len, msglen - len, "%s%s", len ? "; " : "", ev[i].message);
            if (w < 0)
                break;
            len += (size_t)w < msglen - len ? (size_t)w : msglen - len - 1;
        }
}
