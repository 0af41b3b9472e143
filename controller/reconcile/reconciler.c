/* reconciler: the reconcile of one PsiRebalance (see reconciler.h). */
#include "reconcile/reconciler.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/psirebalance.h"
#include "api/reasons.h"
#include "base/jx.h"
#include "base/logging.h"
#include "promcred.h"
#include "reconcile/status/bodies.h"
#include "reconcile/status/conditions.h"
#include "reconcile/mcsync.h"
#include "reconcile/status/ownership.h"
#include "reconcile/sampling.h"
#include "reconcile/tainter.h"
#include "reconcile/taint/taintfsm.h"
#include "reconcile/taint/taintstate.h"

/* What a reconciler remembers of one PsiRebalance between cycles. */
struct cr_state {
    struct reconciler *r;
    char *name;
    struct taintstate taints; /* the state machine's, per node */
    struct sampling sampling; /* pressure source, last sample, metrics state */
    int64_t next_sample_ms;
    int64_t last_success_s;
    int64_t warned_generation; /* the generation whose spec warnings were logged; 0: none */
    char *key_stored;          /* the taint key whose record this process stored last (taintstate.h) */
    struct mover *mover;       /* moves, cooldowns, DryRun's picture */
    struct cr_state *next;
};

struct reconciler {
    struct reconciler_deps deps;
    struct reconciler_counters counters;
    struct cr_state *states;
    struct promcred *promcred; /* made on first use */
};

/* One cycle of one PsiRebalance. */
struct visit {
    struct reconciler *r;
    const cJSON *obj;
    struct api_psirebalance pr;
    struct cr_state *cs;
    struct taintpatch_taint t;
    struct ownership_nodes nodes;
    struct api_status next;
    bool sampled;
    int64_t now_ms;
    const char *fail_reason; /* the first failure, NULL while none */
    char fail_msg[512];
};

static int64_t now_s(int64_t now_ms)
{
    return now_ms / 1000;
}

static void fail(struct visit *v, const char *reason, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct visit *v, const char *reason, const char *fmt, ...)
{
    if (v->fail_reason)
        return;
    v->fail_reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->fail_msg, sizeof(v->fail_msg), fmt, ap);
    va_end(ap);
}

/* ---- per-PsiRebalance state ---- */

static void state_free(struct cr_state *cs)
{
    taintstate_free(&cs->taints);
    sampling_free(&cs->sampling);
    mover_free(cs->mover);
    free(cs->key_stored);
    free(cs->name);
    free(cs);
}

static struct cr_state *state_get(struct reconciler *r, const char *name)
{
    for (struct cr_state *cs = r->states; cs; cs = cs->next)
        if (strcmp(cs->name, name) == 0)
            return cs;
    struct cr_state *cs = calloc(1, sizeof(*cs));
    if (!cs)
        return NULL;
    cs->r = r;
    sampling_init(&cs->sampling);
    if (!(cs->name = strdup(name)) || !(cs->mover = mover_new())) {
        state_free(cs);
        return NULL;
    }
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

/* ---- the nodes this PsiRebalance owns ---- */

static int collect_node(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    return obj ? ownership_add_node(ud, obj) : 0;
}

struct rivals_ctx {
    struct ownership_rivals rivals;
    const char *self, *self_created;
};

static int collect_rival(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct rivals_ctx *c = ud;
    return obj ? ownership_add_rival(&c->rivals, obj, c->self, c->self_created) : 0;
}

/* Mark the owned nodes; NodeConflict reports the selected ones an older PsiRebalance owns. */
static void own_nodes(struct visit *v)
{
    const cJSON *meta = jx_at(v->obj, "metadata");
    struct rivals_ctx c = {{NULL, 0, 0}, jx_str(meta, "name"), jx_str(meta, "creationTimestamp")};
    const char *owner = NULL;
    size_t conflicts = 0;
    if (kube_informer_foreach(v->r->deps.nodes, collect_node, &v->nodes) != 0 ||
        kube_informer_foreach(v->r->deps.psirebalances, collect_rival, &c) != 0)
        fail(v, API_REASON_OUT_OF_MEMORY, "listing the selected nodes ran out of memory"); /* no node is owned then */
    else
        conflicts = ownership_mark(&v->nodes, &v->pr.spec.node_selector, &c.rivals, &owner);
    if (conflicts) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%zu selected nodes are owned by an older PsiRebalance (%s); they are left to it",
                 conflicts, owner);
        conditions_set(&v->next, CONDITIONS_NODE_CONFLICT, API_CONDITION_TRUE, API_REASON_NODE_CONFLICT, msg,
                       v->pr.generation, now_s(v->now_ms));
    } else {
        conditions_remove(&v->next, CONDITIONS_NODE_CONFLICT);
    }
    ownership_rivals_free(&c.rivals);
}

