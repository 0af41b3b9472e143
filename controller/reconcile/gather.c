/* gather: what rebalancing and the reconcile read (see gather.h). */
#include "reconcile/gather.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"
#include "base/nameindex.h"
#include "base/util.h"
#include "base/logging.h"
#include "psi/kubelet.h"
#include "reconcile/move/evictor.h"
#include "reconcile/move/history.h"
#include "reconcile/move/resources.h"
#include "reconcile/move/usage.h"

/* How often the VirtualMachineInstanceMigration CRD is read again (addedNodeSelector). */
#define CRD_RECHECK_MS (10 * 60 * 1000)

/* ---- informer projections ---- */

static void copy_item(cJSON *dst, const cJSON *src, const char *key)
{
    const cJSON *v = jx_at(src, key);
    if (v && !cJSON_IsNull(v))
        cJSON_AddItemToObject(dst, key, cJSON_Duplicate(v, 1));
}

static void copy_annotations(cJSON *dst_meta, const cJSON *src_meta, const char *const *keys)
{
    const cJSON *ann = jx_at(src_meta, "annotations");
    if (!ann)
        return;
    cJSON *out = NULL;
    for (size_t i = 0; keys[i]; i++) {
        const cJSON *v = jx_at(ann, keys[i]);
        if (!v)
            continue;
        if (!out)
            out = cJSON_AddObjectToObject(dst_meta, "annotations");
        cJSON_AddItemToObject(out, keys[i], cJSON_Duplicate(v, 1));
    }
}

void *gather_pod_projection(const cJSON *pod, void *ud)
{
    (void)ud;
    static const char *const ann[] = {"descheduler.alpha.kubernetes.io/prefer-no-eviction",
                                      "descheduler.alpha.kubernetes.io/eviction-in-progress",
                                      "kubernetes.io/config.mirror",
                                      "kubernetes.io/config.source",
                                      "kubevirt.io/domain",
                                      NULL};
    static const char *const meta_keys[] = {"name", "namespace", "uid", "labels", "deletionTimestamp", NULL};
    static const char *const spec_keys[] = {"nodeName", "nodeSelector",      "tolerations",
                                            "priority", "priorityClassName", NULL};
    const cJSON *meta = jx_at(pod, "metadata"), *spec = jx_at(pod, "spec");
    cJSON *out = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(out, "metadata");
    for (size_t i = 0; meta_keys[i]; i++)
        copy_item(m, meta, meta_keys[i]);
    copy_annotations(m, meta, ann);
    const cJSON *ref;
    cJSON *refs = NULL;
    cJSON_ArrayForEach (ref, jx_at(meta, "ownerReferences")) {
        if (!cJSON_IsTrue(jx_at(ref, "controller")))
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
    const cJSON *na = jx_at(jx_at(spec, "affinity"), "nodeAffinity");
    const cJSON *req = jx_at(na, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req && !cJSON_IsNull(req))
        cJSON_AddItemToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(s, "affinity"), "nodeAffinity"),
                              "requiredDuringSchedulingIgnoredDuringExecution", cJSON_Duplicate(req, 1));
    double cpu, mem;
    resources_pod_requests(pod, &cpu, &mem);
    cJSON *r = cJSON_AddObjectToObject(out, "requests");
    cJSON_AddNumberToObject(r, "cpu", cpu);
    cJSON_AddNumberToObject(r, "memory", mem);
    cJSON *st = cJSON_AddObjectToObject(out, "status");
    copy_item(st, jx_at(pod, "status"), "phase");
    return out;
}

