/* rebalancer: the API edge of rebalancing (see rebalancer.h). */
#include "rebalancer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conditions.h"
#include "cooldown.h"
#include "kubelet.h"
#include "logging.h"
#include "migrate.h"
#include "moves.h"
#include "rebalance.h"
#include "resources.h"
#include "usage.h"

/* A move asked and not answered with a migration within this long stops counting as in
 * flight (KubeVirt may have dropped the evacuation). */
#define REQUESTED_IN_FLIGHT_MS (10 * 60 * 1000)
/* Re-plans in one cycle after evictions were refused. */
#define MAX_ROUNDS 3
/* How often the VirtualMachineInstanceMigration CRD is read again (addedNodeSelector). */
#define CRD_RECHECK_MS (10 * 60 * 1000)

/* Per node: since when it is above evictAbovePercent, until when it settles, counters. */
struct node_state {
    char *name;
    int64_t above_since_ms; /* 0: not above */
    int64_t settle_until_ms;
    int64_t evictions, succeeded, failed;
};

/* DryRun: a move it would have made, applied to the nodes as if made. */
struct virtual_move {
    char *key, *source, *destination;
    double demand, req_cpu, req_memory;
};

struct rebalancer {
    bool loaded;
    struct api_status hist; /* moves (oldest first) and summary counters: what status shows */
    struct node_state *nodes;
    size_t nnodes;
    struct virtual_move *virt;
    size_t nvirt;
    struct cooldown *cool, *dry_cool;
    struct cooldown *refusals; /* workloads whose eviction was refused: held back, doubling */
    int64_t clock_ms;
    bool have_mode;
    enum api_eviction_mode mode;
    struct psi_prom *prom;
    char *prom_key;
    char last_reason[64];
    /* after a look that found nothing to move, the next one (usage query, pod lists) waits
     * for the settle time, unless the spec changes: no periodic cost while nothing can move */
    int64_t quiet_until_ms, quiet_generation;
    /* eviction.method Migrate: whether KubeVirt takes addedNodeSelector (read from its CRD) */
    enum migrate_support support;
    int64_t support_checked_ms; /* 0: never */
    char support_why[512];
    bool support_warned;
    bool targeted; /* this reconcile: VM moves are targeted live migrations */
    struct rebalancer_stats stats;
};

static int64_t clock_now(void *ud) { return ((struct rebalancer *)ud)->clock_ms; }

/* ---- small helpers ---- */

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* A move still under way: its migration runs, or it was asked for (and answered with a live
 * migration) not long ago and KubeVirt has not created the migration yet. */
static bool under_way(const struct api_move *m, int64_t now_ms)
{
    return m->phase == API_MOVE_MIGRATING ||
           (m->phase == API_MOVE_REQUESTED && now_ms - m->time * 1000 < REQUESTED_IN_FLIGHT_MS);
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

static bool eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The state of node name, made when new (NULL on no memory). rb->nodes is kept sorted by
 * name; a new entry moves the ones after it, so a pointer returned before is stale then. */
static struct node_state *node_state(struct rebalancer *rb, const char *name)
{
    size_t lo = 0, hi = rb->nnodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(rb->nodes[mid].name, name);
        if (c == 0)
            return &rb->nodes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    struct node_state *v = realloc(rb->nodes, (rb->nnodes + 1) * sizeof(*v));
    char *n = strdup(name);
    if (!v || !n) {
        free(n);
        if (v)
            rb->nodes = v;
        return NULL;
    }
    rb->nodes = v;
    memmove(&v[lo + 1], &v[lo], (rb->nnodes - lo) * sizeof(*v));
    memset(&v[lo], 0, sizeof(*v));
    v[lo].name = n;
    rb->nnodes++;
    return &v[lo];
}

static char *workload_key(const char *kind, const char *ns, const char *name)
{
    char *k = NULL;
    if (asprintf(&k, "%s %s/%s", kind ? kind : "Pod", ns ? ns : "", name ? name : "") < 0)
        return NULL;
    return k;
}

static char *move_key(const struct api_move *m) { return workload_key(m->kind, m->ns, m->name); }

static void event(const struct rebalancer_deps *d, const struct rebalancer_input *in, const char *type,
                  const char *reason, const char *action, const char *note)
{
    if (!d->events)
        return;
    const cJSON *meta = get(in->obj, "metadata");
    struct kube_event_ref ref = {API_API_VERSION, API_KIND, NULL, str(meta, "name"), str(meta, "uid")};
    struct kube_err err;
    if (kube_events_record(d->events, &ref, type, reason, action, note, in->now_ms, &err) < 0)
        log_warn("event not recorded", "reason", reason, "error", err.msg);
}

/* ---- lifecycle ---- */

struct rebalancer *rebalancer_new(void)
{
    struct rebalancer *rb = calloc(1, sizeof(*rb));
    if (!rb)
        return NULL;
    struct cooldown_params p = {600000, 7200000, 86400000};
    struct cooldown_clock clk = {clock_now, rb};
    rb->cool = cooldown_new(&p, &clk);
    rb->dry_cool = cooldown_new(&p, &clk);
    rb->refusals = cooldown_new(&p, &clk);
    if (!rb->cool || !rb->dry_cool || !rb->refusals) {
        rebalancer_free(rb);
        return NULL;
    }
    return rb;
}

static void virt_clear(struct rebalancer *rb)
{
    for (size_t i = 0; i < rb->nvirt; i++) {
        free(rb->virt[i].key);
        free(rb->virt[i].source);
        free(rb->virt[i].destination);
    }
    free(rb->virt);
    rb->virt = NULL;
    rb->nvirt = 0;
}

void rebalancer_free(struct rebalancer *rb)
{
    if (!rb)
        return;
    api_status_free(&rb->hist);
    for (size_t i = 0; i < rb->nnodes; i++)
        free(rb->nodes[i].name);
    free(rb->nodes);
    virt_clear(rb);
    cooldown_free(rb->cool);
    cooldown_free(rb->dry_cool);
    cooldown_free(rb->refusals);
    psi_prom_free(rb->prom);
    free(rb->prom_key);
    free(rb);
}

const struct rebalancer_stats *rebalancer_stats(const struct rebalancer *rb) { return &rb->stats; }

/* Read back what the status holds, once: moves (and with them the cooldowns) and counters. */
static void load(struct rebalancer *rb, const struct api_status *st)
{
    rb->loaded = true;
    rb->hist.summary = st->summary;
    for (size_t i = 0; i < st->nmoves; i++) {
        struct api_move *m = api_status_add_move(&rb->hist);
        if (!m || api_move_copy(m, &st->moves[i]) < 0) {
            if (m)
                rb->hist.nmoves--;
            continue;
        }
        char *key = move_key(m);
        struct cooldown *c = m->phase == API_MOVE_WOULD_MOVE ? rb->dry_cool : rb->cool;
        if (key) {
            cooldown_record_at(c, key, m->time * 1000);
            for (int64_t f = 0; f < m->failures && f < COOLDOWN_MAX_HISTORY; f++)
                cooldown_record_at(c, key, (m->end_time ? m->end_time : m->time) * 1000);
        }
        free(key);
    }
    for (size_t i = 0; i < st->nnodes; i++) {
        struct node_state *ns = node_state(rb, st->nodes[i].name);
        if (!ns)
            continue;
        ns->evictions = st->nodes[i].evictions;
        ns->succeeded = st->nodes[i].migrations.succeeded;
        ns->failed = st->nodes[i].migrations.failed;
    }
}

/* ---- projections ---- */

static void copy_item(cJSON *dst, const cJSON *src, const char *key)
{
    const cJSON *v = get(src, key);
    if (v && !cJSON_IsNull(v))
        cJSON_AddItemToObject(dst, key, cJSON_Duplicate(v, 1));
}

static void copy_annotations(cJSON *dst_meta, const cJSON *src_meta, const char *const *keys)
{
    const cJSON *ann = get(src_meta, "annotations");
    if (!ann)
        return;
    cJSON *out = NULL;
    for (size_t i = 0; keys[i]; i++) {
        const cJSON *v = get(ann, keys[i]);
        if (!v)
            continue;
        if (!out)
            out = cJSON_AddObjectToObject(dst_meta, "annotations");
        cJSON_AddItemToObject(out, keys[i], cJSON_Duplicate(v, 1));
    }
}

void *rebalancer_pod_projection(const cJSON *pod, void *ud)
{
    (void)ud;
    static const char *const ann[] = {"descheduler.alpha.kubernetes.io/prefer-no-eviction",
                                      "descheduler.alpha.kubernetes.io/eviction-in-progress",
                                      "kubernetes.io/config.mirror", "kubernetes.io/config.source",
                                      "kubevirt.io/domain", NULL};
    static const char *const meta_keys[] = {"name", "namespace", "uid", "labels", "deletionTimestamp", NULL};
    static const char *const spec_keys[] = {"nodeName", "nodeSelector", "tolerations", "priority",
                                            "priorityClassName", NULL};
    const cJSON *meta = get(pod, "metadata"), *spec = get(pod, "spec");
    cJSON *out = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(out, "metadata");
    for (size_t i = 0; meta_keys[i]; i++)
        copy_item(m, meta, meta_keys[i]);
    copy_annotations(m, meta, ann);
    const cJSON *ref;
    cJSON *refs = NULL;
    cJSON_ArrayForEach(ref, get(meta, "ownerReferences")) {
        if (!cJSON_IsTrue(get(ref, "controller")))
            continue;
        if (!refs)
            refs = cJSON_AddArrayToObject(m, "ownerReferences");
        cJSON *r = cJSON_CreateObject();
        copy_item(r, ref, "kind");
        copy_item(r, ref, "name");
        cJSON_AddTrueToObject(r, "controller");
        cJSON_AddItemToArray(refs, r);
    }
    cJSON *s = cJSON_AddObjectToObject(out, "spec");
    for (size_t i = 0; spec_keys[i]; i++)
        copy_item(s, spec, spec_keys[i]);
    const cJSON *na = get(get(spec, "affinity"), "nodeAffinity");
    const cJSON *req = get(na, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req && !cJSON_IsNull(req))
        cJSON_AddItemToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(s, "affinity"), "nodeAffinity"),
                              "requiredDuringSchedulingIgnoredDuringExecution", cJSON_Duplicate(req, 1));
    double cpu, mem;
    resources_pod_requests(pod, &cpu, &mem);
    cJSON *r = cJSON_AddObjectToObject(out, "requests");
    cJSON_AddNumberToObject(r, "cpu", cpu);
    cJSON_AddNumberToObject(r, "memory", mem);
    cJSON *st = cJSON_AddObjectToObject(out, "status");
    copy_item(st, get(pod, "status"), "phase");
    return out;
}

