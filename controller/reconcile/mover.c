/* mover: rebalancing's edge for one PsiRebalance (see mover.h). */
#include "reconcile/mover.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "base/grow.h"
#include "base/jx.h"
#include "base/logging.h"
#include "base/util.h"
#include "reconcile/act.h"
#include "reconcile/status/conditions.h"
#include "reconcile/move/budget.h"
#include "reconcile/move/cost.h"
#include "reconcile/move/cycle.h"
#include "reconcile/move/demand.h"
#include "reconcile/move/vmstall.h"
#include "reconcile/move/evictor.h"
#include "reconcile/gather.h"
#include "reconcile/move/history.h"
#include "reconcile/move/inflight.h"
#include "reconcile/move/migrate.h"
#include "reconcile/move/placement.h"
#include "reconcile/move/rollout.h"

struct mover {
    struct history *h;
    struct gather_support support; /* eviction.method Migrate: whether KubeVirt takes addedNodeSelector */
    bool have_mode;
    enum api_eviction_mode mode;
    char last_reason[64];
    /* after a look that found nothing to move, the next one (usage query, pod lists) waits
     * for the settle time, unless the spec changes: no periodic cost while nothing can move */
    int64_t quiet_until_ms, quiet_generation;
    bool targeted; /* this reconcile: VM moves are targeted live migrations */
    struct mover_stats stats;
    struct gather_usage_read usage; /* the usage queries to Prometheus, on the loop */
};

/* Room for why maintenance holds a node. */
#define MOVER_HELD_LEN 320

/* One sampled cycle's decision: what it looks at and what it found. */
struct decision {
    const struct mover_deps *d;
    const struct mover_input *in;
    const struct gather_migrations *migs;
    size_t nn;
    struct rebalance_node *nodes;
    bool *is_source;
    double *usage;
    struct rebalance_params p;
    struct rebalance_recent *recent; /* the moves within cooldown.history */
    size_t nrecent;
    unsigned resources;      /* balanced on (cycle_resources) */
    double *node_mem;        /* memory in use per node, when memory is balanced */
    struct api_status *next; /* status.nodes[] take each node's demandSource and saturated */
    double *load1;           /* node_load1 per node (NAN: none) */
    double *waiting;         /* schedstat's waiting tasks per node (NAN: none) */
    struct gather_candidates cands;
    const cJSON *kubevirt; /* the KubeVirt CR (its default eviction strategy), or NULL */
    struct rebalance_plan plan;
    struct cycle_verdict v;
    bool keep; /* the last decision stands */
    bool dry;

    struct inflight_vm *busy; /* VMs moving without an unfinished migration to show it (inflight.h) */
    size_t nbusy, busy_cap;
    bool no_memory;

    struct budget_params budget; /* spec.eviction's move budgets */
    int64_t hour_room;           /* moves left in the hour's budget */

    struct rollout_pool *pools; /* the MachineConfigPools as read (rollout.h) */
    size_t npools;
    char (*held)[MOVER_HELD_LEN]; /* per node: why maintenance holds it ("" free) */
    size_t nheld, held_sources;   /* nodes held; of them, the ones that would be sources */
    size_t unplaceable;           /* sources found without a placement (NoPlacement) */
};

/* ---- lifecycle ---- */

struct mover *mover_new(void)
{
    struct mover *mv = calloc(1, sizeof(*mv));
    if (!mv)
        return NULL;
    mv->h = history_new();
    if (!mv->h) {
        free(mv);
        return NULL;
    }
    return mv;
}

void mover_free(struct mover *mv)
{
    if (!mv)
        return;
    history_free(mv->h);
    gather_usage_read_release(&mv->usage);
    free(mv);
}

const struct mover_stats *mover_stats(const struct mover *mv)
{
    return &mv->stats;
}

/* ---- the decision ---- */

/* Node i as the plan sees it, before settling and sustain (hn: its history, may be NULL). */
static void see_node(struct decision *dc, size_t i, const struct history_node *hn)
{
    const struct mover_node *in = &dc->in->nodes[i];
    struct rebalance_node *n = &dc->nodes[i];
    gather_node_view(in->node, n);
    n->name = in->name;
    n->selected = true;
    n->tainted = in->tainted;
    n->pressure = cycle_judged_pressure(&dc->in->pr->spec, dc->resources, in->pressure);
    n->cpu_pressure = in->pressure[API_RESOURCE_CPU];
    n->mem_pressure = in->pressure[API_RESOURCE_MEMORY];
    n->relieving = hn && hn->relieving;
    n->scale[REBALANCE_CPU] = hn ? hn->scale_cpu : 0;
}

/* kube_informer_foreach: keep the first object seen (ud: const cJSON **). */
static int first_object(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    *(const cJSON **)ud = obj;
    return 1;
}

/* kube_informer_foreach: read a MachineConfigPool into the decision's pools (ud: struct
 * decision *; room for every pool was made). */
static int read_pool(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct decision *dc = ud;
    if (rollout_pool_read(obj, &dc->pools[dc->npools]) == 0)
        dc->npools++;
    return 0;
}

/* kube_informer_foreach: count (ud: size_t *). */
static int count_object(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    (void)obj;
    (*(size_t *)ud)++;
    return 0;
}

/* Which nodes maintenance holds this cycle (rollout.h) into dc->held and the nodes' held.
 * Returns 0, or -1 on no memory. */
static int hold_for_maintenance(const struct mover *mv, struct decision *dc)
{
    size_t np = 0;
    if (dc->d->pools)
        kube_informer_foreach(dc->d->pools, count_object, &np);
    dc->pools = calloc(np ? np : 1, sizeof(*dc->pools));
    dc->held = calloc(dc->nn ? dc->nn : 1, sizeof(*dc->held));
    if (!dc->pools || !dc->held)
        return -1;
    if (np)
        kube_informer_foreach(dc->d->pools, read_pool, dc);
    struct rollout_facts f = {dc->pools,
                              dc->npools,
                              dc->migs->v,
                              dc->migs->n,
                              mv->targeted,
                              dc->in->now_ms / 1000,
                              cycle_settle_ms(&dc->in->pr->spec) / 1000};
    for (size_t i = 0; i < dc->nn; i++) {
        const struct nodeproj *np_i = dc->in->nodes[i].node;
        struct rollout_node n = {dc->in->nodes[i].name, np_i ? np_i->mc_current : NULL, np_i ? np_i->mc_desired : NULL,
                                 np_i ? np_i->mc_state : NULL};
        if (rollout_check(&f, &n, dc->held[i], MOVER_HELD_LEN) == ROLLOUT_FREE)
            continue;
        dc->nodes[i].held = dc->held[i];
        dc->nheld++;
    }
    return 0;
}

