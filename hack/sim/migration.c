/* migration: the migration controller (see migration.h). */
#include "hack/sim/migration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"
#include "hack/sim/miglimits.h"
#include "hack/sim/objects.h"
#include "base/logging.h"

/* What we remember of a migration between passes (its phase timing and planned outcome). */
struct run {
    char *uid;
    char phase[24];    /* the phase the timing below belongs to */
    uint64_t since_ms; /* when that phase began (as far as we know) */
    uint64_t until_ms; /* Running: when it ends */
    int fail;          /* Running: -1 undecided, 0 succeeds, 1 fails, 2 does not converge */
    bool known;        /* phase holds the migration's phase (we are its only writer) */
    bool seen;         /* seen in this pass */
    char *target_pod;  /* the target pod's name, once created */
    char *vmi;         /* the VMI's name */
    cJSON *history;    /* status.phaseTransitionTimestamps as last written: the cache may lag */
};

/* Failed evacuations of a VMI since its last success, for the backoff. */
struct backoff {
    char *vmi;
    int failures;
    uint64_t last_ms;
};

struct migration {
    struct sim *s;
    struct run *runs;
    size_t n_runs, runs_cap;
    struct backoff *backoffs;
    size_t n_backoffs, backoffs_cap;
};

struct migration *migration_new(struct sim *s)
{
    struct migration *m = calloc(1, sizeof(*m));
    if (m)
        m->s = s;
    return m;
}

static void run_clear(struct run *r)
{
    free(r->uid);
    free(r->target_pod);
    free(r->vmi);
    cJSON_Delete(r->history);
}

void migration_free(struct migration *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_runs; i++)
        run_clear(&m->runs[i]);
    free(m->runs);
    for (size_t i = 0; i < m->n_backoffs; i++)
        free(m->backoffs[i].vmi);
    free(m->backoffs);
    free(m);
}

static struct run *run_find(struct migration *m, const char *uid)
{
    for (size_t i = 0; i < m->n_runs; i++)
        if (strcmp(m->runs[i].uid, uid) == 0)
            return &m->runs[i];
    return NULL;
}

static struct run *run_get(struct migration *m, const char *uid, const char *vmi)
{
    for (size_t i = 0; i < m->n_runs; i++)
        if (strcmp(m->runs[i].uid, uid) == 0)
            return &m->runs[i];
    if (BASE_GROW(m->runs, m->n_runs + 1, m->runs_cap) < 0)
        return NULL;
    struct run *r = &m->runs[m->n_runs++];
    memset(r, 0, sizeof(*r));
    r->uid = strdup(uid);
    r->vmi = strdup(vmi ? vmi : "");
    r->since_ms = kube_loop_now_ms();
    r->fail = -1;
    return r;
}

static struct backoff *backoff_get(struct migration *m, const char *vmi, bool create)
{
    for (size_t i = 0; i < m->n_backoffs; i++)
        if (strcmp(m->backoffs[i].vmi, vmi) == 0)
            return &m->backoffs[i];
    if (!create)
        return NULL;
    if (BASE_GROW(m->backoffs, m->n_backoffs + 1, m->backoffs_cap) < 0)
        return NULL;
    struct backoff *b = &m->backoffs[m->n_backoffs++];
    memset(b, 0, sizeof(*b));
    b->vmi = strdup(vmi);
    return b;
}

/* ---- reading ---- */

struct pod_find {
    const char *node; /* find the live pod on this node ... */
    const char *job;  /* ... or the pod of this migration job (any state) */
    const cJSON *found;
};

static int find_cb(const cJSON *pod, void *ud)
{
    struct pod_find *f = ud;
    if (f->job) {
        if (jx_eq(jx_label(pod, SIM_MIGRATION_JOB_LABEL), f->job)) {
            f->found = pod;
            return 1;
        }
        return 0;
    }
    if (sim_pod_live(pod) && jx_eq(jx_str(pod, "spec.nodeName"), f->node)) {
        f->found = pod;
        return 1;
    }
    return 0;
}

