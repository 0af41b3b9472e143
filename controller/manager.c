#include "manager.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/psirebalance.h"
#include "base/grow.h"
#include "kube/informer.h"
#include "base/logging.h"
#include "reconcile/gather.h"
#include "reconcile/mc/machineconfig.h"
#include "reconcile/policyprobe.h"
#include "reconcile/status/nodeproj.h"
#include "reconcile/reconciler.h"
#include "kube/workqueue.h"
#include "status_metrics.h"

/* Delay before a failed reconcile runs again. */
#define MANAGER_RETRY_MS 5000
/* How long a change to a Node, MachineConfig or pool waits before the reconcile it asks for,
 * so that a burst of them (node-lifecycle taints on a struggling cluster: hundreds a
 * second at 5,000 nodes) makes one reconcile per PsiRebalance, not one each. */
#define MANAGER_CLUSTER_CHANGE_DELAY_MS 1000
/* A pod informer nobody asked for this long is stopped (pods are watched only while some
 * node is a source of moves). */
#define MANAGER_POD_INFORMER_IDLE_MS (10 * 60 * 1000)

/* A pod informer narrowed by a label selector (spec.eviction.podSelector). */
struct pod_informer {
    char *selector;
    struct kube_informer *inf;
    uint64_t last_used_ms;
};

