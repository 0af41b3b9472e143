/* timeline: the scenario's events (see timeline.h). */
#include "hack/sim/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "hack/sim/drain.h"
#include "base/logging.h"

struct timeline {
    struct sim *s;
    struct workload *w;
    struct mco *m;
    uint64_t t0_ms; /* 0: not begun */
    size_t next;    /* the next event to apply */
    struct drain **drains;
    size_t n_drains, drains_cap;
    /* a rolling drain: the nodes left, in order */
    char **rolling;
    size_t n_rolling, rolling_cap, rolling_at;
    int64_t rolling_delay_ms;
    struct drain *rolling_drain;
};

struct timeline *timeline_new(struct sim *s, struct workload *w, struct mco *m)
{
    struct timeline *t = calloc(1, sizeof(*t));
    if (t) {
        t->s = s;
        t->w = w;
        t->m = m;
    }
    return t;
}

static void free_rolling(struct timeline *t)
{
    for (size_t i = 0; i < t->n_rolling; i++)
        free(t->rolling[i]);
    free(t->rolling);
    t->rolling = NULL;
    t->n_rolling = t->rolling_cap = t->rolling_at = 0;
    drain_free(t->rolling_drain);
    t->rolling_drain = NULL;
}

void timeline_free(struct timeline *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_drains; i++)
        drain_free(t->drains[i]);
    free(t->drains);
    free_rolling(t);
    free(t);
}

void timeline_begin(struct timeline *t)
{
    if (!t->t0_ms)
        t->t0_ms = kube_loop_now_ms();
}

static int collect(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv;
    (void)obj;
    struct timeline *t = ud;
    if (BASE_GROW(t->rolling, t->n_rolling + 1, t->rolling_cap) < 0)
        return 1;
    t->rolling[t->n_rolling++] = strdup(key);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void apply(struct timeline *t, const struct scenario_event *ev)
{
    struct sim *s = t->s;
    char at[32];
    snprintf(at, sizeof(at), "%lld", (long long)ev->at_ms / 1000);
    switch (ev->kind) {
    case SCENARIO_EVENT_DEMAND:
        for (size_t i = 0; i < ev->n_vms; i++) {
            workload_set_demand(t->w, ev->vms[i], ev->cpu, ev->memory, ev->io);
            char cpu[32];
            snprintf(cpu, sizeof(cpu), "%g", ev->cpu);
            log_info("timeline: demand", "vm", ev->vms[i], "cpu", cpu, "at_s", at);
            record_add(s->rec, "demand", "vm", ev->vms[i], "cpu", cpu, NULL);
        }
        break;
    case SCENARIO_EVENT_DRAIN: {
        struct drain *d = drain_new(s, ev->node, ev->reboot_delay_ms);
        if (!d || BASE_GROW(t->drains, t->n_drains + 1, t->drains_cap) < 0) {
            drain_free(d);
            break;
        }
        t->drains[t->n_drains++] = d;
        log_info("timeline: drain", "node", ev->node, "at_s", at);
        break;
    }
    case SCENARIO_EVENT_ROLLING_DRAIN:
        free_rolling(t);
        kube_informer_foreach(s->nodes, collect, t);
        if (t->n_rolling)
            qsort(t->rolling, t->n_rolling, sizeof(*t->rolling), cmp_str);
        t->rolling_delay_ms = ev->reboot_delay_ms;
        log_info("timeline: rolling drain", "at_s", at);
        record_add(s->rec, "rolling-drain", "phase", "started", NULL);
        break;
    case SCENARIO_EVENT_MACHINE_CONFIG:
        if (!t->m) {
            log_warn("timeline: a machineConfig event needs mco.enabled; skipped", "name", ev->mc_name);
            break;
        }
        mco_create_machine_config(t->m, ev->mc_name, ev->mc_role, ev->kernel_args, ev->n_kernel_args);
        break;
    }
}

void timeline_step(struct timeline *t)
{
    if (!t->t0_ms)
        return;
    uint64_t now = kube_loop_now_ms();
    const struct scenario *sc = t->s->sc;
    while (t->next < sc->n_events && now >= t->t0_ms + (uint64_t)sc->events[t->next].at_ms)
        apply(t, &sc->events[t->next++]);
    for (size_t i = 0; i < t->n_drains;) {
        if (drain_step(t->drains[i], 0) == DRAIN_DONE) {
            drain_free(t->drains[i]);
            t->drains[i] = t->drains[--t->n_drains];
        } else {
            i++;
        }
    }
    if (t->rolling) {
        if (!t->rolling_drain && t->rolling_at < t->n_rolling)
            t->rolling_drain = drain_new(t->s, t->rolling[t->rolling_at++], t->rolling_delay_ms);
        if (t->rolling_drain && drain_step(t->rolling_drain, 0) == DRAIN_DONE) {
            drain_free(t->rolling_drain);
            t->rolling_drain = NULL;
            if (t->rolling_at >= t->n_rolling) {
                log_info("timeline: rolling drain done");
                record_add(t->s->rec, "rolling-drain", "phase", "done", NULL);
                free_rolling(t);
            }
        }
    }
}

bool timeline_done(const struct timeline *t)
{
    return t->t0_ms && t->next >= t->s->sc->n_events && t->n_drains == 0 && !t->rolling;
}