/* ---- writes to the PsiRebalance ---- */

/* Add or drop our finalizer (bodies_finalizer_patch). Returns 0, or -1 with err. */
static int set_finalizer(struct reconciler *r, const cJSON *obj, bool present, struct kube_err *err)
{
    kube_err_clear(err);
    cJSON *patch = bodies_finalizer_patch(obj, present);
    char *path = kube_path(API_API_VERSION, NULL, API_PLURAL, jx_str(obj, "metadata.name"), NULL);
    cJSON *reply = NULL;
    if (!patch || !path)
        kube_err_set(err, 0, "Encode", "finalizer patch: out of memory");
    else
        reply = kube_rest_patch(r->deps.client, path, KUBE_PATCH_JSON, patch, NULL, err);
    cJSON_Delete(patch);
    free(path);
    if (!reply)
        return -1;
    cJSON_Delete(reply);
    return 0;
}

/* PUT the status subresource with next; on 409 read the object again and retry once.
 * Returns 0, or -1 with err. */
static int write_status(struct reconciler *r, const cJSON *obj, const struct api_status *next, struct kube_err *err)
{
    const char *name = jx_str(obj, "metadata.name");
    char *path = kube_path(API_API_VERSION, NULL, API_PLURAL, name, "status");
    cJSON *body = bodies_status(obj);
    int rc = -1;
    kube_err_set(err, 0, "Encode", "status of %s: out of memory", name ? name : "");
    for (int attempt = 0; path && body && attempt < 2; attempt++) {
        cJSON *enc = api_status_encode(next);
        if (!enc || !cJSON_AddItemToObject(body, "status", enc)) {
            cJSON_Delete(enc);
            kube_err_set(err, 0, "Encode", "status of %s: out of memory", name ? name : "");
            break;
        }
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
        char *again = kube_path(API_API_VERSION, NULL, API_PLURAL, name, NULL);
        cJSON *fresh = again ? kube_rest_get(r->deps.client, again, err) : NULL;
        if (!again)
            kube_err_set(err, 0, "Encode", "status of %s: out of memory", name ? name : "");
        free(again);
        cJSON_Delete(body);
        body = fresh ? bodies_status(fresh) : NULL;
        cJSON_Delete(fresh);
    }
    cJSON_Delete(body);
    free(path);
    return rc;
}

/* ---- the parts of a cycle ---- */

/* The Prometheus client settings of spec (promcred.h) into *cfg; NULL on no memory. */
static const struct psi_prom_config *prom_config(struct reconciler *r, const struct api_spec *spec,
                                                 struct psi_prom_config *cfg)
{
    if (!r->promcred && !(r->promcred = promcred_new(r->deps.client)))
        return NULL;
    promcred_config(r->promcred, spec, cfg);
    return cfg;
}