struct manager {
    struct kube_client *client;
    struct kube_loop *loop;
    struct kube_events *events;
    struct psi_metrics *metrics;
    struct kube_informer *psirebalances, *nodes, *machineconfigs, *pools;
    struct kube_informer *vmis, *vmims; /* NULL without KubeVirt */
    struct kube_informer *kubevirts;    /* the KubeVirt CRs (migration limits); NULL without them */
    struct pod_informer *pods;
    size_t npods, pods_cap;
    struct reconciler *reconciler;
    struct workqueue *queue;
    uint64_t queue_timer;
    int64_t queue_timer_due;
    uint64_t events_timer;
    struct {
        struct psi_metric *pressure, *reconcile_seconds, *sample_seconds, *reconciles, *taint_transitions,
            *watch_restarts, *source_errors, *status_writes, *tainted_nodes, *evictions, *migrations, *prediction_error,
            *predictions;
        /* the moves' live migrations: timed and estimated (register_cost_metrics) */
        struct psi_metric *migrations_timed, *migration_seconds, *migrations_estimated, *migration_expected_seconds,
            *migration_estimate_error;
        /* per PsiRebalance, from the objects (status_metrics), for alerts and dashboards */
        struct psi_metric *ready, *selected, *tainted, *taint_cap, *held, *unknown, *unplaceable, *rebalancing,
            *interval, *taint_above, *untaint_below, *tainted_since, *last_success;
    } m;
    struct reconciler_counters last; /* counters already published */
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void process_queue(struct kube_loop *loop, void *ud);

/* Make sure the queue timer fires when the next key is due. */
static void schedule_queue(struct manager *m)
{
    int64_t delay = workqueue_next_delay(m->queue);
    if (delay < 0)
        return;
    int64_t due = (int64_t)kube_loop_now_ms() + delay;
    if (m->queue_timer && m->queue_timer_due <= due)
        return;
    kube_loop_cancel(m->loop, m->queue_timer);
    m->queue_timer = kube_loop_timer(m->loop, (uint64_t)delay, 0, process_queue, m);
    m->queue_timer_due = due;
}

static void enqueue(struct manager *m, const char *name)
{
    if (workqueue_add(m->queue, name) == 0)
        schedule_queue(m);
}

/* reconciler_deps.wake: a read of PsiRebalance name ended on the loop. */
static void wake_psirebalance(void *ud, const char *name)
{
    enqueue(ud, name);
}

static int enqueue_each_soon(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv, (void)obj;
    struct manager *m = ud;
    if (workqueue_add_after(m->queue, key, MANAGER_CLUSTER_CHANGE_DELAY_MS) == 0)
        schedule_queue(m);
    return 0;
}

/* Nodes, MachineConfigs and pools concern every PsiRebalance: reconcile them all, soon. */
static void enqueue_all(struct manager *m)
{
    kube_informer_foreach(m->psirebalances, enqueue_each_soon, m);
}

static void psir_added(const char *key, const void *obj, void *ud)
{
    (void)obj;
    enqueue(ud, key);
}

static void psir_updated(const char *key, const void *old_obj, const void *new_obj, void *ud)
{
    (void)old_obj, (void)new_obj;
    enqueue(ud, key);
}

static void psir_deleted(const char *key, const void *obj, bool unknown, void *ud)
{
    (void)obj, (void)unknown;
    struct manager *m = ud;
    workqueue_forget(m->queue, key);
    enqueue(m, key); /* the reconciler forgets its state for a name that is gone */
}

static void other_added(const char *key, const void *obj, void *ud)
{
    (void)key, (void)obj;
    enqueue_all(ud);
}

/* Whether two cached objects differ in more than metadata.resourceVersion. A projection
 * keeps only what the reconciler reads, so a Node's heartbeat (its status conditions) makes
 * no difference there and costs no reconcile. */
static bool changed(const cJSON *a, const cJSON *b)
{
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return true;
    const cJSON *ia;
    cJSON_ArrayForEach (ia, a) {
        const cJSON *ib = cJSON_GetObjectItemCaseSensitive(b, ia->string);
        if (!ib)
            return true;
        if (strcmp(ia->string, "metadata") != 0) {
            if (!cJSON_Compare(ia, ib, true))
                return true;
            continue;
        }
        if (cJSON_GetArraySize(ia) != cJSON_GetArraySize(ib))
            return true;
        const cJSON *ma;
        cJSON_ArrayForEach (ma, ia) {
            const cJSON *mb = cJSON_GetObjectItemCaseSensitive(ib, ma->string);
            if (!mb || (strcmp(ma->string, "resourceVersion") != 0 && !cJSON_Compare(ma, mb, true)))
                return true;
        }
    }
    return false;
}

static void other_updated(const char *key, const void *old_obj, const void *new_obj, void *ud)
{
    (void)key;
    if (changed(old_obj, new_obj))
        enqueue_all(ud);
}

static void other_deleted(const char *key, const void *obj, bool unknown, void *ud)
{
    (void)key, (void)obj, (void)unknown;
    enqueue_all(ud);
}

static void informer_log(enum kube_watch_level level, const char *msg, void *ud)
{
    (void)ud;
    static const enum logging_level map[] = {LOGGING_DEBUG, LOGGING_INFO, LOGGING_WARN, LOGGING_ERROR};
    log_at(map[level], msg, (char *)0);
}

/* An informer's value free function: projections are cJSON objects (cJSON_Delete takes a
 * cJSON *, so it is not called through a void * function pointer). */
static void free_json(void *value)
{
    cJSON_Delete(value);
}

static struct kube_informer *informer(struct manager *m, const char *path, kube_informer_project_fn project,
                                      bool psirebalances, struct kube_err *err)
{
    struct kube_informer_opts o = {
        .path = path,
        .project = project,
        .free_value = project ? free_json : NULL,
        .handlers =
            {
                .on_add = psirebalances ? psir_added : other_added,
                .on_update = psirebalances ? psir_updated : other_updated,
                .on_delete = psirebalances ? psir_deleted : other_deleted,
                .log = informer_log,
            },
        .ud = m,
    };
    return kube_informer_new(&o, err);
}

/* A change of a node (nodeproj.h) other than its resourceVersion triggers a reconcile. */
static void node_updated(const char *key, const void *old_obj, const void *new_obj, void *ud)
{
    (void)key;
    if (nodeproj_changed(old_obj, new_obj))
        enqueue_all(ud);
}

/* The nodes, kept compact (nodeproj.h). */
static struct kube_informer *node_informer(struct manager *m, struct kube_err *err)
{
    struct kube_informer_opts o = {
        .path = "/api/v1/nodes",
        .project = nodeproj_project,
        .free_value = nodeproj_free,
        .handlers = {.on_add = other_added, .on_update = node_updated, .on_delete = other_deleted, .log = informer_log},
        .ud = m,
    };
    return kube_informer_new(&o, err);
}

/* An informer whose changes trigger no reconcile (read at the next cycle). */
static struct kube_informer *quiet_informer(struct manager *m, const char *path, const char *label_selector,
                                            kube_informer_project_fn project, struct kube_err *err)
{
    struct kube_informer_opts o = {
        .path = path,
        .label_selector = label_selector,
        .project = project,
        .free_value = free_json,
        .handlers = {.log = informer_log},
        .ud = m,
    };
    return kube_informer_new(&o, err);
}

/* The reconciler's way to the pods of a podSelector: an informer per selector, made and
 * started on the first ask, stopped when nobody asked for a while (gc_pod_informers). */
static struct kube_informer *pods_for(void *ud, const char *selector)
{
    struct manager *m = ud;
    uint64_t now = kube_loop_now_ms();
    for (size_t i = 0; i < m->npods; i++)
        if (strcmp(m->pods[i].selector, selector) == 0) {
            m->pods[i].last_used_ms = now;
            return m->pods[i].inf;
        }
    struct kube_err err;
    kube_err_set(&err, 0, "Encode", "out of memory");
    if (BASE_GROW(m->pods, m->npods + 1, m->pods_cap) < 0)
        return NULL;
    struct kube_informer *inf =
        quiet_informer(m, "/api/v1/pods", selector[0] ? selector : NULL, gather_pod_projection, &err);
    char *sel = strdup(selector);
    if (!inf || !sel || kube_informer_start(inf, m->loop, m->client, &err) < 0) {
        log_error("pod informer not started", "selector", selector, "error", sel ? err.msg : "out of memory");
        kube_informer_free(inf);
        free(sel);
        return NULL;
    }
    log_info("watching pods", "selector", selector);
    m->pods[m->npods++] = (struct pod_informer){sel, inf, now};
    return inf;
}

static void gc_pod_informers(struct manager *m)
{
    uint64_t now = kube_loop_now_ms();
    size_t w = 0;
    for (size_t i = 0; i < m->npods; i++) {
        if (now - m->pods[i].last_used_ms > MANAGER_POD_INFORMER_IDLE_MS) {
            log_info("pods no longer watched", "selector", m->pods[i].selector);
            kube_informer_free(m->pods[i].inf);
            free(m->pods[i].selector);
            continue;
        }
        m->pods[w++] = m->pods[i];
    }
    m->npods = w;
}

/* ---- metrics ---- */

static void publish_pressure(const char *psir, const char *node, const char *stall, const char *resource,
                             double percent, void *ud)
{
    struct manager *m = ud;
    const char *v[] = {psir, node, stall, resource};
    psi_metric_set(m->m.pressure, v, percent);
}

struct health_ctx {
    struct manager *m;
    const char *name;
};

static void publish_tainted(const char *node, int64_t since, void *ud)
{
    const struct health_ctx *h = ud;
    const char *v[] = {h->name, node};
    if (since > 0)
        psi_metric_set(h->m->m.tainted_since, v, (double)since);
}

static int publish_one_health(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv;
    struct manager *m = ud;
    struct health_ctx h = {m, key};
    struct status_health sh;
    status_health_of(obj, &sh, publish_tainted, &h);
    const char *v[] = {key};
    psi_metric_set(m->m.ready, v, sh.ready);
    psi_metric_set(m->m.selected, v, (double)sh.selected);
    psi_metric_set(m->m.tainted, v, (double)sh.tainted);
    psi_metric_set(m->m.taint_cap, v, (double)sh.taint_cap);
    psi_metric_set(m->m.held, v, (double)sh.held);
    psi_metric_set(m->m.unknown, v, (double)sh.unknown);
    psi_metric_set(m->m.unplaceable, v, (double)reconciler_unplaceable(m->reconciler, key));
    psi_metric_set(m->m.rebalancing, v, sh.rebalancing);
    psi_metric_set(m->m.interval, v, (double)sh.interval_ms / 1000.0);
    /* The dead-man switch has a series from the first publish on, in this process too: what
     * the stored status says (a failover's new leader, every cycle failing, ages it), or
     * this process' own later success. */
    int64_t mine = reconciler_last_success(m->reconciler, key);
    psi_metric_set(m->m.last_success, v, (double)(mine > sh.last_success_s ? mine : sh.last_success_s));
    psi_metric_set(m->m.taint_above, v, sh.taint_above);
    psi_metric_set(m->m.untaint_below, v, sh.untaint_below);
    return 0;
}

/* The per-PsiRebalance gauges, rebuilt from the cached objects (so a deleted one leaves). */
static void publish_health(struct manager *m)
{
    struct psi_metric *fams[] = {m->m.ready,       m->m.selected,    m->m.tainted,       m->m.taint_cap,
                                 m->m.held,        m->m.unknown,     m->m.unplaceable,   m->m.rebalancing,
                                 m->m.interval,    m->m.taint_above, m->m.untaint_below, m->m.tainted_since,
                                 m->m.last_success};
    size_t n = sizeof(fams) / sizeof(fams[0]);
    for (size_t i = 0; i < n; i++)
        psi_metric_begin(fams[i]);
    kube_informer_foreach(m->psirebalances, publish_one_health, m);
    for (size_t i = 0; i < n; i++)
        psi_metric_sweep(fams[i]);
}

static void publish(struct manager *m, double seconds, int rc)
{
    if (!m->metrics)
        return;
    const struct reconciler_counters *c = reconciler_counters(m->reconciler);
    const char *result[] = {rc == 0 ? "success" : "error"};
    psi_metric_inc(m->m.reconciles, result, 1);
    psi_metric_observe(m->m.reconcile_seconds, NULL, seconds);
    if (c->samples != m->last.samples)
        psi_metric_observe(m->m.sample_seconds, NULL, c->last_sample_seconds);
    const char *add[] = {"add"}, *rem[] = {"remove"};
    psi_metric_inc(m->m.taint_transitions, add, (double)(c->taints_added - m->last.taints_added));
    psi_metric_inc(m->m.taint_transitions, rem, (double)(c->taints_removed - m->last.taints_removed));
    psi_metric_inc(m->m.source_errors, NULL, (double)(c->sample_failures - m->last.sample_failures));
    psi_metric_inc(m->m.status_writes, NULL, (double)(c->status_writes - m->last.status_writes));
    const char *ev[][1] = {{"evicted"}, {"migration"}, {"dry_run"}, {"refused"}, {"failed"}};
    psi_metric_inc(m->m.evictions, ev[0], (double)(c->evictions - m->last.evictions));
    psi_metric_inc(m->m.evictions, ev[1], (double)(c->migrations_requested - m->last.migrations_requested));
    psi_metric_inc(m->m.evictions, ev[2], (double)(c->dry_run_moves - m->last.dry_run_moves));
    psi_metric_inc(m->m.evictions, ev[3], (double)(c->evictions_refused - m->last.evictions_refused));
    psi_metric_inc(m->m.evictions, ev[4], (double)(c->eviction_failures - m->last.eviction_failures));
    const char *ok[] = {"succeeded"}, *bad[] = {"failed"};
    psi_metric_inc(m->m.migrations, ok, (double)(c->migrations_succeeded - m->last.migrations_succeeded));
    psi_metric_inc(m->m.migrations, bad, (double)(c->migrations_failed - m->last.migrations_failed));
    const char *src[] = {"source"}, *dst[] = {"destination"};
    psi_metric_inc(m->m.prediction_error, src, c->prediction_error_source - m->last.prediction_error_source);
    psi_metric_inc(m->m.prediction_error, dst, c->prediction_error_destination - m->last.prediction_error_destination);
    psi_metric_inc(m->m.predictions, NULL, (double)(c->predictions_checked - m->last.predictions_checked));
    psi_metric_inc(m->m.migrations_timed, NULL, (double)(c->migrations_timed - m->last.migrations_timed));
    psi_metric_inc(m->m.migration_seconds, NULL, c->migration_seconds - m->last.migration_seconds);
    psi_metric_inc(m->m.migrations_estimated, NULL, (double)(c->migrations_estimated - m->last.migrations_estimated));
    psi_metric_inc(m->m.migration_expected_seconds, NULL,
                   c->migration_expected_seconds - m->last.migration_expected_seconds);
    psi_metric_inc(m->m.migration_estimate_error, NULL,
                   c->migration_estimate_error_seconds - m->last.migration_estimate_error_seconds);
    m->last = *c;
    psi_metric_begin(m->m.pressure);
    reconciler_foreach_pressure(m->reconciler, publish_pressure, m);
    psi_metric_sweep(m->m.pressure);
    publish_health(m);
    struct kube_informer *infs[] = {m->psirebalances, m->nodes, m->machineconfigs, m->pools, m->vmis, m->vmims};
    const char *names[] = {"psirebalances",           "nodes",
                           "machineconfigs",          "machineconfigpools",
                           "virtualmachineinstances", "virtualmachineinstancemigrations"};
    for (size_t i = 0; i < 6; i++) {
        if (!infs[i])
            continue;
        struct kube_watch_stats ws = kube_informer_watch_stats(infs[i]);
        const char *v[] = {names[i]};
        psi_metric_set(m->m.watch_restarts, v, (double)(ws.failures + ws.expired));
    }
}

/* The gauges publish_health sets, and the dead-man timestamp. */
static int register_health_metrics(struct manager *m)
{
    static const char *const psir[] = {"psirebalance", NULL};
    static const char *const psir_node[] = {"psirebalance", "node", NULL};
    struct psi_metrics *r = m->metrics;
    m->m.ready = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_ready",
                                   "1 when the PsiRebalance's Ready condition is True, else 0.", psir);
    m->m.selected = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_nodes",
                                      "Nodes the PsiRebalance selects (status.summary.nodes).", psir);
    m->m.tainted =
        psi_metrics_gauge(r, "psi_rebalancer_psirebalance_tainted_nodes",
                          "Nodes carrying the PsiRebalance's pressure taint (status.summary.tainted).", psir);
    m->m.taint_cap = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_taint_cap_nodes",
                                       "The most nodes spec.pressure.maxTaintedPercent lets be tainted at once.", psir);
    m->m.held = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_pressured_untainted_nodes",
                                  "Nodes above the taint level not (yet) tainted: sustain not reached, or the cap "
                                  "used up (state Pressured).",
                                  psir);
    m->m.unknown = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_nodes_without_pressure",
                                     "Selected nodes with no pressure reading (state Unknown): PSI off, or no "
                                     "pressure series for them.",
                                     psir);
    m->m.unplaceable = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_unplaceable_nodes",
                                         "Pressured nodes no set of moves can bring below the taint level "
                                         "(Rebalancing NoPlacement), as this process last decided.",
                                         psir);
    m->m.rebalancing = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_rebalancing",
                                         "1 when spec.eviction.mode is Automatic (workloads are moved), else 0.", psir);
    m->m.interval = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_interval_seconds",
                                      "spec.metrics.interval: how often the PsiRebalance's cycle runs.", psir);
    m->m.taint_above = psi_metrics_gauge(r, "psi_rebalancer_psirebalance_taint_above_percent",
                                         "spec.pressure.taintAbovePercent: nodes above it are tainted.", psir);
    m->m.untaint_below =
        psi_metrics_gauge(r, "psi_rebalancer_psirebalance_untaint_below_percent",
                          "spec.pressure.untaintBelowPercent: tainted nodes below it lose the taint.", psir);
    m->m.tainted_since =
        psi_metrics_gauge(r, "psi_rebalancer_node_tainted_since_timestamp_seconds",
                          "When the pressure taint was put on a tainted node (status taintedSince: kept "
                          "through Cooling and back and through missing readings), Unix seconds.",
                          psir_node);
    m->m.last_success = psi_metrics_gauge(r, "psi_rebalancer_last_successful_reconcile_timestamp_seconds",
                                          "When a reconcile cycle of the PsiRebalance last read pressure with "
                                          "nothing failing, Unix seconds (status.lastSuccessfulCycleTime after a "
                                          "restart; its creation if it never succeeded): the dead-man switch.",
                                          psir);
    return m->m.ready && m->m.selected && m->m.tainted && m->m.taint_cap && m->m.held && m->m.unknown &&
                   m->m.unplaceable && m->m.rebalancing && m->m.interval && m->m.taint_above && m->m.untaint_below &&
                   m->m.tainted_since && m->m.last_success
               ? 0
               : -1;
}

