/* cycle: the decisions around the plan (see cycle.h). */
#include "reconcile/move/cycle.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void cycle_verdict_set(struct cycle_verdict *v, enum api_condition_status st, const char *reason, const char *fmt, ...)
{
    v->status = st;
    v->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->message, sizeof(v->message), fmt, ap);
    va_end(ap);
}

bool cycle_gate(const struct api_spec *spec, bool metrics_ok, struct cycle_verdict *v)
{
    if (spec->eviction.mode == API_MODE_DISABLED) {
        cycle_verdict_set(v, API_CONDITION_FALSE, "Disabled", "eviction.mode is Disabled: nothing is moved");
        return true;
    }
    if (!cycle_resources(spec)) {
        cycle_verdict_set(v, API_CONDITION_FALSE, "ResourceNotSupported",
                          "moves are predicted from CPU usage and memory in use, and there is no per-workload %s "
                          "demand to predict a move with: %s pressure is tainted but nothing is moved (set "
                          "eviction.resources to balance cpu or memory)",
                          api_resource_name(spec->pressure.resource), api_resource_name(spec->pressure.resource));
        return true;
    }
    if (!metrics_ok) {
        cycle_verdict_set(v, API_CONDITION_FALSE, "MetricsUnavailable", "pressure is not readable: nothing is moved");
        return true;
    }
    return false;
}

unsigned cycle_resources(const struct api_spec *spec)
{
    unsigned mask = 0;
    for (size_t i = 0; i < spec->eviction.nresources; i++) {
        if (base_same(spec->eviction.resources[i], "cpu"))
            mask |= REBALANCE_RES_CPU;
        else if (base_same(spec->eviction.resources[i], "memory"))
            mask |= REBALANCE_RES_MEMORY;
    }
    if (spec->eviction.nresources)
        return mask;
    if (spec->pressure.resource == API_RESOURCE_CPU)
        return REBALANCE_RES_CPU;
    return spec->pressure.resource == API_RESOURCE_MEMORY ? REBALANCE_RES_MEMORY : 0;
}

double cycle_judged_pressure(const struct api_spec *spec, unsigned resources, const double *pressure)
{
    if (!spec->eviction.nresources)
        return pressure[spec->pressure.resource];
    double v = NAN;
    if ((resources & REBALANCE_RES_CPU) && !isnan(pressure[API_RESOURCE_CPU]))
        v = pressure[API_RESOURCE_CPU];
    if ((resources & REBALANCE_RES_MEMORY) && !isnan(pressure[API_RESOURCE_MEMORY]) &&
        (isnan(v) || pressure[API_RESOURCE_MEMORY] > v))
        v = pressure[API_RESOURCE_MEMORY];
    return v;
}

int64_t cycle_settle_ms(const struct api_spec *spec)
{
    return spec->metrics.window_ms + 2 * spec->metrics.interval_ms;
}

struct rebalance_params cycle_params(const struct api_spec *spec)
{
    return (struct rebalance_params){
        .evict_above = (double)spec->eviction.evict_above_percent,
        .taint_above = (double)spec->pressure.taint_above_percent,
        .untaint_below = (double)spec->pressure.untaint_below_percent,
        .max_per_node = (int)spec->eviction.max_per_node,
        .max_per_namespace =
            (int)(spec->eviction.has_max_per_namespace ? spec->eviction.max_per_namespace : spec->eviction.max_total),
        .max_total = (int)spec->eviction.max_total,
        .max_in_flight = (int)spec->eviction.max_in_flight_migrations,
        .target = spec->eviction.has_relief_target ? (double)spec->eviction.relief_target_percent : 0,
    };
}

bool cycle_sustain(int64_t *above_since_ms, double pressure, double evict_above, int64_t sustain_ms, int64_t now_ms)
{
    bool above = !isnan(pressure) && pressure > evict_above;
    if (!above)
        *above_since_ms = 0;
    else if (!*above_since_ms)
        *above_since_ms = now_ms;
    return above && now_ms - *above_since_ms >= sustain_ms;
}