static int finalize(struct reconciler *r, const cJSON *obj, const struct api_psirebalance *pr, int64_t now_ms)
{
    if (!bodies_has_finalizer(obj))
        return 0;
    struct taintpatch_taint t;
    char why[256];
    struct tainter tw = {r->deps.client, r->deps.events, &r->counters};
    if (taintpatch_taint_from_spec(&pr->spec, pr->name, &t, why, sizeof(why)) < 0)
        t = (struct taintpatch_taint){NULL, NULL, pr->name};
    int failures = 0;
    static const char deleted[] = "PsiRebalance deleted: pressure taint removed";
    if (t.key)
        failures += tainter_remove_all(&tw, r->deps.nodes, &t, deleted, now_ms);
    for (size_t i = 0; i < pr->status.ntaint_keys; i++) { /* and every key it wrote before */
        struct taintpatch_taint old = {pr->status.taint_keys[i], t.effect, pr->name};
        if (!t.key || strcmp(old.key, t.key) != 0)
            failures += tainter_remove_all(&tw, r->deps.nodes, &old, deleted, now_ms);
    }
    if (failures > 0)
        return -1; /* the finalizer stays until every taint is off */
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
    char *joined = api_errors_join(errs, "; ");
    const char *msg = joined ? joined : "invalid spec";
    int64_t now = now_s(now_ms);
    conditions_set(&next, API_CONDITION_READY, API_CONDITION_FALSE, API_REASON_INVALID_SPEC, msg, pr->generation, now);
    conditions_set(&next, API_CONDITION_DEGRADED, API_CONDITION_TRUE, API_REASON_INVALID_SPEC, msg, pr->generation,
                   now);
    next.observed_generation = pr->generation;
    log_error("invalid psirebalance: nothing done", "psirebalance", pr->name, "error", msg);
    int rc = 0;
    struct kube_err err;
    if (api_status_changed(&pr->status, &next, NULL) && write_status(r, obj, &next, &err) < 0) {
        log_error("status not written", "psirebalance", pr->name, "error", err.msg);
        rc = -1;
    }
    free(joined);
    api_status_free(&next);
    return rc;
}

/* MachineConfigs: made as planned, never deleted (mcsync.h). */
static void machine_configs(struct visit *v)
{
    struct reconciler *r = v->r;
    struct mcsync m = {r->deps.client, r->deps.events, r->deps.machineconfigs, r->deps.pools};
    struct mcsync_in in = {v->obj, &v->pr.spec, &v->nodes, v->pr.generation, v->now_ms};
    if (mcsync_ensure(&m, &in, &v->next) < 0)
        fail(v, API_REASON_MACHINE_CONFIG_WRITE_FAILED, "a MachineConfig could not be written (see the operator log)");
    /* Not managing PSI here: what the nodes report says whether it is on. */
    const struct sampling *sm = &v->cs->sampling;
    if (!v->pr.spec.machine_config.enabled && sm->metrics == 1 && !sm->partial && sm->measured > 0)
        conditions_set(&v->next, API_CONDITION_PSI_ENABLED, API_CONDITION_TRUE, API_REASON_PRESSURE_REPORTED,
                       "spec.machineConfig.enabled is false, and every selected node reports PSI", v->pr.generation,
                       now_s(v->now_ms));
}

/* Record spec.taint.key in status.taintKeys, and take this PsiRebalance's taints under every
 * other recorded key off every node (the key changed): a key is forgotten once none is left. */
static void retire_taint_keys(struct visit *v)
{
    if (api_status_add_taint_key(&v->next, v->t.key) < 0) {
        fail(v, API_REASON_OUT_OF_MEMORY, "out of memory recording the taint key");
        return;
    }
    struct tainter tw = {v->r->deps.client, v->r->deps.events, &v->r->counters};
    for (size_t i = 0; i < v->next.ntaint_keys;) {
        struct taintpatch_taint old = {v->next.taint_keys[i], v->t.effect, v->t.owner};
        if (strcmp(old.key, v->t.key) == 0) {
            i++;
            continue;
        }
        int failures = tainter_remove_all(&tw, v->r->deps.nodes, &old,
                                          "taint key changed: the taint under the old key removed", v->now_ms);
        if (taintstate_key_forget(old.key, v->t.key, failures)) {
            api_status_remove_taint_key(&v->next, old.key);
        } else {
            fail(v, API_REASON_TAINT_WRITE_FAILED, "taints under the old key %s could not all be removed", old.key);
            i++;
        }
    }
}

