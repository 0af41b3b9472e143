/* mco: the MachineConfig operator stand-in (see mco.h). */
#include "hack/sim/mco.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"
#include "hack/sim/drain.h"
#include "hack/sim/mcopool.h"
#include "base/logging.h"

/* A machine being updated by its daemon. */
struct update {
    char *node;
    char *target;
    struct drain *drain;
    bool degraded;
    bool done; /* updated; kept until the node cache shows it, so it is not started again */
};

struct mco {
    struct sim *s;
    bool pools_ensured;
    bool compact_labelled; /* mco.compact: the role labels are on the simulated nodes */
    struct update *updates;
    size_t n_updates, updates_cap;
};

struct mco *mco_new(struct sim *s)
{
    struct mco *m = calloc(1, sizeof(*m));
    if (m)
        m->s = s;
    return m;
}

struct relabel {
    struct sim *s;
    bool on;
    int rc;
};

static int relabel_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct relabel *r = ud;
    const char *name = jx_str0(obj, "metadata.name");
    cJSON *patch = cJSON_CreateObject();
    cJSON *labels = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "labels");
    const char *keys[] = {"node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"};
    for (size_t k = 0; k < 2; k++) {
        if (r->on)
            cJSON_AddStringToObject(labels, keys[k], "");
        else
            cJSON_AddNullToObject(labels, keys[k]);
    }
    char *path = kube_path("v1", NULL, "nodes", name, NULL);
    if (sim_merge_patch(r->s, path, patch, name) < 0)
        r->rc = -1;
    free(path);
    cJSON_Delete(patch);
    return 0;
}

/* The compact-cluster role labels on or off every simulated node. Returns 0, -1 when a
 * patch failed. */
static int label_masters(struct mco *m, bool on)
{
    struct relabel r = {.s = m->s, .on = on};
    kube_informer_foreach(m->s->nodes, relabel_cb, &r);
    if (on && r.rc == 0)
        log_info("mco: compact cluster: the simulated nodes carry the master role");
    return r.rc;
}

void mco_free(struct mco *m)
{
    if (!m)
        return;
    if (m->compact_labelled)
        label_masters(m, false);
    for (size_t i = 0; i < m->n_updates; i++) {
        if (m->updates[i].drain)
            log_warn("mco: stopping with a machine update in progress", "node", m->updates[i].node);
        drain_free(m->updates[i].drain);
        free(m->updates[i].node);
        free(m->updates[i].target);
    }
    free(m->updates);
    free(m);
}

static char *mc_path(const char *resource, const char *name, int status)
{
    return kube_path(SIM_MC_GV, NULL, resource, name, status ? "status" : NULL);
}

/* ---- pools ---- */

static cJSON *base_config(const char *name, const char *role)
{
    cJSON *mc = cJSON_CreateObject();
    cJSON_AddStringToObject(mc, "apiVersion", SIM_MC_GV);
    cJSON_AddStringToObject(mc, "kind", "MachineConfig");
    cJSON *md = cJSON_AddObjectToObject(mc, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "labels"), MCO_ROLE_LABEL, role);
    cJSON *spec = cJSON_AddObjectToObject(mc, "spec");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "config"), "ignition"), "version",
                            "3.2.0");
    return mc;
}

int mco_create_machine_config(struct mco *m, const char *name, const char *role, char *const *kargs, size_t n)
{
    cJSON *mc = base_config(name, role);
    cJSON *args = cJSON_AddArrayToObject(cJSON_GetObjectItem(mc, "spec"), "kernelArguments");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(kargs[i]));
    char *path = mc_path("machineconfigs", NULL, 0);
    int rc = sim_create_once(m->s, path, mc, NULL, name);
    free(path);
    cJSON_Delete(mc);
    if (rc == 0) {
        log_info("machineconfig created", "name", name, "role", role);
        record_add(m->s->rec, "machineconfig", "name", name, "role", role, NULL);
    }
    return rc;
}

/* The pool's machineConfigSelector: its own role; a custom pool (neither master nor worker)
 * inherits the worker MachineConfigs as OpenShift's custom pools do: role In (worker, pool). */