void *rebalancer_vmi_projection(const cJSON *vmi, void *ud)
{
    (void)ud;
    const cJSON *meta = get(vmi, "metadata"), *status = get(vmi, "status");
    cJSON *out = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(out, "metadata");
    copy_item(m, meta, "name");
    copy_item(m, meta, "namespace");
    copy_item(m, meta, "uid");
    cJSON *s = cJSON_AddObjectToObject(out, "status");
    copy_item(s, status, "nodeName");
    copy_item(s, status, "evacuationNodeName");
    copy_item(s, status, "phase");
    const cJSON *ms = get(status, "migrationState");
    if (ms) {
        cJSON *o = cJSON_AddObjectToObject(s, "migrationState");
        static const char *const keys[] = {"migrationUid", "sourceNode", "targetNode", "endTimestamp",
                                           "completed", "failed", NULL};
        for (size_t i = 0; keys[i]; i++)
            copy_item(o, ms, keys[i]);
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, get(status, "conditions"))
        if (eq(str(c, "type"), "LiveMigratable")) {
            cJSON *conds = cJSON_AddArrayToObject(s, "conditions");
            cJSON *o = cJSON_CreateObject();
            copy_item(o, c, "type");
            copy_item(o, c, "status");
            copy_item(o, c, "reason");
            cJSON_AddItemToArray(conds, o);
            break;
        }
    return out;
}

void *rebalancer_vmim_projection(const cJSON *vmim, void *ud)
{
    (void)ud;
    const cJSON *meta = get(vmim, "metadata"), *status = get(vmim, "status");
    cJSON *out = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(out, "metadata");
    static const char *const meta_keys[] = {"name", "namespace", "uid", "creationTimestamp", NULL};
    static const char *const ann[] = {MOVES_EVACUATION_ANNOTATION, MIGRATE_DESTINATION_ANNOTATION, NULL};
    for (size_t i = 0; meta_keys[i]; i++)
        copy_item(m, meta, meta_keys[i]);
    copy_annotations(m, meta, ann);
    /* our targeted migrations are known by their labels (they survive a restart) */
    const cJSON *labels = get(meta, "labels");
    if (eq(str(labels, MOVES_MANAGED_BY_LABEL), MOVES_MANAGED_BY)) {
        cJSON *l = cJSON_AddObjectToObject(m, "labels");
        copy_item(l, labels, MOVES_MANAGED_BY_LABEL);
        copy_item(l, labels, MOVES_OWNER_LABEL);
    }
    copy_item(cJSON_AddObjectToObject(out, "spec"), get(vmim, "spec"), "vmiName");
    cJSON *s = cJSON_AddObjectToObject(out, "status");
    copy_item(s, status, "phase");
    const cJSON *ms = get(status, "migrationState");
    if (ms) {
        cJSON *o = cJSON_AddObjectToObject(s, "migrationState");
        copy_item(o, ms, "sourceNode");
        copy_item(o, ms, "targetNode");
        copy_item(o, ms, "endTimestamp");
        copy_item(o, ms, "failureReason");
    }
    const cJSON *h;
    cJSON *hist = NULL;
    cJSON_ArrayForEach(h, get(status, "phaseTransitionTimestamps"))
        if (moves_phase_final(str(h, "phase"))) {
            if (!hist)
                hist = cJSON_AddArrayToObject(s, "phaseTransitionTimestamps");
            cJSON_AddItemToArray(hist, cJSON_Duplicate(h, 1));
        }
    return out;
}

/* ---- migrations ---- */

struct migs {
    struct moves_migration *v;
    size_t n;
    const struct kube_informer *vmis;
};

static int collect_mig(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct migs *c = ud;
    struct moves_migration m;
    if (!obj || moves_migration_read(obj, &m) < 0)
        return 0;
    if (!m.source && c->vmis) { /* not handed off yet: the VMI's node is the source */
        const cJSON *vmi = kube_informer_get(c->vmis, m.ns, m.vmi);
        m.source = str(get(vmi, "status"), "nodeName");
    }
    struct moves_migration *v = realloc(c->v, (c->n + 1) * sizeof(*v));
    if (!v)
        return -1;
    c->v = v;
    c->v[c->n++] = m;
    return 0;
}

/* A failed live migration of move m (migration: its name; why: NULL or what happened):
 * counters, a repeat move in the workload's cooldown, log and a Warning Event. */
static void count_failure(struct rebalancer *rb, const struct rebalancer_deps *d, const struct rebalancer_input *in,
                          struct api_move *m, const char *migration, const char *why)
{
    struct node_state *ns = node_state(rb, m->source_node ? m->source_node : "");
    rb->hist.summary.migrations_failed++;
    rb->stats.migrations_failed++;
    if (ns)
        ns->failed++;
    char *key = move_key(m);
    if (key) {
        cooldown_record(rb->cool, key);
        int64_t until = cooldown_until(rb->cool, key);
        m->cooldown_until = until ? until / 1000 : m->cooldown_until;
    }
    free(key);
    char note[1024];
    /* why, without the full stop KubeVirt's messages end with, goes before a ';' */
    int wlen = why ? (int)strlen(why) : 0;
    if (wlen > 0 && why[wlen - 1] == '.')
        wlen--;
    if (migrate_move_targeted(m))
        snprintf(note, sizeof(note),
                 "live migration %s of VirtualMachineInstance %s/%s %s -> %s failed%s%.*s; it was deleted and its "
                 "cooldown grows",
                 migration, m->ns, m->name, m->source_node ? m->source_node : "?",
                 m->destination_node ? m->destination_node : "?", wlen ? ": " : "", wlen, why ? why : "");
    else
        snprintf(note, sizeof(note),
                 "live migration %s of VirtualMachineInstance %s/%s off %s failed (%lld failed since the move was "
                 "asked)%s%.*s; its cooldown grows",
                 migration, m->ns, m->name, m->source_node ? m->source_node : "?", (long long)m->failures,
                 wlen ? ": " : "", wlen, why ? why : "");
    log_warn("live migration failed", "psirebalance", in->pr->name, "vmi", m->name, "namespace", m->ns, "migration",
             migration, "source", m->source_node, "destination", m->destination_node, "why", why ? why : "");
    event(d, in, "Warning", "MigrationFailed", "Migrate", note);
}