/* The tainter's before_adds: the status as stored gets spec.taint.key before the first taint
 * under it is added (taintstate.h), so that a crash between the two cannot lose the record. */
static int record_taint_key(size_t adds, void *ud)
{
    struct visit *v = ud;
    if (!taintstate_key_record_first(&v->pr.status, v->cs->key_stored, v->t.key, adds))
        return 0;
    struct api_status rec;
    struct kube_err err;
    kube_err_set(&err, 0, "Encode", "out of memory");
    int rc = -1;
    if (api_status_copy(&rec, &v->pr.status) == 0) {
        if (api_status_add_taint_key(&rec, v->t.key) >= 0)
            rc = write_status(v->r, v->obj, &rec, &err);
        api_status_free(&rec);
    }
    if (rc < 0) {
        log_error("taint key not recorded: no taint added", "psirebalance", v->pr.name, "key", v->t.key, "error",
                  err.msg);
        return -1;
    }
    free(v->cs->key_stored);
    v->cs->key_stored = strdup(v->t.key); /* NULL on no memory: the record is stored again next time */
    log_info("taint key recorded", "psirebalance", v->pr.name, "key", v->t.key);
    return 0;
}

/* A read of this PsiRebalance's on the event loop ended: reconcile it (sampling_in.wake,
 * gather_usage_read's wake). */
static void wake(void *ud)
{
    struct cr_state *cs = ud;
    if (cs->r->deps.wake)
        cs->r->deps.wake(cs->r->deps.wake_ud, cs->name);
}

/* When the interval has passed (and nothing failed yet): start a read; when a read has ended,
 * take it and step the taints. */
static void sample_and_taint(struct visit *v)
{
    struct reconciler *r = v->r;
    struct cr_state *cs = v->cs;
    if (v->fail_reason)
        return;
    const cJSON *meta = jx_at(v->obj, "metadata");
    struct kube_event_ref ref = {API_API_VERSION, API_KIND, NULL, jx_str(meta, "name"), jx_str(meta, "uid")};
    struct psi_prom_config cfg;
    struct sampling_in in = {.client = r->deps.client,
                             .events = r->deps.events,
                             .ref = &ref,
                             .spec = &v->pr.spec,
                             .nodes = &v->nodes,
                             .prom = prom_config(r, &v->pr.spec, &cfg),
                             .now_ms = v->now_ms,
                             .loop = r->deps.loop,
                             .wake = wake,
                             .wake_ud = cs};
    if (!sampling_ready(&cs->sampling)) {
        if (v->now_ms < cs->next_sample_ms || sampling_busy(&cs->sampling))
            return;
        cs->next_sample_ms = v->now_ms + v->pr.spec.metrics.interval_ms;
        sampling_start(&cs->sampling, &in);
        if (!sampling_ready(&cs->sampling))
            return; /* the read runs on the loop: its end wakes this PsiRebalance */
    }
    v->sampled = sampling_take(&cs->sampling, &in) == 0;
    r->counters.samples++;
    r->counters.sample_failures += !v->sampled;
    r->counters.last_sample_seconds = cs->sampling.last_seconds;
    if (!v->sampled)
        return;
    struct tainter tw = {r->deps.client, r->deps.events, &r->counters};
    struct tainter_cycle c = {&v->pr.spec, &v->nodes,        &v->t, &ref,         &cs->sampling, &cs->taints,
                              v->now_ms,   record_taint_key, v,     &v->pr.status};
    if (cs->key_stored && strcmp(cs->key_stored, v->t.key) != 0) { /* a record of another key: not this one's */
        free(cs->key_stored);
        cs->key_stored = NULL;
    }
    int failures = tainter_step(&tw, &c, &v->next);
    if (failures != 0)
        fail(v, API_REASON_TAINT_WRITE_FAILED, "%d taint writes failed (see the operator log and Events)",
             failures < 0 ? 1 : failures);
}

