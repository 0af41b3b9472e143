/* tainter: the taint writes of one PsiRebalance (see tainter.h). */
#include "reconcile/tainter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/reasons.h"
#include "base/jx.h"
#include "kube/multiget.h"
#include "base/logging.h"
#include "reconcile/status/nodestatus.h"
#include "reconcile/notify.h"
#include "reconcile/move/cycle.h"
#include "reconcile/taint/taintevents.h"
#include "reconcile/taint/taintfsm.h"

/* Taint patches in flight at once: as many as keep the write budget's pace (--kube-api-qps,
 * 50 a second by default) at the time a patch takes, between 8 (enough up to 160 ms a patch)
 * and 24 (480 ms). Each in flight costs about 30 KB (libcurl's 16 KiB upload buffer, its
 * receive buffer, the handle and the reply). */
#define TAINTER_LEAST_IN_FLIGHT 8
#define TAINTER_MOST_IN_FLIGHT 24

/* The resourceVersion of a kept node for taintpatch_build (NULL: unknown). */
static const char *rv_of(const struct nodeproj *node)
{
    return node->rv[0] ? node->rv : NULL;
}

int tainter_write(const struct tainter *tw, const struct nodeproj *cached, const struct taintpatch_taint *t,
                  enum taintpatch_op op, char *rv, size_t rvlen, struct kube_err *err)
{
    const char *name = cached->name;
    char *path = kube_path("v1", NULL, "nodes", name, NULL);
    cJSON *fresh = NULL;
    const cJSON *taints = cached->taints;
    const char *node_rv = rv_of(cached);
    int rc = -1;
    kube_err_clear(err);
    if (!path)
        kube_err_set(err, 0, "Encode", "node %s: out of memory", name ? name : "");
    for (int attempt = 0; path && attempt < 2; attempt++) {
        cJSON *patch = NULL;
        char why[256];
        enum taintpatch_result res = taintpatch_build(taints, node_rv, t, op, &patch, why, sizeof(why));
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
        cJSON *reply = kube_rest_patch(tw->client, path, KUBE_PATCH_JSON, patch, NULL, err);
        cJSON_Delete(patch);
        if (reply) {
            const char *after = jx_str(reply, "metadata.resourceVersion");
            snprintf(rv, rvlen, "%s", after ? after : "");
            cJSON_Delete(reply);
            rc = 1;
            break;
        }
        /* the last attempt's refusal is the answer: a read after it would clear err */
        if ((err->status != 422 && err->status != 409) || attempt == 1)
            break;
        cJSON_Delete(fresh);
        fresh = kube_rest_get(tw->client, path, err);
        if (!fresh)
            break;
        taints = jx_get(fresh, "spec.taints");
        node_rv = jx_str(fresh, "metadata.resourceVersion");
    }
    cJSON_Delete(fresh);
    free(path);
    return rc;
}

static int collect_node(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    return obj ? ownership_add_node(ud, obj) : 0;
}

int tainter_remove_all(const struct tainter *tw, const struct kube_informer *nodes, const struct taintpatch_taint *t,
                       const char *why, int64_t now_ms)
{
    struct ownership_nodes all = {0};
    int failures = 0;
    if (kube_informer_foreach(nodes, collect_node, &all) != 0)
        failures++;
    for (size_t i = 0; i < all.n; i++) {
        if (!taintpatch_has_any(all.v[i].node->taints, t))
            continue;
        struct kube_err err;
        char rv[32];
        int wrote = tainter_write(tw, all.v[i].node, t, TAINTPATCH_REMOVE, rv, sizeof(rv), &err);
        if (wrote < 0) {
            log_error("taint not removed", "node", all.v[i].name, "psirebalance", t->owner, "error", err.msg);
            tw->counters->taint_write_failures++;
            failures++;
            continue;
        }
        if (wrote == 0)
            continue; /* gone already */
        tw->counters->taints_removed++;
        log_info("taint removed", "node", all.v[i].name, "psirebalance", t->owner, "key", t->key, "why", why);
        struct kube_event_ref ref = {"v1", "Node", NULL, all.v[i].name, NULL};
        notify_event(tw->events, &ref, "Normal", API_EVENT_UNTAINTED, "Untaint", why, now_ms);
    }
    free(all.v);
    return failures;
}

/* ---- one cycle ---- */

/* The state machine's input: one entry per node it looks at. */
struct step {
    struct taintfsm_input *in;
    const struct nodeproj **node;        /* per input: the cached node */
    struct nodestatus_reading *readings; /* per input */
    size_t n;
    char (*written)[32]; /* per input: resourceVersion after our write */
    bool *done;          /* per input: our write happened */
    struct taintfsm_result res;
};

