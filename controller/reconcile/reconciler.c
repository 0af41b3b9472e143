#include "reconciler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conditions.h"
#include "logging.h"
#include "machineconfig.h"
#include "nodestatus.h"
#include "prom.h"
#include "promcred.h"
#include "kubelet.h"
#include "psirebalance.h"
#include "resources.h"
#include "taintfsm.h"
#include "taintpatch.h"

#define PSIR_GV API_API_VERSION
#define MC_GV MACHINECONFIG_API_VERSION

/* How long the node cache may lag behind a taint write of ours before what it shows counts
 * again (a node whose cache still shows the resourceVersion before our write is taken to
 * carry what we wrote, instead of being "restored" with a write that changes nothing). */
#define OWN_WRITE_GRACE_MS 30000

/* What the state machine decided for a node last cycle, and our last taint write to it. */
struct node_record {
    char *name;
    enum api_node_state state;
    int64_t since_ms;
    bool tainted;
    char written_rv[32]; /* the node's resourceVersion after our last taint write; "" none */
    int64_t written_ms;
};

/* What a reconciler remembers of one PsiRebalance between cycles. */
struct cr_state {
    char *name;
    struct node_record *records;
    size_t nrecords;
    struct psi_source *source;
    char *source_key;      /* the spec fields the source was made from */
    int64_t next_sample_ms;
    struct psi_sample sample; /* the last successful sample */
    bool have_sample;
    int metrics;           /* -1 not read yet, 0 failed, 1 ok */
    char metrics_reason[48];
    char metrics_message[1024];
    int64_t last_success_s;
    struct rebalancer *rb; /* moves, cooldowns, DryRun's picture */
    struct cr_state *next;
};

struct reconciler {
    struct reconciler_deps deps;
    struct reconciler_counters counters;
    struct cr_state *states;
    struct promcred *promcred; /* made on first use */
};

/* ---- small helpers ---- */

static const char *json_str(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, a);
    if (b)
        o = cJSON_GetObjectItemCaseSensitive(o, b);
    return cJSON_IsString(o) ? o->valuestring : NULL;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int64_t now_s(int64_t now_ms) { return now_ms / 1000; }

static void records_free(struct cr_state *cs)
{
    for (size_t i = 0; i < cs->nrecords; i++)
        free(cs->records[i].name);
    free(cs->records);
    cs->records = NULL;
    cs->nrecords = 0;
}

static void state_free(struct cr_state *cs)
{
    records_free(cs);
    psi_source_free(cs->source);
    free(cs->source_key);
    psi_sample_free(&cs->sample);
    rebalancer_free(cs->rb);
    free(cs->name);
    free(cs);
}

static struct cr_state *state_get(struct reconciler *r, const char *name)
{
    for (struct cr_state *cs = r->states; cs; cs = cs->next)
        if (strcmp(cs->name, name) == 0)
            return cs;
    struct cr_state *cs = calloc(1, sizeof(*cs));
    if (!cs || !(cs->name = strdup(name)) || !(cs->rb = rebalancer_new())) {
        if (cs)
            free(cs->name);
        free(cs);
        return NULL;
    }
    cs->metrics = -1;
    cs->next = r->states;
    r->states = cs;
    return cs;
}

static void state_forget(struct reconciler *r, const char *name)
{
    for (struct cr_state **p = &r->states; *p; p = &(*p)->next)
        if (strcmp((*p)->name, name) == 0) {
            struct cr_state *cs = *p;
            *p = cs->next;
            state_free(cs);
            return;
        }
}

static int record_cmp(const void *a, const void *b)
{
    return strcmp(((const struct node_record *)a)->name, ((const struct node_record *)b)->name);
}

/* The record of node (cs->records is sorted by name), or NULL. */
static const struct node_record *record_find(const struct cr_state *cs, const char *node)
{
    struct node_record key = {.name = (char *)node};
    return cs->nrecords ? bsearch(&key, cs->records, cs->nrecords, sizeof(key), record_cmp) : NULL;
}

/* Whether the taint on cached node is as rec says rather than as the cache shows: our write
 * happened, and the cache has not caught up with it yet (within OWN_WRITE_GRACE_MS). */
static bool cache_behind_own_write(const struct node_record *rec, const cJSON *cached, int64_t now_ms)
{
    const char *rv = json_str(cached, "metadata", "resourceVersion");
    return rec && rec->written_rv[0] && now_ms - rec->written_ms < OWN_WRITE_GRACE_MS && rv &&
           strcmp(rv, rec->written_rv) != 0;
}

static void event(struct reconciler *r, const struct kube_event_ref *ref, const char *type, const char *reason,
                  const char *action, const char *note, int64_t now_ms)
{
    if (!r->deps.events)
        return;
    struct kube_err err;
    if (kube_events_record(r->deps.events, ref, type, reason, action, note, now_ms, &err) < 0)
        log_warn("event not recorded", "reason", reason, "error", err.msg);
}

static struct kube_event_ref psir_ref(const cJSON *obj)
{
    return (struct kube_event_ref){PSIR_GV, API_KIND, NULL, json_str(obj, "metadata", "name"),
                                   json_str(obj, "metadata", "uid")};
}

/* ---- the nodes this PsiRebalance owns ---- */

struct node_view {
    const cJSON *node;
    const char *name;
    bool owned; /* selected and not owned by an older PsiRebalance */
};

struct collect_ctx {
    struct node_view *v;
    size_t n, cap;
};

static int collect_node(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct collect_ctx *c = ud;
    if (!obj)
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct node_view *v = realloc(c->v, cap * sizeof(*v));
        if (!v)
            return -1;
        c->v = v, c->cap = cap;
    }
    c->v[c->n++] = (struct node_view){obj, json_str(obj, "metadata", "name"), false};
    return 0;
}

static int cmp_node_view(const void *a, const void *b)
{
    return strcmp(((const struct node_view *)a)->name, ((const struct node_view *)b)->name);
}

/* An older PsiRebalance (by creationTimestamp, then name) selecting a node owns it. */
struct rival {
    char *name;
    const char *created;
    struct api_selector sel;
};

struct rivals_ctx {
    const char *self, *self_created;
    struct rival *v;
    size_t n;
};

static bool older(const char *created_a, const char *name_a, const char *created_b, const char *name_b)
{
    int c = strcmp(created_a ? created_a : "", created_b ? created_b : "");
    return c < 0 || (c == 0 && strcmp(name_a, name_b) < 0);
}