/* What the moves' live migrations took, and how far their estimates were (cost.h). */
static int register_cost_metrics(struct manager *m)
{
    struct psi_metrics *r = m->metrics;
    m->m.migrations_timed = psi_metrics_counter(
        r, "psi_rebalancer_migrations_timed_total",
        "Live migrations of moved VMs that succeeded with a known start and end (status.moves[].cost).", NULL);
    m->m.migration_seconds =
        psi_metrics_counter(r, "psi_rebalancer_migration_duration_seconds_total",
                            "Seconds the timed live migrations took, start to end (not the queue before "
                            "them); over psi_rebalancer_migrations_timed_total, the mean.",
                            NULL);
    m->m.migrations_estimated =
        psi_metrics_counter(r, "psi_rebalancer_migrations_estimated_total",
                            "Timed live migrations whose duration was estimated when the move was decided.", NULL);
    m->m.migration_expected_seconds =
        psi_metrics_counter(r, "psi_rebalancer_migration_expected_seconds_total",
                            "Seconds the estimated ones were expected to take, summed.", NULL);
    m->m.migration_estimate_error = psi_metrics_counter(
        r, "psi_rebalancer_migration_estimate_error_seconds_total",
        "Sum of |took - expected| seconds of the estimated ones; over psi_rebalancer_migrations_estimated_total, the "
        "mean error of the estimate.",
        NULL);
    return m->m.migrations_timed && m->m.migration_seconds && m->m.migrations_estimated &&
                   m->m.migration_expected_seconds && m->m.migration_estimate_error
               ? 0
               : -1;
}

