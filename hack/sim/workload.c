/* workload: VMs, VMIs and launcher pods (see workload.h). */
#include "hack/sim/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"
#include "hack/sim/nodes.h"
#include "hack/sim/objects.h"
#include "base/logging.h"

/* INIT: nothing made yet; CORDONING: the other nodes cordoned, until the bed sees it;
 * WAIT: workloads starting; DONE: all run, the cordons lifted. */
enum start_state { START_INIT, START_CORDONING, START_WAIT, START_DONE };

struct vm_state {
    double cpu, memory, io;
    bool demand_dirty;      /* the VM's demand annotation needs an update */
    uint64_t restart_at_ms; /* a new VMI not before this (0: at once) */
};

struct workload {
    struct sim *s;
    struct vm_state *vm;
    enum start_state start;
    char **cordoned;
    size_t n_cordoned, cordoned_cap;
    bool (*hold)(void *ud); /* workload_hold_start */
    void *hold_ud;
};

struct workload *workload_new(struct sim *s)
{
    struct workload *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->s = s;
    w->vm = calloc(s->sc->n_vms ? s->sc->n_vms : 1, sizeof(*w->vm));
    if (!w->vm) {
        free(w);
        return NULL;
    }
    for (size_t i = 0; i < s->sc->n_vms; i++) {
        w->vm[i].cpu = s->sc->vms[i].cpu_demand;
        w->vm[i].memory = s->sc->vms[i].memory_demand;
        w->vm[i].io = s->sc->vms[i].io_demand;
    }
    return w;
}

static void uncordon_all(struct workload *w)
{
    for (size_t i = 0; i < w->n_cordoned; i++) {
        nodes_cordon(w->s, w->cordoned[i], false);
        free(w->cordoned[i]);
    }
    free(w->cordoned);
    w->cordoned = NULL;
    w->n_cordoned = w->cordoned_cap = 0;
}

void workload_free(struct workload *w)
{
    if (!w)
        return;
    uncordon_all(w);
    free(w->vm);
    free(w);
}

/* ---- VMI status ---- */

/* A condition object. */
static cJSON *condition(const char *type, bool status, const char *reason, const char *message)
{
    char ts[32];
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "status", status ? "True" : "False");
    cJSON_AddStringToObject(c, "lastTransitionTime", sim_timestamp(ts, sizeof(ts)));
    cJSON_AddNullToObject(c, "lastProbeTime");
    if (reason)
        cJSON_AddStringToObject(c, "reason", reason);
    if (message)
        cJSON_AddStringToObject(c, "message", message);
    return c;
}

/* Patch the VMI's status to phase (and node, when given); pod is its launcher pod. */
static void set_vmi_phase(struct workload *w, const struct scenario_vm *vm, const cJSON *vmi, const char *phase,
                          const char *node, const cJSON *pod, const char *reason)
{
    struct sim *s = w->s;
    cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddStringToObject(st, "phase", phase);
    if (node)
        cJSON_AddStringToObject(st, "nodeName", node);
    if (reason)
        cJSON_AddStringToObject(st, "reason", reason);
    cJSON_AddItemToObject(st, "phaseTransitionTimestamps",
                          sim_phase_history(jx_get(vmi, "status.phaseTransitionTimestamps"), phase));
    cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
    bool running = strcmp(phase, "Running") == 0;
    cJSON_AddItemToArray(conds, condition("Ready", running, running ? NULL : "PodNotReady", NULL));
    if (vm->migratable)
        cJSON_AddItemToArray(conds, condition("LiveMigratable", true, NULL, NULL));
    else
        cJSON_AddItemToArray(conds,
                             condition("LiveMigratable", false, "DisksNotLiveMigratable",
                                       "cannot migrate VMI: PVC rootdisk-rwo is not shared, live migration "
                                       "requires that all PVCs must be shared (using ReadWriteMany access mode)"));
    cJSON_AddStringToObject(st, "migrationMethod", vm->migratable ? "LiveMigration" : "BlockMigration");
    cJSON_AddStringToObject(st, "migrationTransport", "Unix");
    cJSON_AddStringToObject(st, "qosClass", "Burstable");
    cJSON_AddStringToObject(st, "launcherContainerImageVersion", OBJECTS_LAUNCHER_IMAGE);
    if (running && pod) {
        cJSON *active = cJSON_AddObjectToObject(st, "activePods");
        cJSON_AddStringToObject(active, jx_str0(pod, "metadata.uid"), node ? node : "");
    }
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstances", vm->name, 1);
    if (sim_merge_patch(s, path, patch, vm->name) == 0)
        log_info("vmi phase", "vmi", vm->name, "phase", phase, "node", node ? node : "");
    free(path);
    cJSON_Delete(patch);
    if (running && node && !jx_eq(jx_label(vmi, "kubevirt.io/nodeName"), node)) {
        cJSON *mp = cJSON_CreateObject();
        cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(mp, "metadata"), "labels"),
                                "kubevirt.io/nodeName", node);
        path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstances", vm->name, 0);
        sim_merge_patch(s, path, mp, vm->name);
        free(path);
        cJSON_Delete(mp);
    }
}