static int collect_rival(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv;
    struct rivals_ctx *c = ud;
    const cJSON *o = obj;
    if (!o || strcmp(key, c->self) == 0)
        return 0;
    const char *created = json_str(o, "metadata", "creationTimestamp");
    if (!older(created, key, c->self_created, c->self))
        return 0;
    struct rival *v = realloc(c->v, (c->n + 1) * sizeof(*v));
    if (!v)
        return -1;
    c->v = v;
    struct rival *rv_ = &c->v[c->n];
    memset(rv_, 0, sizeof(*rv_));
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "nodeSelector");
    struct api_errors errs = {0};
    if (sel) {
        api_selector_decode(sel, "spec.nodeSelector", &rv_->sel, &errs, NULL);
    } else {
        struct api_spec defaults = {0};
        api_spec_defaults(&defaults);
        rv_->sel = defaults.node_selector;
        memset(&defaults.node_selector, 0, sizeof(defaults.node_selector));
        api_spec_free(&defaults);
    }
    api_errors_free(&errs);
    rv_->name = strdup(key);
    rv_->created = created;
    c->n++;
    return 0;
}

/* Fill views with every node, marking the ones this PsiRebalance owns; *conflicts counts the
 * selected nodes an older one owns, *conflict_owner names one of those owners. */
static int owned_nodes(struct reconciler *r, const cJSON *obj, const struct api_spec *spec, struct collect_ctx *nodes,
                       size_t *conflicts, char *conflict_owner, size_t owner_len)
{
    *conflicts = 0;
    conflict_owner[0] = '\0';
    if (kube_informer_foreach(r->deps.nodes, collect_node, nodes) != 0)
        return -1;
    qsort(nodes->v, nodes->n, sizeof(*nodes->v), cmp_node_view);
    struct rivals_ctx rivals = {json_str(obj, "metadata", "name"), json_str(obj, "metadata", "creationTimestamp"), NULL, 0};
    int rc = kube_informer_foreach(r->deps.psirebalances, collect_rival, &rivals);
    for (size_t i = 0; rc == 0 && i < nodes->n; i++) {
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(nodes->v[i].node, "metadata"), "labels");
        if (!api_selector_matches(&spec->node_selector, labels))
            continue;
        const char *owner = NULL;
        for (size_t k = 0; k < rivals.n && !owner; k++)
            if (api_selector_matches(&rivals.v[k].sel, labels))
                owner = rivals.v[k].name;
        if (owner) {
            (*conflicts)++;
            snprintf(conflict_owner, owner_len, "%s", owner);
        } else {
            nodes->v[i].owned = true;
        }
    }
    for (size_t k = 0; k < rivals.n; k++) {
        api_selector_free(&rivals.v[k].sel);
        free(rivals.v[k].name);
    }
    free(rivals.v);
    return rc == 0 ? 0 : -1;
}

/* ---- taint writes ---- */

/* Add or remove our taint on node (as cached); a failed test op (someone changed the taints
 * meanwhile) is answered by reading the node again and building the patch anew, once.
 * Returns 0 when the node is as asked, -1 with err. */
/* Add or remove taint t on the node cached shows, keeping every other taint; on a conflict
 * the node is read again and the patch rebuilt once. Returns 1 when it was written (rv gets
 * the node's resourceVersion after the write), 0 when the node already was as asked, -1
 * with err on failure. */
static int write_taint(struct reconciler *r, const cJSON *cached, const struct taintpatch_taint *t,
                       enum taintpatch_op op, char *rv, size_t rvlen, struct kube_err *err)
{
    const char *name = json_str(cached, "metadata", "name");
    char *path = kube_path("v1", NULL, "nodes", name, NULL);
    cJSON *fresh = NULL;
    const cJSON *node = cached;
    int rc = -1;
    for (int attempt = 0; path && attempt < 2; attempt++) {
        const cJSON *taints = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints");
        cJSON *patch = NULL;
        char why[256];
        enum taintpatch_result res =
            taintpatch_build(taints, json_str(node, "metadata", "resourceVersion"), t, op, &patch, why, sizeof(why));
        if (res == TAINTPATCH_NOOP) {
            rc = 0;
            break;
        }
        if (res == TAINTPATCH_FOREIGN) {
            kube_err_set(err, 0, "Conflict", "node %s carries taint %s owned by another PsiRebalance", name, t->key);
            break;
        }
        if (res == TAINTPATCH_ERROR) {
            kube_err_set(err, 0, "Invalid", "node %s: %s", name, why);
            break;
        }
        cJSON *reply = kube_rest_patch(r->deps.client, path, KUBE_PATCH_JSON, patch, NULL, err);
        cJSON_Delete(patch);
        if (reply) {
            snprintf(rv, rvlen, "%s", json_str(reply, "metadata", "resourceVersion") ?: "");
            cJSON_Delete(reply);
            rc = 1;
            break;
        }
        if (err->status != 422 && err->status != 409)
            break;
        cJSON_Delete(fresh);
        fresh = kube_rest_get(r->deps.client, path, err);
        if (!fresh)
            break;
        node = fresh;
    }
    cJSON_Delete(fresh);
    free(path);
    return rc;
}

/* Take this PsiRebalance's taint off every node that carries it. Returns the failures. */
static int remove_all_taints(struct reconciler *r, const struct taintpatch_taint *t, int64_t now_ms)
{
    struct collect_ctx nodes = {0};
    int failures = 0;
    if (kube_informer_foreach(r->deps.nodes, collect_node, &nodes) != 0)
        failures++;
    for (size_t i = 0; i < nodes.n; i++) {
        const cJSON *taints =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nodes.v[i].node, "spec"), "taints");
        if (!taintpatch_has_any(taints, t))
            continue;
        struct kube_err err;
        char rv[32];
        int wrote = write_taint(r, nodes.v[i].node, t, TAINTPATCH_REMOVE, rv, sizeof(rv), &err);
        if (wrote < 0) {
            log_error("taint not removed", "node", nodes.v[i].name, "psirebalance", t->owner, "error", err.msg);
            r->counters.taint_write_failures++;
            failures++;
            continue;
        }
        if (wrote == 0)
            continue; /* gone already */
        r->counters.taints_removed++;
        log_info("taint removed", "node", nodes.v[i].name, "psirebalance", t->owner, "why", "PsiRebalanceDeleted");
        struct kube_event_ref ref = {"v1", "Node", NULL, nodes.v[i].name, NULL};
        event(r, &ref, "Normal", "Untainted", "Untaint", "PsiRebalance deleted: pressure taint removed", now_ms);
    }
    free(nodes.v);
    return failures;
}

/* ---- finalizer ---- */

static bool has_finalizer(const cJSON *obj)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers"))
        if (cJSON_IsString(f) && strcmp(f->valuestring, RECONCILER_FINALIZER) == 0)
            return true;
    return false;
}