/* Whether migration g keeps its nodes settling: not finished (whatever its phase), or
 * finished less than the settle time ago. */
static bool migration_unsettles(const struct moves_migration *g, int64_t now_ms, int64_t settle_ms)
{
    if (!moves_phase_final(g->phase))
        return true;
    return g->end && g->end * 1000 + settle_ms > now_ms;
}

static void mark(const char *const *names, size_t n, const char *a, const char *b, bool *settling)
{
    for (size_t i = 0; i < n; i++)
        if (base_same(names[i], a) || base_same(names[i], b))
            settling[i] = true;
}

void cycle_settling(const struct cycle_settle_facts *f, const char *const *names, const int64_t *settle_until_ms,
                    size_t n, bool *settling)
{
    for (size_t k = 0; k < f->nmigs; k++)
        if (migration_unsettles(&f->migs[k], f->now_ms, f->settle_ms))
            mark(names, n, f->migs[k].source, f->migs[k].target, settling);
    for (size_t i = 0; i < n; i++)
        if (settle_until_ms[i] > f->now_ms)
            settling[i] = true;
    for (size_t k = 0; k < f->nmoves; k++)
        if (history_under_way(&f->moves[k], f->now_ms))
            mark(names, n, f->moves[k].source_node, f->moves[k].destination_node, settling);
}

void cycle_overlay_load(const struct history_virtual *v, size_t nv, struct rebalance_node *nodes, size_t n,
                        double evict_above, bool *dropped)
{
    for (size_t i = 0; i < n; i++) {
        double adj = 0;
        for (size_t k = 0; k < nv; k++) {
            bool src = base_same(nodes[i].name, v[k].source), dst = base_same(nodes[i].name, v[k].destination);
            if ((!src && !dst) || isnan(nodes[i].demand) || !(nodes[i].cpus > 0))
                continue;
            double before = rebalance_predicted_pressure(nodes[i].demand / nodes[i].cpus);
            nodes[i].demand += src ? -v[k].demand : v[k].demand;
            if (nodes[i].demand < 0)
                nodes[i].demand = 0;
            adj += rebalance_predicted_pressure(nodes[i].demand / nodes[i].cpus) - before;
        }
        if (isnan(nodes[i].pressure) || adj == 0)
            continue;
        nodes[i].pressure += adj;
        if (nodes[i].pressure < 0)
            nodes[i].pressure = 0;
        bool above = nodes[i].pressure > evict_above;
        dropped[i] = !above;
        nodes[i].sustained = nodes[i].sustained && above;
    }
}

void cycle_overlay_requests(const struct history_virtual *v, size_t nv, struct rebalance_node *nodes, size_t n)
{
    for (size_t k = 0; k < nv; k++)
        for (size_t i = 0; i < n; i++)
            if (base_same(nodes[i].name, v[k].destination) && !isnan(nodes[i].req_cpu)) {
                nodes[i].req_cpu += v[k].req_cpu;
                nodes[i].req_memory += v[k].req_memory;
                nodes[i].req_pods += 1;
            }
}

/* Coolest first: lower pressure, then more free CPU (capacity less demand), then index. */
struct listing_key {
    double pressure, free;
    size_t i;
};