static void add_config_selector(cJSON *spec, const char *pool)
{
    cJSON *sel = cJSON_AddObjectToObject(spec, "machineConfigSelector");
    if (strcmp(pool, "master") == 0 || strcmp(pool, "worker") == 0) {
        cJSON_AddStringToObject(cJSON_AddObjectToObject(sel, "matchLabels"), MCO_ROLE_LABEL, pool);
        return;
    }
    cJSON *expr = cJSON_CreateObject();
    cJSON_AddStringToObject(expr, "key", MCO_ROLE_LABEL);
    cJSON_AddStringToObject(expr, "operator", "In");
    cJSON *values = cJSON_AddArrayToObject(expr, "values");
    cJSON_AddItemToArray(values, cJSON_CreateString("worker"));
    cJSON_AddItemToArray(values, cJSON_CreateString(pool));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(sel, "matchExpressions"), expr);
}

static void ensure_pools(struct mco *m)
{
    struct sim *s = m->s;
    bool ok = true;
    for (size_t i = 0; i < s->sc->n_mco_pools; i++) {
        const char *pool = s->sc->mco_pools[i];
        char base[128];
        snprintf(base, sizeof(base), "00-%s", pool);
        if (!kube_informer_get(s->mcs, NULL, base)) {
            cJSON *mc = base_config(base, pool);
            char *path = mc_path("machineconfigs", NULL, 0);
            ok = sim_create_once(s, path, mc, NULL, base) == 0 && ok;
            free(path);
            cJSON_Delete(mc);
        }
        if (kube_informer_get(s->mcps, NULL, pool))
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "apiVersion", SIM_MC_GV);
        cJSON_AddStringToObject(o, "kind", "MachineConfigPool");
        cJSON *md = cJSON_AddObjectToObject(o, "metadata");
        cJSON_AddStringToObject(md, "name", pool);
        char label[128];
        snprintf(label, sizeof(label), "machineconfiguration.openshift.io/mco-built-in");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "labels"), label, "");
        cJSON *spec = cJSON_AddObjectToObject(o, "spec");
        add_config_selector(spec, pool);
        char role[128];
        snprintf(role, sizeof(role), "node-role.kubernetes.io/%s", pool);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "nodeSelector"), "matchLabels"),
                                role, "");
        cJSON_AddNumberToObject(spec, "maxUnavailable", 1);
        bool paused = false;
        for (size_t k = 0; k < s->sc->n_mco_paused; k++)
            paused = paused || strcmp(s->sc->mco_paused[k], pool) == 0;
        cJSON_AddBoolToObject(spec, "paused", paused);
        char *path = mc_path("machineconfigpools", NULL, 0);
        if (sim_create_once(s, path, o, NULL, pool) == 0)
            log_info("machineconfigpool created", "pool", pool);
        else
            ok = false;
        free(path);
        cJSON_Delete(o);
    }
    m->pools_ensured = ok;
}

/* ---- per pool ---- */

struct gather {
    const cJSON *pool;
    const cJSON **items;
    size_t n, cap;
    bool nodes;                /* gather nodes (else MachineConfigs) */
    const cJSON *const *pools; /* nodes: every pool, to find a node's primary one */
    size_t n_pools;
};

static int gather_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct gather *g = ud;
    const cJSON *o = obj;
    if (g->nodes ? !jx_eq(mcopool_primary(g->pools, g->n_pools, o), jx_str(g->pool, "metadata.name"))
                 : !mcopool_selects(g->pool, o))
        return 0;
    if (BASE_GROW(g->items, g->n + 1, g->cap) < 0)
        return 1;
    g->items[g->n++] = o;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(jx_str0(*(const cJSON *const *)a, "metadata.name"),
                  jx_str0(*(const cJSON *const *)b, "metadata.name"));
}

static void annotate_node(struct sim *s, const char *node, const char *current, const char *desired, const char *state,
                          const char *reason)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON *ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations");
    if (current)
        cJSON_AddStringToObject(ann, MCO_CURRENT, current);
    if (desired)
        cJSON_AddStringToObject(ann, MCO_DESIRED, desired);
    if (state)
        cJSON_AddStringToObject(ann, MCO_STATE, state);
    if (reason)
        cJSON_AddStringToObject(ann, MCO_REASON, reason);
    char *path = kube_path("v1", NULL, "nodes", node, NULL);
    sim_merge_patch(s, path, patch, node);
    free(path);
    cJSON_Delete(patch);
}

static struct update *update_of(struct mco *m, const char *node)
{
    for (size_t i = 0; i < m->n_updates; i++)
        if (strcmp(m->updates[i].node, node) == 0)
            return &m->updates[i];
    return NULL;
}