/* Add or drop our finalizer with a JSON patch that tests the list it was computed from. */
static int set_finalizer(struct reconciler *r, const cJSON *obj, bool present, struct kube_err *err)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
    cJSON *next = cJSON_CreateArray();
    const cJSON *f;
    cJSON_ArrayForEach(f, list)
        if (!(cJSON_IsString(f) && strcmp(f->valuestring, RECONCILER_FINALIZER) == 0))
            cJSON_AddItemToArray(next, cJSON_Duplicate(f, 1));
    if (present)
        cJSON_AddItemToArray(next, cJSON_CreateString(RECONCILER_FINALIZER));
    cJSON *patch = cJSON_CreateArray();
    cJSON *test = cJSON_CreateObject();
    cJSON_AddStringToObject(test, "op", "test");
    cJSON_AddStringToObject(test, "path", "/metadata/resourceVersion");
    cJSON_AddStringToObject(test, "value", json_str(obj, "metadata", "resourceVersion") ?: "");
    cJSON_AddItemToArray(patch, test);
    cJSON *op = cJSON_CreateObject();
    cJSON_AddStringToObject(op, "op", list ? "replace" : "add");
    cJSON_AddStringToObject(op, "path", "/metadata/finalizers");
    cJSON_AddItemToObject(op, "value", next);
    cJSON_AddItemToArray(patch, op);
    char *path = kube_path(PSIR_GV, NULL, API_PLURAL, json_str(obj, "metadata", "name"), NULL);
    cJSON *reply = path ? kube_rest_patch(r->deps.client, path, KUBE_PATCH_JSON, patch, NULL, err) : NULL;
    cJSON_Delete(patch);
    free(path);
    if (!reply)
        return -1;
    cJSON_Delete(reply);
    return 0;
}

/* ---- MachineConfigs ---- */

struct pools_ctx {
    const cJSON **v;
    size_t n;
};

static int collect_pool(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct pools_ctx *c = ud;
    const cJSON **v = realloc(c->v, (c->n + 1) * sizeof(*v));
    if (!v)
        return -1;
    c->v = v;
    c->v[c->n++] = obj;
    return 0;
}

/* Make sure each role's MachineConfig exists as we want it, and evaluate the pools into
 * next's PSIEnabled condition and machineConfigs entries. Returns 0, or -1 when a write failed. */
static int reconcile_machineconfigs(struct reconciler *r, const cJSON *obj, const struct api_spec *spec,
                                    struct api_status *next, int64_t generation, int64_t now_ms)
{
    const char *owner = json_str(obj, "metadata", "name");
    bool api = r->deps.machineconfigs != NULL;
    size_t nroles = spec->machine_config.enabled && api ? spec->machine_config.nroles : 0;
    struct machineconfig_pool_eval *evs = calloc(nroles ? nroles : 1, sizeof(*evs));
    struct pools_ctx pools = {0};
    int rc = 0;
    if (!evs)
        return -1;
    if (nroles)
        kube_informer_foreach(r->deps.pools, collect_pool, &pools);
    for (size_t i = 0; i < nroles; i++) {
        const char *role = spec->machine_config.roles[i];
        struct machineconfig_want want = {role, owner, spec->machine_config.schedstats};
        char *name = machineconfig_name(role);
        if (!name) {
            rc = -1;
            continue;
        }
        const cJSON *existing = kube_informer_get(r->deps.machineconfigs, NULL, name);
        struct kube_err err;
        cJSON *reply = NULL;
        const char *verb = NULL;
        if (!existing) {
            cJSON *mc = machineconfig_build(&want);
            char *path = kube_path(MC_GV, NULL, "machineconfigs", NULL, NULL);
            reply = mc && path ? kube_rest_create(r->deps.client, path, mc, NULL, &err) : NULL;
            verb = "created";
            cJSON_Delete(mc);
            free(path);
        } else {
            enum machineconfig_diff d = machineconfig_diff(existing, &want);
            if (d == MACHINECONFIG_NEEDS_UPDATE) {
                cJSON *mc = machineconfig_apply(existing, &want);
                char *path = kube_path(MC_GV, NULL, "machineconfigs", name, NULL);
                reply = mc && path ? kube_rest_update(r->deps.client, path, mc, NULL, &err) : NULL;
                verb = "updated";
                cJSON_Delete(mc);
                free(path);
            } else if (d == MACHINECONFIG_FOREIGN) {
                log_warn("machineconfig exists and is not ours: left alone", "machineconfig", name, "psirebalance", owner);
            }
        }
        if (verb && !reply && !(err.status == 409 && !existing)) {
            log_error("machineconfig not written", "machineconfig", name, "error", err.msg);
            rc = -1;
        } else if (verb && reply) {
            log_info(verb[0] == 'c' ? "machineconfig created" : "machineconfig updated", "machineconfig", name, "role", role);
            struct kube_event_ref ref = psir_ref(obj);
            char note[512];
            snprintf(note, sizeof(note), "MachineConfig %s %s with kernel arguments %s%s for role %s", name, verb,
                     MACHINECONFIG_KARG_PSI, spec->machine_config.schedstats ? " " MACHINECONFIG_KARG_SCHEDSTATS : "", role);
            event(r, &ref, "Normal", verb[0] == 'c' ? "MachineConfigCreated" : "MachineConfigUpdated", "Configure", note,
                  now_ms);
        }
        cJSON_Delete(reply);
        const cJSON *pool = machineconfig_pool_for_role(pools.v, pools.n, role);
        machineconfig_pool_eval(pool, role, name, &evs[i]);
        machineconfig_status_entry(next, role, name, &evs[i]);
        free(name);
    }
    enum api_condition_status st;
    const char *reason;
    char msg[1024];
    machineconfig_psi_enabled(evs, nroles, api, spec->machine_config.enabled, &st, &reason, msg, sizeof(msg));
    conditions_set(next, API_CONDITION_PSI_ENABLED, st, reason, msg, generation, now_s(now_ms));
    free(pools.v);
    free(evs);
    return rc;
}

/* The roles that living PsiRebalances with machineConfig enabled ask for. A spec that does
 * not decode counts with the roles it seems to ask for: when in doubt, a MachineConfig stays. */
struct wanted_roles {
    char **v;
    size_t n;
    bool failed;
};

static int collect_wanted_roles(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct wanted_roles *w = ud;
    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "deletionTimestamp"))
        return 0;
    struct api_spec spec = {0};
    struct api_errors errs = {0};
    api_spec_decode(cJSON_GetObjectItemCaseSensitive(obj, "spec"), &spec, &errs, NULL);
    for (size_t i = 0; spec.machine_config.enabled && i < spec.machine_config.nroles && !w->failed; i++) {
        char **v = realloc(w->v, (w->n + 1) * sizeof(*v));
        if (!v || !(v[w->n] = strdup(spec.machine_config.roles[i]))) {
            w->failed = true;
            if (v)
                w->v = v;
            break;
        }
        w->v = v;
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
    size_t n;
    bool failed;
};