/* Follow the moves through the migrations: phases, counters, Events, cooldown on failures. */
static int follow(struct rebalancer *rb, const struct rebalancer_deps *d, const struct rebalancer_input *in,
                  const struct migs *migs)
{
    struct moves_event *ev = NULL;
    size_t nev = 0;
    if (moves_follow(rb->hist.moves, rb->hist.nmoves, migs->v, migs->n, &ev, &nev) < 0) {
        free(ev);
        return -1;
    }
    for (size_t i = 0; i < nev; i++) {
        struct api_move *m = &rb->hist.moves[ev[i].move];
        struct node_state *ns = node_state(rb, m->source_node ? m->source_node : "");
        char note[512];
        if (ev[i].kind == MOVES_STARTED) {
            log_info("live migration running", "psirebalance", in->pr->name, "vmi", m->name, "namespace", m->ns,
                     "migration", ev[i].migration, "source", m->source_node);
            continue;
        }
        if (ev[i].kind == MOVES_SUCCEEDED) {
            rb->hist.summary.migrations_succeeded++;
            rb->stats.migrations_succeeded++;
            if (ns)
                ns->succeeded++;
            bool targeted = migrate_move_targeted(m);
            bool elsewhere = targeted && m->target_node && m->destination_node &&
                             strcmp(m->target_node, m->destination_node) != 0;
            snprintf(note, sizeof(note), "VirtualMachineInstance %s/%s migrated %s -> %s (migration %s%s%s%s)", m->ns,
                     m->name, m->source_node ? m->source_node : "?", m->target_node ? m->target_node : "?",
                     ev[i].migration, targeted ? ", sent to " : "", targeted ? m->destination_node : "",
                     elsewhere ? ", but it landed elsewhere" : "");
            log_info("live migration succeeded", "psirebalance", in->pr->name, "vmi", m->name, "namespace", m->ns,
                     "migration", ev[i].migration, "source", m->source_node, "target", m->target_node,
                     "destination", m->destination_node);
            event(d, in, elsewhere ? "Warning" : "Normal", "MigrationSucceeded", "Migrate", note);
            continue;
        }
        count_failure(rb, d, in, m, ev[i].migration, ev[i].reason);
    }
    free(ev);
    return 0;
}

/* ---- targeted live migration (eviction.method Migrate) ---- */

/* Whether KubeVirt takes addedNodeSelector: its CRD read at most every CRD_RECHECK_MS (a
 * minute while it cannot be read). */
static enum migrate_support migrate_support_now(struct rebalancer *rb, const struct rebalancer_deps *d,
                                                const struct rebalancer_input *in)
{
    int64_t every = rb->support == MIGRATE_UNKNOWN ? 60000 : CRD_RECHECK_MS;
    if (rb->support_checked_ms && in->now_ms - rb->support_checked_ms < every)
        return rb->support;
    enum migrate_support was = rb->support_checked_ms ? rb->support : (enum migrate_support)-1;
    char *path = kube_path("apiextensions.k8s.io/v1", NULL, "customresourcedefinitions", MIGRATE_CRD_NAME, NULL);
    struct kube_err err;
    kube_err_clear(&err);
    cJSON *crd = path ? kube_rest_get(d->client, path, &err) : NULL;
    free(path);
    if (crd || err.status == 404) {
        rb->support = migrate_crd_support(crd, rb->support_why, sizeof(rb->support_why));
    } else {
        rb->support = MIGRATE_UNKNOWN;
        snprintf(rb->support_why, sizeof(rb->support_why),
                 "the CustomResourceDefinition %s could not be read to learn whether it has spec.addedNodeSelector: "
                 "%s",
                 MIGRATE_CRD_NAME, err.msg[0] ? err.msg : "out of memory");
    }
    cJSON_Delete(crd);
    rb->support_checked_ms = in->now_ms;
    if (rb->support != was) {
        if (rb->support == MIGRATE_SUPPORTED) {
            log_info("targeted live migration available", "psirebalance", in->pr->name, "crd", MIGRATE_CRD_NAME);
            rb->support_warned = false;
        } else {
            log_warn("targeted live migration unavailable: falling back to eviction", "psirebalance", in->pr->name,
                     "why", rb->support_why);
        }
    }
    return rb->support;
}

/* Our targeted migrations: delete the failed ones (counted by follow) and the ones stuck
 * before their target runs (counted here); count the moves whose migration is gone. */
static void cleanup_migrations(struct rebalancer *rb, const struct rebalancer_deps *d,
                               const struct rebalancer_input *in, const struct migs *migs)
{
    int64_t now_s = in->now_ms / 1000;
    for (size_t k = 0; k < migs->n; k++) {
        const struct moves_migration *g = &migs->v[k];
        if (!eq(g->owner, in->pr->name))
            continue;
        enum migrate_action a = migrate_cleanup_action(g, now_s, 0);
        if (a == MIGRATE_KEEP)
            continue;
        char *path = kube_path(REBALANCER_KUBEVIRT_GV, g->ns, "virtualmachineinstancemigrations", g->name, NULL);
        struct kube_err err;
        kube_err_clear(&err);
        cJSON *res = path ? kube_rest_delete(d->client, path, NULL, NULL, &err) : NULL;
        free(path);
        cJSON_Delete(res);
        if (!res && err.status != 404) {
            log_warn("migration not deleted: trying again", "psirebalance", in->pr->name, "migration", g->name,
                     "namespace", g->ns, "error", err.msg);
            continue;
        }
        if (!res)
            continue; /* gone already: counted when it went */
        log_info(a == MIGRATE_DELETE_STUCK ? "stuck migration deleted" : "failed migration deleted", "psirebalance",
                 in->pr->name, "migration", g->name, "namespace", g->ns, "phase", g->phase);
        if (a != MIGRATE_DELETE_STUCK)
            continue;
        char why[256];
        snprintf(why, sizeof(why), "still %s %lld s after its creation (the target pod was not scheduled)",
                 g->phase && g->phase[0] ? g->phase : "without a phase", (long long)(now_s - g->created));
        for (size_t i = 0; i < rb->hist.nmoves; i++) {
            struct api_move *m = &rb->hist.moves[i];
            if (!eq(m->migration, g->name) || !eq(m->ns, g->ns) ||
                (m->phase != API_MOVE_REQUESTED && m->phase != API_MOVE_MIGRATING))
                continue;
            m->phase = API_MOVE_FAILED;
            m->failures++;
            m->end_time = now_s;
            count_failure(rb, d, in, m, g->name, why);
        }
    }
    for (size_t i = 0; i < rb->hist.nmoves; i++) {
        struct api_move *m = &rb->hist.moves[i];
        if (!migrate_move_lost(m, migs->v, migs->n, now_s))
            continue;
        m->phase = API_MOVE_FAILED;
        m->failures++;
        m->end_time = now_s;
        count_failure(rb, d, in, m, m->migration, "the migration is gone (deleted before it ended)");
    }
}

/* ---- the decision's inputs ---- */

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The settle time: metrics.window plus two intervals (standing in for scrape intervals). */
static int64_t settle_ms(const struct api_spec *spec)
{
    return spec->metrics.window_ms + 2 * spec->metrics.interval_ms;
}

/* Mark nodes a migration touches as settling: running ones now, finished ones until the
 * settle time after their end. */
static void settle_from_migrations(const struct migs *migs, const struct rebalancer_input *in, bool *settling,
                                   int64_t settle)
{
    for (size_t k = 0; k < migs->n; k++) {
        const struct moves_migration *g = &migs->v[k];
        bool final = moves_phase_final(g->phase);
        if (final && (!g->end || g->end * 1000 + settle <= in->now_ms))
            continue;
        if (!final && !moves_phase_running(g->phase) && !eq(g->phase, "Pending") && g->phase[0])
            continue;
        for (size_t i = 0; i < in->nnodes; i++)
            if (eq(in->nodes[i].name, g->source) || eq(in->nodes[i].name, g->target))
                settling[i] = true;
    }
}

/* A candidate pod and what it needs kept alive beyond the informer's borrow. */
struct cand_extra {
    char *key;      /* workload key */
    char *kind;     /* workload kind (borrowed from the pod) */
    const char *workload_name;
    const cJSON *pod;
    const char *vmi;
    double usage;
};

struct pods_ctx {
    const struct rebalancer_input *in;
    const bool *is_source;
    struct rebalance_candidate *c;
    struct cand_extra *x;
    size_t n, cap;
};