/* Nothing moved and maintenance held the nodes that would have moved: say so
 * (MaintenanceInProgress), naming each held node and why, then what the plan said. */
static void maintenance_verdict(struct decision *dc)
{
    if (!dc->nheld || dc->plan.nmoves || !dc->v.reason)
        return;
    bool no_source = base_same(dc->v.reason, REBALANCE_NO_PRESSURE) && dc->held_sources;
    bool no_destination =
        base_same(dc->v.reason, REBALANCE_NO_DESTINATION) || base_same(dc->v.reason, REBALANCE_NO_IMPROVEMENT);
    if (!no_source && !no_destination)
        return;
    char was[sizeof(dc->v.message)];
    snprintf(was, sizeof(was), "%s", dc->v.message);
    char list[1400] = "";
    size_t used = 0, shown = 0;
    for (size_t i = 0; i < dc->nn && used < sizeof(list); i++) {
        if (!dc->nodes[i].held)
            continue;
        if (shown == 4) {
            used += (size_t)snprintf(list + used, sizeof(list) - used, "; and %zu more", dc->nheld - shown);
            break;
        }
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s: %s", shown ? "; " : "", dc->nodes[i].name,
                                 dc->nodes[i].held);
        shown++;
    }
    cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_MAINTENANCE_IN_PROGRESS,
                      "maintenance holds %zu node%s (neither source nor destination): %s. %s", dc->nheld,
                      dc->nheld == 1 ? "" : "s", list, was);
}

/* VM ns/name is moving (dc->busy); no memory is remembered for count_in_flight. */
static void add_busy(struct decision *dc, const char *ns, const char *name)
{
    if (BASE_GROW(dc->busy, dc->nbusy + 1, dc->busy_cap) < 0) {
        dc->no_memory = true;
        return;
    }
    dc->busy[dc->nbusy++] = (struct inflight_vm){ns, name};
}

/* kube_informer_foreach: a VMI marked for evacuation and still on its node is a VM moving (ud:
 * struct decision *, its kubevirt set). */
static int add_waiting_vmi(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct decision *dc = ud;
    if (inflight_vmi_waiting(obj, dc->kubevirt))
        add_busy(dc, jx_str(obj, "metadata.namespace"), jx_str(obj, "metadata.name"));
    return 0;
}

/* params.in_flight: the VMs moving, each once. Returns 0, or -1 on no memory. */
static int count_in_flight(struct decision *dc)
{
    int n = dc->no_memory ? -1 : inflight_count(dc->migs->v, dc->migs->n, dc->busy, dc->nbusy);
    if (n < 0)
        return -1;
    dc->p.in_flight = n;
    return 0;
}

/* The nodes as the plan sees them, with settling and the sustain tracker; the params; which
 * nodes are sources. Returns whether any is, or -1 on no memory. */
static int look_at_nodes(struct mover *mv, struct decision *dc)
{
    const struct mover_input *in = dc->in;
    const struct api_spec *spec = &in->pr->spec;
    size_t nn = dc->nn;
    const char **names = calloc(nn ? nn : 1, sizeof(*names));
    int64_t *until = calloc(nn ? nn : 1, sizeof(*until));
    bool *settling = calloc(nn ? nn : 1, sizeof(*settling));
    int *outbound = calloc(nn ? nn : 1, sizeof(*outbound));
    int rc = -1;
    if (!names || !until || !settling || !outbound)
        goto out;
    for (size_t i = 0; i < nn; i++) {
        const struct history_node *hn = history_node(mv->h, in->nodes[i].name);
        names[i] = in->nodes[i].name;
        until[i] = hn ? hn->settle_until_ms : 0;
    }
    /* migrations running, whoever started them (KubeVirt's limits) */
    struct moves_counts counts;
    moves_count(dc->migs->v, dc->migs->n, names, nn, &counts, outbound);
    struct cycle_settle_facts f = {dc->migs->v,          dc->migs->n, mv->h->status.moves,
                                   mv->h->status.nmoves, in->now_ms,  cycle_settle_ms(spec)};
    cycle_settling(&f, names, until, nn, settling);
    dc->p = cycle_params(spec);
    dc->p.running = counts.running;
    dc->p.targeted = mv->targeted;
    dc->p.resources = dc->resources;
    /* history: a workload does not go back to a node it left, nor load back where it came from */
    if (history_recent(mv->h, (in->now_ms - spec->eviction.cooldown.history_ms) / 1000, &dc->recent, &dc->nrecent) < 0)
        goto out;
    dc->p.recent = dc->recent, dc->p.nrecent = dc->nrecent;
    /* the hour's move budget: a cycle makes no more than what is left of it */
    dc->budget = (struct budget_params){spec->eviction.max_moves_per_workload, spec->eviction.max_moves_per_hour,
                                        spec->eviction.cooldown.history_ms / 1000};
    dc->hour_room = budget_hour_room(&mv->h->status.move_history, &dc->budget, in->now_ms / 1000);
    if (dc->hour_room > 0 && dc->hour_room < dc->p.max_total)
        dc->p.max_total = (int)dc->hour_room;
    /* KubeVirt's parallel limits as its CR sets them (the first one: a cluster has one) */
    const cJSON *kv = NULL;
    if (dc->d->kubevirts)
        kube_informer_foreach(dc->d->kubevirts, first_object, &kv);
    moves_kubevirt_limits(kv, &dc->p.kubevirt_per_cluster, &dc->p.kubevirt_per_node);
    dc->kubevirt = kv;
    /* live migrations in flight: every VM moving, counted once (inflight.h) */
    for (size_t i = 0; i < mv->h->status.nmoves; i++) {
        const struct api_move *m = &mv->h->status.moves[i];
        if (m->phase == API_MOVE_REQUESTED && history_under_way(m, in->now_ms) &&
            base_same(m->kind, "VirtualMachineInstance"))
            add_busy(dc, m->ns, m->name);
    }
    if (dc->d->vmis)
        kube_informer_foreach(dc->d->vmis, add_waiting_vmi, dc);
    if (count_in_flight(dc) < 0)
        goto out;
    for (size_t i = 0; i < nn; i++)
        see_node(dc, i, history_node(mv->h, in->nodes[i].name));
    if (hold_for_maintenance(mv, dc) < 0)
        goto out;
    rc = 0;
    for (size_t i = 0; i < nn; i++) {
        struct history_node *hn = history_node(mv->h, in->nodes[i].name);
        dc->nodes[i].settling = settling[i];
        dc->nodes[i].outbound = outbound[i];
        if (hn)
            dc->nodes[i].sustained = cycle_sustain(&hn->above_since_ms, dc->nodes[i].pressure, dc->p.evict_above,
                                                   spec->pressure.sustain_ms, in->now_ms);
        /* a source stays one until it is below the relief target, cycle after cycle; a held
         * node is none, and counts for the verdict when it would be one */
        if (dc->nodes[i].held) {
            struct rebalance_node free_n = dc->nodes[i];
            free_n.held = NULL;
            dc->held_sources += rebalance_is_source(&dc->p, &free_n);
        }
        bool source = rebalance_is_source(&dc->p, &dc->nodes[i]);
        if (hn)
            hn->relieving = source;
        dc->is_source[i] = source && !settling[i];
        rc |= dc->is_source[i];
    }
out:
    free(names);
    free(until);
    free(settling);
    free(outbound);
    return rc;
}