static int collect_retirees(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct retirees *c = ud;
    if (!machineconfig_unneeded(obj, c->owner, c->wanted->v, c->wanted->n))
        return 0;
    struct retiree *v = realloc(c->v, (c->n + 1) * sizeof(*v));
    if (!v) {
        c->failed = true;
        return 0;
    }
    c->v = v;
    v[c->n++] = (struct retiree){dup_or_null(json_str(obj, "metadata", "name")), dup_or_null(json_str(obj, "metadata", "uid")),
                                 dup_or_null(json_str(obj, "metadata", "resourceVersion"))};
    return 0;
}

/* With deletionPolicy Delete, delete the MachineConfigs of this PsiRebalance that no living
 * PsiRebalance needs (machineconfig_unneeded), each with preconditions on its uid and
 * resourceVersion so that a MachineConfig changed meanwhile is looked at again first.
 * Returns 0, or -1 when one could not be deleted (it is tried again next time). */
static int retire_machineconfigs(struct reconciler *r, const cJSON *obj, const struct api_spec *spec, int64_t now_ms)
{
    if (spec->machine_config.deletion_policy != API_DELETION_DELETE || !r->deps.machineconfigs)
        return 0;
    struct wanted_roles wanted = {0};
    kube_informer_foreach(r->deps.psirebalances, collect_wanted_roles, &wanted);
    struct retirees c = {json_str(obj, "metadata", "name"), &wanted, NULL, 0, wanted.failed};
    if (!c.failed)
        kube_informer_foreach(r->deps.machineconfigs, collect_retirees, &c);
    int rc = c.failed ? -1 : 0;
    for (size_t i = 0; i < c.n; i++) {
        struct retiree *m = &c.v[i];
        struct kube_err err;
        kube_err_clear(&err);
        char *path = m->name && m->uid && m->rv ? kube_path(MC_GV, NULL, "machineconfigs", m->name, NULL) : NULL;
        cJSON *opts = cJSON_CreateObject(), *pre = cJSON_AddObjectToObject(opts, "preconditions");
        cJSON_AddStringToObject(opts, "kind", "DeleteOptions");
        cJSON_AddStringToObject(opts, "apiVersion", "v1");
        cJSON_AddStringToObject(pre, "uid", m->uid ? m->uid : "");
        cJSON_AddStringToObject(pre, "resourceVersion", m->rv ? m->rv : "");
        cJSON *reply = path && pre ? kube_rest_delete(r->deps.client, path, opts, NULL, &err) : NULL;
        if (reply || err.status == 404) {
            log_info("machineconfig deleted: no PsiRebalance needs it", "machineconfig", m->name, "psirebalance",
                     c.owner);
            struct kube_event_ref ref = psir_ref(obj);
            char note[512];
            snprintf(note, sizeof(note), "MachineConfig %s deleted (deletionPolicy Delete): its pool reboots its "
                     "machines without %s", m->name, MACHINECONFIG_KARG_PSI);
            event(r, &ref, "Normal", "MachineConfigDeleted", "Delete", note, now_ms);
        } else {
            log_error("machineconfig not deleted", "machineconfig", m->name ? m->name : "", "error",
                      path ? err.msg : "out of memory");
            rc = -1;
        }
        cJSON_Delete(reply);
        cJSON_Delete(opts);
        free(path);
        free(m->name);
        free(m->uid);
        free(m->rv);
    }
    free(c.v);
    for (size_t i = 0; i < wanted.n; i++)
        free(wanted.v[i]);
    free(wanted.v);
    return rc;
}

/* ---- pressure ---- */

/* The Prometheus client settings of spec (promcred.h); -1 with st failed on no memory. */
static int prom_config(struct reconciler *r, const struct api_spec *spec, struct psi_prom_config *cfg,
                       struct psi_status *st)
{
    if (!r->promcred && !(r->promcred = promcred_new(r->deps.client)))
        return psi_status_fail(st, PSI_REASON_CONFIG, "out of memory");
    promcred_config(r->promcred, spec, cfg);
    return 0;
}

/* The pressure source for spec, made anew when the spec's metrics settings changed. */
static struct psi_source *source_for(struct reconciler *r, struct cr_state *cs, const struct api_spec *spec,
                                     struct psi_status *st)
{
    char key[2048];
    const char *token = spec->metrics.prometheus.bearer_token_file;
    snprintf(key, sizeof(key), "%s|%s|%s%s|%s|%d", api_source_name(spec->metrics.source),
             spec->metrics.prometheus.url ?: "", token ? "file:" : "reader", token ?: "",
             spec->metrics.prometheus.ca_file ?: "", spec->metrics.prometheus.send_token_over_plain_http);
    if (cs->source && cs->source_key && strcmp(cs->source_key, key) == 0)
        return cs->source;
    psi_source_free(cs->source);
    free(cs->source_key);
    cs->source = NULL;
    cs->source_key = NULL;
    if (spec->metrics.source == API_SOURCE_KUBELET) {
        cs->source = psi_kubelet_source_new(r->deps.client, st);
    } else {
        struct psi_prom_config cfg;
        if (prom_config(r, spec, &cfg, st) == 0)
            cs->source = psi_prom_source_new(&cfg, st);
    }
    if (cs->source)
        cs->source_key = strdup(key);
    return cs->source;
}

/* The source's index of an API resource. */
static enum psi_resource psi_resource_of(enum api_resource res)
{
    static const enum psi_resource map[API_RESOURCES] = {PSI_CPU, PSI_MEMORY, PSI_IO};
    return map[res];
}

static int node_sample_cmp(const void *a, const void *b)
{
    return strcmp(((const struct psi_node_sample *)a)->name, ((const struct psi_node_sample *)b)->name);
}

/* The last sample of node (cs->sample.nodes is sorted by name), or NULL. */
static const struct psi_node_sample *sample_of(const struct cr_state *cs, const char *node)
{
    struct psi_node_sample key = {.name = (char *)node};
    return cs->have_sample && cs->sample.n_nodes
               ? bsearch(&key, cs->sample.nodes, cs->sample.n_nodes, sizeof(key), node_sample_cmp)
               : NULL;
}

/* Sample the owned nodes; updates cs's metrics state and, on success, its sample. Emits an
 * Event when the metrics go away or come back. Returns 0 on a good sample. */