static int collect_pod(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct pods_ctx *c = ud;
    const cJSON *pod = obj;
    const char *node = str(get(pod, "spec"), "nodeName");
    if (!node)
        return 0;
    long idx = -1;
    for (size_t i = 0; i < c->in->nnodes && idx < 0; i++)
        if (c->is_source[i] && strcmp(c->in->nodes[i].name, node) == 0)
            idx = (long)i;
    if (idx < 0)
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        struct rebalance_candidate *v = realloc(c->c, cap * sizeof(*v));
        if (!v)
            return -1;
        c->c = v;
        struct cand_extra *x = realloc(c->x, cap * sizeof(*x));
        if (!x)
            return -1;
        c->x = x;
        c->cap = cap;
    }
    const cJSON *meta = get(pod, "metadata"), *spec = get(pod, "spec");
    const char *kind, *name;
    rebalance_pod_workload(pod, &kind, &name);
    struct cand_extra *x = &c->x[c->n];
    memset(x, 0, sizeof(*x));
    x->pod = pod;
    x->kind = (char *)kind;
    x->workload_name = name ? name : str(meta, "name");
    x->key = workload_key(kind, str(meta, "namespace"), x->workload_name);
    x->vmi = eq(kind, "VirtualMachineInstance") ? name : NULL;
    x->usage = NAN;
    if (!x->key)
        return -1;
    c->c[c->n] = (struct rebalance_candidate){
        .ns = str(meta, "namespace"),
        .name = str(meta, "name"),
        .workload = x->key,
        .node = (size_t)idx,
        .req_cpu = num(get(pod, "requests"), "cpu"),
        .req_memory = num(get(pod, "requests"), "memory"),
        .demand = NAN,
        .vm = x->vmi != NULL,
        .node_selector = get(spec, "nodeSelector"),
        .affinity = get(spec, "affinity"),
        .tolerations = get(spec, "tolerations"),
    };
    if (isnan(c->c[c->n].req_cpu))
        c->c[c->n].req_cpu = 0;
    if (isnan(c->c[c->n].req_memory))
        c->c[c->n].req_memory = 0;
    c->n++;
    return 0;
}

/* Whether a VMI is being evacuated or migrated (by anyone). */
static const char *vmi_busy(const struct rebalancer_deps *d, const struct migs *migs, const char *ns, const char *vmi)
{
    if (d->vmis) {
        const cJSON *o = kube_informer_get(d->vmis, ns, vmi);
        if (str(get(o, "status"), "evacuationNodeName"))
            return "in evacuation";
    }
    for (size_t k = 0; k < migs->n; k++)
        if (eq(migs->v[k].vmi, vmi) && eq(migs->v[k].ns, ns) && !moves_phase_final(migs->v[k].phase))
            return "migrating";
    return NULL;
}

/* Our move of key still under way? */
static bool move_running(const struct rebalancer *rb, const char *key, int64_t now_ms)
{
    for (size_t i = 0; i < rb->hist.nmoves; i++) {
        const struct api_move *m = &rb->hist.moves[i];
        if (!under_way(m, now_ms))
            continue;
        char *k = move_key(m);
        bool same = k && strcmp(k, key) == 0;
        free(k);
        if (same)
            return true;
    }
    return false;
}

/* The Prometheus client for usage, made anew when the settings changed. */
static struct psi_prom *prom_for(struct rebalancer *rb, const struct psi_prom_config *cfg, struct psi_status *st)
{
    char key[2048];
    snprintf(key, sizeof(key), "%s|%s|%s|%s|%d", cfg->url ? cfg->url : "", cfg->token_fn ? "reader" : "",
             cfg->token_file ? cfg->token_file : "", cfg->ca_file ? cfg->ca_file : "", cfg->plain_http_token);
    if (rb->prom && rb->prom_key && strcmp(rb->prom_key, key) == 0)
        return rb->prom;
    psi_prom_free(rb->prom);
    free(rb->prom_key);
    rb->prom_key = NULL;
    rb->prom = psi_prom_new(cfg, st);
    if (rb->prom)
        rb->prom_key = strdup(key);
    return rb->prom;
}

/* Usage of the selected nodes and of the candidates. Returns 0, or -1 with why. */
static int read_usage(struct rebalancer *rb, const struct rebalancer_deps *d, const struct rebalancer_input *in,
                      const struct rebalance_candidate *cands, struct cand_extra *x, size_t nc, double *node_usage,
                      char *why, size_t len)
{
    struct usage_ref *refs = calloc(nc ? nc : 1, sizeof(*refs));
    double *ref_usage = calloc(nc ? nc : 1, sizeof(double));
    struct psi_node_desc *descs = calloc(in->nnodes ? in->nnodes : 1, sizeof(*descs));
    const char **ips = calloc(in->nnodes ? in->nnodes : 1, sizeof(*ips));
    int rc = -1;
    if (!refs || !ref_usage || !descs || !ips) {
        snprintf(why, len, "out of memory");
        goto out;
    }
    for (size_t j = 0; j < nc; j++) {
        refs[j] = (struct usage_ref){cands[j].ns, cands[j].name, x[j].vmi};
        ref_usage[j] = NAN;
    }
    for (size_t i = 0; i < in->nnodes; i++) {
        const cJSON *a;
        ips[i] = NULL;
        cJSON_ArrayForEach(a, get(get(in->nodes[i].node, "status"), "addresses"))
            if (!ips[i] && str(a, "address"))
                ips[i] = str(a, "address");
        descs[i] = (struct psi_node_desc){in->nodes[i].name, &ips[i], ips[i] ? 1 : 0, 0};
        node_usage[i] = NAN;
    }
    rb->stats.usage_queries++;
    if (in->prom) {
        struct psi_status st;
        psi_status_ok(&st);
        struct psi_prom *p = prom_for(rb, in->prom, &st);
        char *q = p ? usage_query((long)(in->pr->spec.metrics.window_ms / 1000), refs, nc) : NULL;
        struct psi_prom_vector v = {0};
        if (!p || !q || psi_prom_query(p, q, &v, &st) < 0) {
            snprintf(why, len, "the usage query failed: %s", st.failed ? st.message : "out of memory");
            free(q);
            rb->stats.usage_failures++;
            goto out;
        }
        free(q);
        usage_fill(&v, descs, in->nnodes, node_usage, refs, nc, ref_usage);
        psi_prom_vector_free(&v);
    } else {
        struct usage_kubelet q = {descs, in->nnodes, node_usage, refs, nc, ref_usage};
        if (usage_from_kubelet(d->client, &q, why, len) < 0) {
            rb->stats.usage_failures++;
            goto out;
        }
    }
    for (size_t j = 0; j < nc; j++)
        x[j].usage = ref_usage[j];
    rc = 0;
out:
    free(refs);
    free(ref_usage);
    free(descs);
    free(ips);
    return rc;
}

/* Sum the requests of the pods on node (one LIST). Returns 0 or -1. */
static int node_requests(const struct rebalancer_deps *d, const char *node, double *cpu, double *mem, double *pods)
{
    char fs[512];
    snprintf(fs, sizeof(fs), "spec.nodeName=%s,status.phase!=Succeeded,status.phase!=Failed", node);
    struct kube_list_opts o = {.field_selector = fs, .resource_version = "0"};
    struct kube_err err;
    cJSON *list = kube_rest_list(d->client, "/api/v1/pods", &o, &err);
    if (!list) {
        log_warn("pods of a node not listed", "node", node, "error", err.msg);
        return -1;
    }
    *cpu = *mem = *pods = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, get(list, "items")) {
        double c, m;
        resources_pod_requests(it, &c, &m);
        *cpu += c, *mem += m, *pods += 1;
    }
    cJSON_Delete(list);
    return 0;
}

/* ---- DryRun's virtual moves ---- */

static void virt_prune(struct rebalancer *rb)
{
    size_t w = 0;
    for (size_t i = 0; i < rb->nvirt; i++) {
        if (cooldown_until(rb->dry_cool, rb->virt[i].key) == 0) {
            free(rb->virt[i].key);
            free(rb->virt[i].source);
            free(rb->virt[i].destination);
            continue;
        }
        rb->virt[w++] = rb->virt[i];
    }
    rb->nvirt = w;
}

/* Apply the virtual moves to the nodes' demand and, by the predicted change, pressure_adj. */
static void virt_apply_load(const struct rebalancer *rb, struct rebalance_node *nodes, size_t n, double *pressure_adj)
{
    for (size_t k = 0; k < rb->nvirt; k++) {
        const struct virtual_move *v = &rb->virt[k];
        for (size_t i = 0; i < n; i++) {
            bool src = eq(nodes[i].name, v->source), dst = eq(nodes[i].name, v->destination);
            if ((!src && !dst) || isnan(nodes[i].demand) || !(nodes[i].cpus > 0))
                continue;
            double before = rebalance_predicted_pressure(nodes[i].demand / nodes[i].cpus);
            nodes[i].demand += src ? -v->demand : v->demand;
            if (nodes[i].demand < 0)
                nodes[i].demand = 0;
            pressure_adj[i] += rebalance_predicted_pressure(nodes[i].demand / nodes[i].cpus) - before;
        }
    }
}