/* Patch the VM's status when it differs. */
static void set_vm_status(struct workload *w, const struct scenario_vm *vm, const cJSON *vmo, bool created, bool ready,
                          const char *printable)
{
    if (jx_bool(vmo, "status.created", false) == created && jx_bool(vmo, "status.ready", false) == ready &&
        jx_eq(jx_str(vmo, "status.printableStatus"), printable))
        return;
    cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddBoolToObject(st, "created", created);
    cJSON_AddBoolToObject(st, "ready", ready);
    cJSON_AddStringToObject(st, "printableStatus", printable);
    char *path = sim_path(w->s, SIM_KUBEVIRT_GV, "virtualmachines", vm->name, 1);
    sim_merge_patch(w->s, path, patch, vm->name);
    free(path);
    cJSON_Delete(patch);
}

/* ---- pods of a VMI ---- */

struct pod_scan {
    const char *node;         /* the VMI's node, or NULL */
    int live;                 /* live pods */
    const cJSON *initial;     /* a live pod that is no migration target */
    const cJSON *initial_any; /* such a pod in any state */
    const cJSON *on_node;     /* the live pod on node */
};

static int scan_cb(const cJSON *pod, void *ud)
{
    struct pod_scan *p = ud;
    bool live = sim_pod_live(pod);
    bool target = jx_label(pod, SIM_MIGRATION_JOB_LABEL) != NULL;
    if (live)
        p->live++;
    if (!target) {
        p->initial_any = pod;
        if (live)
            p->initial = pod;
    }
    if (live && p->node && jx_eq(jx_str(pod, "spec.nodeName"), p->node))
        p->on_node = pod;
    return 0;
}

/* ---- one VM ---- */

static void create_vm(struct workload *w, size_t i)
{
    struct sim *s = w->s;
    const struct scenario_vm *vm = &s->sc->vms[i];
    cJSON *o = objects_vm(s->sc->namespace, s->sc->name, vm, w->vm[i].cpu);
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachines", NULL, 0);
    if (sim_create_once(s, path, o, NULL, vm->name) == 0)
        log_info("vm created", "vm", vm->name);
    free(path);
    cJSON_Delete(o);
}

static void annotate_demand(struct workload *w, size_t i)
{
    char demand[32];
    snprintf(demand, sizeof(demand), "%g", w->vm[i].cpu);
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations"),
                            SIM_DEMAND_ANNOTATION, demand);
    char *path = sim_path(w->s, SIM_KUBEVIRT_GV, "virtualmachines", w->s->sc->vms[i].name, 0);
    if (sim_merge_patch(w->s, path, patch, w->s->sc->vms[i].name) == 0)
        w->vm[i].demand_dirty = false;
    free(path);
    cJSON_Delete(patch);
}

static void create_vmi(struct workload *w, size_t i, const cJSON *vmo)
{
    struct sim *s = w->s;
    const struct scenario_vm *vm = &s->sc->vms[i];
    enum scenario_strategy st = vm->strategy != SCENARIO_STRATEGY_UNSET ? vm->strategy : s->sc->cluster_strategy;
    cJSON *o = objects_vmi(s->sc->namespace, s->sc->name, vm, jx_str0(vmo, "metadata.uid"), st);
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstances", NULL, 0);
    cJSON *created = NULL;
    if (sim_create_once(s, path, o, &created, vm->name) == 0 && created) {
        log_info("vmi created", "vmi", vm->name, "uid", jx_str0(created, "metadata.uid"));
        record_add(s->rec, "vmi-created", "vm", vm->name, "uid", jx_str0(created, "metadata.uid"), NULL);
    }
    cJSON_Delete(created);
    free(path);
    cJSON_Delete(o);
    set_vm_status(w, vm, vmo, true, false, "Starting");
}