static int take_sample(struct reconciler *r, struct cr_state *cs, const cJSON *obj, const struct api_spec *spec,
                       const struct collect_ctx *nodes, int64_t now_ms)
{
    size_t n = 0;
    struct psi_node_desc *descs = calloc(nodes->n ? nodes->n : 1, sizeof(*descs));
    const char **ips = calloc(nodes->n ? nodes->n : 1, sizeof(*ips));
    struct psi_status st;
    psi_status_ok(&st);
    if (!descs || !ips) {
        psi_status_fail(&st, PSI_REASON_CONFIG, "out of memory");
    } else {
        for (size_t i = 0; i < nodes->n; i++) {
            if (!nodes->v[i].owned)
                continue;
            const cJSON *a;
            ips[n] = NULL;
            cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nodes->v[i].node, "status"), "addresses"))
                if (!ips[n] && json_str(a, "address", NULL))
                    ips[n] = json_str(a, "address", NULL);
            const cJSON *status = cJSON_GetObjectItemCaseSensitive(nodes->v[i].node, "status");
            descs[n] = (struct psi_node_desc){nodes->v[i].name, &ips[n], ips[n] ? 1 : 0,
                                              resources_get(cJSON_GetObjectItemCaseSensitive(status, "capacity"), "cpu")};
            n++;
        }
    }
    struct psi_sample sample = {0};
    struct psi_source *src = st.failed ? NULL : source_for(r, cs, spec, &st);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (src) {
        /* cpu "some" always: the rebalancer's predictions read it */
        unsigned full = spec->pressure.stall == API_STALL_FULL ? PSI_RES_BIT(psi_resource_of(spec->pressure.resource)) : 0;
        struct psi_request req = {descs, n, PSI_RES_ALL, full, (long)(spec->metrics.window_ms / 1000),
                                  spec->pressure.has_utilization_floor};
        psi_source_sample(src, &req, &sample);
        st = sample.status;
    }
    free(descs);
    free(ips);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->counters.last_sample_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    r->counters.samples++;
    int was = cs->metrics;
    struct kube_event_ref ref = psir_ref(obj);
    if (st.failed) {
        r->counters.sample_failures++;
        psi_sample_free(&sample);
        cs->metrics = 0;
        snprintf(cs->metrics_reason, sizeof(cs->metrics_reason), "%s", st.reason);
        snprintf(cs->metrics_message, sizeof(cs->metrics_message), "%s; every taint is held as it is", st.message);
        log_warn("pressure not readable: taints held", "psirebalance", ref.name, "reason", st.reason, "error", st.message);
        if (was != 0)
            event(r, &ref, "Warning", "MetricsUnavailable", "Sample", cs->metrics_message, now_ms);
        return -1;
    }
    if (sample.n_node_errors)
        log_warn("some nodes unreadable", "psirebalance", ref.name, "error", sample.node_error);
    psi_sample_free(&cs->sample);
    cs->sample = sample;
    cs->have_sample = true;
    if (cs->sample.n_nodes)
        qsort(cs->sample.nodes, cs->sample.n_nodes, sizeof(*cs->sample.nodes), node_sample_cmp);
    cs->metrics = 1;
    snprintf(cs->metrics_reason, sizeof(cs->metrics_reason), "SampleSucceeded");
    char unread[600];
    psi_sample_unread_text(&cs->sample, unread, sizeof(unread));
    snprintf(cs->metrics_message, sizeof(cs->metrics_message), "%s: %zu nodes sampled%s%s", src->name, n,
             unread[0] ? "; " : "", unread);
    if (was == 0)
        event(r, &ref, "Normal", "MetricsAvailable", "Sample", "pressure readings are back", now_ms);
    return 0;
}

static double reading(const struct psi_node_sample *s, enum api_resource res)
{
    if (!s || !s->value[psi_resource_of(res)].known)
        return NAN;
    return s->value[psi_resource_of(res)].percent;
}

static double utilization(const struct psi_node_sample *s)
{
    return s && s->utilization.known ? s->utilization.percent : NAN;
}

/* Run the state machine over the owned nodes (and those that still carry our taint but are
 * no longer ours), make its taint writes, keep its result as the records and put it in next's
 * per-node entries and summary. Returns the number of failed writes, or -1 on no memory. */