/* The VMI's live pod on its node. */
static const cJSON *source_pod(const struct sim *s, const cJSON *vmi)
{
    struct pod_find f = {.node = jx_str(vmi, "status.nodeName")};
    if (!f.node)
        return NULL;
    sim_foreach_pod_of(s, jx_str(vmi, "metadata.uid"), find_cb, &f);
    return f.found;
}

/* The migration's target pod, in any state. */
static const cJSON *target_pod(const struct sim *s, const cJSON *vmi, const char *mig_uid)
{
    struct pod_find f = {.job = mig_uid};
    sim_foreach_pod_of(s, jx_str(vmi, "metadata.uid"), find_cb, &f);
    return f.found;
}

/* The source node of a migration: the handed-off state, else the VMI's node. */
static const char *source_node(const cJSON *mig, const cJSON *vmi)
{
    const char *n = jx_str(mig, "status.migrationState.sourceNode");
    return n && *n ? n : jx_str(vmi, "status.nodeName");
}

/* ---- writing ---- */

static int patch_migration(struct migration *m, struct run *r, const cJSON *mig, const char *phase, cJSON *state,
                           const char *reason)
{
    struct sim *s = m->s;
    char ts[32];
    cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON *history = NULL;
    if (phase) {
        history = sim_phase_history(r->history ? r->history : jx_get(mig, "status.phaseTransitionTimestamps"), phase);
        cJSON_AddStringToObject(st, "phase", phase);
        cJSON_AddItemToObject(st, "phaseTransitionTimestamps", cJSON_Duplicate(history, 1));
    }
    if (state)
        cJSON_AddItemToObject(st, "migrationState", state);
    if (reason) {
        cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "type", "Failed");
        cJSON_AddStringToObject(c, "status", "True");
        cJSON_AddStringToObject(c, "reason", "MigrationFailed");
        cJSON_AddStringToObject(c, "message", reason);
        cJSON_AddStringToObject(c, "lastTransitionTime", sim_timestamp(ts, sizeof(ts)));
        cJSON_AddItemToArray(conds, c);
    }
    const char *name = jx_str0(mig, "metadata.name");
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstancemigrations", name, 1);
    int rc = sim_merge_patch(s, path, patch, name);
    free(path);
    cJSON_Delete(patch);
    if (rc == 0 && history) {
        cJSON_Delete(r->history);
        r->history = history;
    } else {
        cJSON_Delete(history);
    }
    return rc;
}

static void patch_vmi(struct sim *s, const char *vmi, cJSON *patch, bool status)
{
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstances", vmi, status);
    sim_merge_patch(s, path, patch, vmi);
    free(path);
    cJSON_Delete(patch);
}

/* Set (replace) the VMI's status.migrationState. */
static void set_vmi_migration_state(struct sim *s, const char *vmi, cJSON *state)
{
    cJSON *ops = cJSON_CreateArray();
    cJSON *op = cJSON_CreateObject();
    cJSON_AddStringToObject(op, "op", "add");
    cJSON_AddStringToObject(op, "path", "/status/migrationState");
    cJSON_AddItemToObject(op, "value", state);
    cJSON_AddItemToArray(ops, op);
    char *text = cJSON_PrintUnformatted(ops);
    cJSON_Delete(ops);
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstances", vmi, 1);
    if (text)
        sim_json_patch(s, path, text, vmi);
    free(path);
    free(text);
}

static void annotate_pod(struct sim *s, const cJSON *pod, const char *key, const char *value)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON *ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations");
    if (value)
        cJSON_AddStringToObject(ann, key, value);
    else
        cJSON_AddNullToObject(ann, key);
    const char *name = jx_str0(pod, "metadata.name");
    char *path = kube_path("v1", s->sc->namespace, "pods", name, NULL);
    sim_merge_patch(s, path, patch, name);
    free(path);
    cJSON_Delete(patch);
}