static int listing_cmp(const void *a, const void *b)
{
    const struct listing_key *x = a, *y = b;
    bool xn = isnan(x->pressure), yn = isnan(y->pressure);
    if (xn != yn)
        return xn ? 1 : -1;
    if (!xn && x->pressure != y->pressure)
        return x->pressure < y->pressure ? -1 : 1;
    if (x->free != y->free)
        return x->free > y->free ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

size_t cycle_listing(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t n,
                     const struct rebalance_candidate *cands, size_t nc, size_t *order)
{
    size_t movable = 0, k = 0;
    for (size_t j = 0; j < nc; j++)
        movable += !cands[j].blocked && !isnan(cands[j].demand) && cands[j].demand > 0;
    if (!movable)
        return 0;
    for (size_t i = 0; i < n; i++) {
        struct rebalance_node probe = nodes[i];
        probe.req_cpu = 0; /* requests unknown yet: judge the rest */
        char why[256];
        if (!rebalance_is_source(p, &nodes[i]) && !rebalance_destination_check(p, &probe, why, sizeof(why)))
            order[k++] = i;
    }
    struct listing_key *keys = calloc(k ? k : 1, sizeof(*keys));
    if (!keys)
        return k; /* out of memory: every eligible node, unsorted */
    for (size_t j = 0; j < k; j++) {
        const struct rebalance_node *t = &nodes[order[j]];
        double free = t->cpus > 0 && !isnan(t->demand) ? t->cpus - t->demand : 0;
        keys[j] = (struct listing_key){t->pressure, free, order[j]};
    }
    qsort(keys, k, sizeof(*keys), listing_cmp);
    for (size_t j = 0; j < k; j++)
        order[j] = keys[j].i;
    free(keys);
    return k;
}

size_t cycle_made(const struct rebalance_plan *plan, const struct rebalance_candidate *cands,
                  struct rebalance_move *made, size_t n, size_t cap)
{
    for (size_t k = 0; k < plan->nmoves && n < cap; k++)
        if (!cands[plan->moves[k].candidate].blocked) /* refused or failed ones are blocked */
            made[n++] = plan->moves[k];
    return n;
}

bool cycle_observe(struct api_move *m, int64_t now_ms, int64_t settle_ms, double source_now, double destination_now)
{
    bool ended = m->phase == API_MOVE_SUCCEEDED || m->phase == API_MOVE_EVICTED;
    if (!m->predicted || m->observed || !ended || !m->end_time || m->end_time * 1000 + settle_ms > now_ms ||
        isnan(source_now) || isnan(destination_now))
        return false;
    m->observed = true;
    m->observed_source = source_now;
    m->observed_destination = destination_now;
    return true;
}

void cycle_outcome(struct cycle_verdict *v, bool dry, size_t done, const char *made, const struct rebalance_plan *plan)
{
    if (done && dry)
        cycle_verdict_set(v, API_CONDITION_FALSE, "DryRun", "DryRun, nothing was done; would move: %s", made);
    else if (done)
        cycle_verdict_set(v, API_CONDITION_TRUE, "Moving", "moving: %s", made);
    else if (plan->reason && strcmp(plan->reason, REBALANCE_MOVING) != 0)
        cycle_verdict_set(v, API_CONDITION_FALSE, plan->reason, "%s", plan->message);
    else
        cycle_verdict_set(v, API_CONDITION_FALSE, "EvictionRefused",
                          "the evictions asked for were refused (PodDisruptionBudgets or KubeVirt): see the Events");
}

void cycle_finish(struct cycle_verdict *v, size_t running, bool automatic, const char *fallback_why)
{
    if (fallback_why) {
        size_t used = strlen(v->message);
        if (used + 1 < sizeof(v->message))
            snprintf(v->message + used, sizeof(v->message) - used,
                     "; eviction.method Migrate falls back to eviction (MigrateUnsupported): %s", fallback_why);
    }
    if (running && v->status != API_CONDITION_TRUE && automatic) {
        char msg[sizeof(v->message)];
        snprintf(msg, sizeof(msg), "%zu move%s under way; %s", running, running == 1 ? "" : "s", v->message);
        cycle_verdict_set(v, API_CONDITION_TRUE, "MigrationsInFlight", "%s", msg);
    }
}

bool cycle_blocked(const char *reason)
{
    return base_same(reason, REBALANCE_NO_DESTINATION) || base_same(reason, REBALANCE_NO_IMPROVEMENT) ||
           base_same(reason, REBALANCE_LIMITED) || base_same(reason, "UsageUnavailable");
}

bool cycle_decision_stands(const char *reason)
{
    return !base_same(reason, REBALANCE_LIMITED);
}