static int step_taints(struct reconciler *r, struct cr_state *cs, const struct api_spec *spec, const struct collect_ctx *nodes,
                       const struct taintpatch_taint *t, int64_t now_ms, struct api_status *next)
{
    struct taintfsm_input *in = calloc(nodes->n ? nodes->n : 1, sizeof(*in));
    const cJSON **in_node = calloc(nodes->n ? nodes->n : 1, sizeof(*in_node));
    struct nodestatus_reading *readings = calloc(nodes->n ? nodes->n : 1, sizeof(*readings));
    size_t n = 0;
    if (!in || !in_node || !readings) {
        free(in);
        free(in_node);
        free(readings);
        return -1;
    }
    for (size_t i = 0; i < nodes->n; i++) {
        const cJSON *taints =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nodes->v[i].node, "spec"), "taints");
        bool ours = taintpatch_has_any(taints, t);
        if (!nodes->v[i].owned && !ours)
            continue;
        const struct node_record *rec = record_find(cs, nodes->v[i].name);
        const struct psi_node_sample *s = sample_of(cs, nodes->v[i].name);
        in[n] = (struct taintfsm_input){
            .name = nodes->v[i].name,
            .selected = nodes->v[i].owned,
            .has_prev = rec != NULL,
            .state = rec ? rec->state : API_NODE_UNKNOWN,
            .since_ms = rec ? rec->since_ms : now_ms,
            .tainted = cache_behind_own_write(rec, nodes->v[i].node, now_ms) ? rec->tainted : taintpatch_has(taints, t),
            .pressure = reading(s, spec->pressure.resource),
            .utilization = utilization(s),
        };
        for (int res = 0; res < API_RESOURCES; res++)
            readings[n].pressure[res] = reading(s, (enum api_resource)res);
        readings[n].utilization = in[n].utilization;
        in_node[n++] = nodes->v[i].node;
    }
    struct taintfsm_params p;
    taintfsm_params_from_spec(spec, &p);
    struct taintfsm_result res = {0};
    if (taintfsm_step(&p, in, n, now_ms, &res) < 0) {
        free(in);
        free(in_node);
        free(readings);
        return -1;
    }
    int failures = 0;
    char(*written)[32] = calloc(n ? n : 1, sizeof(*written)); /* per input: rv after our write */
    bool *done = calloc(n ? n : 1, sizeof(*done));              /* per input: our write happened */
    if (!written || !done)
        failures = -1;
    for (size_t a = 0; written && done && a < res.nactions; a++) {
        const struct taintfsm_action *act = &res.actions[a];
        struct kube_err err;
        bool add = act->op == TAINTFSM_ADD;
        int wrote = write_taint(r, in_node[act->input], t, add ? TAINTPATCH_ADD : TAINTPATCH_REMOVE, written[act->input],
                                sizeof(written[act->input]), &err);
        if (wrote < 0) {
            log_error(add ? "taint not added" : "taint not removed", "node", act->node, "psirebalance", t->owner, "error",
                      err.msg);
            r->counters.taint_write_failures++;
            failures++;
            continue;
        }
        if (wrote == 0)
            continue; /* the node already was so (the cache had not shown it yet) */
        done[act->input] = true;
        add ? r->counters.taints_added++ : r->counters.taints_removed++;
    }
    /* The Events after all taint writes of the cycle: they share the write budget, and the
     * taints are what the scheduler waits for. */
    for (size_t a = 0; done && a < res.nactions; a++) {
        const struct taintfsm_action *act = &res.actions[a];
        if (!done[act->input])
            continue;
        bool add = act->op == TAINTFSM_ADD;
        char pressure[32] = "unknown";
        const struct psi_node_sample *s = sample_of(cs, act->node);
        if (!isnan(reading(s, spec->pressure.resource)))
            snprintf(pressure, sizeof(pressure), "%.1f%%", reading(s, spec->pressure.resource));
        log_info(add ? "taint added" : "taint removed", "node", act->node, "psirebalance", t->owner, "why",
                 taintfsm_why_name(act->why), "pressure", pressure);
        char note[512];
        snprintf(note, sizeof(note), "%s %s taint %s:%s (%s, %s pressure %s)", add ? "added" : "removed",
                 api_taint_effect_name(spec->taint.effect), t->key, t->owner, taintfsm_why_name(act->why),
                 api_resource_name(spec->pressure.resource), pressure);
        struct kube_event_ref ref = {"v1", "Node", NULL, act->node, NULL};
        event(r, &ref, "Normal", add ? "Tainted" : "Untainted", add ? "Taint" : "Untaint", note, now_ms);
    }
    struct node_record *records = calloc(res.nnodes ? res.nnodes : 1, sizeof(*records));
    for (size_t i = 0; records && written && i < res.nnodes; i++) {
        const struct taintfsm_node *fn = &res.nodes[i];
        const struct node_record *old = record_find(cs, fn->name);
        struct node_record *rec = &records[i];
        *rec = (struct node_record){strdup(fn->name), fn->state, fn->since_ms, fn->tainted, "", 0};
        if (written[fn->input][0]) {
            memcpy(rec->written_rv, written[fn->input], sizeof(rec->written_rv));
            rec->written_ms = now_ms;
        } else if (old) {
            memcpy(rec->written_rv, old->written_rv, sizeof(rec->written_rv));
            rec->written_ms = old->written_ms;
        }
    }
    records_free(cs);
    cs->records = records;
    cs->nrecords = records && written ? res.nnodes : 0;
    if (records)
        qsort(cs->records, cs->nrecords, sizeof(*cs->records), record_cmp);
    free(written);
    free(done);
    if (nodestatus_build(next, &res, readings, NULL) < 0)
        failures = -1;
    taintfsm_result_free(&res);
    free(in);
    free(in_node);
    free(readings);
    return failures;
}

/* ---- rebalancing ---- */

/* Run the rebalancer over the owned nodes with this cycle's readings. Returns 0, or -1 with
 * *reason and msg when an eviction failed. */
static int rebalance(struct reconciler *r, struct cr_state *cs, const cJSON *obj, const struct api_psirebalance *pr,
                     const struct collect_ctx *nodes, const struct taintpatch_taint *t, bool sampled, int64_t now_ms,
                     struct api_status *next, const char **reason, char *msg, size_t len)
{
    struct rebalancer_node *rn = calloc(nodes->n ? nodes->n : 1, sizeof(*rn));
    if (!rn) {
        *reason = "OutOfMemory";
        snprintf(msg, len, "out of memory");
        return -1;
    }
    struct taintfsm_params fsm;
    taintfsm_params_from_spec(&pr->spec, &fsm);
    size_t n = 0;
    for (size_t i = 0; i < nodes->n; i++) {
        if (!nodes->v[i].owned)
            continue;
        const struct node_record *rec = record_find(cs, nodes->v[i].name);
        const cJSON *taints =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nodes->v[i].node, "spec"), "taints");
        rn[n] = (struct rebalancer_node){nodes->v[i].name, nodes->v[i].node,
                                         rec ? rec->tainted : taintpatch_has(taints, t), {NAN, NAN, NAN}};
        const struct psi_node_sample *s = sample_of(cs, nodes->v[i].name);
        for (int res = 0; res < API_RESOURCES; res++)
            rn[n].pressure[res] = reading(s, (enum api_resource)res);
        /* a node pressured below the utilisation floor is no source either */
        rn[n].pressure[API_RESOURCE_CPU] = taintfsm_effective_pressure(&fsm, rn[n].pressure[API_RESOURCE_CPU], utilization(s));
        n++;
    }
    struct psi_prom_config prom;
    struct psi_status pst;
    int have_prom = prom_config(r, &pr->spec, &prom, &pst) == 0;
    struct rebalancer_deps d = {r->deps.client, r->deps.events, r->deps.vmis, r->deps.vmims, r->deps.pods,
                                r->deps.pods_ud};
    struct rebalancer_input in = {obj,     pr,          rn, n, sampled, cs->metrics == 1,
                                  pr->spec.metrics.source == API_SOURCE_PROMETHEUS && have_prom ? &prom : NULL, now_ms};
    struct rebalancer_stats before = *rebalancer_stats(cs->rb);
    int rc = rebalancer_run(cs->rb, &d, &in, next, reason, msg, len);
    const struct rebalancer_stats *after = rebalancer_stats(cs->rb);
    r->counters.evictions += after->evictions - before.evictions;
    r->counters.migrations_requested += after->migrations_requested - before.migrations_requested;
    r->counters.dry_run_moves += after->dry_run_moves - before.dry_run_moves;
    r->counters.evictions_refused += after->refused - before.refused;
    r->counters.eviction_failures += after->eviction_failures - before.eviction_failures;
    r->counters.migrations_succeeded += after->migrations_succeeded - before.migrations_succeeded;
    r->counters.migrations_failed += after->migrations_failed - before.migrations_failed;
    free(rn);
    return rc;
}

/* ---- status ---- */

/* Drop next's machineConfigs entries: reconcile_machineconfigs writes them anew each cycle. */
static void clear_machine_configs(struct api_status *st)
{
    for (size_t i = 0; i < st->nmachine_configs; i++) {
        free(st->machine_configs[i].role);
        free(st->machine_configs[i].name);
        free(st->machine_configs[i].pool);
    }
    free(st->machine_configs);
    st->machine_configs = NULL;
    st->nmachine_configs = 0;
}