static void delete_pod(struct sim *s, const char *name)
{
    char *path = kube_path("v1", s->sc->namespace, "pods", name, NULL);
    sim_delete(s, path, name);
    free(path);
}

static void set_phase(struct migration *m, struct run *r, const cJSON *mig, const cJSON *vmi, const char *phase,
                      cJSON *state, const char *reason)
{
    if (patch_migration(m, r, mig, phase, state, reason) < 0)
        return; /* a later pass tries again */
    snprintf(r->phase, sizeof(r->phase), "%s", phase);
    r->since_ms = kube_loop_now_ms();
    const char *name = jx_str0(mig, "metadata.name");
    const char *src = source_node(mig, vmi);
    const char *tgt = jx_str(mig, "status.migrationState.targetNode");
    log_info("migration phase", "migration", name, "vmi", r->vmi, "phase", phase, "source", src ? src : "", "target",
             tgt ? tgt : "", "reason", reason ? reason : "");
    record_add(m->s->rec, "migration", "name", name, "uid", r->uid, "vmi", r->vmi, "phase", phase, "source",
               src ? src : "", "target", tgt ? tgt : "", "reason", reason ? reason : "", "evacuation",
               jx_annotation(mig, SIM_EVACUATION_ANNOTATION) ? "true" : "false", NULL);
}

/* Fail the migration: target pod deleted, the VMI's state marked failed (when handed off),
 * with abortStatus when given, the source pod's eviction-in-progress removed. */
static void fail_as(struct migration *m, struct run *r, const cJSON *mig, const cJSON *vmi, const char *reason,
                    const char *abort_status)
{
    struct sim *s = m->s;
    char ts[32];
    sim_timestamp(ts, sizeof(ts));
    const cJSON *tp = vmi ? target_pod(s, vmi, r->uid) : NULL;
    if (tp && !jx_get(tp, "metadata.deletionTimestamp"))
        delete_pod(s, jx_str0(tp, "metadata.name"));
    if (vmi && jx_eq(jx_str(vmi, "status.migrationState.migrationUid"), r->uid)) {
        cJSON *patch = cJSON_CreateObject();
        cJSON *ms = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "status"), "migrationState");
        cJSON_AddTrueToObject(ms, "completed");
        cJSON_AddTrueToObject(ms, "failed");
        cJSON_AddStringToObject(ms, "endTimestamp", ts);
        cJSON_AddStringToObject(ms, "failureReason", reason);
        if (abort_status)
            cJSON_AddStringToObject(ms, "abortStatus", abort_status);
        patch_vmi(s, r->vmi, patch, true);
    }
    const cJSON *sp = vmi ? source_pod(s, vmi) : NULL;
    if (sp && jx_annotation(sp, SIM_EVICTION_IN_PROGRESS))
        annotate_pod(s, sp, SIM_EVICTION_IN_PROGRESS, NULL);
    cJSON *state = cJSON_CreateObject();
    cJSON_AddTrueToObject(state, "completed");
    cJSON_AddTrueToObject(state, "failed");
    cJSON_AddStringToObject(state, "endTimestamp", ts);
    cJSON_AddStringToObject(state, "failureReason", reason);
    if (abort_status)
        cJSON_AddStringToObject(state, "abortStatus", abort_status);
    set_phase(m, r, mig, vmi, MIGLIMITS_FAILED, state, reason);
    if (jx_annotation(mig, SIM_EVACUATION_ANNOTATION) && r->vmi[0]) {
        struct backoff *b = backoff_get(m, r->vmi, true);
        if (b) {
            b->failures++;
            b->last_ms = kube_loop_now_ms();
        }
    }
}

static void fail(struct migration *m, struct run *r, const cJSON *mig, const cJSON *vmi, const char *reason)
{
    fail_as(m, r, mig, vmi, reason, NULL);
}