/* kube_informer_foreach: a pod under an eviction in progress is a VM moving (ud: struct
 * decision *). */
static int add_evicted_pod(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct inflight_vm vm;
    if (inflight_pod_vm(obj, &vm))
        add_busy(ud, vm.ns, vm.name);
    return 0;
}

/* The candidates: the pods of the podSelector on the sources. Returns 0, or -1 with the
 * verdict set. */
static int find_candidates(struct decision *dc)
{
    const struct api_spec *spec = &dc->in->pr->spec;
    char *sel = api_selector_to_query(&spec->eviction.pod_selector);
    struct kube_informer *pods = sel && dc->d->pods ? dc->d->pods(dc->d->pods_ud, sel) : NULL;
    free(sel);
    if (!pods) {
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, "PodsUnavailable",
                          "the pods of spec.eviction.podSelector cannot be watched");
        return -1;
    }
    if (!kube_informer_synced(pods)) {
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, "WaitingForPods",
                          "the pods of spec.eviction.podSelector are being listed");
        return -1;
    }
    if (gather_candidates(pods, dc->in->nodes, dc->nn, dc->is_source, &dc->cands) < 0) {
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_OUT_OF_MEMORY, "out of memory collecting pods");
        return -1;
    }
    /* evacuations KubeVirt has started that have no migration yet are in flight too */
    kube_informer_foreach(pods, add_evicted_pod, dc);
    if (count_in_flight(dc) < 0) {
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_OUT_OF_MEMORY, "out of memory counting migrations");
        return -1;
    }
    return 0;
}

/* Usage, then demand of nodes and candidates. Returns 0, or -1 with the verdict set, or with
 * dc->keep while the usage queries to Prometheus run (their end wakes the PsiRebalance, and the
 * decision is made again with their replies). */
static int read_demand(struct mover *mv, struct decision *dc)
{
    const struct mover_input *in = dc->in;
    bool prometheus = in->pr->spec.metrics.source == API_SOURCE_PROMETHEUS;
    struct gather_usage_in u = {.client = dc->d->client,
                                .prom = prometheus ? &mv->usage : NULL,
                                .window_s = (long)(in->pr->spec.metrics.window_ms / 1000),
                                .nodes = in->nodes,
                                .nnodes = dc->nn,
                                .node_mem = dc->node_mem,
                                .node_load1 = dc->load1,
                                .node_waiting = dc->waiting};
    if (prometheus && !mv->usage.ended) {
        if (!gather_usage_read_busy(&mv->usage)) {
            mv->stats.usage_queries++;
            gather_usage_read_start(&mv->usage, &u, &dc->cands, in->prom, dc->d->loop, dc->d->wake, dc->d->wake_ud);
        }
        if (!mv->usage.ended) {
            dc->keep = true;
            return -1;
        }
    } else if (!prometheus) {
        mv->stats.usage_queries++;
    }
    char why[1024];
    if (gather_usage(&u, &dc->cands, dc->usage, why, sizeof(why)) < 0) {
        mv->stats.usage_failures++;
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, "UsageUnavailable",
                          "no move without CPU usage to predict it: %s", why);
        log_warn("usage not readable: no move", "psirebalance", in->pr->name, "error", why);
        return -1;
    }
    for (size_t i = 0; i < dc->nn; i++) {
        struct rebalance_node *n = &dc->nodes[i];
        double pc = in->nodes[i].pressure[API_RESOURCE_CPU];
        /* each reading below saturation calibrates the node's curve (rebalance_calibrate) */
        struct history_node *hn = history_node(mv->h, n->name);
        if (hn && n->cpus > 0)
            hn->scale_cpu = n->scale[REBALANCE_CPU] = rebalance_calibrate(hn->scale_cpu, dc->usage[i] / n->cpus, pc);
        n->demand = rebalance_node_demand_scaled(dc->usage[i], n->cpus, pc, n->scale[REBALANCE_CPU]);
        n->mem_used = dc->node_mem ? dc->node_mem[i] : NAN;
    }
    for (size_t j = 0; j < dc->cands.n; j++) {
        struct rebalance_candidate *c = &dc->cands.c[j];
        double u_j = dc->cands.w[j].usage;
        c->demand = isnan(u_j) ? NAN
                               : rebalance_demand_scaled(u_j, in->nodes[c->node].pressure[API_RESOURCE_CPU],
                                                         dc->nodes[c->node].scale[REBALANCE_CPU]);
        c->mem_used = dc->cands.w[j].mem;
    }
    return 0;
}