static int register_metrics(struct manager *m)
{
    if (!m->metrics)
        return 0;
    static const char *const pressure[] = {"psirebalance", "node", "stall", "resource", NULL};
    static const char *const result[] = {"result", NULL};
    static const char *const op[] = {"op", NULL};
    static const char *const resource[] = {"resource", NULL};
    static const double buckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    m->m.pressure =
        psi_metrics_gauge(m->metrics, "psi_rebalancer_node_pressure_percent",
                          "Last sampled PSI pressure of a node, percent over the window, of the line (stall: some or "
                          "full) spec.pressure.stall names for spec.pressure.resource, some for the others.",
                          pressure);
    m->m.reconciles = psi_metrics_counter(m->metrics, "psi_rebalancer_reconciles_total",
                                          "Reconcile cycles of PsiRebalances, by result.", result);
    m->m.reconcile_seconds =
        psi_metrics_histogram(m->metrics, "psi_rebalancer_reconcile_duration_seconds",
                              "Duration of one reconcile cycle.", buckets, sizeof(buckets) / sizeof(buckets[0]), NULL);
    m->m.sample_seconds = psi_metrics_histogram(m->metrics, "psi_rebalancer_pressure_sample_duration_seconds",
                                                "Duration of reading every node's pressure from the source (the "
                                                "PromQL query, or the kubelets), part of a reconcile cycle.",
                                                buckets, sizeof(buckets) / sizeof(buckets[0]), NULL);
    m->m.taint_transitions = psi_metrics_counter(m->metrics, "psi_rebalancer_taint_transitions_total",
                                                 "Pressure taints added to and removed from nodes.", op);
    m->m.watch_restarts =
        psi_metrics_gauge(m->metrics, "psi_rebalancer_watch_restarts",
                          "Watch failures and expiries (each a reconnect or relist), by resource.", resource);
    m->m.source_errors =
        psi_metrics_counter(m->metrics, "psi_rebalancer_metric_source_errors_total",
                            "Pressure samples that failed (source unreachable, refused, malformed).", NULL);
    m->m.status_writes = psi_metrics_counter(m->metrics, "psi_rebalancer_status_writes_total",
                                             "PsiRebalance status updates written.", NULL);
    m->m.evictions =
        psi_metrics_counter(m->metrics, "psi_rebalancer_evictions_total",
                            "Moves asked, by answer: evicted (the Eviction API evicted the pod), migration "
                            "(a live migration was asked: KubeVirt's answer to an eviction, or a targeted "
                            "migration), dry_run (DryRun: would have been asked), refused (a "
                            "PodDisruptionBudget, ...), failed.",
                            result);
    m->m.migrations = psi_metrics_counter(m->metrics, "psi_rebalancer_migrations_total",
                                          "Live migrations of moved VMs that ended, by result.", result);
    static const char *const role[] = {"role", NULL};
    m->m.prediction_error = psi_metrics_counter(
        m->metrics, "psi_rebalancer_prediction_error_percent_total",
        "Sum of |observed - predicted| pressure (percentage points) of the moves' sources and destinations, checked "
        "once each move settled; divide by psi_rebalancer_predictions_checked_total for the mean error.",
        role);
    m->m.predictions =
        psi_metrics_counter(m->metrics, "psi_rebalancer_predictions_checked_total",
                            "Moves whose predicted pressure was checked against the observed one.", NULL);
    return m->m.pressure && m->m.reconciles && m->m.reconcile_seconds && m->m.sample_seconds &&
                   m->m.taint_transitions && m->m.watch_restarts && m->m.source_errors && m->m.status_writes &&
                   m->m.evictions && m->m.migrations && m->m.prediction_error && m->m.predictions &&
                   register_cost_metrics(m) == 0 && register_health_metrics(m) == 0
               ? 0
               : -1;
}