/* The migration succeeded: the VMI moves to the target, the source pod goes. */
static void succeed(struct migration *m, struct run *r, const cJSON *mig, const cJSON *vmi, const cJSON *tp)
{
    struct sim *s = m->s;
    char ts[32];
    sim_timestamp(ts, sizeof(ts));
    const char *target = jx_str0(tp, "spec.nodeName");
    const cJSON *sp = source_pod(s, vmi);
    cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddStringToObject(st, "nodeName", target);
    cJSON_AddNullToObject(st, "evacuationNodeName");
    cJSON *active = cJSON_AddObjectToObject(st, "activePods");
    if (sp)
        cJSON_AddNullToObject(active, jx_str0(sp, "metadata.uid"));
    cJSON_AddStringToObject(active, jx_str0(tp, "metadata.uid"), target);
    cJSON *ms = cJSON_AddObjectToObject(st, "migrationState");
    cJSON_AddTrueToObject(ms, "completed");
    cJSON_AddFalseToObject(ms, "failed");
    cJSON_AddStringToObject(ms, "endTimestamp", ts);
    cJSON_AddStringToObject(ms, "targetNodeDomainReadyTimestamp", ts);
    patch_vmi(s, r->vmi, patch, true);
    patch = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(patch, "metadata");
    cJSON *labels = cJSON_AddObjectToObject(md, "labels");
    cJSON_AddStringToObject(labels, "kubevirt.io/nodeName", target);
    cJSON_AddNullToObject(labels, "kubevirt.io/migrationTargetNodeName");
    cJSON_AddNullToObject(cJSON_AddObjectToObject(md, "annotations"), SIM_EVICTION_SOURCE);
    patch_vmi(s, r->vmi, patch, false);
    /* the source domain is gone: its launcher pod ends */
    if (sp)
        delete_pod(s, jx_str0(sp, "metadata.name"));
    cJSON *state = cJSON_CreateObject();
    cJSON_AddTrueToObject(state, "completed");
    cJSON_AddFalseToObject(state, "failed");
    cJSON_AddStringToObject(state, "endTimestamp", ts);
    cJSON_AddStringToObject(state, "targetNodeDomainReadyTimestamp", ts);
    set_phase(m, r, mig, vmi, MIGLIMITS_SUCCEEDED, state, NULL);
    struct backoff *b = backoff_get(m, r->vmi, false);
    if (b)
        b->failures = 0;
}

/* ---- phases ---- */

/* Whether another unfinished migration of the same VMI was created before this one. */
struct older {
    const cJSON *mig;
    bool found;
};

static int older_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct older *o = ud;
    const cJSON *other = obj;
    if (other == o->mig || !jx_eq(jx_str(other, "spec.vmiName"), jx_str(o->mig, "spec.vmiName")) ||
        miglimits_phase_final(jx_str(other, "status.phase")))
        return 0;
    int cmp = strcmp(jx_str0(other, "metadata.creationTimestamp"), jx_str0(o->mig, "metadata.creationTimestamp"));
    if (cmp < 0 || (cmp == 0 && strcmp(jx_str0(other, "metadata.name"), jx_str0(o->mig, "metadata.name")) < 0) ||
        miglimits_phase_running(jx_str(other, "status.phase"))) {
        o->found = true;
        return 1;
    }
    return 0;
}

static bool backoff_wait(struct migration *m, const cJSON *mig, const char *vmi)
{
    if (!jx_annotation(mig, SIM_EVACUATION_ANNOTATION))
        return false;
    struct backoff *b = backoff_get(m, vmi, false);
    if (!b || b->failures == 0)
        return false;
    uint64_t wait = (uint64_t)m->s->sc->migration_backoff_ms;
    for (int i = 1; i < b->failures && wait < 3600000; i++)
        wait *= 2;
    return kube_loop_now_ms() < b->last_ms + wait;
}