/* The evictor's word on every candidate. */
static void check_candidates(const struct mover *mv, struct decision *dc)
{
    const struct api_spec *spec = &dc->in->pr->spec;
    struct evictor_filter f = {&spec->eviction.pod_selector, spec->eviction.excluded_namespaces,
                               spec->eviction.nexcluded_namespaces};
    double rate = cost_cluster_rate(mv->h->status.moves, mv->h->status.nmoves);
    for (size_t j = 0; j < dc->cands.n; j++) {
        const struct gather_workload *w = &dc->cands.w[j];
        const cJSON *vmi = w->vmi && dc->d->vmis ? kube_informer_get(dc->d->vmis, dc->cands.c[j].ns, w->vmi) : NULL;
        struct evictor_facts x = {
            .pod = w->pod,
            .vmi = vmi,
            .controller = w->kind != NULL,
            .vmi_busy = w->vmi ? evictor_vmi_busy(vmi, dc->migs->v, dc->migs->n, dc->cands.c[j].ns, w->vmi) : NULL,
            .move_running = history_move_running(mv->h, w->key, dc->in->now_ms),
            .cooling = history_cooling(mv->h, w->key, dc->dry),
            .refused = history_refused(mv->h, w->key),
        };
        const char *b = evictor_check(&x, &f);
        /* the workload's move budget, and whether its last move helped (budget.h) */
        if (!b)
            b = budget_workload(&mv->h->status.move_history, w->key, &dc->budget, dc->in->now_ms / 1000);
        /* a VM whose last live migration did not converge waits out a cooldown (cost.h) */
        if (!b && vmi)
            b = cost_convergence_hold(vmi, spec->eviction.cooldown.initial_ms, dc->in->now_ms);
        /* nor one whose memory is dirtied faster than migrations copy it here, unless it has
         * completed a live migration before (that measured its own rate) */
        int64_t last_s;
        if (!b && vmi && !cost_vmi_last_migration(vmi, &last_s))
            b = cost_dirty_hold(rate, w->dirty_bps);
        /* moved by eviction, a VM KubeVirt would restart goes only if the spec allows it */
        const char *restarts = !b && vmi && !mv->targeted ? evictor_vm_restarts(evictor_vm_strategy(vmi, dc->kubevirt),
                                                                                evictor_vmi_migratable(vmi))
                                                          : NULL;
        if (restarts && !spec->eviction.allow_vm_restart)
            b = restarts;
        /* moved by a targeted migration, a VM whose owner chose None goes only if the spec allows it */
        const char *overrides =
            !b && vmi && mv->targeted ? evictor_vm_migration_overrides(evictor_vm_strategy(vmi, dc->kubevirt)) : NULL;
        if (overrides && !spec->eviction.allow_vm_restart)
            b = overrides;
        dc->cands.w[j].restarts = b ? NULL : restarts;
        /* a VM that cannot live-migrate is never picked (KubeVirt would refuse it), unless its
         * restart is allowed */
        if (!b && vmi && !restarts)
            b = rebalance_vmi_check(vmi);
        /* eviction.method Migrate moves VMs only */
        if (!b && spec->eviction.method == API_METHOD_MIGRATE && !w->vmi)
            b = "not a VM (eviction.method Migrate)";
        dc->cands.c[j].blocked = b;
        dc->cands.c[j].max_demand = vmi ? rebalance_vmi_vcpus(vmi) : NAN;
        if (vmi) { /* reported with its move; at equal relief the planner prefers the shorter migration */
            dc->cands.w[j].cost = cost_estimate(vmi, rate, w->dirty_bps);
            const struct api_move_cost *cost = &dc->cands.w[j].cost;
            dc->cands.c[j].migrate_s = cost->basis != API_COST_NONE ? (double)cost->expected_s : NAN;
        }
    }
}

/* The candidates grouped by node: those of node i are order[start[i] .. start[i + 1]). */
struct by_node {
    size_t *start, *order;
};

static int group_by_node(const struct decision *dc, struct by_node *g)
{
    size_t nc = dc->cands.n;
    g->start = calloc(dc->nn + 1, sizeof(size_t));
    g->order = calloc(nc ? nc : 1, sizeof(size_t));
    size_t *fill = calloc(dc->nn ? dc->nn : 1, sizeof(size_t));
    if (!g->start || !g->order || !fill) {
        free(g->start);
        free(g->order);
        free(fill);
        return -1;
    }
    for (size_t j = 0; j < nc; j++)
        g->start[dc->cands.c[j].node + 1]++;
    for (size_t i = 0; i < dc->nn; i++)
        g->start[i + 1] += g->start[i];
    for (size_t j = 0; j < nc; j++) {
        size_t i = dc->cands.c[j].node;
        g->order[g->start[i] + fill[i]++] = j;
    }
    free(fill);
    return 0;
}

static void by_node_free(struct by_node *g)
{
    free(g->start);
    free(g->order);
}

/* The status entry of node i in the next status, or NULL when it is not listed. */
static struct api_node_status *next_node(const struct decision *dc, size_t i)
{
    for (size_t k = 0; dc->next && k < dc->next->nnodes; k++) {
        struct api_node_status *ns = &dc->next->nodes[k];
        if (ns->name && dc->nodes[i].name && strcmp(ns->name, dc->nodes[i].name) == 0)
            return ns;
    }
    return NULL;
}

/* Each node's CPU demand as demand.h gives it: where its reading is near 100 %, from signals
 * that do not saturate (its usage, its workloads' usage and vCPUs, known once check_candidates
 * ran) bounding the planner's inference from pressure; below, its usage. */