static void start_update(struct mco *m, const char *pool, const char *node, const char *target)
{
    if (BASE_GROW(m->updates, m->n_updates + 1, m->updates_cap) < 0)
        return;
    struct update *u = &m->updates[m->n_updates];
    memset(u, 0, sizeof(*u));
    u->node = strdup(node);
    u->target = strdup(target);
    u->drain = drain_new(m->s, node, m->s->sc->mco_reboot_delay_ms);
    if (!u->node || !u->target || !u->drain) {
        drain_free(u->drain);
        free(u->node);
        free(u->target);
        return;
    }
    m->n_updates++;
    annotate_node(m->s, node, NULL, target, "Working", "");
    log_info("mco: machine update started", "pool", pool, "node", node, "config", target);
    record_add(m->s->rec, "mco-node", "pool", pool, "node", node, "phase", "Working", "config", target, NULL);
}

/* The daemon's part for one machine; returns true when it finished (u is then removed). */
static bool step_update(struct mco *m, size_t idx)
{
    struct sim *s = m->s;
    struct update *u = &m->updates[idx];
    if (u->done) {
        const cJSON *node = sim_node(s, u->node);
        if (node && !jx_eq(jx_annotation(node, MCO_CURRENT), u->target))
            return false;
        free(u->node);
        free(u->target);
        m->updates[idx] = m->updates[--m->n_updates];
        return true;
    }
    enum drain_state st = drain_step(u->drain, 1);
    if (st == DRAIN_EVICTING && !u->degraded && drain_elapsed_ms(u->drain) > (uint64_t)s->sc->mco_drain_timeout_ms) {
        char reason[512];
        snprintf(reason, sizeof(reason), "failed to drain node %s after %llu seconds", u->node,
                 (unsigned long long)(drain_elapsed_ms(u->drain) / 1000));
        annotate_node(s, u->node, NULL, NULL, "Degraded", reason);
        u->degraded = true;
        log_warn("mco: machine degraded", "node", u->node, "reason", reason);
        record_add(s->rec, "mco-node", "node", u->node, "phase", "Degraded", "reason", reason, NULL);
    }
    if (st != DRAIN_REBOOTING || !drain_reboot_over(u->drain))
        return false;
    /* rebooted into the new configuration */
    annotate_node(s, u->node, u->target, u->target, "Done", "");
    if (drain_step(u->drain, 0) != DRAIN_DONE)
        return false;
    log_info("mco: machine updated", "node", u->node, "config", u->target);
    record_add(s->rec, "mco-node", "node", u->node, "phase", "Done", "config", u->target, NULL);
    drain_free(u->drain);
    u->drain = NULL;
    u->done = true;
    return false;
}

static int gather_pool(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct gather *g = ud;
    if (BASE_GROW(g->items, g->n + 1, g->cap) < 0)
        return 1;
    g->items[g->n++] = obj;
    return 0;
}