static void step_free(struct step *s)
{
    free(s->in);
    free(s->node);
    free(s->readings);
    free(s->written);
    free(s->done);
    taintfsm_result_free(&s->res);
}

/* The taintedSince (ms) the stored status lists for node; 0: none. */
static int64_t stored_tainted_since(const struct api_status *st, const char *node)
{
    for (size_t i = 0; st && i < st->nnodes; i++)
        if (st->nodes[i].name && strcmp(st->nodes[i].name, node) == 0)
            return st->nodes[i].tainted_since * 1000;
    return 0;
}

/* The owned nodes and those that still carry our taint, as the state machine sees them. */
static int step_inputs(const struct tainter_cycle *c, struct step *s)
{
    size_t n1 = c->nodes->n ? c->nodes->n : 1;
    s->in = calloc(n1, sizeof(*s->in));
    s->node = calloc(n1, sizeof(*s->node));
    s->readings = calloc(n1, sizeof(*s->readings));
    s->written = calloc(n1, sizeof(*s->written));
    s->done = calloc(n1, sizeof(*s->done));
    if (!s->in || !s->node || !s->readings || !s->written || !s->done)
        return -1;
    for (size_t i = 0; i < c->nodes->n; i++) {
        const struct ownership_node *v = &c->nodes->v[i];
        const cJSON *taints = v->node->taints;
        if (!v->owned && !taintpatch_has_any(taints, c->t))
            continue;
        const struct taintstate_record *rec = taintstate_find(c->state, v->name);
        const struct psi_node_sample *ns = sampling_of(c->sampling, v->name);
        bool behind = taintstate_cache_behind(rec, v->node->rv, c->now_ms);
        s->in[s->n] = (struct taintfsm_input){
            .name = v->name,
            .selected = v->owned,
            .has_prev = rec != NULL,
            .state = rec ? rec->state : API_NODE_UNKNOWN,
            .since_ms = rec ? rec->since_ms : c->now_ms,
            .tainted = behind ? rec->tainted : taintpatch_has(taints, c->t),
            .tainted_since_ms = rec ? rec->tainted_since_ms : stored_tainted_since(c->stored, v->name),
            .utilization = sampling_utilization(ns),
        };
        for (int res = 0; res < API_RESOURCES; res++)
            s->readings[s->n].pressure[res] = sampling_reading(ns, (enum api_resource)res);
        /* judged as the planner judges it: a node hot on any balanced resource is tainted */
        s->in[s->n].pressure = cycle_judged_pressure(c->spec, cycle_resources(c->spec), s->readings[s->n].pressure);
        s->readings[s->n].utilization = s->in[s->n].utilization;
        s->node[s->n++] = v->node;
    }
    return 0;
}

/* Whether the cycle's adds may go: before_adds said so, or there is none. */
static bool adds_may_go(const struct tainter_cycle *c, const struct step *s)
{
    size_t adds = 0;
    for (size_t a = 0; a < s->res.nactions; a++)
        adds += s->res.actions[a].op == TAINTFSM_ADD;
    return adds == 0 || !c->before_adds || c->before_adds(adds, c->before_adds_ud) == 0;
}

/* How one action of the cycle went. */
enum outcome { PENDING, WRITTEN, NOOP, RETRY, FAILED };

/* The cycle's patches, sent at once. */
struct batch {
    const struct tainter_cycle *c;
    struct step *s;
    struct kube_multi_req *req; /* one per patch to send */
    size_t *action;             /* per request: its action */
    char **path, **body;        /* per request, owned */
    size_t nreq;
    enum outcome *out; /* per action */
};

static void batch_free(struct batch *b)
{
    for (size_t i = 0; i < b->nreq; i++) {
        free(b->path[i]);
        cJSON_free(b->body[i]);
    }
    free(b->req);
    free(b->action);
    free(b->path);
    free(b->body);
    free(b->out);
}

static void log_failure(const struct tainter_cycle *c, const struct taintfsm_action *act, const char *why)
{
    log_error(act->op == TAINTFSM_ADD ? "taint not added" : "taint not removed", "node", act->node, "psirebalance",
              c->t->owner, "error", why);
}

/* The patch of action a against the cached node, as request b->nreq; its outcome otherwise.
 * Returns 0, or -1 on no memory. */
