/* cost: what a VM's live migration costs in time (see cost.h). */
#include "reconcile/move/cost.h"

#include <math.h>
#include <stdlib.h>

#include "api/json.h"
#include "api/quantity.h"
#include "base/jx.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

int64_t cost_vmi_memory(const cJSON *vmi)
{
    const char *q = jx_nonempty(vmi, "spec.domain.memory.guest");
    if (!q)
        q = jx_nonempty(vmi, "spec.domain.resources.requests.memory");
    double bytes;
    if (!q || api_quantity_parse(q, &bytes, NULL, 0) < 0 || bytes < 1 || bytes > 9e18)
        return 0;
    return (int64_t)bytes;
}

bool cost_vmi_last_migration(const cJSON *vmi, int64_t *seconds)
{
    const cJSON *ms = jx_get(vmi, "status.migrationState");
    int64_t start = api_json_time_or(jx_nonempty(ms, "startTimestamp"), -1);
    int64_t end = api_json_time_or(jx_nonempty(ms, "endTimestamp"), -1);
    if (!jx_bool(ms, "completed", false) || jx_bool(ms, "failed", false) || start < 0 || end < start)
        return false;
    *seconds = end - start;
    return true;
}

const char *cost_convergence_hold(const cJSON *vmi, int64_t hold_ms, int64_t now_ms)
{
    const cJSON *ms = jx_get(vmi, "status.migrationState");
    int64_t end = api_json_time_or(jx_nonempty(ms, "endTimestamp"), -1);
    if (!jx_bool(ms, "failed", false) || !jx_eq(jx_str(ms, "abortStatus"), "Succeeded") ||
        jx_bool(ms, "abortRequested", false) || end < 0)
        return NULL;
    return now_ms < end * 1000 + hold_ms ? COST_NOT_CONVERGED : NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cost_cluster_rate(const struct api_move *moves, size_t n)
{
    double *rates = malloc((n ? n : 1) * sizeof(*rates)), median = NAN;
    if (!rates)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (moves[i].cost.timed && moves[i].cost.memory > 0)
            rates[k++] = (double)moves[i].cost.duration_s / ((double)moves[i].cost.memory / GIB);
    if (k) {
        qsort(rates, k, sizeof(*rates), by_value);
        median = k % 2 ? rates[k / 2] : (rates[k / 2 - 1] + rates[k / 2]) / 2;
    }
    free(rates);
    return median;
}

/* The copy rate of the cluster's migrations (bytes per second), NAN when none was timed or they
 * took no time at all (whole seconds: too fast to tell). */
static double copy_rate(double s_per_gib)
{
    return isfinite(s_per_gib) && s_per_gib > 0 ? GIB / s_per_gib : NAN;
}

const char *cost_dirty_hold(double s_per_gib, double dirty_bps)
{
    double b = copy_rate(s_per_gib);
    return isfinite(dirty_bps) && !isnan(b) && dirty_bps >= b ? COST_DIRTIES_FASTER : NULL;
}

struct api_move_cost cost_estimate(const cJSON *vmi, double s_per_gib, double dirty_bps)
{
    struct api_move_cost c = {.memory = cost_vmi_memory(vmi)};
    double b = copy_rate(s_per_gib);
    if (cost_vmi_last_migration(vmi, &c.expected_s)) {
        c.basis = API_COST_LAST_MIGRATION;
    } else if (c.memory && isfinite(dirty_bps) && dirty_bps > 0 && !isnan(b) && dirty_bps < b) {
        c.basis = API_COST_DIRTY_RATE;
        c.expected_s = (int64_t)llround((double)c.memory / (b - dirty_bps));
    } else if (c.memory && !isnan(s_per_gib)) {
        c.basis = API_COST_CLUSTER_RATE;
        c.expected_s = (int64_t)llround(s_per_gib * (double)c.memory / GIB);
    }
    return c;
}