/* Add the requests of the virtual moves to their destinations (where requests are known). */
static void virt_apply_requests(const struct rebalancer *rb, struct rebalance_node *nodes, size_t n)
{
    for (size_t k = 0; k < rb->nvirt; k++)
        for (size_t i = 0; i < n; i++)
            if (eq(nodes[i].name, rb->virt[k].destination) && !isnan(nodes[i].req_cpu)) {
                nodes[i].req_cpu += rb->virt[k].req_cpu;
                nodes[i].req_memory += rb->virt[k].req_memory;
                nodes[i].req_pods += 1;
            }
}

/* ---- one cycle's decision ---- */

struct decision {
    enum api_condition_status status;
    const char *reason;
    char message[2048];
};

static void decide(struct decision *dc, enum api_condition_status st, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void decide(struct decision *dc, enum api_condition_status st, const char *reason, const char *fmt, ...)
{
    dc->status = st;
    dc->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dc->message, sizeof(dc->message), fmt, ap);
    va_end(ap);
}

/* Ask the Eviction API for pod ns/name (dry_run: dryRun=All, nothing happens). */
static enum rebalance_evict_outcome evict(const struct rebalancer_deps *d, const char *ns, const char *name,
                                          bool dry_run, struct kube_err *err)
{
    kube_err_clear(err);
    char *path = kube_path("v1", ns, "pods", name, "eviction");
    cJSON *ev = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(ev, "metadata");
    cJSON_AddStringToObject(ev, "apiVersion", "policy/v1");
    cJSON_AddStringToObject(ev, "kind", "Eviction");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", ns);
    /* who asks, as the descheduler says it (KubeVirt and audit logs show it) */
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), "requested-by", REBALANCER_REQUESTED_BY);
    if (dry_run)
        cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(ev, "deleteOptions"), "dryRun"),
                             cJSON_CreateString("All"));
    struct kube_write_opts o = {.dry_run = dry_run};
    cJSON *res = path ? kube_rest_create(d->client, path, ev, &o, err) : NULL;
    if (!path)
        kube_err_set(err, 0, "Encode", "out of memory");
    cJSON_Delete(ev);
    free(path);
    long status = res ? 0 : err->status;
    cJSON_Delete(res);
    if (!res && status == 0)
        return REBALANCE_ERROR; /* no answer: transport */
    return rebalance_evict_outcome(status, err->msg);
}

/* Create a targeted live migration for r (dry_run: dryRun=All, nothing is created). *name gets
 * the created migration's name (caller frees; NULL in a dry run or on failure). */
static enum rebalance_evict_outcome create_migration(const struct rebalancer_deps *d, const struct migrate_request *r,
                                                     bool dry_run, char **name, struct kube_err *err)
{
    kube_err_clear(err);
    *name = NULL;
    cJSON *o = migrate_vmim_new(r);
    char *path = kube_path(REBALANCER_KUBEVIRT_GV, r->ns, "virtualmachineinstancemigrations", NULL, NULL);
    struct kube_write_opts opts = {.dry_run = dry_run};
    cJSON *res = o && path ? kube_rest_create(d->client, path, o, &opts, err) : NULL;
    if (!o || !path)
        kube_err_set(err, 0, "Encode", "out of memory");
    cJSON_Delete(o);
    free(path);
    if (!res)
        return err->status ? migrate_create_outcome(err->status) : REBALANCE_ERROR;
    const char *n = str(get(res, "metadata"), "name");
    if (!dry_run && n)
        *name = strdup(n);
    cJSON_Delete(res);
    return REBALANCE_MIGRATING;
}

/* Record a move made (or, in DryRun, decided) in the history, cooldown and counters. */
static struct api_move *record_move(struct rebalancer *rb, const struct rebalancer_input *in, const char *key,
                                    const struct cand_extra *x, const struct rebalance_candidate *c,
                                    const char *source, const char *dest, enum api_move_phase phase)
{
    int64_t now_s = in->now_ms / 1000;
    struct cooldown *cool = phase == API_MOVE_WOULD_MOVE ? rb->dry_cool : rb->cool;
    cooldown_record(cool, key);
    struct api_move *m = api_status_add_move(&rb->hist);
    if (!m)
        return NULL;
    m->kind = strdup(x->kind ? x->kind : "Pod");
    m->ns = c->ns ? strdup(c->ns) : NULL;
    m->name = strdup(x->workload_name ? x->workload_name : c->name);
    m->pod = strdup(c->name);
    m->source_node = strdup(source);
    m->destination_node = dest ? strdup(dest) : NULL;
    m->time = now_s;
    m->phase = phase;
    m->end_time = phase == API_MOVE_WOULD_MOVE || phase == API_MOVE_EVICTED ? now_s : 0;
    int64_t until = cooldown_until(cool, key);
    m->cooldown_until = until ? until / 1000 : 0;
    rb->hist.summary.evictions++;
    struct node_state *ns = node_state(rb, source);
    if (ns)
        ns->evictions++;
    return m;
}

/* Make the plan's moves. Returns the number made; *refused counts refusals. *failed is set
 * on an eviction error. */