static void create_target(struct migration *m, struct run *r, const cJSON *mig, const cJSON *vmi,
                          const struct scenario_vm *vm)
{
    struct sim *s = m->s;
    char suffix[6], name[128];
    sim_suffix(r->uid, suffix);
    snprintf(name, sizeof(name), "virt-launcher-%s-%s", vm->name, suffix);
    struct objects_target t = {
        .migration_uid = r->uid,
        .migration_name = jx_str0(mig, "metadata.name"),
        .added_node_selector = jx_get(mig, "spec.addedNodeSelector"),
    };
    cJSON *pod =
        objects_launcher_pod(s->sc->namespace, s->sc->name, vm, vm->name, jx_str0(vmi, "metadata.uid"), name, &t);
    char *path = kube_path("v1", s->sc->namespace, "pods", NULL, NULL);
    if (sim_create_once(s, path, pod, NULL, name) == 0) {
        free(r->target_pod);
        r->target_pod = strdup(name);
        set_phase(m, r, mig, vmi, MIGLIMITS_SCHEDULING, NULL, NULL);
    }
    free(path);
    cJSON_Delete(pod);
}

static bool unschedulable(const cJSON *pod)
{
    const cJSON *c = jx_condition(pod, "PodScheduled");
    return c && jx_eq(jx_str(c, "status"), "False") && jx_eq(jx_str(c, "reason"), "Unschedulable");
}

/* The VMI's migrationState at hand-off. */
static cJSON *handoff_state(const struct sim *s, const char *uid, const cJSON *vmi, const cJSON *sp, const cJSON *tp)
{
    cJSON *ms = cJSON_CreateObject();
    cJSON_AddStringToObject(ms, "migrationUid", uid);
    cJSON_AddStringToObject(ms, "sourceNode", jx_str0(vmi, "status.nodeName"));
    cJSON_AddStringToObject(ms, "targetNode", jx_str0(tp, "spec.nodeName"));
    cJSON_AddStringToObject(ms, "targetPod", jx_str0(tp, "metadata.name"));
    cJSON_AddStringToObject(ms, "sourcePod", jx_str0(sp, "metadata.name"));
    cJSON_AddStringToObject(ms, "mode", "PreCopy");
    cJSON_AddFalseToObject(ms, "completed");
    cJSON_AddFalseToObject(ms, "failed");
    cJSON *cfg = cJSON_AddObjectToObject(ms, "migrationConfiguration");
    int per_cluster, per_node;
    sim_migration_limits(s, &per_cluster, &per_node);
    cJSON_AddNumberToObject(cfg, "parallelMigrationsPerCluster", per_cluster);
    cJSON_AddNumberToObject(cfg, "parallelOutboundMigrationsPerNode", per_node);
    cJSON_AddStringToObject(cfg, "bandwidthPerMigration", "0Mi");
    cJSON_AddNumberToObject(cfg, "completionTimeoutPerGiB", 150);
    cJSON_AddNumberToObject(cfg, "progressTimeout", 150);
    cJSON_AddFalseToObject(cfg, "allowPostCopy");
    return ms;
}

/* One step of one migration: what it is about. */
struct step {
    struct migration *m;
    struct run *r;
    const cJSON *mig, *vmi;
    const char *uid, *vmi_name, *vphase;
    const struct scenario_vm *vm; /* NULL: not one of the scenario's */
    const cJSON *sp, *tp;         /* the source and target pods, or NULL */
    struct miglimits *lim;
    uint64_t now;
};