static void bound_demand(struct decision *dc, const struct by_node *g)
{
    struct demand_workload *w = calloc(dc->cands.n ? dc->cands.n : 1, sizeof(*w));
    if (!w)
        return; /* out of memory: the planner's inference stands */
    for (size_t k = 0; k < dc->cands.n; k++) {
        size_t j = g->order[k];
        w[k] = (struct demand_workload){dc->cands.w[j].usage, dc->cands.c[j].max_demand};
    }
    for (size_t i = 0; i < dc->nn; i++) {
        struct rebalance_node *n = &dc->nodes[i];
        struct demand_cpu_in in = {.cpus = n->cpus,
                                   .usage = dc->usage[i],
                                   .pressure = dc->in->nodes[i].pressure[API_RESOURCE_CPU],
                                   .from_pressure = n->demand,
                                   .load1 = dc->load1 ? dc->load1[i] : NAN,
                                   .waiting = dc->waiting ? dc->waiting[i] : NAN,
                                   .w = w + g->start[i],
                                   .nw = g->start[i + 1] - g->start[i]};
        struct demand_cpu_out out;
        demand_cpu(&in, &out);
        if (!isnan(out.demand)) {
            /* its workloads want what they use times what the node wants over what it serves (below
             * saturation the kernel serves it all: their usage, where an inverted reading, small
             * and skewed, would overstate an idle node's load) */
            for (size_t k = g->start[i]; dc->usage[i] > 0 && k < g->start[i + 1]; k++) {
                size_t j = g->order[k];
                if (!isnan(dc->cands.w[j].usage))
                    dc->cands.c[j].demand = dc->cands.w[j].usage * fmax(1, out.demand / dc->usage[i]);
            }
            n->demand = out.demand;
        }
        /* what status.nodes says: the source of the demand the planner used */
        struct api_node_status *ns = next_node(dc, i);
        if (ns) {
            const char *src = demand_source_name(out.source);
            snprintf(ns->demand_source, sizeof(ns->demand_source), "%s", *src ? src : "Pressure");
            ns->saturated = out.saturated;
        }
    }
    free(w);
}

/* Node i's workloads in its status entry, in vmstall_rank's order. */
static void list_workloads(struct decision *dc, size_t i, const struct by_node *g, const struct vmstall_workload *v)
{
    struct api_node_status *ns = next_node(dc, i);
    size_t idx[API_NODE_WORKLOADS];
    if (!ns)
        return;
    ns->nworkloads = vmstall_rank(v, g->start[i + 1] - g->start[i], idx, API_NODE_WORKLOADS);
    for (size_t k = 0; k < ns->nworkloads; k++) {
        size_t j = g->order[g->start[i] + idx[k]];
        const struct gather_workload *w = &dc->cands.w[j];
        struct api_node_workload *e = &ns->workloads[k];
        const char *wns = dc->cands.c[j].ns;
        snprintf(e->kind, sizeof(e->kind), "%s", w->kind ? w->kind : "Pod");
        snprintf(e->ns, sizeof(e->ns), "%s", wns ? wns : "");
        snprintf(e->name, sizeof(e->name), "%s", w->name ? w->name : "");
        e->role = v[idx[k]].role;
        e->p = w->pressure;
    }
}

/* Each workload's demand and role from its own PSI where its kubelet reports it (vmstall.h),
 * once the nodes' demand is bounded; what was used is kept for the moves' records and for
 * status.nodes[].workloads. */
static void attribute_own_stall(struct decision *dc, const struct by_node *g)
{
    struct vmstall_workload *v = calloc(dc->cands.n ? dc->cands.n : 1, sizeof(*v));
    if (!v)
        return; /* out of memory: the estimate from the node's pressure stands */
    for (size_t i = 0; i < dc->nn; i++) {
        size_t first = g->start[i], n = g->start[i + 1] - first;
        if (!n)
            continue;
        for (size_t k = 0; k < n; k++) {
            size_t j = g->order[first + k];
            const struct gather_workload *w = &dc->cands.w[j];
            v[k] = (struct vmstall_workload){.usage = w->usage,
                                             .vcpus = dc->cands.c[j].max_demand,
                                             .cpu_stall = w->cpu_stall,
                                             .mem_stall = w->mem_stall,
                                             .demand = dc->cands.c[j].demand};
        }
        vmstall_attribute(dc->usage[i], dc->nodes[i].demand, v, n);
        for (size_t k = 0; k < n; k++) {
            size_t j = g->order[first + k];
            struct gather_workload *w = &dc->cands.w[j];
            dc->cands.c[j].demand = v[k].demand;
            dc->cands.c[j].stall = w->cpu_stall;
            w->pressure = (struct api_workload_pressure){w->cpu_stall, w->mem_stall, w->usage, v[k].demand, v[k].from};
        }
        list_workloads(dc, i, g, v);
    }
    free(v);
}

/* The workloads' demand: bounded where their node is saturated, then shared by their own stall. */
static void estimate_demand(struct decision *dc)
{
    struct by_node g;
    if (group_by_node(dc, &g) < 0)
        return; /* out of memory: the planner's inference stands */
    bound_demand(dc, &g);
    attribute_own_stall(dc, &g);
    by_node_free(&g);
}

/* DryRun: lay the moves it would have made over the nodes' load and pressure. */
static void overlay_load(struct mover *mv, struct decision *dc)
{
    bool *dropped = calloc(dc->nn ? dc->nn : 1, sizeof(bool));
    if (!dropped)
        return;
    cycle_overlay_load(mv->h->virt, mv->h->nvirt, dc->nodes, dc->nn, dc->p.evict_above, dropped);
    for (size_t i = 0; i < dc->nn; i++) {
        struct history_node *hn = dropped[i] ? history_node(mv->h, dc->nodes[i].name) : NULL;
        if (hn)
            hn->above_since_ms = 0;
    }
    free(dropped);
}

static void log_nodes(const struct decision *dc)
{
    for (size_t i = 0; i < dc->nn; i++) {
        const struct rebalance_node *n = &dc->nodes[i];
        char pr[32], dm[32], cp[32];
        snprintf(pr, sizeof(pr), "%.2f", n->pressure);
        snprintf(dm, sizeof(dm), "%.3f", n->demand);
        snprintf(cp, sizeof(cp), "%.2f", n->cpus);
        log_debug("rebalance node", "psirebalance", dc->in->pr->name, "node", n->name, "pressure", pr, "demand", dm,
                  "cpus", cp, "sustained", n->sustained ? "true" : "false", "settling", n->settling ? "true" : "false");
    }
}