static void create_pod(struct workload *w, size_t i, const cJSON *vmi)
{
    struct sim *s = w->s;
    const struct scenario_vm *vm = &s->sc->vms[i];
    const char *uid = jx_str0(vmi, "metadata.uid");
    char suffix[6], name[128];
    sim_suffix(uid, suffix);
    snprintf(name, sizeof(name), "virt-launcher-%s-%s", vm->name, suffix);
    /* during the start the launcher pod is bound to start.node: the scheduler may not have seen
     * the cordons yet (its node cache lags on a busy machine) and would spread the VMs */
    struct scenario_vm pinned = *vm;
    if (w->start != START_DONE && s->sc->start_node && !vm->node)
        pinned.node = s->sc->start_node;
    cJSON *o = objects_launcher_pod(s->sc->namespace, s->sc->name, &pinned, vm->name, uid, name, NULL);
    char *path = kube_path("v1", s->sc->namespace, "pods", NULL, NULL);
    if (sim_create_once(s, path, o, NULL, name) == 0)
        log_debug("launcher pod created", "pod", name);
    free(path);
    cJSON_Delete(o);
}

static void sync_vm(struct workload *w, size_t i)
{
    struct sim *s = w->s;
    const struct scenario_vm *vm = &s->sc->vms[i];
    const char *ns = s->sc->namespace;
    const cJSON *vmo = kube_informer_get(s->vms, ns, vm->name);
    if (!vmo) {
        create_vm(w, i);
        return;
    }
    if (w->vm[i].demand_dirty)
        annotate_demand(w, i);
    const cJSON *vmi = kube_informer_get(s->vmis, ns, vm->name);
    if (!vmi) {
        if (kube_loop_now_ms() >= w->vm[i].restart_at_ms)
            create_vmi(w, i, vmo);
        return;
    }
    if (jx_get(vmi, "metadata.deletionTimestamp"))
        return;
    const char *uid = jx_str0(vmi, "metadata.uid");
    const char *phase = jx_str0(vmi, "status.phase");
    if (jx_eq(phase, "Failed") || jx_eq(phase, "Succeeded")) {
        /* runStrategy Always: the VM starts again, with a new VMI */
        char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstances", vm->name, 0);
        if (sim_delete(s, path, vm->name) == 0) {
            w->vm[i].restart_at_ms = kube_loop_now_ms() + (uint64_t)s->sc->restart_delay_ms;
            log_info("vm restarting", "vm", vm->name, "old_uid", uid, "node", jx_str0(vmi, "status.nodeName"));
            record_add(s->rec, "vm-restart", "vm", vm->name, "uid", uid, "node", jx_str0(vmi, "status.nodeName"),
                       "reason", jx_str0(vmi, "status.reason"), NULL);
        }
        free(path);
        set_vm_status(w, vm, vmo, false, false, "Starting");
        return;
    }
    struct pod_scan scan = {.node = jx_str(vmi, "status.nodeName")};
    sim_foreach_pod_of(s, uid, scan_cb, &scan);

    if (!jx_eq(phase, "Running")) {
        const cJSON *pod = scan.initial;
        if (!pod) {
            if (jx_eq(phase, "Scheduled") && scan.initial_any == NULL) {
                /* its pod was bound and is gone: the VMI fails, the VM restarts */
                set_vmi_phase(w, vm, vmi, "Failed", NULL, NULL, "PodDeleted");
                return;
            }
            if (!scan.initial_any)
                create_pod(w, i, vmi);
            if (!*phase)
                set_vmi_phase(w, vm, vmi, "Pending", NULL, NULL, NULL);
            return;
        }
        const char *node = jx_str(pod, "spec.nodeName");
        const char *want = !node ? "Scheduling" : sim_pod_ready(pod) ? "Running" : "Scheduled";
        if (!jx_eq(phase, want) || !jx_eq(jx_str(vmi, "status.nodeName"), node))
            set_vmi_phase(w, vm, vmi, want, node, pod, NULL);
        set_vm_status(w, vm, vmo, true, false, "Starting");
        return;
    }

    /* Running */
    if (scan.live == 0) {
        log_info("vmi lost its launcher pod", "vmi", vm->name, "node", jx_str0(vmi, "status.nodeName"));
        record_add(s->rec, "vmi-failed", "vm", vm->name, "uid", uid, "node", jx_str0(vmi, "status.nodeName"), NULL);
        set_vmi_phase(w, vm, vmi, "Failed", jx_str(vmi, "status.nodeName"), NULL, "PodTerminated");
        return;
    }
    const cJSON *ms = jx_get(vmi, "status.migrationState");
    bool migrating = ms && !jx_bool(ms, "completed", false);
    set_vm_status(w, vm, vmo, true, true, migrating ? "Migrating" : "Running");
}