/* Pending: create the target pod once the VMI runs and KubeVirt's limits leave room. */
static void step_pending(const struct step *st)
{
    struct migration *m = st->m;
    struct run *r = st->r;
    if (!st->vm) {
        fail(m, r, st->mig, st->vmi, "VMI is not one of the simulator's VMs.");
        return;
    }
    if (st->tp) { /* created by an earlier pass whose status write was lost */
        set_phase(m, r, st->mig, st->vmi, MIGLIMITS_SCHEDULING, NULL, NULL);
        miglimits_add(st->lim, jx_str(st->vmi, "status.nodeName"));
        return;
    }
    if (!jx_eq(st->vphase, "Running") || !st->sp)
        return; /* waits for a running VMI */
    if (jx_annotation(st->mig, SIM_EVACUATION_ANNOTATION) &&
        !jx_eq(jx_annotation(st->sp, SIM_EVICTION_IN_PROGRESS), "true"))
        annotate_pod(m->s, st->sp, SIM_EVICTION_IN_PROGRESS, "true");
    if (backoff_wait(m, st->mig, st->vmi_name))
        return;
    const char *src = jx_str(st->vmi, "status.nodeName");
    if (miglimits_room(st->lim, src) <= 0)
        return; /* waits for a slot: KubeVirt's parallel limits */
    create_target(m, r, st->mig, st->vmi, st->vm);
    if (strcmp(r->phase, MIGLIMITS_SCHEDULING) == 0)
        miglimits_add(st->lim, src);
}

/* Scheduling: hand off once the target pod is ready; fail when it stays unschedulable. */
static void step_scheduling(const struct step *st)
{
    struct sim *s = st->m->s;
    if (sim_pod_ready(st->tp)) {
        set_vmi_migration_state(s, st->vmi_name, handoff_state(s, st->uid, st->vmi, st->sp, st->tp));
        cJSON *lp = cJSON_CreateObject();
        cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(lp, "metadata"), "labels"),
                                "kubevirt.io/migrationTargetNodeName", jx_str0(st->tp, "spec.nodeName"));
        patch_vmi(s, st->vmi_name, lp, false);
        set_phase(st->m, st->r, st->mig, st->vmi, MIGLIMITS_SCHEDULED,
                  handoff_state(s, st->uid, st->vmi, st->sp, st->tp), NULL);
    } else if (unschedulable(st->tp) && st->now >= st->r->since_ms + (uint64_t)s->sc->unschedulable_timeout_ms) {
        fail(st->m, st->r, st->mig, st->vmi, "Migration target pod was unschedulable for too long.");
    }
}

/* TargetReady: the migration starts running, for as long as the VM's memory takes. */
static void step_start(const struct step *st)
{
    struct sim *s = st->m->s;
    struct run *r = st->r;
    char ts[32];
    sim_timestamp(ts, sizeof(ts));
    cJSON *patch = cJSON_CreateObject();
    cJSON *ms = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "status"), "migrationState");
    cJSON_AddStringToObject(ms, "startTimestamp", ts);
    patch_vmi(s, st->vmi_name, patch, true);
    cJSON *state = cJSON_CreateObject();
    cJSON_AddStringToObject(state, "startTimestamp", ts);
    set_phase(st->m, r, st->mig, st->vmi, MIGLIMITS_RUNNING, state, NULL);
    double mem = st->vm ? st->vm->memory : 0;
    r->until_ms =
        r->since_ms + (uint64_t)s->sc->migration_base_ms + (uint64_t)(1000.0 * mem / s->sc->migration_bandwidth);
    r->fail = (st->vm && scenario_vm_always_fails(s->sc, st->vm->name)) ||
              (s->sc->migration_failure_rate > 0 && sim_random(s) < s->sc->migration_failure_rate);
    /* Memory dirtied as fast as it is copied never converges: virt-launcher's migration monitor
     * aborts the job once completionTimeoutPerGiB per GB of guest memory (ScaledValue(Giga),
     * rounded up) has passed (virtwrap/live-migration-source.go, manager.go's
     * getVMIMigrationDataSize). */
    if (st->vm && st->vm->dirty_rate >= s->sc->migration_bandwidth) {
        r->until_ms = r->since_ms + (uint64_t)(1000 * s->sc->completion_timeout_per_gib_s * (int64_t)ceil(mem / 1e9));
        r->fail = 2;
    }
}