/* The requests on the destinations worth it (cycle_listing), MOVER_MAX_LISTED at most. */
static void list_requests(struct decision *dc)
{
    size_t *order = calloc(dc->nn ? dc->nn : 1, sizeof(*order));
    if (!order)
        return;
    size_t n = cycle_listing(&dc->p, dc->nodes, dc->nn, dc->cands.c, dc->cands.n, order), listed = 0;
    for (size_t k = 0; k < n && listed < MOVER_MAX_LISTED; k++) {
        struct rebalance_node *t = &dc->nodes[order[k]];
        struct gather_requests r;
        if (gather_node_requests(dc->d->client, t->name, &r) == 0) {
            t->req_cpu = r.cpu, t->req_memory = r.memory, t->req_pods = r.pods;
            listed++;
        }
    }
    free(order);
}

/* Plan and move; a refused eviction takes its candidate out and the rest is planned again.
 * Returns -1 when an eviction failed (fail_msg says why). */
static int plan_and_move(struct mover *mv, struct decision *dc, char *fail_msg, size_t fail_len)
{
    struct act a = {dc->d, dc->in, mv->h, &mv->stats};
    char made[1500] = "";
    struct act_round r = {
        .nodes = dc->nodes,
        .cands = &dc->cands,
        .dry = dc->dry,
        .targeted = mv->targeted,
        .settle_ms = cycle_settle_ms(&dc->in->pr->spec),
        .fail_msg = fail_msg,
        .fail_len = fail_len,
        .made = made,
        .made_len = sizeof(made),
    };
    size_t done = 0, nmade = 0;
    /* what earlier rounds made counts against every limit of the next (rebalance_params.made) */
    struct rebalance_move *made_moves = calloc(dc->cands.n ? dc->cands.n : 1, sizeof(*made_moves));
    if (!made_moves) {
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_OUT_OF_MEMORY, "out of memory while planning");
        return 0;
    }
    for (int round = 0; round < MOVER_MAX_ROUNDS; round++) {
        rebalance_plan_free(&dc->plan);
        dc->p.made = made_moves, dc->p.nmade = nmade;
        if (rebalance_plan(&dc->p, dc->nodes, dc->nn, dc->cands.c, dc->cands.n, &dc->plan) < 0) {
            free(made_moves);
            cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_OUT_OF_MEMORY, "out of memory while planning");
            return 0;
        }
        if (!dc->plan.nmoves)
            break;
        int refused_before = r.refused;
        r.plan = &dc->plan;
        done += act_moves(&a, &r);
        nmade = cycle_made(&dc->plan, dc->cands.c, made_moves, nmade, dc->cands.n);
        if (r.refused == refused_before || r.failed)
            break;
    }
    dc->p.made = NULL, dc->p.nmade = 0;
    free(made_moves);
    bool stands = !done && cycle_decision_stands(dc->plan.reason);
    mv->quiet_until_ms = stands ? dc->in->now_ms + cycle_settle_ms(&dc->in->pr->spec) : 0;
    mv->quiet_generation = dc->in->pr->generation;
    cycle_outcome(&dc->v, dc->dry, done, made, &dc->plan);
    return r.failed ? -1 : 0;
}

/* Nothing could move off the sources: when the budgets held some of their workloads back, the
 * reason says so (the message, the plan's, counts them). */
static void budget_verdict(struct decision *dc)
{
    if (!base_same(dc->v.reason, REBALANCE_NO_CANDIDATE))
        return;
    bool used = false, unhelpful = false;
    for (size_t j = 0; j < dc->cands.n; j++) {
        const struct rebalance_candidate *c = &dc->cands.c[j];
        if (!dc->is_source[c->node] || !c->blocked)
            continue;
        used = used || strcmp(c->blocked, BUDGET_WORKLOAD_USED) == 0;
        unhelpful = unhelpful || strcmp(c->blocked, BUDGET_UNHELPFUL) == 0;
    }
    if (used)
        dc->v.reason = API_REASON_MOVE_BUDGET_REACHED;
    else if (unhelpful)
        dc->v.reason = API_REASON_INEFFECTIVE_MOVE_HELD;
}

/* Nothing moved for want of a destination or of an improving move: when no set of moves can
 * bring any source below taintAbovePercent (placement.h), the reason says NoPlacement, what
 * capacity each lacks and why the rest of its pods may not move. The decision stands until
 * the settle time passes (quiet_until_ms), as a decision that moved nothing does
 * (cycle_decision_stands). */
static void placement_verdict(struct decision *dc)
{
    if (!base_same(dc->v.reason, REBALANCE_NO_DESTINATION) && !base_same(dc->v.reason, REBALANCE_NO_IMPROVEMENT))
        return;
    size_t n1 = dc->nn ? dc->nn : 1, nsrc = 0;
    size_t *src = calloc(n1, sizeof(*src));
    struct placement_verdict *pv = calloc(n1, sizeof(*pv));
    const char **names = calloc(n1, sizeof(*names));
    struct placement_cluster cl = {&dc->p, dc->nodes, dc->nn, dc->cands.c, dc->cands.n};
    for (size_t i = 0; src && i < dc->nn; i++)
        if (dc->is_source[i])
            src[nsrc++] = i;
    bool all = src && pv && names && nsrc && placement_judge(&cl, src, nsrc, pv) == 0;
    for (size_t k = 0; all && k < nsrc; k++) {
        all = placement_unplaceable(&pv[k]);
        names[k] = dc->nodes[src[k]].name;
    }
    if (all) {
        char msg[sizeof(dc->v.message)];
        placement_message(pv, names, nsrc, dc->p.taint_above, msg, sizeof(msg));
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_NO_PLACEMENT, "%s%s%s", msg,
                          dc->plan.blocked[0] ? "; " : "", dc->plan.blocked);
        dc->unplaceable = nsrc;
    }
    free(src);
    free(pv);
    free(names);
}

/* What a sampled cycle decides, past the sources (they exist). Returns -1 when an eviction
 * failed. */