/* ---- the queue ---- */

static void process_queue(struct kube_loop *loop, void *ud)
{
    (void)loop;
    struct manager *m = ud;
    m->queue_timer = 0;
    if (!manager_synced(m)) {
        /* Acting on a partial cache could take a taint for missing: wait for the lists. */
        m->queue_timer = kube_loop_timer(m->loop, 200, 0, process_queue, m);
        m->queue_timer_due = (int64_t)kube_loop_now_ms() + 200;
        return;
    }
    /* Take only as many keys as are pending now: a key requeued with no delay waits for the
     * next turn of the loop, so watch events are processed in between (no hot loop). */
    size_t budget = workqueue_pending(m->queue);
    const char *key;
    while (budget-- > 0 && (key = workqueue_get(m->queue)) != NULL) {
        char *name = strdup(key);
        int64_t requeue = 0;
        uint64_t t0 = kube_loop_now_ms();
        int rc = name ? reconciler_reconcile(m->reconciler, name, wall_ms(), &requeue) : -1;
        publish(m, (double)(kube_loop_now_ms() - t0) / 1000.0, rc);
        workqueue_done(m->queue, key);
        if (name && kube_informer_has(m->psirebalances, name) && (rc != 0 || requeue > 0))
            workqueue_add_after(m->queue, name, rc == 0 ? requeue : MANAGER_RETRY_MS);
        free(name);
    }
    gc_pod_informers(m);
    /* A cycle parses and builds documents that grow with the cluster (the Prometheus reply,
     * the status); give the pages they freed back, so that the resident size follows what
     * is live rather than the largest cycle so far. */
    malloc_trim(0);
    schedule_queue(m);
}

