/* rollout: which nodes rebalancing leaves alone during maintenance (see rollout.h). */
#include "reconcile/move/rollout.h"

#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "base/jx.h"
#include "base/util.h"

int rollout_pool_read(const cJSON *pool, struct rollout_pool *out)
{
    memset(out, 0, sizeof(*out));
    out->name = jx_nonempty(pool, "metadata.name");
    out->target = jx_nonempty(pool, "spec.configuration.name");
    out->current = jx_nonempty(pool, "status.configuration.name");
    const cJSON *st = jx_at(pool, "status");
    const cJSON *updating = jx_condition(pool, "Updating");
    out->updating = base_same(jx_str(updating, "status"), "True");
    const char *ltt = jx_nonempty(updating, "lastTransitionTime");
    if (!ltt || api_json_parse_time(ltt, &out->since) < 0)
        out->since = 0;
    out->machines = (long)jx_num(st, "machineCount", -1);
    out->updated = (long)jx_num(st, "updatedMachineCount", -1);
    return out->name ? 0 : -1;
}

bool rollout_drain_waiting(const struct moves_migration *m)
{
    if (moves_phase_final(m->phase) || moves_phase_running(m->phase))
        return false;
    return m->priority ? strcmp(m->priority, ROLLOUT_DRAIN_PRIORITY) == 0 : m->evacuation;
}

/* Whether config names one of pool p's rendered configs. */
static bool pool_config(const struct rollout_pool *p, const char *config)
{
    return config && (base_same(p->target, config) || base_same(p->current, config));
}

const struct rollout_pool *rollout_node_pool(const struct rollout_facts *f, const struct rollout_node *n)
{
    for (size_t k = 0; k < f->npools; k++)
        if (pool_config(&f->pools[k], n->current) || pool_config(&f->pools[k], n->desired))
            return &f->pools[k];
    return NULL;
}

/* "pool worker (2 of 3 machines updated)" into buf. */
static const char *pool_phrase(const struct rollout_pool *p, char *buf, size_t len)
{
    if (p->machines >= 0 && p->updated >= 0)
        snprintf(buf, len, "pool %s (%ld of %ld machines updated)", p->name, p->updated, p->machines);
    else
        snprintf(buf, len, "pool %s", p->name);
    return buf;
}

/* Rule 1: the daemon works on n. */
static enum rollout_hold own_update(const struct rollout_node *n, char *why, size_t len)
{
    if (n->current && n->desired && strcmp(n->current, n->desired) != 0) {
        snprintf(why, len, "being updated by the MachineConfig operator (desiredConfig %s, currentConfig %s)",
                 n->desired, n->current);
        return ROLLOUT_UPDATING;
    }
    if (base_same(n->state, ROLLOUT_STATE_WORKING) || base_same(n->state, ROLLOUT_STATE_REBOOTING)) {
        snprintf(why, len, "being updated by the MachineConfig operator (state %s)", n->state);
        return ROLLOUT_UPDATING;
    }
    return ROLLOUT_FREE;
}

/* Rules 2 and 3: n's pool. */
static enum rollout_hold pool_rollout(const struct rollout_facts *f, const struct rollout_node *n, char *why,
                                      size_t len)
{
    const struct rollout_pool *p = rollout_node_pool(f, n);
    char ph[256];
    if (!p)
        return ROLLOUT_FREE;
    if (p->updating) {
        bool done = p->target && base_same(n->current, p->target) && base_same(n->desired, p->target) &&
                    base_same(n->state, ROLLOUT_STATE_DONE);
        if (!done) {
            snprintf(why, len, "still to be updated in the rollout of %s", pool_phrase(p, ph, sizeof(ph)));
            return ROLLOUT_TO_UPDATE;
        }
        snprintf(why, len, "back from its update: quiet until the rollout of %s has settled",
                 pool_phrase(p, ph, sizeof(ph)));
        return ROLLOUT_BACK;
    }
    if (p->since && f->now >= p->since && f->now - p->since < f->settle_s) {
        snprintf(why, len, "pool %s finished rolling out: its nodes' pressure settles for %llds after it", p->name,
                 (long long)f->settle_s);
        return ROLLOUT_SETTLING;
    }
    return ROLLOUT_FREE;
}

/* Rule 4: a drain's migration waits on n. */
static enum rollout_hold drain_waits(const struct rollout_facts *f, const struct rollout_node *n, char *why, size_t len)
{
    if (!f->targeted)
        return ROLLOUT_FREE;
    for (size_t k = 0; k < f->nmigs; k++) {
        const struct moves_migration *m = &f->migs[k];
        if (!rollout_drain_waiting(m) || !(base_same(m->source, n->name) || base_same(m->target, n->name)))
            continue;
        snprintf(why, len, "a drain's live migration waits on it (%s/%s, priority %s)", m->ns ? m->ns : "", m->name,
                 m->priority ? m->priority : "unset, an evacuation");
        return ROLLOUT_DRAIN_WAITS;
    }
    return ROLLOUT_FREE;
}

enum rollout_hold rollout_check(const struct rollout_facts *f, const struct rollout_node *n, char *why, size_t len)
{
    if (len)
        why[0] = '\0';
    enum rollout_hold h = own_update(n, why, len);
    if (h == ROLLOUT_FREE)
        h = pool_rollout(f, n, why, len);
    if (h == ROLLOUT_FREE)
        h = drain_waits(f, n, why, len);
    return h;
}