/* The body of a status write for obj: its identity (apiVersion, kind, metadata, whose
 * resourceVersion guards the write) without its spec and old status, which the status
 * subresource takes from the stored object and which grow with the cluster. */
static cJSON *status_body(const cJSON *obj)
{
    cJSON *body = cJSON_CreateObject();
    static const char *const keep[] = {"apiVersion", "kind", "metadata"};
    for (size_t i = 0; body && i < sizeof(keep) / sizeof(keep[0]); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, keep[i]);
        if (v && !cJSON_AddItemToObject(body, keep[i], cJSON_Duplicate(v, 1))) {
            cJSON_Delete(body);
            return NULL;
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "metadata"), "managedFields");
    return body;
}

/* PUT the status subresource with next; on 409 read the object again and retry once. */
static int write_status(struct reconciler *r, const cJSON *obj, const struct api_status *next, struct kube_err *err)
{
    char *path = kube_path(PSIR_GV, NULL, API_PLURAL, json_str(obj, "metadata", "name"), "status");
    cJSON *body = status_body(obj);
    int rc = -1;
    for (int attempt = 0; path && body && attempt < 2; attempt++) {
        cJSON *enc = api_status_encode(next);
        if (!enc)
            break;
        cJSON_AddItemToObject(body, "status", enc);
        /* nothing of the stored object is read back: its watch event updates the cache */
        cJSON *reply = kube_rest_update(r->deps.client, path, body, &(struct kube_write_opts){.discard_reply = 1}, err);
        if (reply) {
            cJSON_Delete(reply);
            r->counters.status_writes++;
            rc = 0;
            break;
        }
        if (err->status != 409)
            break;
        char *get = kube_path(PSIR_GV, NULL, API_PLURAL, json_str(obj, "metadata", "name"), NULL);
        cJSON *fresh = get ? kube_rest_get(r->deps.client, get, err) : NULL;
        free(get);
        cJSON_Delete(body);
        body = fresh ? status_body(fresh) : NULL;
        cJSON_Delete(fresh);
    }
    cJSON_Delete(body);
    free(path);
    return rc;
}

/* ---- the cycle ---- */

static int finalize(struct reconciler *r, const cJSON *obj, const struct api_psirebalance *pr, int64_t now_ms)
{
    if (!has_finalizer(obj))
        return 0;
    struct taintpatch_taint t;
    char why[256];
    if (taintpatch_taint_from_spec(&pr->spec, pr->name, &t, why, sizeof(why)) == 0 &&
        remove_all_taints(r, &t, now_ms) > 0)
        return -1; /* the finalizer stays until every taint is off */
    if (retire_machineconfigs(r, obj, &pr->spec, now_ms) < 0)
        return -1; /* and until the MachineConfigs to delete are gone */
    struct kube_err err;
    if (set_finalizer(r, obj, false, &err) < 0) {
        if (err.status == 404)
            return 0; /* gone already: this was a stale view of it */
        log_error("finalizer not removed", "psirebalance", pr->name, "error", err.msg);
        return -1;
    }
    log_info("psirebalance deleted: taints removed", "psirebalance", pr->name);
    return 0;
}

static int report_invalid(struct reconciler *r, const cJSON *obj, const struct api_psirebalance *pr,
                          const struct api_errors *errs, int64_t now_ms)
{
    struct api_status next;
    if (api_status_copy(&next, &pr->status) < 0)
        return -1;
    char *msg = api_errors_join(errs, "; ");
    int64_t now = now_s(now_ms);
    conditions_set(&next, API_CONDITION_READY, API_CONDITION_FALSE, "InvalidSpec", msg ?: "invalid spec", pr->generation, now);
    conditions_set(&next, API_CONDITION_DEGRADED, API_CONDITION_TRUE, "InvalidSpec", msg ?: "invalid spec", pr->generation, now);
    next.observed_generation = pr->generation;
    log_error("invalid psirebalance: nothing done", "psirebalance", pr->name, "error", msg ?: "");
    int rc = 0;
    struct kube_err err;
    if (api_status_changed(&pr->status, &next, NULL) && write_status(r, obj, &next, &err) < 0) {
        log_error("status not written", "psirebalance", pr->name, "error", err.msg);
        rc = -1;
    }
    free(msg);
    api_status_free(&next);
    return rc;
}