static void flush_events(struct kube_loop *loop, void *ud)
{
    (void)loop;
    struct manager *m = ud;
    struct kube_err err;
    if (kube_events_flush(m->events, wall_ms(), 0, NULL, &err) < 0)
        log_warn("events not flushed", "error", err.msg);
}

/* ---- lifecycle ---- */

struct manager *manager_new(struct kube_client *client, struct kube_loop *loop, struct kube_events *events,
                            struct psi_metrics *metrics, struct kube_err *err)
{
    struct manager *m = calloc(1, sizeof(*m));
    if (!m) {
        kube_err_set(err, 0, "NoMemory", "out of memory");
        return NULL;
    }
    m->client = client, m->loop = loop, m->events = events, m->metrics = metrics;
    m->queue = workqueue_new(NULL, NULL);
    if (!m->queue || register_metrics(m) < 0) {
        kube_err_set(err, 0, "NoMemory", "out of memory setting up the work queue and metrics");
        manager_free(m);
        return NULL;
    }
    return m;
}

/* Whether group/version is served: GET /apis/<gv> answers 200, or 404 when absent. */
static int api_exists(struct kube_client *c, const char *gv, bool *exists, struct kube_err *err)
{
    char path[256];
    snprintf(path, sizeof(path), "/apis/%s", gv);
    cJSON *reply = kube_rest_get(c, path, err);
    if (reply) {
        cJSON_Delete(reply);
        *exists = true;
        return 0;
    }
    if (err->status == 404) {
        *exists = false;
        return 0;
    }
    return kube_err_wrap(err, "discovering %s", gv);
}