static size_t execute(struct rebalancer *rb, const struct rebalancer_deps *d, const struct rebalancer_input *in,
                      const struct rebalance_plan *plan, struct rebalance_node *nodes,
                      struct rebalance_candidate *cands, struct cand_extra *x, int *refused, bool *failed,
                      char *fail_msg, size_t fail_len, char *made, size_t made_len)
{
    bool dry = in->pr->spec.eviction.mode == API_MODE_DRY_RUN;
    int64_t settle = settle_ms(&in->pr->spec);
    size_t done = 0;
    for (size_t k = 0; k < plan->nmoves; k++) {
        const struct rebalance_move *mv = &plan->moves[k];
        struct rebalance_candidate *c = &cands[mv->candidate];
        struct cand_extra *cx = &x[mv->candidate];
        const char *src = nodes[mv->source].name, *dst = nodes[mv->destination].name;
        struct kube_err err;
        /* Migrate: a VM goes to the destination chosen; other pods are evicted */
        bool targeted = rb->targeted && c->vm && cx->vmi;
        char *mig_name = NULL;
        enum rebalance_evict_outcome out;
        if (targeted) {
            struct migrate_request r = {
                .ns = c->ns,
                .vmi = cx->vmi,
                .owner = in->pr->name,
                .source = src,
                .destination = dst,
                .hostname = migrate_hostname(in->nodes[mv->destination].node, dst),
                .src_load = mv->src_load,
                .src_load_after = mv->src_load_after,
                .dst_load = mv->dst_load,
                .dst_load_after = mv->dst_load_after,
            };
            out = create_migration(d, &r, dry, &mig_name, &err);
        } else {
            out = evict(d, c->ns, c->name, dry, &err);
        }
        const char *verb = targeted ? "live migration" : "eviction";
        char note[1024];
        if (dry && out == REBALANCE_ERROR && err.status == 400 && strstr(err.msg, "dry run")) {
            /* a webhook that cannot do dry runs: the move is still what would be done */
            log_warn("dry-run eviction not supported by the cluster: move reported unchecked", "pod", c->name,
                     "namespace", c->ns, "error", err.msg);
            out = c->vm ? REBALANCE_MIGRATING : REBALANCE_EVICTED;
        }
        switch (out) {
        case REBALANCE_EVICTED:
        case REBALANCE_MIGRATING: {
            enum api_move_phase ph = dry ? API_MOVE_WOULD_MOVE
                                         : (out == REBALANCE_EVICTED ? API_MOVE_EVICTED : API_MOVE_REQUESTED);
            struct api_move *rec = record_move(rb, in, cx->key, cx, c, src, dst, ph);
            if (!rec)
                log_warn("move not recorded: out of memory", "psirebalance", in->pr->name, "workload", cx->key);
            else if (mig_name) { /* followed by its name from now on */
                free(rec->migration);
                rec->migration = mig_name;
                mig_name = NULL;
            }
            if (dry || out == REBALANCE_EVICTED) { /* the move is over as far as we know: settle from now */
                const char *both[] = {src, dst};
                for (int b = 0; b < 2; b++) {
                    struct node_state *ns = node_state(rb, both[b]); /* one at a time: a new one moves others */
                    if (ns)
                        ns->settle_until_ms = in->now_ms + settle;
                }
            }
            if (dry) {
                rb->stats.dry_run_moves++;
                struct virtual_move *v = realloc(rb->virt, (rb->nvirt + 1) * sizeof(*v));
                if (v) {
                    rb->virt = v;
                    v[rb->nvirt++] = (struct virtual_move){strdup(cx->key), strdup(src), strdup(dst), mv->demand,
                                                           c->req_cpu, c->req_memory};
                }
            } else if (out == REBALANCE_EVICTED) {
                rb->stats.evictions++;
            } else {
                rb->stats.migrations_requested++;
            }
            const char *what = dry ? (targeted ? "would migrate" : "would move")
                               : out == REBALANCE_EVICTED ? "evicted"
                               : targeted                ? "live migration created for"
                                                         : "live migration asked for";
            /* source -> destination; with Evict the destination is what the plan predicts (the
             * scheduler places the pod), with Migrate where it is sent */
            snprintf(note, sizeof(note),
                     "%s %s %s/%s (pod %s): %s -> %s%s, predicted load %s %.0f%% -> %.0f%%, %s %.0f%% -> %.0f%%%s%s%s",
                     what, cx->kind ? cx->kind : "Pod", c->ns, cx->workload_name, c->name, src, dst,
                     targeted ? "" : " (predicted)", src, 100 * mv->src_load, 100 * mv->src_load_after, dst,
                     100 * mv->dst_load, 100 * mv->dst_load_after, rec && rec->migration ? "; migration " : "",
                     rec && rec->migration ? rec->migration : "", dry ? "; DryRun: nothing was done" : "");
            log_info(dry ? "dry run: would move"
                         : (out == REBALANCE_EVICTED ? "evicted"
                                                     : (targeted ? "live migration created" : "live migration asked")),
                     "psirebalance", in->pr->name, "workload", cx->key, "pod", c->name, "source", src, "destination",
                     dst, "method", targeted ? "Migrate" : "Evict");
            event(d, in, "Normal", dry ? "WouldMove" : (out == REBALANCE_EVICTED ? "Evicted" : "MigrationRequested"),
                  dry ? "DryRun" : (targeted ? "Migrate" : "Evict"), note);
            size_t used = strlen(made);
            if (used + 1 < made_len)
                snprintf(made + used, made_len - used, "%s%s %s/%s %s -> %s%s", used ? "; " : "",
                         cx->kind ? cx->kind : "Pod", c->ns, cx->workload_name, src, dst,
                         targeted ? " (live migration sent there)" : " (predicted; the scheduler places it)");
            done++;
            break;
        }
        case REBALANCE_REFUSED: {
            (*refused)++;
            rb->stats.refused++;
            /* held back as a move would be: cooldown.initial, doubling while refusals repeat */
            cooldown_record(rb->refusals, cx->key);
            c->blocked = "eviction refused";
            snprintf(note, sizeof(note), "%s%s of pod %s/%s off %s refused, skipped: %s", dry ? "dry-run " : "", verb,
                     c->ns, c->name, src, err.msg);
            log_info("eviction refused: skipped", "psirebalance", in->pr->name, "pod", c->name, "namespace", c->ns,
                     "error", err.msg);
            event(d, in, "Warning", "EvictionRefused", dry ? "DryRun" : "Evict", note);
            break;
        }
        case REBALANCE_GONE:
            c->blocked = "gone";
            break;
        case REBALANCE_ERROR:
            rb->stats.eviction_failures++;
            *failed = true;
            snprintf(fail_msg, fail_len, "the %s of pod %s/%s failed: %s", verb, c->ns, c->name, err.msg);
            c->blocked = "eviction failed";
            log_error("eviction failed", "psirebalance", in->pr->name, "pod", c->name, "namespace", c->ns, "error",
                      err.msg);
            event(d, in, "Warning", targeted ? "MigrationFailed" : "EvictionFailed",
                  dry ? "DryRun" : (targeted ? "Migrate" : "Evict"), fail_msg);
            break;
        }
        free(mig_name);
    }
    return done;
}