int reconciler_reconcile(struct reconciler *r, const char *name, int64_t now_ms, int64_t *requeue_ms)
{
    *requeue_ms = 0;
    const cJSON *obj = kube_informer_get(r->deps.psirebalances, NULL, name);
    if (!obj) {
        state_forget(r, name);
        return 0;
    }
    r->counters.cycles++;
    struct api_psirebalance pr = {0};
    struct api_errors errs = {0};
    int invalid = api_psirebalance_decode(obj, &pr, &errs, NULL);
    int rc = 0;
    const cJSON *deleting = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "deletionTimestamp");
    if (deleting) {
        rc = finalize(r, obj, &pr, now_ms);
        if (rc == 0)
            state_forget(r, name);
        goto out;
    }
    if (invalid) {
        rc = report_invalid(r, obj, &pr, &errs, now_ms);
        goto out;
    }
    struct kube_err err;
    if (!has_finalizer(obj) && set_finalizer(r, obj, true, &err) < 0) {
        log_error("finalizer not added", "psirebalance", name, "error", err.msg);
        rc = -1;
        goto out;
    }

    struct cr_state *cs = state_get(r, name);
    struct taintpatch_taint t;
    char why[256];
    if (!cs || taintpatch_taint_from_spec(&pr.spec, name, &t, why, sizeof(why)) < 0) {
        log_error("psirebalance cannot own a taint", "psirebalance", name, "error", cs ? why : "out of memory");
        rc = -1;
        goto out;
    }
    int64_t now = now_s(now_ms);
    /* next starts as a copy of the status the object has: conditions keep their times, and
     * the per-node entries stay as the last sample left them until a sample replaces them. */
    struct api_status next;
    if (api_status_copy(&next, &pr.status) < 0) {
        log_error("status not copied", "psirebalance", name, "error", "out of memory");
        rc = -1;
        goto out;
    }
    clear_machine_configs(&next);
    struct collect_ctx nodes = {0};
    size_t conflicts;
    char conflict_owner[256];
    const char *fail_reason = NULL;
    char fail_msg[512] = "";
    if (owned_nodes(r, obj, &pr.spec, &nodes, &conflicts, conflict_owner, sizeof(conflict_owner)) < 0) {
        fail_reason = "OutOfMemory";
        snprintf(fail_msg, sizeof(fail_msg), "listing the selected nodes ran out of memory");
    }
    if (conflicts) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%zu selected nodes are owned by an older PsiRebalance (%s); they are left to it",
                 conflicts, conflict_owner);
        conditions_set(&next, CONDITIONS_NODE_CONFLICT, API_CONDITION_TRUE, "NodeConflict", msg, pr.generation, now);
    } else {
        conditions_remove(&next, CONDITIONS_NODE_CONFLICT);
    }
    if ((reconcile_machineconfigs(r, obj, &pr.spec, &next, pr.generation, now_ms) < 0 ||
         retire_machineconfigs(r, obj, &pr.spec, now_ms) < 0) &&
        !fail_reason) {
        fail_reason = "MachineConfigWriteFailed";
        snprintf(fail_msg, sizeof(fail_msg), "a MachineConfig could not be written or deleted (see the operator log)");
    }

    bool sampled = false;
    if (!fail_reason && now_ms >= cs->next_sample_ms) {
        cs->next_sample_ms = now_ms + pr.spec.metrics.interval_ms;
        sampled = take_sample(r, cs, obj, &pr.spec, &nodes, now_ms) == 0;
        if (sampled) {
            int failures = step_taints(r, cs, &pr.spec, &nodes, &t, now_ms, &next);
            if (failures != 0) {
                fail_reason = "TaintWriteFailed";
                snprintf(fail_msg, sizeof(fail_msg), "%d taint writes failed (see the operator log and Events)",
                         failures < 0 ? 1 : failures);
            }
        }
    }
    if (cs->metrics >= 0)
        conditions_set(&next, API_CONDITION_METRICS_AVAILABLE, cs->metrics ? API_CONDITION_TRUE : API_CONDITION_FALSE,
                       cs->metrics_reason, cs->metrics_message, pr.generation, now);
    const char *rb_reason = NULL;
    char rb_msg[512];
    if (rebalance(r, cs, obj, &pr, &nodes, &t, sampled, now_ms, &next, &rb_reason, rb_msg, sizeof(rb_msg)) < 0 &&
        !fail_reason) {
        fail_reason = rb_reason ? rb_reason : "RebalanceFailed";
        snprintf(fail_msg, sizeof(fail_msg), "%s", rb_msg);
    }
    if (sampled && !fail_reason)
        cs->last_success_s = now;
    next.summary.nodes = 0;
    for (size_t i = 0; i < nodes.n; i++)
        next.summary.nodes += nodes.v[i].owned;
    struct conditions_cycle cycle = {fail_reason == NULL, fail_reason, fail_msg};
    conditions_derive(&next, &cycle, pr.generation, now);
    next.observed_generation = pr.generation;
    next.last_successful_cycle_time = cs->last_success_s ? cs->last_success_s : pr.status.last_successful_cycle_time;

    int64_t interval_s = pr.spec.metrics.interval_ms / 1000;
    struct api_status_compare cmp = {interval_s > 60 ? interval_s : 60, 0.5};
    if (api_status_changed(&pr.status, &next, &cmp) && write_status(r, obj, &next, &err) < 0) {
        log_error("status not written", "psirebalance", name, "error", err.msg);
        rc = -1;
    }
    if (fail_reason)
        rc = -1;
    api_status_free(&next);
    free(nodes.v);
    *requeue_ms = cs->next_sample_ms > now_ms ? cs->next_sample_ms - now_ms : pr.spec.metrics.interval_ms;
out:
    if (rc < 0)
        r->counters.cycle_failures++;
    api_errors_free(&errs);
    api_psirebalance_free(&pr);
    return rc;
}

/* ---- lifecycle and views ---- */

struct reconciler *reconciler_new(const struct reconciler_deps *deps)
{
    struct reconciler *r = calloc(1, sizeof(*r));
    if (r)
        r->deps = *deps;
    return r;
}

void reconciler_free(struct reconciler *r)
{
    if (!r)
        return;
    while (r->states) {
        struct cr_state *cs = r->states;
        r->states = cs->next;
        state_free(cs);
    }
    promcred_free(r->promcred);
    free(r);
}

const struct reconciler_counters *reconciler_counters(const struct reconciler *r) { return &r->counters; }

void reconciler_foreach_pressure(const struct reconciler *r,
                                 void (*fn)(const char *psirebalance, const char *node, const char *resource,
                                            double percent, void *ud),
                                 void *ud)
{
    for (const struct cr_state *cs = r->states; cs; cs = cs->next)
        for (size_t i = 0; cs->have_sample && i < cs->sample.n_nodes; i++)
            for (int res = 0; res < PSI_NRESOURCES; res++)
                if (cs->sample.nodes[i].value[res].known)
                    fn(cs->name, cs->sample.nodes[i].name, psi_resource_name((enum psi_resource)res),
                       cs->sample.nodes[i].value[res].percent, ud);
}

void *reconciler_node_projection(const cJSON *node, void *ud)
{
    (void)ud;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(node, "metadata");
    cJSON *out = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(out, "metadata");
    static const char *const keep[] = {"name", "resourceVersion", "creationTimestamp", "labels"};
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, keep[i]);
        if (v)
            cJSON_AddItemToObject(m, keep[i], cJSON_Duplicate(v, 1));
    }
    const cJSON *nspec = cJSON_GetObjectItemCaseSensitive(node, "spec");
    const cJSON *taints = cJSON_GetObjectItemCaseSensitive(nspec, "taints");
    cJSON *spec = cJSON_AddObjectToObject(out, "spec");
    if (taints)
        cJSON_AddItemToObject(spec, "taints", cJSON_Duplicate(taints, 1));
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(nspec, "unschedulable")))
        cJSON_AddTrueToObject(spec, "unschedulable");
    const cJSON *nstatus = cJSON_GetObjectItemCaseSensitive(node, "status");
    cJSON *status = cJSON_AddObjectToObject(out, "status");
    cJSON *addrs = cJSON_AddArrayToObject(status, "addresses");
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(nstatus, "addresses"))
        if (json_str(a, "type", NULL) && strcmp(json_str(a, "type", NULL), "InternalIP") == 0)
            cJSON_AddItemToArray(addrs, cJSON_Duplicate(a, 1));
    static const char *const capacity[] = {"cpu", NULL}, *const allocatable[] = {"cpu", "memory", "pods", NULL};
    static const char *const *keep_res[] = {capacity, allocatable};
    static const char *const res_names[] = {"capacity", "allocatable"};
    for (size_t k = 0; k < 2; k++) {
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(nstatus, res_names[k]);
        if (!src)
            continue;
        cJSON *dst = cJSON_AddObjectToObject(status, res_names[k]);
        for (size_t i = 0; keep_res[k][i]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, keep_res[k][i]);
            if (v)
                cJSON_AddItemToObject(dst, keep_res[k][i], cJSON_Duplicate(v, 1));
        }
    }
    return out;
}