static int decide_moves(struct mover *mv, struct decision *dc, char *fail_msg, size_t fail_len)
{
    if (dc->hour_room <= 0) {
        char at[32];
        api_json_format_time(budget_hour_until(&mv->h->status.move_history, &dc->budget, dc->in->now_ms / 1000), at,
                             sizeof(at));
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_MOVE_BUDGET_REACHED,
                          "%lld moves in the last hour used spec.eviction.maxMovesPerHour (%lld): no move before %s",
                          (long long)api_move_history_moves_since(&mv->h->status.move_history, NULL,
                                                                  dc->in->now_ms / 1000 - BUDGET_HOUR_S),
                          (long long)dc->budget.per_hour, at);
        return 0;
    }
    if (find_candidates(dc) < 0 || read_demand(mv, dc) < 0)
        return 0;
    check_candidates(mv, dc);
    estimate_demand(dc);
    if (dc->dry && mv->h->nvirt)
        overlay_load(mv, dc);
    log_nodes(dc);
    list_requests(dc);
    if (dc->dry) /* the would-be arrivals count in the requests too */
        cycle_overlay_requests(mv->h->virt, mv->h->nvirt, dc->nodes, dc->nn);
    int rc = plan_and_move(mv, dc, fail_msg, fail_len);
    budget_verdict(dc);
    return rc;
}

/* A node above evictAbove that has not stayed there for the sustain window yet will be a
 * source: start listing the podSelector's pods now, so that its first move does not wait a
 * cycle for the list (find_candidates). */
static void warm_pods(const struct decision *dc)
{
    bool soon = false;
    for (size_t i = 0; i < dc->nn; i++)
        soon = soon || (dc->nodes[i].selected && dc->nodes[i].pressure > dc->p.evict_above);
    if (!soon || !dc->d->pods)
        return;
    char *sel = api_selector_to_query(&dc->in->pr->spec.eviction.pod_selector);
    if (sel)
        dc->d->pods(dc->d->pods_ud, sel);
    free(sel);
}

/* The decision of a sampled cycle into dc->v (dc->keep: the last one stands). Returns -1 when
 * an eviction failed (fail_msg says why). */
static int decide(struct mover *mv, struct decision *dc, char *fail_msg, size_t fail_len)
{
    size_t n1 = dc->nn ? dc->nn : 1;
    dc->resources = cycle_resources(&dc->in->pr->spec);
    dc->nodes = calloc(n1, sizeof(*dc->nodes));
    dc->is_source = calloc(n1, sizeof(bool));
    dc->usage = calloc(n1, sizeof(double));
    dc->load1 = calloc(n1, sizeof(double));
    dc->waiting = calloc(n1, sizeof(double));
    for (size_t i = 0; dc->load1 && dc->waiting && i < n1; i++)
        dc->load1[i] = dc->waiting[i] = NAN;
    dc->node_mem = (dc->resources & REBALANCE_RES_MEMORY) ? calloc(n1, sizeof(double)) : NULL;
    int any = dc->nodes && dc->is_source && dc->usage && (dc->node_mem || !(dc->resources & REBALANCE_RES_MEMORY))
                  ? look_at_nodes(mv, dc)
                  : -1;
    if (any < 0) {
        cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_OUT_OF_MEMORY, "out of memory while deciding");
        return 0;
    }
    if (dc->dry) /* DryRun: the moves it would have made change the picture once demands are known */
        history_prune_virtual(mv->h);
    if (!any) { /* nothing to do, or only settling sources: the plan says which, without reading more */
        warm_pods(dc);
        if (rebalance_plan(&dc->p, dc->nodes, dc->nn, NULL, 0, &dc->plan) < 0) {
            cycle_verdict_set(&dc->v, API_CONDITION_FALSE, API_REASON_OUT_OF_MEMORY, "out of memory while planning");
        } else {
            cycle_verdict_set(&dc->v, API_CONDITION_FALSE, dc->plan.reason, "%s", dc->plan.message);
            maintenance_verdict(dc);
        }
        return 0;
    }
    if (dc->in->now_ms < mv->quiet_until_ms && mv->quiet_generation == dc->in->pr->generation) {
        dc->keep = true; /* the last look found nothing to move: the decision stands until it settles */
        return 0;
    }
    int rc = decide_moves(mv, dc, fail_msg, fail_len);
    maintenance_verdict(dc);
    placement_verdict(dc);
    return rc;
}

static void decision_free(struct decision *dc)
{
    rebalance_plan_free(&dc->plan);
    gather_candidates_free(&dc->cands);
    free(dc->nodes);
    free(dc->is_source);
    free(dc->usage);
    free(dc->load1);
    free(dc->waiting);
    free(dc->node_mem);
    free(dc->pools);
    free(dc->held);
    history_recent_free(dc->recent, dc->nrecent);
    free(dc->busy);
}

/* ---- the cycle ---- */

/* eviction.method Migrate or Auto: whether VM moves are targeted live migrations this cycle;
 * with Migrate, the reason they are not (NULL when they are, or Migrate was not asked for).
 * Auto evicts where KubeVirt cannot target, as it says it does: no warning. */
static const char *method(struct mover *mv, const struct act *a)
{
    const struct api_spec *spec = &a->in->pr->spec;
    mv->targeted = false;
    if (spec->eviction.method == API_METHOD_EVICT || spec->eviction.mode == API_MODE_DISABLED)
        return NULL;
    if (!a->d->vmims) {
        mv->support.support = MIGRATE_UNSUPPORTED;
        snprintf(mv->support.why, sizeof(mv->support.why), "the KubeVirt API (%s) is not served", MOVER_KUBEVIRT_GV);
    } else {
        gather_migrate_support(a->d->client, &mv->support, a->in->now_ms, a->in->pr->name);
    }
    mv->targeted = mv->support.support == MIGRATE_SUPPORTED;
    if (mv->targeted || spec->eviction.method == API_METHOD_AUTO)
        return NULL;
    if (!mv->support.warned) {
        char note[700];
        snprintf(note, sizeof(note), "eviction.method Migrate falls back to eviction: %s", mv->support.why);
        act_event(a, "Warning", "MigrateUnsupported", "Decide", note);
        mv->support.warned = true;
    }
    return mv->support.why;
}

/* Write the verdict into next's Rebalancing condition; log and raise an Event when its reason
 * changed. */