static void sync_pool(struct mco *m, const cJSON *pool, const struct gather *pools)
{
    struct sim *s = m->s;
    const char *pool_name = jx_str0(pool, "metadata.name");

    /* render */
    struct gather mcs = {.pool = pool};
    kube_informer_foreach(s->mcs, gather_cb, &mcs);
    cJSON *source = NULL;
    cJSON *rendered = mcopool_render(pool, mcs.items, mcs.n, &source);
    free(mcs.items);
    if (!rendered)
        return;
    const char *target = jx_str0(rendered, "metadata.name");
    if (!kube_informer_get(s->mcs, NULL, target)) {
        char *path = mc_path("machineconfigs", NULL, 0);
        if (sim_create_once(s, path, rendered, NULL, target) == 0)
            log_info("mco: rendered config created", "pool", pool_name, "config", target);
        free(path);
    }
    if (!jx_eq(jx_str(pool, "spec.configuration.name"), target)) {
        cJSON *patch = cJSON_CreateObject();
        cJSON *cfg = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "spec"), "configuration");
        cJSON_AddStringToObject(cfg, "name", target);
        cJSON_AddItemToObject(cfg, "source", cJSON_Duplicate(source, 1));
        char *path = mc_path("machineconfigpools", pool_name, 0);
        if (sim_merge_patch(s, path, patch, pool_name) == 0) {
            log_info("mco: pool targets a new configuration", "pool", pool_name, "config", target);
            record_add(s->rec, "mco-pool", "pool", pool_name, "config", target, "phase", "Rendered", NULL);
        }
        free(path);
        cJSON_Delete(patch);
    }

    /* machines */
    struct gather nodes = {.pool = pool, .nodes = true, .pools = pools->items, .n_pools = pools->n};
    kube_informer_foreach(s->nodes, gather_cb, &nodes);
    if (nodes.n)
        qsort(nodes.items, nodes.n, sizeof(*nodes.items), by_name);
    int busy = 0;
    for (size_t i = 0; i < nodes.n; i++) {
        const char *name = jx_str0(nodes.items[i], "metadata.name");
        if (!jx_annotation(nodes.items[i], MCO_CURRENT) && !update_of(m, name)) {
            /* a machine that never ran a config boots into the current one */
            annotate_node(s, name, target, target, "Done", "");
            continue;
        }
        busy += update_of(m, name) != NULL;
    }
    bool paused = jx_bool(pool, "spec.paused", false);
    /* at most spec.maxUnavailable nodes updating at once, default 1 (getAllCandidateMachines in
     * the machine-config-operator's pkg/controller/node/node_controller.go) */
    int max_unavailable = (int)jx_num(pool, "spec.maxUnavailable", 1);
    if (max_unavailable < 1)
        max_unavailable = 1;
    for (size_t i = 0; i < nodes.n && !paused && busy < max_unavailable; i++) {
        const char *name = jx_str0(nodes.items[i], "metadata.name");
        const char *cur = jx_annotation(nodes.items[i], MCO_CURRENT);
        if (!cur || jx_eq(cur, target) || update_of(m, name))
            continue;
        start_update(m, pool_name, name, target);
        busy++;
    }

    /* status */
    struct mcopool_counts c;
    mcopool_count(nodes.items, nodes.n, target, &c);
    char now[32];
    cJSON *st = mcopool_status(pool, target, source, &c, sim_timestamp(now, sizeof(now)));
    if (!mcopool_status_equal(st, jx_get(pool, "status"))) {
        cJSON *patch = cJSON_CreateObject();
        cJSON_AddItemToObject(patch, "status", st);
        st = NULL;
        char *path = mc_path("machineconfigpools", pool_name, 1);
        if (sim_merge_patch(s, path, patch, pool_name) == 0) {
            char counts[64];
            snprintf(counts, sizeof(counts), "%d/%d", c.updated, c.machines);
            bool updated = c.updated == c.machines;
            log_info("mco: pool status", "pool", pool_name, "updated", counts, "degraded", c.degraded ? "yes" : "no");
            if (updated && !jx_condition_true(pool, "Updated"))
                record_add(s->rec, "mco-pool", "pool", pool_name, "config", target, "phase", "Updated", NULL);
        }
        free(path);
        cJSON_Delete(patch);
    }
    cJSON_Delete(st);
    free(nodes.items);
    cJSON_Delete(source);
    cJSON_Delete(rendered);
}

void mco_sync(struct mco *m)
{
    if (m->s->sc->mco_compact && !m->compact_labelled)
        m->compact_labelled = label_masters(m, true) == 0;
    if (!m->pools_ensured)
        ensure_pools(m);
    for (size_t i = 0; i < m->n_updates;)
        if (!step_update(m, i))
            i++;
    struct gather pools = {0};
    kube_informer_foreach(m->s->mcps, gather_pool, &pools);
    for (size_t i = 0; i < m->s->sc->n_mco_pools; i++) {
        const cJSON *pool = kube_informer_get(m->s->mcps, NULL, m->s->sc->mco_pools[i]);
        if (pool)
            sync_pool(m, pool, &pools);
    }
    free(pools.items);
}

bool mco_node_psi(const char *node, void *ud)
{
    struct mco *m = ud;
    const cJSON *n = sim_node(m->s, node);
    const char *cur = jx_annotation(n, MCO_CURRENT);
    if (!cur)
        return false;
    const cJSON *rendered = kube_informer_get(m->s->mcs, NULL, cur);
    return rendered && mcopool_has_karg(rendered, "psi=1");
}

bool mco_pools_updated(const struct mco *m)
{
    for (size_t i = 0; i < m->s->sc->n_mco_pools; i++) {
        const cJSON *pool = kube_informer_get(m->s->mcps, NULL, m->s->sc->mco_pools[i]);
        if (!pool || !jx_condition_true(pool, "Updated"))
            return false;
    }
    return true;
}