/* Whether the group-version gv serves resource (its discovery document lists it). */
static int api_has_resource(struct kube_client *c, const char *gv, const char *resource, bool *has,
                            struct kube_err *err)
{
    char path[256];
    snprintf(path, sizeof(path), "/apis/%s", gv);
    cJSON *reply = kube_rest_get(c, path, err);
    if (!reply)
        return kube_err_wrap(err, "discovering %s", gv);
    *has = false;
    const cJSON *r;
    cJSON_ArrayForEach (r, cJSON_GetObjectItemCaseSensitive(reply, "resources")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "name");
        *has = *has || (cJSON_IsString(name) && strcmp(name->valuestring, resource) == 0);
    }
    cJSON_Delete(reply);
    return 0;
}

/* Log whether the admission policies of config/admission are in force: without
 * psi-rebalancer-machineconfigs MachineConfig mode is refused (mcsync.h); taints and moves run
 * without the others, confined by RBAC alone. */
static void log_admission_policies(struct manager *m)
{
    char msg[1024];
    struct policyguard_result verdict = {.msg = msg, .msglen = sizeof(msg)};
    policyprobe_check(m->client, policyprobe_all, policyprobe_all_n, "admission policies not in force", &verdict);
    if (verdict.verdict == POLICYGUARD_ENFORCED)
        log_info("admission policies in force", "policies",
                 POLICYGUARD_MACHINECONFIGS ", " POLICYGUARD_NODE_TAINTS ", " POLICYGUARD_MOVES
                                            ", " POLICYGUARD_WRITERS);
    else
        log_warn("admission policies not in force: machineConfig mode needs " POLICYGUARD_MACHINECONFIGS
                 ", taints and moves without the others are confined by RBAC alone",
                 "reason", verdict.reason, "detail", msg);
}

