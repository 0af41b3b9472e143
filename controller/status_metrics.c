#include "status_metrics.h"

#include <string.h>

#include "api/duration.h"
#include "api/json.h"
#include "reconcile/taint/taintfsm.h"

static const cJSON *at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);
    return b ? cJSON_GetObjectItemCaseSensitive(v, b) : v;
}

static int64_t number(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 ? (int64_t)v->valuedouble : 0;
}

static int is(const cJSON *v, const char *s)
{
    return cJSON_IsString(v) && strcmp(v->valuestring, s) == 0;
}

/* *out = the RFC 3339 time v holds; returns 0 (and *out = 0) when v holds none. */
static int time_of(const cJSON *v, int64_t *out)
{
    if (!cJSON_IsString(v) || api_json_parse_time(v->valuestring, out) < 0)
        *out = 0;
    return *out > 0;
}

void status_health_of(const cJSON *obj, struct status_health *out,
                      void (*tainted)(const char *node, int64_t since, void *ud), void *ud)
{
    memset(out, 0, sizeof(*out));
    const cJSON *spec = at(obj, "spec", NULL), *status = at(obj, "status", NULL);
    const cJSON *c;
    cJSON_ArrayForEach (c, at(status, "conditions", NULL)) {
        if (is(at(c, "type", NULL), "Ready"))
            out->ready = is(at(c, "status", NULL), "True");
    }
    out->selected = number(at(status, "summary", "nodes"));
    out->tainted = number(at(status, "summary", "tainted"));
    out->taint_cap = (int64_t)taintfsm_cap((size_t)out->selected, number(at(spec, "pressure", "maxTaintedPercent")));
    out->rebalancing = is(at(spec, "eviction", "mode"), "Automatic");
    out->taint_above = (double)number(at(spec, "pressure", "taintAbovePercent"));
    out->untaint_below = (double)number(at(spec, "pressure", "untaintBelowPercent"));
    if (!time_of(at(status, "lastSuccessfulCycleTime", NULL), &out->last_success_s))
        time_of(at(at(obj, "metadata", NULL), "creationTimestamp", NULL), &out->last_success_s);
    const cJSON *interval = at(spec, "metrics", "interval");
    char err[64];
    if (!cJSON_IsString(interval) || api_duration_parse(interval->valuestring, &out->interval_ms, err, sizeof(err)) < 0)
        out->interval_ms = 0;
    /* From the summary, which counts every selected node: status.nodes lists at most
     * NODESTATUS_MAX_NODES of them, tainted first, so past that many tainted nodes it has no
     * Pressured or Unknown entry left to count. */
    const cJSON *states = at(at(status, "summary", NULL), "nodeStates", NULL);
    out->held = number(at(states, "pressured", NULL));
    out->unknown = number(at(states, "unknown", NULL));
    if (!tainted)
        return;
    const cJSON *n;
    cJSON_ArrayForEach (n, at(status, "nodes", NULL)) {
        const cJSON *state = at(n, "state", NULL), *name = at(n, "name", NULL);
        if ((is(state, "Tainted") || is(state, "Cooling")) && cJSON_IsString(name)) {
            int64_t since; /* taintedSince; a status written before it existed: since */
            if (!time_of(at(n, "taintedSince", NULL), &since))
                time_of(at(n, "since", NULL), &since);
            tainted(name->valuestring, since, ud);
        }
    }
}