/* The owned nodes as the mover sees them; NULL on no memory. */
static struct mover_node *mover_nodes(const struct visit *v, size_t *n)
{
    struct mover_node *mn = calloc(v->nodes.n ? v->nodes.n : 1, sizeof(*mn));
    if (!mn)
        return NULL;
    struct taintfsm_params fsm;
    taintfsm_params_from_spec(&v->pr.spec, &fsm);
    *n = 0;
    for (size_t i = 0; i < v->nodes.n; i++) {
        const struct ownership_node *o = &v->nodes.v[i];
        if (!o->owned)
            continue;
        const struct taintstate_record *rec = taintstate_find(&v->cs->taints, o->name);
        const cJSON *taints = o->node->taints;
        struct mover_node *m = &mn[(*n)++];
        *m = (struct mover_node){o->name, o->node, rec ? rec->tainted : taintpatch_has(taints, &v->t), {NAN, NAN, NAN}};
        const struct psi_node_sample *s = sampling_of(&v->cs->sampling, o->name);
        for (int res = 0; res < API_RESOURCES; res++)
            m->pressure[res] = sampling_reading(s, (enum api_resource)res);
        /* a node pressured below the utilisation floor is no source either */
        m->pressure[API_RESOURCE_CPU] =
            taintfsm_effective_pressure(&fsm, m->pressure[API_RESOURCE_CPU], sampling_utilization(s));
    }
    return mn;
}

/* Add what the mover counted this cycle to the reconciler's counters. */
static void count_moves(struct reconciler *r, const struct mover_stats *before, const struct mover_stats *after)
{
    r->counters.evictions += after->evictions - before->evictions;
    r->counters.migrations_requested += after->migrations_requested - before->migrations_requested;
    r->counters.dry_run_moves += after->dry_run_moves - before->dry_run_moves;
    r->counters.evictions_refused += after->refused - before->refused;
    r->counters.eviction_failures += after->eviction_failures - before->eviction_failures;
    r->counters.migrations_succeeded += after->migrations_succeeded - before->migrations_succeeded;
    r->counters.migrations_failed += after->migrations_failed - before->migrations_failed;
    r->counters.predictions_checked += after->predictions_checked - before->predictions_checked;
    r->counters.prediction_error_source += after->prediction_error_source - before->prediction_error_source;
    r->counters.prediction_error_destination +=
        after->prediction_error_destination - before->prediction_error_destination;
    r->counters.migrations_timed += after->migrations_timed - before->migrations_timed;
    r->counters.migrations_estimated += after->migrations_estimated - before->migrations_estimated;
    r->counters.migration_seconds += after->migration_seconds - before->migration_seconds;
    r->counters.migration_expected_seconds += after->migration_expected_seconds - before->migration_expected_seconds;
    r->counters.migration_estimate_error_seconds +=
        after->migration_estimate_error_seconds - before->migration_estimate_error_seconds;
}