int manager_start(struct manager *m, struct kube_err *err)
{
    bool mc_api = false, kv_api = false;
    if (api_exists(m->client, MACHINECONFIG_API_VERSION, &mc_api, err) < 0 ||
        api_exists(m->client, MOVER_KUBEVIRT_GV, &kv_api, err) < 0)
        return -1;
    log_info("api discovery", "machineconfigs", mc_api ? "available" : "absent (not OpenShift)", "kubevirt",
             kv_api ? "available" : "absent (no live migrations to follow)");
    log_admission_policies(m);
    m->psirebalances = informer(m, "/apis/" API_API_VERSION "/" API_PLURAL, NULL, true, err);
    m->nodes = m->psirebalances ? node_informer(m, err) : NULL;
    if (mc_api && m->nodes) {
        m->machineconfigs = informer(m, "/apis/" MACHINECONFIG_API_VERSION "/machineconfigs", NULL, false, err);
        m->pools = m->machineconfigs
                       ? informer(m, "/apis/" MACHINECONFIG_API_VERSION "/machineconfigpools", NULL, false, err)
                       : NULL;
        if (!m->pools)
            return -1;
    }
    if (!m->nodes)
        return -1;
    if (kv_api) {
        m->vmis =
            quiet_informer(m, "/apis/" MOVER_KUBEVIRT_GV "/virtualmachineinstances", NULL, gather_vmi_projection, err);
        m->vmims = m->vmis ? informer(m, "/apis/" MOVER_KUBEVIRT_GV "/virtualmachineinstancemigrations",
                                      gather_vmim_projection, false, err)
                           : NULL;
        if (!m->vmims)
            return -1;
        bool kv_cr = false;
        if (api_has_resource(m->client, MOVER_KUBEVIRT_GV, "kubevirts", &kv_cr, err) < 0)
            return -1;
        if (kv_cr && !(m->kubevirts = informer(m, "/apis/" MOVER_KUBEVIRT_GV "/kubevirts", NULL, false, err)))
            return -1;
    }
    struct reconciler_deps deps = {.client = m->client,
                                   .events = m->events,
                                   .psirebalances = m->psirebalances,
                                   .nodes = m->nodes,
                                   .machineconfigs = m->machineconfigs,
                                   .pools = m->pools,
                                   .vmis = m->vmis,
                                   .vmims = m->vmims,
                                   .pods = pods_for,
                                   .pods_ud = m,
                                   .kubevirts = m->kubevirts,
                                   .loop = m->loop,
                                   .wake = wake_psirebalance,
                                   .wake_ud = m};
    m->reconciler = reconciler_new(&deps);
    if (!m->reconciler)
        return kube_err_set(err, 0, "NoMemory", "out of memory");
    struct kube_informer *infs[] = {m->psirebalances, m->nodes, m->machineconfigs, m->pools,
                                    m->vmis,          m->vmims, m->kubevirts};
    for (size_t i = 0; i < 7; i++)
        if (infs[i] && kube_informer_start(infs[i], m->loop, m->client, err) < 0)
            return -1;
    if (m->events)
        m->events_timer = kube_loop_timer(m->loop, 1000, 1000, flush_events, m);
    return 0;
}

bool manager_synced(const struct manager *m)
{
    return m->psirebalances && kube_informer_synced(m->psirebalances) && kube_informer_synced(m->nodes) &&
           (!m->machineconfigs || kube_informer_synced(m->machineconfigs)) &&
           (!m->pools || kube_informer_synced(m->pools)) && (!m->vmis || kube_informer_synced(m->vmis)) &&
           (!m->vmims || kube_informer_synced(m->vmims)) && (!m->kubevirts || kube_informer_synced(m->kubevirts));
}

void manager_free(struct manager *m)
{
    if (!m)
        return;
    kube_loop_cancel(m->loop, m->queue_timer);
    kube_loop_cancel(m->loop, m->events_timer);
    kube_informer_free(m->psirebalances);
    kube_informer_free(m->nodes);
    kube_informer_free(m->machineconfigs);
    kube_informer_free(m->pools);
    kube_informer_free(m->vmis);
    kube_informer_free(m->vmims);
    kube_informer_free(m->kubevirts);
    for (size_t i = 0; i < m->npods; i++) {
        kube_informer_free(m->pods[i].inf);
        free(m->pods[i].selector);
    }
    free(m->pods);
    reconciler_free(m->reconciler);
    workqueue_free(m->queue);
    free(m);
}