/* The decision of a sampled cycle. Returns -1 when an eviction failed (fail_msg says why). */
static int decide_cycle(struct rebalancer *rb, const struct rebalancer_deps *d, const struct rebalancer_input *in,
                        const struct migs *migs, struct decision *dc, bool *keep, char *fail_msg, size_t fail_len)
{
    const struct api_spec *spec = &in->pr->spec;
    size_t nn = in->nnodes;
    int64_t now = in->now_ms;
    int64_t settle = settle_ms(spec);
    bool dry = spec->eviction.mode == API_MODE_DRY_RUN;
    int rc = 0;
    struct rebalance_node *nodes = calloc(nn ? nn : 1, sizeof(*nodes));
    bool *settling = calloc(nn ? nn : 1, sizeof(bool)), *is_source = calloc(nn ? nn : 1, sizeof(bool));
    double *usage = calloc(nn ? nn : 1, sizeof(double)), *adj = calloc(nn ? nn : 1, sizeof(double));
    int *outbound = calloc(nn ? nn : 1, sizeof(int));
    const char **names = calloc(nn ? nn : 1, sizeof(*names));
    struct pods_ctx pc = {.in = in};
    struct rebalance_plan plan = {0};
    if (!nodes || !settling || !is_source || !usage || !adj || !outbound || !names) {
        decide(dc, API_CONDITION_FALSE, "OutOfMemory", "out of memory while deciding");
        goto out;
    }
    /* migrations in flight, whoever started them, and our asked ones without one yet */
    for (size_t i = 0; i < nn; i++)
        names[i] = in->nodes[i].name;
    struct moves_counts counts;
    moves_count(migs->v, migs->n, names, nn, &counts, outbound);
    for (size_t i = 0; i < rb->hist.nmoves; i++) {
        const struct api_move *m = &rb->hist.moves[i];
        if (m->phase == API_MOVE_REQUESTED && under_way(m, now))
            counts.in_flight++;
    }
    settle_from_migrations(migs, in, settling, settle);
    enum api_resource res = spec->pressure.resource;
    for (size_t i = 0; i < nn; i++) {
        struct node_state *ns = node_state(rb, in->nodes[i].name);
        const cJSON *node = in->nodes[i].node, *st = get(node, "status");
        if (ns && ns->settle_until_ms > now)
            settling[i] = true;
        nodes[i] = (struct rebalance_node){
            .name = in->nodes[i].name,
            .selected = true,
            .tainted = in->nodes[i].tainted,
            .unschedulable = cJSON_IsTrue(get(get(node, "spec"), "unschedulable")),
            .labels = get(get(node, "metadata"), "labels"),
            .taints = get(get(node, "spec"), "taints"),
            .pressure = in->nodes[i].pressure[res],
            .settling = settling[i],
            .cpus = resources_get(get(st, "capacity"), "cpu"),
            .demand = NAN,
            .alloc_cpu = resources_get(get(st, "allocatable"), "cpu"),
            .alloc_memory = resources_get(get(st, "allocatable"), "memory"),
            .alloc_pods = resources_get(get(st, "allocatable"), "pods"),
            .req_cpu = NAN,
            .req_memory = NAN,
            .req_pods = NAN,
            .outbound = outbound[i],
        };
    }
    /* our moves under way: their nodes are in motion */
    for (size_t k = 0; k < rb->hist.nmoves; k++) {
        const struct api_move *m = &rb->hist.moves[k];
        if (!under_way(m, now))
            continue;
        for (size_t i = 0; i < nn; i++)
            if (eq(nodes[i].name, m->source_node) || eq(nodes[i].name, m->destination_node))
                nodes[i].settling = settling[i] = true;
    }
    if (dry) /* DryRun: the moves it would have made change the picture once demands are known */
        virt_prune(rb);
    /* the sustain tracker, on the pressure as measured (DryRun: adjusted further below) */
    struct rebalance_params p = {
        .evict_above = (double)spec->eviction.evict_above_percent,
        .taint_above = (double)spec->pressure.taint_above_percent,
        .untaint_below = (double)spec->pressure.untaint_below_percent,
        .max_per_node = (int)spec->eviction.max_per_node,
        .max_per_namespace = (int)spec->eviction.max_per_namespace,
        .max_total = (int)spec->eviction.max_total,
        .max_in_flight = (int)spec->eviction.max_in_flight_migrations,
        .in_flight = counts.in_flight,
        .running = counts.running,
        .targeted = rb->targeted,
    };
    bool any_source = false;
    for (size_t i = 0; i < nn; i++) {
        struct node_state *ns = node_state(rb, nodes[i].name);
        if (ns) {
            bool above = !isnan(nodes[i].pressure) && nodes[i].pressure > p.evict_above;
            if (!above)
                ns->above_since_ms = 0;
            else if (!ns->above_since_ms)
                ns->above_since_ms = now;
            nodes[i].sustained = above && now - ns->above_since_ms >= spec->pressure.sustain_ms;
        }
        is_source[i] = rebalance_is_source(&p, &nodes[i]) && !settling[i];
        any_source = any_source || is_source[i];
    }
    if (!any_source) {
        /* nothing to do, or only settling sources: the plan says which, without reading more */
        if (rebalance_plan(&p, nodes, nn, NULL, 0, &plan) < 0) {
            decide(dc, API_CONDITION_FALSE, "OutOfMemory", "out of memory while planning");
            goto out;
        }
        decide(dc, API_CONDITION_FALSE, plan.reason, "%s", plan.message);
        goto out;
    }
    if (now < rb->quiet_until_ms && rb->quiet_generation == in->pr->generation) {
        *keep = true; /* the last look found nothing to move: the decision stands until it settles */
        goto out;
    }
    /* the pods that might move */
    char *sel = api_selector_to_query(&spec->eviction.pod_selector);
    struct kube_informer *pods = sel && d->pods ? d->pods(d->pods_ud, sel) : NULL;
    free(sel);
    if (!pods) {
        decide(dc, API_CONDITION_FALSE, "PodsUnavailable", "the pods of spec.eviction.podSelector cannot be watched");
        goto out;
    }
    if (!kube_informer_synced(pods)) {
        decide(dc, API_CONDITION_FALSE, "WaitingForPods", "the pods of spec.eviction.podSelector are being listed");
        goto out;
    }
    pc.is_source = is_source;
    if (kube_informer_foreach(pods, collect_pod, &pc) != 0) {
        decide(dc, API_CONDITION_FALSE, "OutOfMemory", "out of memory collecting pods");
        goto out;
    }
    /* usage */
    char why[1024];
    if (read_usage(rb, d, in, pc.c, pc.x, pc.n, usage, why, sizeof(why)) < 0) {
        decide(dc, API_CONDITION_FALSE, "UsageUnavailable", "no move without CPU usage to predict it: %s", why);
        log_warn("usage not readable: no move", "psirebalance", in->pr->name, "error", why);
        goto out;
    }
    for (size_t i = 0; i < nn; i++)
        nodes[i].demand = rebalance_node_demand(usage[i], nodes[i].cpus, in->nodes[i].pressure[API_RESOURCE_CPU]);
    struct rebalance_pod_filter f = {&spec->eviction.pod_selector, spec->eviction.excluded_namespaces,
                                     spec->eviction.nexcluded_namespaces};
    for (size_t j = 0; j < pc.n; j++) {
        struct rebalance_candidate *c = &pc.c[j];
        struct cand_extra *x = &pc.x[j];
        c->demand = isnan(x->usage) ? NAN : rebalance_demand(x->usage, in->nodes[c->node].pressure[API_RESOURCE_CPU]);
        const char *b = rebalance_pod_check(x->pod, &f);
        if (!b && !x->kind)
            b = "no controller";
        if (!b && x->vmi)
            b = vmi_busy(d, migs, c->ns, x->vmi);
        if (!b && move_running(rb, x->key, now))
            b = "move in progress";
        if (!b && (dry ? cooldown_until(rb->dry_cool, x->key) : cooldown_until(rb->cool, x->key)))
            b = "cooling down";
        if (!b && cooldown_until(rb->refusals, x->key))
            b = "eviction refused recently";
        c->blocked = b;
    }
    /* DryRun: apply the moves it would have made */
    if (dry && rb->nvirt) {
        virt_apply_load(rb, nodes, nn, adj);
        for (size_t i = 0; i < nn; i++) {
            if (isnan(nodes[i].pressure) || adj[i] == 0)
                continue;
            nodes[i].pressure += adj[i];
            if (nodes[i].pressure < 0)
                nodes[i].pressure = 0;
            struct node_state *ns = node_state(rb, nodes[i].name);
            bool above = nodes[i].pressure > p.evict_above;
            if (ns && !above)
                ns->above_since_ms = 0;
            nodes[i].sustained = nodes[i].sustained && above;
        }
    }
    for (size_t i = 0; i < nn; i++) {
        char pr[32], dm[32], cp[32];
        snprintf(pr, sizeof(pr), "%.2f", nodes[i].pressure);
        snprintf(dm, sizeof(dm), "%.3f", nodes[i].demand);
        snprintf(cp, sizeof(cp), "%.2f", nodes[i].cpus);
        log_debug("rebalance node", "psirebalance", in->pr->name, "node", nodes[i].name, "pressure", pr, "demand", dm,
                  "cpus", cp, "sustained", nodes[i].sustained ? "true" : "false", "settling",
                  nodes[i].settling ? "true" : "false");
    }
    /* requests on the eligible destinations (the coolest first, at most REBALANCER_MAX_LISTED),
     * only when something may move at all */
    size_t movable = 0, listed = 0;
    for (size_t j = 0; j < pc.n; j++)
        movable += !pc.c[j].blocked && !isnan(pc.c[j].demand) && pc.c[j].demand > 0;
    if (!movable)
        listed = REBALANCER_MAX_LISTED;
    for (int round = 0; round < 2 && listed < REBALANCER_MAX_LISTED; round++)
        for (size_t i = 0; i < nn && listed < REBALANCER_MAX_LISTED; i++) {
            struct rebalance_node probe = nodes[i];
            probe.req_cpu = 0;
            char w[256];
            if (rebalance_is_source(&p, &nodes[i]) || rebalance_destination_check(&p, &probe, w, sizeof(w)))
                continue;
            /* round 0: the nodes below half the untaint level; round 1: the rest */
            if ((round == 0) != (nodes[i].pressure < p.untaint_below / 2) || !isnan(nodes[i].req_cpu))
                continue;
            double cpu, mem, np;
            if (node_requests(d, nodes[i].name, &cpu, &mem, &np) == 0) {
                nodes[i].req_cpu = cpu, nodes[i].req_memory = mem, nodes[i].req_pods = np;
                listed++;
            }
        }
    if (dry) /* the would-be arrivals count in the requests too */
        virt_apply_requests(rb, nodes, nn);
    /* plan and move; a refused eviction takes its candidate out and the rest is planned again */
    char made[1500] = "";
    size_t done = 0;
    bool failed = false;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        rebalance_plan_free(&plan);
        p.max_total = (int)spec->eviction.max_total - (int)done;
        if (p.max_total <= 0)
            break;
        if (rebalance_plan(&p, nodes, nn, pc.c, pc.n, &plan) < 0) {
            decide(dc, API_CONDITION_FALSE, "OutOfMemory", "out of memory while planning");
            goto out;
        }
        if (!plan.nmoves)
            break;
        int refused = 0;
        size_t made_now = execute(rb, d, in, &plan, nodes, pc.c, pc.x, &refused, &failed, fail_msg, fail_len, made,
                                  sizeof(made));
        done += made_now;
        /* what was made changes the nodes for the next round */
        for (size_t k = 0; k < plan.nmoves; k++) {
            const struct rebalance_move *mv = &plan.moves[k];
            struct rebalance_candidate *c = &pc.c[mv->candidate];
            if (c->blocked)
                continue; /* refused or failed */
            c->blocked = "moved";
            nodes[mv->source].demand -= mv->demand;
            nodes[mv->destination].demand += mv->demand;
            nodes[mv->destination].req_cpu += c->req_cpu;
            nodes[mv->destination].req_memory += c->req_memory;
            nodes[mv->destination].req_pods += 1;
            nodes[mv->source].settling = nodes[mv->destination].settling = true;
            if (c->vm)
                p.in_flight++, p.running++, nodes[mv->source].outbound++;
        }
        if (!refused || failed)
            break;
    }
    if (failed)
        rc = -1;
    rb->quiet_until_ms = done ? 0 : now + settle;
    rb->quiet_generation = in->pr->generation;
    if (done) {
        if (dry)
            decide(dc, API_CONDITION_FALSE, "DryRun", "DryRun, nothing was done; would move: %s", made);
        else
            decide(dc, API_CONDITION_TRUE, "Moving", "moving: %s", made);
    } else if (plan.reason && strcmp(plan.reason, REBALANCE_MOVING) != 0) {
        decide(dc, API_CONDITION_FALSE, plan.reason, "%s", plan.message);
    } else {
        decide(dc, API_CONDITION_FALSE, "EvictionRefused",
               "the evictions asked for were refused (PodDisruptionBudgets or KubeVirt): see the Events");
    }