/* Run the mover over the owned nodes with this cycle's readings. */
static void rebalance(struct visit *v)
{
    struct reconciler *r = v->r;
    size_t n = 0;
    struct mover_node *mn = mover_nodes(v, &n);
    if (!mn) {
        fail(v, API_REASON_OUT_OF_MEMORY, "out of memory");
        return;
    }
    const struct api_spec *spec = &v->pr.spec;
    struct psi_prom_config cfg;
    struct mover_deps d = {.client = r->deps.client,
                           .events = r->deps.events,
                           .vmis = r->deps.vmis,
                           .vmims = r->deps.vmims,
                           .pods = r->deps.pods,
                           .pods_ud = r->deps.pods_ud,
                           .kubevirts = r->deps.kubevirts,
                           .pools = r->deps.pools,
                           .loop = r->deps.loop,
                           .wake = wake,
                           .wake_ud = v->cs};
    struct mover_input in = {.obj = v->obj,
                             .pr = &v->pr,
                             .nodes = mn,
                             .nnodes = n,
                             .sampled = v->sampled,
                             .metrics_ok = v->cs->sampling.metrics == 1,
                             .prom = spec->metrics.source == API_SOURCE_PROMETHEUS ? prom_config(r, spec, &cfg) : NULL,
                             .now_ms = v->now_ms};
    struct mover_stats before = *mover_stats(v->cs->mover);
    const char *reason = NULL;
    char msg[512];
    if (mover_run(v->cs->mover, &d, &in, &v->next, &reason, msg, sizeof(msg)) < 0)
        fail(v, reason ? reason : API_REASON_REBALANCE_FAILED, "%s", msg);
    count_moves(r, &before, mover_stats(v->cs->mover));
    free(mn);
}

/* Drop next's machineConfigs entries: mcsync_ensure writes them anew each cycle. */
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

/* The conditions, summary and times of the cycle; the status written when it changed.
 * Returns 0, or -1 when it was not written. */
static int conclude(struct visit *v)
{
    struct cr_state *cs = v->cs;
    int64_t now = now_s(v->now_ms);
    if (v->sampled && !v->fail_reason)
        cs->last_success_s = now;
    v->next.summary.nodes = 0;
    for (size_t i = 0; i < v->nodes.n; i++)
        v->next.summary.nodes += v->nodes.v[i].owned;
    struct conditions_cycle cycle = {v->fail_reason == NULL, v->fail_reason, v->fail_msg};
    conditions_derive(&v->next, &cycle, v->pr.generation, now);
    v->next.observed_generation = v->pr.generation;
    v->next.last_successful_cycle_time =
        cs->last_success_s ? cs->last_success_s : v->pr.status.last_successful_cycle_time;
    int64_t interval_s = v->pr.spec.metrics.interval_ms / 1000;
    struct api_status_compare cmp = {interval_s > 60 ? interval_s : 60, 0.5};
    struct kube_err err;
    if (api_status_changed(&v->pr.status, &v->next, &cmp) && write_status(v->r, v->obj, &v->next, &err) < 0) {
        log_error("status not written", "psirebalance", v->pr.name, "error", err.msg);
        return -1;
    }
    return 0;
}

/* The cycle of a living, valid PsiRebalance with our finalizer. Returns 0 or -1. */
static int live_cycle(struct visit *v, int64_t *requeue_ms)
{
    const char *name = v->pr.name;
    char why[256];
    v->cs = state_get(v->r, name);
    if (!v->cs || taintpatch_taint_from_spec(&v->pr.spec, name, &v->t, why, sizeof(why)) < 0) {
        log_error("psirebalance cannot own a taint", "psirebalance", name, "error", v->cs ? why : "out of memory");
        return -1;
    }
    /* next starts as a copy of the status the object has: conditions keep their times, and
     * the per-node entries stay as the last sample left them until a sample replaces them. */
    if (api_status_copy(&v->next, &v->pr.status) < 0) {
        log_error("status not copied", "psirebalance", name, "error", "out of memory");
        return -1;
    }
    clear_machine_configs(&v->next);
    own_nodes(v);
    sample_and_taint(v); /* before the MachineConfigs: a failed write there holds no sample or taint back */
    retire_taint_keys(v);
    machine_configs(v);
    struct sampling *sm = &v->cs->sampling;
    if (sm->metrics >= 0)
        conditions_set(&v->next, API_CONDITION_METRICS_AVAILABLE,
                       sm->metrics && !sm->partial ? API_CONDITION_TRUE : API_CONDITION_FALSE, sm->reason, sm->message,
                       v->pr.generation, now_s(v->now_ms));
    rebalance(v);
    int rc = conclude(v) < 0 || v->fail_reason ? -1 : 0;
    int64_t next_sample = v->cs->next_sample_ms;
    *requeue_ms = next_sample > v->now_ms ? next_sample - v->now_ms : v->pr.spec.metrics.interval_ms;
    return rc;
}