static int batch_add(struct batch *b, size_t a)
{
    const struct taintfsm_action *act = &b->s->res.actions[a];
    const struct nodeproj *node = b->s->node[act->input];
    cJSON *patch = NULL;
    char why[256];
    enum taintpatch_op op = act->op == TAINTFSM_ADD ? TAINTPATCH_ADD : TAINTPATCH_REMOVE;
    enum taintpatch_result res = taintpatch_build(node->taints, rv_of(node), b->c->t, op, &patch, why, sizeof(why));
    if (res != TAINTPATCH_PATCH) {
        if (res == TAINTPATCH_FOREIGN)
            snprintf(why, sizeof(why), "the node carries taint %s owned by another PsiRebalance", b->c->t->key);
        if (res != TAINTPATCH_NOOP)
            log_failure(b->c, act, why);
        b->out[a] = res == TAINTPATCH_NOOP ? NOOP : FAILED;
        return 0;
    }
    size_t i = b->nreq;
    b->path[i] = kube_path("v1", NULL, "nodes", act->node, NULL);
    b->body[i] = cJSON_PrintUnformatted(patch);
    cJSON_Delete(patch);
    b->nreq++;
    if (!b->path[i] || !b->body[i])
        return -1;
    b->req[i] = (struct kube_multi_req){"PATCH", b->path[i], "application/json-patch+json", b->body[i]};
    b->action[i] = a;
    return 0;
}

/* kube_multiget_fn: one patch answered. A conflict (the node changed since the cache showed
 * it) is written again from a fresh read afterwards. */
static void batch_done(size_t i, const cJSON *obj, const struct kube_err *err, void *ud)
{
    struct batch *b = ud;
    size_t a = b->action[i];
    const struct taintfsm_action *act = &b->s->res.actions[a];
    if (obj) {
        const char *rv = jx_str(obj, "metadata.resourceVersion");
        snprintf(b->s->written[act->input], sizeof(b->s->written[act->input]), "%s", rv ? rv : "");
        b->out[a] = WRITTEN;
    } else if (err->status == 409 || err->status == 422) {
        b->out[a] = RETRY;
    } else {
        log_failure(b->c, act, err->msg);
        b->out[a] = FAILED;
    }
}

/* Send the patches of the actions whose outcome is PENDING at once (TAINTER_LEAST_IN_FLIGHT
 * to TAINTER_MOST_IN_FLIGHT at a time, at the write budget's pace); those that could not be
 * sent are FAILED. */
static void batch_send(const struct tainter *tw, struct batch *b)
{
    size_t nact = b->s->res.nactions;
    b->req = calloc(nact ? nact : 1, sizeof(*b->req));
    b->action = calloc(nact ? nact : 1, sizeof(*b->action));
    b->path = calloc(nact ? nact : 1, sizeof(*b->path));
    b->body = calloc(nact ? nact : 1, sizeof(*b->body));
    int rc = b->req && b->action && b->path && b->body ? 0 : -1;
    for (size_t a = 0; rc == 0 && a < nact; a++)
        if (b->out[a] == PENDING)
            rc = batch_add(b, a);
    struct kube_err err;
    kube_err_set(&err, 0, "Encode", "out of memory building the taint patches");
    struct kube_multiget_opts o = {.max_in_flight = TAINTER_MOST_IN_FLIGHT, .min_in_flight = TAINTER_LEAST_IN_FLIGHT};
    if (rc == 0 && b->nreq)
        rc = kube_multirequest(tw->client, b->req, b->nreq, &o, batch_done, b, &err);
    for (size_t a = 0; rc < 0 && a < nact; a++)
        if (b->out[a] == PENDING) {
            log_failure(b->c, &b->s->res.actions[a], err.msg);
            b->out[a] = FAILED;
        }
}

/* Make the state machine's writes: every patch at once, then the conflicts one at a time
 * from a fresh read. Adds wait when before_adds says so. Returns the failures, or -1 on no
 * memory. */
static int step_writes(const struct tainter *tw, const struct tainter_cycle *c, struct step *s)
{
    struct batch b = {.c = c, .s = s, .out = calloc(s->res.nactions ? s->res.nactions : 1, sizeof(*b.out))};
    if (!b.out)
        return -1;
    bool adds_go = adds_may_go(c, s);
    for (size_t a = 0; a < s->res.nactions; a++)
        if (s->res.actions[a].op == TAINTFSM_ADD && !adds_go) {
            log_failure(c, &s->res.actions[a], "the taint key could not be recorded in the status first");
            b.out[a] = FAILED;
        }
    batch_send(tw, &b);
    int failures = 0;
    for (size_t a = 0; a < s->res.nactions; a++) {
        const struct taintfsm_action *act = &s->res.actions[a];
        bool add = act->op == TAINTFSM_ADD;
        if (b.out[a] == RETRY) {
            struct kube_err err;
            int wrote = tainter_write(tw, s->node[act->input], c->t, add ? TAINTPATCH_ADD : TAINTPATCH_REMOVE,
                                      s->written[act->input], sizeof(s->written[act->input]), &err);
            if (wrote < 0)
                log_failure(c, act, err.msg);
            b.out[a] = wrote < 0 ? FAILED : wrote ? WRITTEN : NOOP;
        }
        if (b.out[a] == FAILED) {
            tw->counters->taint_write_failures++;
            failures++;
        } else if (b.out[a] == WRITTEN) { /* NOOP: the node already was so (the cache had not shown it yet) */
            s->done[act->input] = true;
            if (add)
                tw->counters->taints_added++;
            else
                tw->counters->taints_removed++;
        }
    }
    batch_free(&b);
    return failures;
}