/* Scheduled, Preparing, TargetReady, Running: the next phase once this one's delay is over. */
static void step_progress(const struct step *st)
{
    struct migration *m = st->m;
    struct run *r = st->r;
    const char *phase = r->phase;
    if (st->now < r->since_ms + (uint64_t)m->s->sc->migration_phase_delay_ms)
        return;
    if (strcmp(phase, MIGLIMITS_SCHEDULED) == 0) {
        set_phase(m, r, st->mig, st->vmi, MIGLIMITS_PREPARING, NULL, NULL);
    } else if (strcmp(phase, MIGLIMITS_PREPARING) == 0) {
        cJSON *patch = cJSON_CreateObject();
        cJSON *ms = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "status"), "migrationState");
        cJSON_AddStringToObject(ms, "targetNodeAddress", jx_str0(st->tp, "status.podIP"));
        patch_vmi(m->s, st->vmi_name, patch, true);
        set_phase(m, r, st->mig, st->vmi, MIGLIMITS_TARGET_READY, NULL, NULL);
    } else if (strcmp(phase, MIGLIMITS_TARGET_READY) == 0) {
        step_start(st);
    } else if (strcmp(phase, MIGLIMITS_RUNNING) == 0) {
        if (r->until_ms == 0) { /* running before we knew it (restart): finish from now */
            r->until_ms = st->now + (uint64_t)m->s->sc->migration_base_ms;
            r->fail = 0;
        }
        if (st->now < r->until_ms)
            return;
        if (r->fail == 1)
            fail(m, r, st->mig, st->vmi, "Live migration failed (injected by the simulator's scenario).");
        else if (r->fail == 2) /* cancelMigration: the abort succeeded, setMigrationResult's reason */
            fail_as(m, r, st->mig, st->vmi, "Live migration has been aborted", "Succeeded");
        else
            succeed(m, r, st->mig, st->vmi, st->tp);
    }
}

/* Whether the migration ends before its phase is looked at (canceled, its VMI gone or
 * stopped), failed if so. */
static bool ended(const struct step *st)
{
    const char *why = NULL;
    if (jx_get(st->mig, "metadata.deletionTimestamp"))
        why = "Migration failed due to being canceled";
    else if (!st->vmi || jx_get(st->vmi, "metadata.deletionTimestamp"))
        why = "Migration failed because vmi does not exist.";
    else if (jx_eq(st->vphase, "Failed") || jx_eq(st->vphase, "Succeeded"))
        why = "Migration failed vmi shutdown during migration.";
    if (why)
        fail(st->m, st->r, st->mig, st->vmi, why);
    return why != NULL;
}

static void step(struct migration *m, const cJSON *mig, struct miglimits *lim)
{
    struct sim *s = m->s;
    struct step st = {.m = m, .mig = mig, .uid = jx_str0(mig, "metadata.uid"), .lim = lim, .now = kube_loop_now_ms()};
    st.vmi_name = jx_str(mig, "spec.vmiName");
    st.r = run_find(m, st.uid);
    if (!st.r || miglimits_phase_final(st.r->phase))
        return; /* final in the cache, or ended by us and the cache is behind */
    const char *phase = st.r->phase;
    st.vmi = st.vmi_name ? kube_informer_get(s->vmis, s->sc->namespace, st.vmi_name) : NULL;
    st.vphase = jx_str0(st.vmi, "status.phase");
    if (ended(&st))
        return;
    st.vm = scenario_vm_find(s->sc, st.vmi_name);
    if (!*phase) {
        struct older o = {mig, false};
        kube_informer_foreach(s->vmims, older_cb, &o);
        if (o.found)
            fail(m, st.r, mig, st.vmi,
                 "VMI is not eligible for migration because another migration job is in progress.");
        else if (!st.vm)
            fail(m, st.r, mig, st.vmi, "VMI is not one of the simulator's VMs.");
        else
            set_phase(m, st.r, mig, st.vmi, MIGLIMITS_PENDING, NULL, NULL);
        return;
    }
    st.sp = source_pod(s, st.vmi);
    st.tp = target_pod(s, st.vmi, st.uid);
    if (strcmp(phase, MIGLIMITS_PENDING) == 0) {
        step_pending(&st);
        return;
    }
    /* from here the migration has a target pod */
    if (!st.tp && st.r->target_pod && strcmp(phase, MIGLIMITS_SCHEDULING) == 0 && st.now < st.r->since_ms + 30000)
        return; /* created a moment ago: the cache has not seen it yet */
    if (!st.tp || !sim_pod_live(st.tp)) {
        fail(m, st.r, mig, st.vmi, "Migration target pod was removed during active migration.");
        return;
    }
    if (!st.sp) {
        fail(m, st.r, mig, st.vmi, "Migration failed because the source pod is gone.");
        return;
    }
    if (strcmp(phase, MIGLIMITS_SCHEDULING) == 0)
        step_scheduling(&st);
    else
        step_progress(&st);
}