out:
    rebalance_plan_free(&plan);
    for (size_t j = 0; j < pc.n; j++)
        free(pc.x[j].key);
    free(pc.c);
    free(pc.x);
    free(nodes);
    free(settling);
    free(is_source);
    free(usage);
    free(adj);
    free(outbound);
    free(names);
    return rc;
}

/* ---- status ---- */

static void write_status(struct rebalancer *rb, const struct rebalancer_input *in, struct api_status *next)
{
    moves_prune(&rb->hist, in->now_ms / 1000, in->pr->spec.eviction.cooldown.history_ms / 1000);
    int64_t in_flight = 0;
    for (size_t i = 0; i < rb->hist.nmoves; i++)
        in_flight += under_way(&rb->hist.moves[i], in->now_ms);
    next->summary.evictions = rb->hist.summary.evictions;
    next->summary.migrations_succeeded = rb->hist.summary.migrations_succeeded;
    next->summary.migrations_failed = rb->hist.summary.migrations_failed;
    next->summary.migrations_in_flight = in_flight;
    for (size_t i = 0; i < next->nnodes; i++) {
        struct api_node_status *n = &next->nodes[i];
        struct node_state *ns = node_state(rb, n->name);
        if (!ns)
            continue;
        n->evictions = ns->evictions;
        n->migrations.succeeded = ns->succeeded;
        n->migrations.failed = ns->failed;
        n->migrations.in_flight = 0;
        for (size_t k = 0; k < rb->hist.nmoves; k++) {
            const struct api_move *m = &rb->hist.moves[k];
            if (under_way(m, in->now_ms) && eq(m->source_node, n->name))
                n->migrations.in_flight++;
        }
    }
    for (size_t i = 0; i < next->nmoves; i++)
        api_move_free(&next->moves[i]);
    free(next->moves);
    next->moves = NULL;
    next->nmoves = 0;
    for (size_t i = 0; i < rb->hist.nmoves; i++) {
        struct api_move *m = api_status_add_move(next);
        if (!m || api_move_copy(m, &rb->hist.moves[i]) < 0) {
            if (m)
                next->nmoves--;
            break;
        }
    }
}

int rebalancer_run(struct rebalancer *rb, const struct rebalancer_deps *d, const struct rebalancer_input *in,
                   struct api_status *next, const char **fail_reason, char *fail_msg, size_t fail_len)
{
    const struct api_spec *spec = &in->pr->spec;
    rb->clock_ms = in->now_ms;
    struct cooldown_params cp = {spec->eviction.cooldown.initial_ms, spec->eviction.cooldown.max_ms,
                                 spec->eviction.cooldown.history_ms};
    cooldown_set_params(rb->cool, &cp);
    cooldown_set_params(rb->dry_cool, &cp);
    cooldown_set_params(rb->refusals, &cp);
    if (!rb->loaded)
        load(rb, &in->pr->status);
    if (rb->have_mode && rb->mode != spec->eviction.mode) { /* DryRun's picture ends with DryRun */
        struct cooldown_clock clk = {clock_now, rb};
        struct cooldown *fresh = cooldown_new(&cp, &clk);
        if (fresh) {
            cooldown_free(rb->dry_cool);
            rb->dry_cool = fresh;
        }
        virt_clear(rb);
        for (size_t i = 0; i < rb->nnodes; i++)
            rb->nodes[i].settle_until_ms = 0;
    }
    rb->have_mode = true;
    rb->mode = spec->eviction.mode;
    cooldown_prune(rb->cool);
    cooldown_prune(rb->dry_cool);
    cooldown_prune(rb->refusals);

    struct migs migs = {.vmis = d->vmis};
    if (d->vmims && kube_informer_foreach(d->vmims, collect_mig, &migs) != 0)
        log_warn("migrations not all read: out of memory", "psirebalance", in->pr->name);
    int rc = 0;
    if (follow(rb, d, in, &migs) < 0)
        log_warn("moves not followed: out of memory", "psirebalance", in->pr->name);
    if (d->vmims)
        cleanup_migrations(rb, d, in, &migs);
    /* eviction.method Migrate: VMs get targeted live migrations where KubeVirt can do them */
    bool migrate = spec->eviction.method == API_METHOD_MIGRATE;
    bool fallback = false;
    rb->targeted = false;
    if (migrate && spec->eviction.mode != API_MODE_DISABLED) {
        if (!d->vmims) {
            rb->support = MIGRATE_UNSUPPORTED;
            snprintf(rb->support_why, sizeof(rb->support_why), "the KubeVirt API (%s) is not served",
                     REBALANCER_KUBEVIRT_GV);
        } else {
            migrate_support_now(rb, d, in);
        }
        rb->targeted = rb->support == MIGRATE_SUPPORTED;
        fallback = !rb->targeted;
        if (fallback && !rb->support_warned) {
            char note[700];
            snprintf(note, sizeof(note), "eviction.method Migrate falls back to eviction: %s", rb->support_why);
            event(d, in, "Warning", "MigrateUnsupported", "Decide", note);
            rb->support_warned = true;
        }
    }

    int64_t now_s = in->now_ms / 1000, gen = in->pr->generation;
    struct decision dc = {0};
    bool set = true;
    if (spec->eviction.mode == API_MODE_DISABLED) {
        decide(&dc, API_CONDITION_FALSE, "Disabled", "eviction.mode is Disabled: nothing is moved");
    } else if (spec->pressure.resource != API_RESOURCE_CPU) {
        decide(&dc, API_CONDITION_FALSE, "ResourceNotSupported",
               "moves are predicted from CPU usage, so only pressure.resource cpu is rebalanced; %s pressure is "
               "tainted but nothing is moved",
               api_resource_name(spec->pressure.resource));
    } else if (!in->metrics_ok) {
        decide(&dc, API_CONDITION_FALSE, "MetricsUnavailable", "pressure is not readable: nothing is moved");
    } else if (in->sampled) {
        bool keep = false;
        if (decide_cycle(rb, d, in, &migs, &dc, &keep, fail_msg, fail_len) < 0) {
            *fail_reason = "EvictionFailed";
            rc = -1;
        }
        set = !keep;
    } else {
        set = false; /* between samples the decision stands */
    }
    /* moves under way make the condition True whatever the cycle decided */
    size_t running = 0;
    for (size_t i = 0; i < rb->hist.nmoves; i++)
        running += under_way(&rb->hist.moves[i], in->now_ms);
    if (set && fallback) { /* the condition says why VMs are evicted although Migrate was asked */
        size_t used = strlen(dc.message);
        if (used + 1 < sizeof(dc.message))
            snprintf(dc.message + used, sizeof(dc.message) - used,
                     "; eviction.method Migrate falls back to eviction (MigrateUnsupported): %s", rb->support_why);
    }
    if (set) {
        if (running && dc.status != API_CONDITION_TRUE && spec->eviction.mode == API_MODE_AUTOMATIC) {
            char msg[2300];
            snprintf(msg, sizeof(msg), "%zu move%s under way; %s", running, running == 1 ? "" : "s", dc.message);
            decide(&dc, API_CONDITION_TRUE, "MigrationsInFlight", "%s", msg);
        }
        conditions_set(next, API_CONDITION_REBALANCING, dc.status, dc.reason, dc.message, gen, now_s);
        if (strcmp(rb->last_reason, dc.reason) != 0) {
            bool blocked = eq(dc.reason, REBALANCE_NO_DESTINATION) || eq(dc.reason, REBALANCE_NO_IMPROVEMENT) ||
                           eq(dc.reason, REBALANCE_LIMITED) || eq(dc.reason, "UsageUnavailable");
            if (blocked)
                event(d, in, "Warning", "RebalanceBlocked", "Decide", dc.message);
            log_info("rebalancing", "psirebalance", in->pr->name, "reason", dc.reason, "message", dc.message);
            snprintf(rb->last_reason, sizeof(rb->last_reason), "%s", dc.reason);
        }
    } else if (!api_status_condition(next, API_CONDITION_REBALANCING)) {
        conditions_set(next, API_CONDITION_REBALANCING, API_CONDITION_UNKNOWN, "Pending",
                       "waiting for the first pressure sample", gen, now_s);
    }
    write_status(rb, in, next);
    free(migs.v);
    return rc;
}