void *gather_vmi_projection(const cJSON *vmi, void *ud)
{
    (void)ud;
    const cJSON *meta = jx_at(vmi, "metadata"), *status = jx_at(vmi, "status");
    cJSON *out = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(out, "metadata");
    copy_item(m, meta, "name");
    copy_item(m, meta, "namespace");
    copy_item(m, meta, "uid");
    cJSON *sp = cJSON_AddObjectToObject(out, "spec");
    copy_item(sp, jx_at(vmi, "spec"), "evictionStrategy");
    const cJSON *domain = jx_at(jx_at(vmi, "spec"), "domain");
    const cJSON *topo = jx_at(domain, "cpu");
    cJSON *d = domain ? cJSON_AddObjectToObject(sp, "domain") : NULL;
    if (topo) {
        cJSON *cpu = cJSON_AddObjectToObject(d, "cpu");
        copy_item(cpu, topo, "cores");
        copy_item(cpu, topo, "sockets");
        copy_item(cpu, topo, "threads");
    }
    /* what a live migration of it copies (cost.h) */
    if (jx_get(domain, "memory.guest"))
        copy_item(cJSON_AddObjectToObject(d, "memory"), jx_at(domain, "memory"), "guest");
    if (jx_get(domain, "resources.requests.memory"))
        copy_item(cJSON_AddObjectToObject(cJSON_AddObjectToObject(d, "resources"), "requests"),
                  jx_get(domain, "resources.requests"), "memory");
    cJSON *s = cJSON_AddObjectToObject(out, "status");
    copy_item(s, status, "nodeName");
    copy_item(s, status, "evacuationNodeName");
    copy_item(s, status, "phase");
    const cJSON *ms = jx_at(status, "migrationState");
    if (ms) {
        cJSON *o = cJSON_AddObjectToObject(s, "migrationState");
        /* abortStatus and abortRequested: whether it converged (cost_convergence_hold) */
        static const char *const keys[] = {"migrationUid",   "sourceNode", "targetNode", "startTimestamp",
                                           "endTimestamp",   "completed",  "failed",     "abortStatus",
                                           "abortRequested", NULL};
        for (size_t i = 0; keys[i]; i++)
            copy_item(o, ms, keys[i]);
    }
    const cJSON *c;
    cJSON_ArrayForEach (c, jx_at(status, "conditions"))
        if (base_same(jx_nonempty(c, "type"), "LiveMigratable")) {
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

void *gather_vmim_projection(const cJSON *vmim, void *ud)
{
    (void)ud;
    const cJSON *meta = jx_at(vmim, "metadata"), *status = jx_at(vmim, "status");
    cJSON *out = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(out, "metadata");
    static const char *const meta_keys[] = {"name", "namespace", "uid", "creationTimestamp", NULL};
    static const char *const ann[] = {MOVES_EVACUATION_ANNOTATION, MIGRATE_DESTINATION_ANNOTATION, NULL};
    for (size_t i = 0; meta_keys[i]; i++)
        copy_item(m, meta, meta_keys[i]);
    copy_annotations(m, meta, ann);
    /* our targeted migrations are known by their labels (they survive a restart) */
    const cJSON *labels = jx_at(meta, "labels");
    if (base_same(jx_at_str(labels, MOVES_MANAGED_BY_LABEL), MOVES_MANAGED_BY)) {
        cJSON *l = cJSON_AddObjectToObject(m, "labels");
        copy_item(l, labels, MOVES_MANAGED_BY_LABEL);
        copy_item(l, labels, MOVES_OWNER_LABEL);
    }
    cJSON *spec = cJSON_AddObjectToObject(out, "spec");
    copy_item(spec, jx_at(vmim, "spec"), "vmiName");
    copy_item(spec, jx_at(vmim, "spec"), "priority");
    cJSON *s = cJSON_AddObjectToObject(out, "status");
    copy_item(s, status, "phase");
    const cJSON *ms = jx_at(status, "migrationState");
    if (ms) {
        cJSON *o = cJSON_AddObjectToObject(s, "migrationState");
        copy_item(o, ms, "sourceNode");
        copy_item(o, ms, "targetNode");
        copy_item(o, ms, "startTimestamp");
        copy_item(o, ms, "endTimestamp");
        copy_item(o, ms, "failureReason");
    }
    const cJSON *h;
    cJSON *hist = NULL;
    cJSON_ArrayForEach (h, jx_at(status, "phaseTransitionTimestamps"))
        if (moves_phase_final(jx_nonempty(h, "phase"))) {
            if (!hist)
                hist = cJSON_AddArrayToObject(s, "phaseTransitionTimestamps");
            cJSON_AddItemToArray(hist, cJSON_Duplicate(h, 1));
        }
    return out;
}

void gather_node_view(const struct nodeproj *node, struct rebalance_node *out)
{
    *out = (struct rebalance_node){
        .unschedulable = node->unschedulable,
        .labels = node->labels,
        .taints = node->taints,
        .pressure = NAN,
        .cpus = node->cpus,
        .demand = NAN,
        .alloc_cpu = node->alloc_cpu,
        .alloc_memory = node->alloc_memory,
        .memory = node->memory,
        .cpu_pressure = NAN,
        .mem_pressure = NAN,
        .mem_used = NAN,
        .alloc_pods = node->alloc_pods,
        .req_cpu = NAN,
        .req_memory = NAN,
        .req_pods = NAN,
    };
}

/* ---- migrations ---- */

struct migs_ctx {
    struct gather_migrations *out;
    size_t cap;
    const struct kube_informer *vmis;
};

static int collect_mig(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct migs_ctx *c = ud;
    struct moves_migration m;
    if (!obj || moves_migration_read(obj, &m) < 0)
        return 0;
    if (!m.source && c->vmis) { /* not handed off yet: the VMI's node is the source */
        const cJSON *vmi = kube_informer_get(c->vmis, m.ns, m.vmi);
        m.source = jx_nonempty(jx_at(vmi, "status"), "nodeName");
    }
    struct gather_migrations *o = c->out;
    if (BASE_GROW(o->v, o->n + 1, c->cap) < 0)
        return -1;
    o->v[o->n++] = m;
    return 0;
}

int gather_migrations(const struct kube_informer *vmims, const struct kube_informer *vmis,
                      struct gather_migrations *out)
{
    struct migs_ctx c = {out, 0, vmis};
    out->v = NULL;
    out->n = 0;
    return vmims && kube_informer_foreach(vmims, collect_mig, &c) != 0 ? -1 : 0;
}

/* ---- candidates ---- */

struct pods_ctx {
    struct base_nameindex sources; /* source node name -> node index (the first of a name) */
    struct gather_candidates *out;
};

/* Room for one more candidate; -1 on no memory. */
static int cands_grow(struct gather_candidates *g)
{
    if (g->n < g->cap)
        return 0;
    size_t cap = g->cap ? g->cap * 2 : 32;
    struct rebalance_candidate *c = realloc(g->c, cap * sizeof(*c));
    if (!c)
        return -1;
    g->c = c;
    struct gather_workload *w = realloc(g->w, cap * sizeof(*w));
    if (!w)
        return -1;
    g->w = w;
    g->cap = cap;
    return 0;
}

static int collect_pod(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    struct pods_ctx *c = ud;
    const cJSON *pod = obj;
    const char *node = jx_nonempty(jx_at(pod, "spec"), "nodeName");
    if (!node)
        return 0;
    long idx = base_nameindex_get(&c->sources, node);
    if (idx < 0)
        return 0;
    struct gather_candidates *g = c->out;
    if (cands_grow(g) < 0)
        return -1;
    const cJSON *meta = jx_at(pod, "metadata"), *spec = jx_at(pod, "spec");
    const char *kind, *name;
    evictor_pod_workload(pod, &kind, &name);
    struct gather_workload *w = &g->w[g->n];
    *w = (struct gather_workload){.pod = pod,
                                  .kind = kind,
                                  .name = name ? name : jx_nonempty(meta, "name"),
                                  .usage = NAN,
                                  .cpu_stall = NAN,
                                  .mem_stall = NAN};
    w->key = history_key(kind, jx_nonempty(meta, "namespace"), w->name);
    w->vmi = base_same(kind, "VirtualMachineInstance") ? name : NULL;
    if (!w->key)
        return -1;
    double req_cpu = jx_num(jx_at(pod, "requests"), "cpu", NAN),
           req_mem = jx_num(jx_at(pod, "requests"), "memory", NAN);
    g->c[g->n] = (struct rebalance_candidate){
        .ns = jx_nonempty(meta, "namespace"),
        .name = jx_nonempty(meta, "name"),
        .workload = w->key,
        .node = (size_t)idx,
        .req_cpu = isnan(req_cpu) ? 0 : req_cpu,
        .req_memory = isnan(req_mem) ? 0 : req_mem,
        .demand = NAN,
        .migrate_s = NAN,
        .stall = NAN,
        .vm = w->vmi != NULL,
        .node_selector = jx_at(spec, "nodeSelector"),
        .affinity = jx_at(spec, "affinity"),
        .tolerations = jx_at(spec, "tolerations"),
    };
    g->n++;
    return 0;
}

int gather_candidates(struct kube_informer *pods, const struct mover_node *nodes, size_t n, const bool *is_source,
                      struct gather_candidates *out)
{
    struct pods_ctx c = {.out = out};
    if (base_nameindex_init(&c.sources, n) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (is_source[i] && nodes[i].name)
            base_nameindex_put(&c.sources, nodes[i].name, i);
    int rc = kube_informer_foreach(pods, collect_pod, &c) != 0 ? -1 : 0;
    base_nameindex_release(&c.sources);
    return rc;
}

void gather_candidates_free(struct gather_candidates *g)
{
    for (size_t j = 0; j < g->n; j++)
        free(g->w[j].key);
    free(g->c);
    free(g->w);
    *g = (struct gather_candidates){0};
}

/* ---- usage ---- */

/* One usage read: what is asked and where the answers go. */
struct usage_work {
    size_t nnodes;
    struct usage_ref *refs; /* per candidate */
    double *ref_usage;      /* per candidate */
    size_t nrefs;
    struct psi_node_desc *descs;           /* per node */
    const char **ips;                      /* per node: its first InternalIP */
    double *node_usage;                    /* per node (the caller's) */
    double *ref_mem;                       /* per candidate; NULL: memory not asked */
    double *node_mem;                      /* per node (the caller's); NULL: memory not asked */
    double *ref_cpu_stall, *ref_mem_stall; /* per candidate: its own PSI "some", percent */
    double *ref_dirty;                     /* per candidate: a VM's dirty rate, bytes per second */
    const char *avg;                       /* the kubelets' average for the window (psi/kubelet.h) */
};

/* Usage from the Prometheus queries' replies. */
static int usage_from_prometheus(const struct gather_usage_in *in, struct usage_work *u, char *why, size_t len)
{
    const struct gather_usage_read *r = in->prom;
    if (!r->ended || kube_err_failed(&r->cpu_err)) {
        snprintf(why, len, "the usage query failed: %s", r->ended ? r->cpu_err.msg : "no reply yet");
        return -1;
    }
    usage_fill(&r->cpu, u->descs, in->nnodes, u->node_usage, u->refs, u->nrefs, u->ref_usage);
    usage_fill_stall(&r->cpu, u->refs, u->nrefs, u->ref_cpu_stall, u->ref_mem_stall);
    usage_fill_dirty(&r->cpu, u->refs, u->nrefs, u->ref_dirty);
    if (in->node_load1 && in->node_waiting)
        usage_fill_runqueue(&r->cpu, u->descs, in->nnodes, in->node_load1, in->node_waiting);
    if (!u->node_mem)
        return 0;
    /* memory in use: without an answer it stays unknown, and nothing moves on memory */
    if (kube_err_failed(&r->mem_err))
        log_warn("memory in use not read", "error", r->mem_err.msg);
    else
        usage_fill(&r->mem, u->descs, in->nnodes, u->node_mem, u->refs, u->nrefs, u->ref_mem);
    return 0;
}

/* The usage queries ended: the replies wait, and the owner hears of it when they ended on the
 * loop (from_loop). */
static void usage_read_end(struct gather_usage_read *r, bool from_loop)
{
    r->ended = true;
    free(r->mem_query);
    r->mem_query = NULL;
    if (from_loop && r->loop && r->wake)
        r->wake(r->wake_ud);
}

/* promrun's continuation of a usage query: its reply, then the memory query or the end. */
static void usage_query_ended(struct promrun *run, CURLcode rc, void *ud)
{
    struct gather_usage_read *r = ud;
    if (r->on_memory) {
        psi_prom_query_finish(run->prom, rc, &r->mem, &r->mem_err);
    } else if (psi_prom_query_finish(run->prom, rc, &r->cpu, &r->cpu_err) == 0 && r->mem_query) {
        r->on_memory = true;
        CURL *e = psi_prom_query_start(run->prom, r->mem_query, &r->mem_err);
        if (e && promrun_start(run, r->loop, e, usage_query_ended, r, &r->mem_err) == 0)
            return;
    }
    usage_read_end(r, true);
}

void gather_usage_read_start(struct gather_usage_read *r, const struct gather_usage_in *in,
                             const struct gather_candidates *cands, const struct psi_prom_config *cfg,
                             struct kube_loop *loop, void (*wake)(void *ud), void *ud)
{
    if (r->ended || promrun_busy(&r->run))
        return;
    gather_usage_read_drop(r);
    r->loop = loop;
    r->wake = wake;
    r->wake_ud = ud;
    r->on_memory = false;
    kube_err_clear(&r->cpu_err);
    kube_err_clear(&r->mem_err);
    struct usage_ref *refs = calloc(cands->n ? cands->n : 1, sizeof(*refs));
    for (size_t j = 0; refs && j < cands->n; j++)
        refs[j] = (struct usage_ref){cands->c[j].ns, cands->c[j].name, cands->w[j].vmi};
    char *q = refs ? usage_query(in->window_s, refs, cands->n) : NULL;
    r->mem_query = refs && in->node_mem ? usage_memory_query(refs, cands->n) : NULL;
    free(refs);
    struct psi_prom *p = promrun_client(&r->run, cfg, &r->cpu_err);
    CURL *e = NULL;
    if (p && (!q || (in->node_mem && !r->mem_query)))
        psi_fail(&r->cpu_err, PSI_REASON_CONFIG, "out of memory");
    else if (p)
        e = psi_prom_query_start(p, q, &r->cpu_err);
    free(q);
    if (!e || promrun_start(&r->run, loop, e, usage_query_ended, r, &r->cpu_err) < 0)
        usage_read_end(r, false);
}

bool gather_usage_read_busy(const struct gather_usage_read *r)
{
    return promrun_busy(&r->run);
}

void gather_usage_read_drop(struct gather_usage_read *r)
{
    psi_prom_vector_free(&r->cpu);
    psi_prom_vector_free(&r->mem);
    r->ended = false;
}

void gather_usage_read_release(struct gather_usage_read *r)
{
    promrun_release(&r->run);
    gather_usage_read_drop(r);
    free(r->mem_query);
    r->mem_query = NULL;
}

/* usage_from_kubelet's state across the replies. */
struct kubelet_read {
    const struct usage_work *q;
    size_t read;
    char last[512];
};

static void on_summary(size_t i, const cJSON *summary, const struct kube_err *err, void *ud)
{
    struct kubelet_read *k = ud;
    if (i >= k->q->nnodes)
        return;
    if (!summary) {
        snprintf(k->last, sizeof(k->last), "%s: %s", k->q->descs[i].name, err->msg);
        return;
    }
    usage_from_summary(summary, &k->q->node_usage[i], k->q->refs, k->q->nrefs, k->q->ref_usage);
    usage_stall_from_summary(summary, k->q->avg, k->q->refs, k->q->nrefs, k->q->ref_cpu_stall, k->q->ref_mem_stall);
    if (k->q->node_mem)
        usage_memory_from_summary(summary, &k->q->node_mem[i], k->q->refs, k->q->nrefs, k->q->ref_mem);
    k->read++;
}

/* Usage from the kubelet summaries of the nodes (through the API server's node proxy, every
 * node at once) into u. Returns 0 when at least one summary was read (or there is no node), -1
 * with why naming the last failure otherwise. */
static int usage_from_kubelets(const struct gather_usage_in *in, struct usage_work *u, char *why, size_t len)
{
    struct kubelet_read k = {u, 0, ""};
    const char **names = calloc(u->nnodes ? u->nnodes : 1, sizeof(*names));
    struct kube_err err;
    if (!names) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < u->nnodes; i++)
        names[i] = u->descs[i].name;
    u->avg = psi_kubelet_avg_name(psi_kubelet_avg_for_window(in->window_s));
    int rc = psi_kubelet_fetch(in->client, names, u->nnodes, on_summary, &k, &err);
    free(names);
    if (rc < 0) {
        snprintf(why, len, "no kubelet summary could be read: %s", err.msg);
        return -1;
    }
    if (u->nnodes > 0 && k.read == 0) {
        snprintf(why, len, "no kubelet summary could be read (%s)", k.last);
        return -1;
    }
    return 0;
}

/* Fill u's requests from the candidates and nodes. */
static void usage_ask(struct usage_work *u, const struct gather_usage_in *in, const struct gather_candidates *cands)
{
    for (size_t j = 0; j < cands->n; j++) {
        u->refs[j] = (struct usage_ref){cands->c[j].ns, cands->c[j].name, cands->w[j].vmi};
        u->ref_usage[j] = u->ref_cpu_stall[j] = u->ref_mem_stall[j] = u->ref_dirty[j] = NAN;
        if (u->ref_mem)
            u->ref_mem[j] = NAN;
    }
    for (size_t i = 0; i < in->nnodes; i++) {
        u->ips[i] = in->nodes[i].node->ip[0] ? in->nodes[i].node->ip : NULL;
        u->descs[i] = (struct psi_node_desc){in->nodes[i].name, &u->ips[i], u->ips[i] ? 1 : 0, 0};
        u->node_usage[i] = NAN;
        if (in->node_load1 && in->node_waiting)
            in->node_load1[i] = in->node_waiting[i] = NAN;
        if (u->node_mem)
            u->node_mem[i] = NAN;
    }
}

int gather_usage(const struct gather_usage_in *in, struct gather_candidates *cands, double *node_usage, char *why,
                 size_t len)
{
    size_t nc = cands->n ? cands->n : 1, nn = in->nnodes ? in->nnodes : 1;
    struct usage_work u = {
        .nnodes = in->nnodes,
        .refs = calloc(nc, sizeof(*u.refs)),
        .ref_usage = calloc(nc, sizeof(double)),
        .nrefs = cands->n,
        .descs = calloc(nn, sizeof(*u.descs)),
        .ips = calloc(nn, sizeof(*u.ips)),
        .node_usage = node_usage,
        .node_mem = in->node_mem,
        .ref_mem = in->node_mem ? calloc(nc, sizeof(double)) : NULL,
        .ref_cpu_stall = calloc(nc, sizeof(double)),
        .ref_mem_stall = calloc(nc, sizeof(double)),
        .ref_dirty = calloc(nc, sizeof(double)),
    };
    int rc = -1;
    if (!u.refs || !u.ref_usage || !u.descs || !u.ips || (in->node_mem && !u.ref_mem) || !u.ref_cpu_stall ||
        !u.ref_mem_stall || !u.ref_dirty) {
        snprintf(why, len, "out of memory");
    } else {
        usage_ask(&u, in, cands);
        rc = in->prom ? usage_from_prometheus(in, &u, why, len) : usage_from_kubelets(in, &u, why, len);
    }
    for (size_t j = 0; rc == 0 && j < cands->n; j++) {
        cands->w[j].usage = u.ref_usage[j];
        cands->w[j].mem = u.ref_mem ? u.ref_mem[j] : NAN;
        cands->w[j].cpu_stall = u.ref_cpu_stall[j];
        cands->w[j].mem_stall = u.ref_mem_stall[j];
        cands->w[j].dirty_bps = u.ref_dirty[j];
    }
    free(u.ref_dirty);
    free(u.ref_cpu_stall);
    free(u.ref_mem_stall);
    free(u.ref_mem);
    free(u.refs);
    free(u.ref_usage);
    free(u.descs);
    free(u.ips);
    return rc;
}

int gather_node_requests(struct kube_client *client, const char *node, struct gather_requests *out)
{
    char fs[512];
    snprintf(fs, sizeof(fs), "spec.nodeName=%s,status.phase!=Succeeded,status.phase!=Failed", node);
    struct kube_list_opts o = {.field_selector = fs, .resource_version = "0"};
    struct kube_err err;
    kube_err_clear(&err);
    cJSON *list = kube_rest_list(client, "/api/v1/pods", &o, &err);
    if (!list) {
        log_warn("pods of a node not listed", "node", node, "error", err.msg);
        return -1;
    }
    *out = (struct gather_requests){0, 0, 0};
    const cJSON *it;
    cJSON_ArrayForEach (it, jx_at(list, "items")) {
        double c, m;
        resources_pod_requests(it, &c, &m);
        out->cpu += c, out->memory += m, out->pods += 1;
    }
    cJSON_Delete(list);
    return 0;
}

/* ---- targeted live migration ---- */

enum migrate_support gather_migrate_support(struct kube_client *client, struct gather_support *s, int64_t now_ms,
                                            const char *owner)
{
    int64_t every = s->support == MIGRATE_UNKNOWN ? 60000 : CRD_RECHECK_MS;
    if (s->checked_ms && now_ms - s->checked_ms < every)
        return s->support;
    enum migrate_support was = s->checked_ms ? s->support : (enum migrate_support) - 1;
    char *path = kube_path("apiextensions.k8s.io/v1", NULL, "customresourcedefinitions", MIGRATE_CRD_NAME, NULL);
    struct kube_err err;
    kube_err_clear(&err);
    cJSON *crd = path ? kube_rest_get(client, path, &err) : NULL;
    free(path);
    if (crd || err.status == 404) {
        s->support = migrate_crd_support(crd, s->why, sizeof(s->why));
    } else {
        s->support = MIGRATE_UNKNOWN;
        snprintf(s->why, sizeof(s->why),
                 "the CustomResourceDefinition %s could not be read to learn whether it has spec.addedNodeSelector: "
                 "%s",
                 MIGRATE_CRD_NAME, err.msg[0] ? err.msg : "out of memory");
    }
    cJSON_Delete(crd);
    s->checked_ms = now_ms;
    if (s->support != was) {
        if (s->support == MIGRATE_SUPPORTED) {
            log_info("targeted live migration available", "psirebalance", owner, "crd", MIGRATE_CRD_NAME);
            s->warned = false;
        } else {
            log_warn("targeted live migration unavailable: falling back to eviction", "psirebalance", owner, "why",
                     s->why);
        }
    }
    return s->support;
}