/* ---- start ---- */

static int cordon_others(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv;
    struct workload *w = ud;
    if (jx_eq(key, w->s->sc->start_node) || jx_bool(obj, "spec.unschedulable", false))
        return 0;
    if (nodes_cordon(w->s, key, true) < 0)
        return 0;
    if (BASE_GROW(w->cordoned, w->n_cordoned + 1, w->cordoned_cap) < 0)
        return 1;
    w->cordoned[w->n_cordoned++] = strdup(key);
    return 0;
}

/* Whether the bed's view of every node this start cordoned shows the cordon. */
static bool cordons_seen(const struct workload *w)
{
    for (size_t i = 0; i < w->n_cordoned; i++) {
        const cJSON *node = kube_informer_get(w->s->nodes, NULL, w->cordoned[i]);
        if (!jx_bool(node, "spec.unschedulable", false))
            return false;
    }
    return true;
}

static void start_step(struct workload *w)
{
    struct sim *s = w->s;
    if (w->start == START_INIT) {
        if (s->sc->start_node) {
            if (!sim_node(s, s->sc->start_node)) {
                log_warn("start node is not a simulated node yet", "node", s->sc->start_node);
                return;
            }
            kube_informer_foreach(s->nodes, cordon_others, w);
            log_info("start: workloads start on one node, the others are cordoned", "node", s->sc->start_node);
        }
        w->start = START_CORDONING;
    }
    /* workloads other than VMs (Deployments) go through the scheduler: not before the cordons
     * reached the watchers */
    if (w->start == START_CORDONING && cordons_seen(w))
        w->start = START_WAIT;
    if (w->start == START_WAIT && workload_running(w) == s->sc->n_vms && (!w->hold || w->hold(w->hold_ud))) {
        uncordon_all(w);
        w->start = START_DONE;
        log_info("start: every workload runs");
        record_add(s->rec, "started", "scenario", s->sc->name, NULL);
    }
}

void workload_sync(struct workload *w)
{
    if (w->start != START_DONE)
        start_step(w);
    if (w->start < START_WAIT)
        return; /* no VM before the nodes are cordoned */
    for (size_t i = 0; i < w->s->sc->n_vms; i++)
        sync_vm(w, i);
}

bool workload_started(const struct workload *w)
{
    return w->start == START_DONE;
}

bool workload_start_began(const struct workload *w)
{
    return w->start >= START_WAIT;
}

void workload_hold_start(struct workload *w, bool (*ready)(void *ud), void *ud)
{
    w->hold = ready;
    w->hold_ud = ud;
}

int workload_set_demand(struct workload *w, const char *name, double cpu, double memory, double io)
{
    for (size_t i = 0; i < w->s->sc->n_vms; i++) {
        if (strcmp(w->s->sc->vms[i].name, name) != 0)
            continue;
        if (!isnan(cpu) && cpu != w->vm[i].cpu) {
            w->vm[i].cpu = cpu;
            w->vm[i].demand_dirty = true;
        }
        if (!isnan(memory))
            w->vm[i].memory = memory;
        if (!isnan(io))
            w->vm[i].io = io;
        return 0;
    }
    return -1;
}

void workload_demand(const struct workload *w, size_t i, double *cpu, double *memory, double *io)
{
    *cpu = w->vm[i].cpu;
    *memory = w->vm[i].memory;
    *io = w->vm[i].io;
}

static const cJSON *running_vmi(const struct workload *w, size_t i)
{
    const cJSON *vmi = kube_informer_get(w->s->vmis, w->s->sc->namespace, w->s->sc->vms[i].name);
    if (!vmi || jx_get(vmi, "metadata.deletionTimestamp") || !jx_eq(jx_str(vmi, "status.phase"), "Running"))
        return NULL;
    return vmi;
}

const char *workload_node_of(const struct workload *w, size_t i)
{
    return jx_str(running_vmi(w, i), "status.nodeName");
}

const char *workload_vmi_uid(const struct workload *w, size_t i)
{
    const cJSON *vmi = kube_informer_get(w->s->vmis, w->s->sc->namespace, w->s->sc->vms[i].name);
    return jx_str(vmi, "metadata.uid");
}

size_t workload_running(const struct workload *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->s->sc->n_vms; i++)
        n += running_vmi(w, i) != NULL;
    return n;
}