/* One Event about the PsiRebalance for the changes of a storm (taintevents.h). */
static void summary_event(const struct tainter *tw, const struct tainter_cycle *c, const struct step *s)
{
    const char **names = malloc((s->res.nactions ? s->res.nactions : 1) * sizeof(*names));
    if (!names) {
        log_warn("event not recorded", "reason", "TaintsChanged", "error", "out of memory");
        return;
    }
    size_t nadded = 0, nremoved = 0;
    for (size_t a = 0; a < s->res.nactions; a++) /* added from the front, removed from the back */
        if (s->done[s->res.actions[a].input] && s->res.actions[a].op == TAINTFSM_ADD)
            names[nadded++] = s->res.actions[a].node;
    for (size_t a = 0; a < s->res.nactions; a++)
        if (s->done[s->res.actions[a].input] && s->res.actions[a].op != TAINTFSM_ADD)
            names[s->res.nactions - 1 - nremoved++] = s->res.actions[a].node;
    char taint[384], note[TAINTEVENTS_NOTE_MAX];
    snprintf(taint, sizeof(taint), "%s taint %s:%s", api_taint_effect_name(c->spec->taint.effect), c->t->key,
             c->t->owner);
    taintevents_summary(note, sizeof(note), taint, names, nadded, names + s->res.nactions - nremoved, nremoved);
    notify_event(tw->events, c->owner, "Normal", "TaintsChanged", "Taint", note, c->now_ms);
    free(names);
}

/* The Events after all taint writes of the cycle: they share the write budget, and the
 * taints are what the scheduler waits for. Past TAINTEVENTS_PER_NODE_MAX changes, one
 * summary Event instead of one per node; the log has a line per change either way. */
static void step_events(const struct tainter *tw, const struct tainter_cycle *c, const struct step *s)
{
    const struct api_spec *spec = c->spec;
    size_t changes = 0;
    for (size_t a = 0; a < s->res.nactions; a++)
        changes += s->done[s->res.actions[a].input];
    bool per_node = taintevents_per_node(changes) || !c->owner;
    for (size_t a = 0; a < s->res.nactions; a++) {
        const struct taintfsm_action *act = &s->res.actions[a];
        if (!s->done[act->input])
            continue;
        bool add = act->op == TAINTFSM_ADD;
        char pressure[32] = "unknown";
        double p = sampling_reading(sampling_of(c->sampling, act->node), spec->pressure.resource);
        if (!isnan(p))
            snprintf(pressure, sizeof(pressure), "%.1f%%", p);
        log_info(add ? "taint added" : "taint removed", "node", act->node, "psirebalance", c->t->owner, "why",
                 taintfsm_why_name(act->why), "pressure", pressure);
        if (!per_node)
            continue;
        char note[512];
        snprintf(note, sizeof(note), "%s %s taint %s:%s (%s, %s pressure %s)", add ? "added" : "removed",
                 api_taint_effect_name(spec->taint.effect), c->t->key, c->t->owner, taintfsm_why_name(act->why),
                 api_resource_name(spec->pressure.resource), pressure);
        struct kube_event_ref ref = {"v1", "Node", NULL, act->node, NULL};
        notify_event(tw->events, &ref, "Normal", add ? API_EVENT_TAINTED : API_EVENT_UNTAINTED,
                     add ? "Taint" : "Untaint", note, c->now_ms);
    }
    if (!per_node)
        summary_event(tw, c, s);
}

int tainter_step(const struct tainter *tw, const struct tainter_cycle *c, struct api_status *next)
{
    struct step s = {0};
    struct taintfsm_params p;
    taintfsm_params_from_spec(c->spec, &p);
    if (step_inputs(c, &s) < 0 || taintfsm_step(&p, s.in, s.n, c->now_ms, &s.res) < 0) {
        step_free(&s);
        return -1;
    }
    int failures = step_writes(tw, c, &s);
    step_events(tw, c, &s);
    if (taintstate_update(c->state, &s.res, (const char(*)[32])s.written, c->now_ms) < 0)
        failures = -1;
    if (nodestatus_build(next, &s.res, s.readings, NULL) < 0)
        failures = -1;
    step_free(&s);
    return failures;
}