/* Log what decoding the spec warned about (a legacy bearerTokenFile, unknown fields), once
 * per generation. */
static void log_spec_warnings(struct reconciler *r, const char *name, int64_t generation,
                              const struct api_errors *warns)
{
    struct cr_state *cs = warns->n ? state_get(r, name) : NULL;
    if (!cs || cs->warned_generation == generation)
        return;
    cs->warned_generation = generation;
    for (size_t i = 0; i < warns->n; i++)
        log_warn("psirebalance spec warning", "psirebalance", name, "field", warns->v[i].field, "warning",
                 warns->v[i].msg);
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
    struct visit v = {.r = r, .obj = obj, .now_ms = now_ms};
    struct api_errors errs = {0}, warns = {0};
    int invalid = api_psirebalance_decode(obj, &v.pr, &errs, &warns);
    if (!jx_get(obj, "metadata.deletionTimestamp"))
        log_spec_warnings(r, name, v.pr.generation, &warns);
    api_errors_free(&warns);
    int rc;
    struct kube_err err;
    if (jx_get(obj, "metadata.deletionTimestamp")) {
        rc = finalize(r, obj, &v.pr, now_ms);
        if (rc == 0)
            state_forget(r, name);
    } else if (invalid) {
        rc = report_invalid(r, obj, &v.pr, &errs, now_ms);
    } else if (!bodies_has_finalizer(obj) && set_finalizer(r, obj, true, &err) < 0) {
        log_error("finalizer not added", "psirebalance", name, "error", err.msg);
        rc = -1;
    } else {
        rc = live_cycle(&v, requeue_ms);
    }
    if (rc < 0)
        r->counters.cycle_failures++;
    api_status_free(&v.next);
    free(v.nodes.v);
    api_errors_free(&errs);
    api_psirebalance_free(&v.pr);
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

const struct reconciler_counters *reconciler_counters(const struct reconciler *r)
{
    return &r->counters;
}

int64_t reconciler_last_success(const struct reconciler *r, const char *name)
{
    for (const struct cr_state *cs = r->states; cs; cs = cs->next)
        if (strcmp(cs->name, name) == 0)
            return cs->last_success_s;
    return 0;
}

size_t reconciler_unplaceable(const struct reconciler *r, const char *name)
{
    for (const struct cr_state *cs = r->states; cs; cs = cs->next)
        if (strcmp(cs->name, name) == 0)
            return cs->mover ? mover_stats(cs->mover)->unplaceable : 0;
    return 0;
}

void reconciler_foreach_pressure(const struct reconciler *r,
                                 void (*fn)(const char *psirebalance, const char *node, const char *stall,
                                            const char *resource, double percent, void *ud),
                                 void *ud)
{
    for (const struct cr_state *cs = r->states; cs; cs = cs->next) {
        const struct sampling *s = &cs->sampling;
        for (size_t i = 0; s->have_sample && i < s->sample.n_nodes; i++)
            for (int res = 0; res < PSI_NRESOURCES; res++)
                if (s->sample.nodes[i].value[res].known)
                    fn(cs->name, s->sample.nodes[i].name, s->full & PSI_RES_BIT(res) ? "full" : "some",
                       psi_resource_name((enum psi_resource)res), s->sample.nodes[i].value[res].percent, ud);
    }
}