/* The migrations, sorted as KubeVirt's queue takes the waiting ones (miglimits_queue_order). */
struct collect {
    const cJSON **items;
    size_t n, cap;
};

static int collect_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct collect *c = ud;
    if (BASE_GROW(c->items, c->n + 1, c->cap) < 0)
        return 1;
    c->items[c->n++] = obj;
    return 0;
}

void migration_sync(struct migration *m)
{
    struct sim *s = m->s;
    struct collect c = {0};
    kube_informer_foreach(s->vmims, collect_cb, &c);
    if (c.n)
        qsort(c.items, c.n, sizeof(*c.items), miglimits_queue_order);
    for (size_t i = 0; i < m->n_runs; i++)
        m->runs[i].seen = false;
    /* what we know of every unfinished migration: the cache's phase on first sight, ours after */
    for (size_t i = 0; i < c.n; i++) {
        const cJSON *mig = c.items[i];
        const char *phase = jx_str0(mig, "status.phase");
        struct run *r = run_find(m, jx_str0(mig, "metadata.uid"));
        if (miglimits_phase_final(phase) && (!r || miglimits_phase_final(r->phase)))
            continue; /* over, and the cache knows it: forget it (below) */
        if (!r && !(r = run_get(m, jx_str0(mig, "metadata.uid"), jx_str(mig, "spec.vmiName"))))
            continue;
        r->seen = true;
        if (!r->known) {
            snprintf(r->phase, sizeof(r->phase), "%s", phase);
            r->since_ms = kube_loop_now_ms();
            r->known = true;
        }
    }
    /* running migrations count against the limits, by the phase we know */
    struct miglimits lim;
    int per_cluster, per_node;
    sim_migration_limits(s, &per_cluster, &per_node);
    miglimits_init(&lim, per_cluster, per_node);
    for (size_t i = 0; i < c.n; i++) {
        const cJSON *mig = c.items[i];
        struct run *r = run_find(m, jx_str0(mig, "metadata.uid"));
        if (r && miglimits_phase_running(r->phase)) {
            const cJSON *vmi = kube_informer_get(s->vmis, s->sc->namespace, jx_str0(mig, "spec.vmiName"));
            miglimits_add(&lim, source_node(mig, vmi));
        }
    }
    for (size_t i = 0; i < c.n; i++)
        step(m, c.items[i], &lim);
    /* migrations deleted from the API: their target pods go too */
    for (size_t i = 0; i < m->n_runs;) {
        struct run *r = &m->runs[i];
        if (r->seen) {
            i++;
            continue;
        }
        if (r->target_pod && !miglimits_phase_final(r->phase)) {
            log_info("migration deleted: removing its target pod", "uid", r->uid, "pod", r->target_pod);
            delete_pod(s, r->target_pod);
        }
        run_clear(r);
        m->runs[i] = m->runs[--m->n_runs];
    }
    miglimits_clear(&lim);
    free(c.items);
}