static void conclude(struct mover *mv, const struct act *a, struct cycle_verdict *v, const char *fallback,
                     struct api_status *next)
{
    const struct mover_input *in = a->in;
    cycle_finish(v, history_running(mv->h, in->now_ms), in->pr->spec.eviction.mode == API_MODE_AUTOMATIC, fallback);
    conditions_set(next, API_CONDITION_REBALANCING, v->status, v->reason, v->message, in->pr->generation,
                   in->now_ms / 1000);
    if (strcmp(mv->last_reason, v->reason) == 0)
        return;
    if (cycle_blocked(v->reason))
        act_event(a, "Warning", "RebalanceBlocked", "Decide", v->message);
    else if (strcmp(v->reason, REBALANCE_OSCILLATION) == 0)
        act_event(a, "Warning", "OscillationHeld", "Decide", v->message);
    else if (strcmp(v->reason, API_REASON_MOVE_BUDGET_REACHED) == 0)
        act_event(a, "Warning", API_REASON_MOVE_BUDGET_REACHED, "Decide", v->message);
    else if (strcmp(v->reason, API_REASON_INEFFECTIVE_MOVE_HELD) == 0)
        act_event(a, "Warning", API_REASON_INEFFECTIVE_MOVE_HELD, "Decide", v->message);
    else if (strcmp(v->reason, API_REASON_NO_PLACEMENT) == 0)
        act_event(a, "Warning", API_REASON_NO_PLACEMENT, "Decide", v->message);
    log_info("rebalancing", "psirebalance", in->pr->name, "reason", v->reason, "message", v->message);
    snprintf(mv->last_reason, sizeof(mv->last_reason), "%s", v->reason);
}

/* The moves that settled since: what their nodes show now against what was predicted
 * (cycle_observe), into the moves and the stats. */
static void check_predictions(struct mover *mv, const struct mover_input *in)
{
    int64_t settle = cycle_settle_ms(&in->pr->spec);
    unsigned res = cycle_resources(&in->pr->spec);
    for (size_t k = 0; k < mv->h->status.nmoves; k++) {
        struct api_move *m = &mv->h->status.moves[k];
        if (!m->predicted || m->observed)
            continue;
        const char *dst = m->target_node ? m->target_node : m->destination_node;
        double s = NAN, t = NAN;
        for (size_t i = 0; i < in->nnodes; i++) {
            if (m->source_node && strcmp(in->nodes[i].name, m->source_node) == 0)
                s = cycle_judged_pressure(&in->pr->spec, res, in->nodes[i].pressure);
            if (dst && strcmp(in->nodes[i].name, dst) == 0)
                t = cycle_judged_pressure(&in->pr->spec, res, in->nodes[i].pressure);
        }
        if (!cycle_observe(m, in->now_ms, settle, s, t))
            continue;
        mv->stats.prediction_error_source += fabs(m->observed_source - m->predicted_source);
        mv->stats.prediction_error_destination += fabs(m->observed_destination - m->predicted_destination);
        mv->stats.predictions_checked++;
        char ps[64], pd[64];
        snprintf(ps, sizeof(ps), "%.1f%% predicted, %.1f%% observed", m->predicted_source, m->observed_source);
        snprintf(pd, sizeof(pd), "%.1f%% predicted, %.1f%% observed", m->predicted_destination,
                 m->observed_destination);
        log_info("move settled: prediction checked", "psirebalance", in->pr->name, "workload", m->name, "source",
                 m->source_node, "source_pressure", ps, "destination", dst, "destination_pressure", pd);
        /* a move that did not relieve its source as predicted holds its workload (budget.h) */
        if (history_judge(mv->h, m, in->now_ms))
            log_info("move did not help: its workload is held for cooldown.history", "psirebalance", in->pr->name,
                     "workload", m->name, "source", m->source_node);
    }
}

/* Begin the cycle: the history at this time and spec (DryRun's picture ends with DryRun). */
static void begin(struct mover *mv, const struct mover_input *in)
{
    const struct api_spec *spec = &in->pr->spec;
    struct cooldown_params cp = {spec->eviction.cooldown.initial_ms, spec->eviction.cooldown.max_ms,
                                 spec->eviction.cooldown.history_ms};
    history_begin(mv->h, &cp, in->now_ms, &in->pr->status);
    if (mv->have_mode && mv->mode != spec->eviction.mode)
        history_forget_dry_run(mv->h);
    mv->have_mode = true;
    mv->mode = spec->eviction.mode;
}

int mover_run(struct mover *mv, const struct mover_deps *d, const struct mover_input *in, struct api_status *next,
              const char **fail_reason, char *fail_msg, size_t fail_len)
{
    begin(mv, in);
    struct act a = {d, in, mv->h, &mv->stats};
    struct gather_migrations migs;
    if (gather_migrations(d->vmims, d->vmis, &migs) < 0)
        log_warn("migrations not all read: out of memory", "psirebalance", in->pr->name);
    if (act_follow(&a, &migs) < 0)
        log_warn("moves not followed: out of memory", "psirebalance", in->pr->name);
    if (d->vmims)
        act_cleanup(&a, &migs);
    if (in->sampled)
        check_predictions(mv, in);
    const char *fallback = method(mv, &a);

    struct decision dc = {.d = d,
                          .in = in,
                          .migs = &migs,
                          .nn = in->nnodes,
                          .dry = in->pr->spec.eviction.mode == API_MODE_DRY_RUN,
                          .next = next};
    bool set = true;
    int rc = 0;
    if (cycle_gate(&in->pr->spec, in->metrics_ok, &dc.v)) {
        /* nothing is decided: the gate says why */
    } else if (in->sampled || mv->usage.ended) {
        if (decide(mv, &dc, fail_msg, fail_len) < 0) {
            *fail_reason = "EvictionFailed";
            rc = -1;
        }
        set = !dc.keep;
    } else {
        set = false; /* between samples the decision stands */
    }
    if (set) {
        mv->stats.unplaceable = dc.unplaceable;
        conclude(mv, &a, &dc.v, fallback, next);
    } else if (!api_status_condition(next, API_CONDITION_REBALANCING))
        conditions_set(next, API_CONDITION_REBALANCING, API_CONDITION_UNKNOWN, "Pending",
                       "waiting for the first pressure sample", in->pr->generation, in->now_ms / 1000);
    history_fill_status(mv->h, in->now_ms, in->pr->spec.eviction.cooldown.history_ms, next);
    if (mv->usage.ended) /* replies serve the first decision after they came */
        gather_usage_read_drop(&mv->usage);
    decision_free(&dc);
    free(migs.v);
    return rc;
}
