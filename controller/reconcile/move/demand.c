/* demand: a node's CPU demand from signals that do not saturate (see demand.h). */
#include "reconcile/move/demand.h"

#include <math.h>

#include "reconcile/move/predict.h"

const char *demand_source_name(enum demand_source s)
{
    switch (s) {
    case DEMAND_USAGE: return "Usage";
    case DEMAND_PRESSURE: return "Pressure";
    case DEMAND_VCPUS: return "VCPUs";
    case DEMAND_SCHEDSTAT: return "Schedstat";
    case DEMAND_RUNQUEUE: return "RunQueue";
    case DEMAND_UNKNOWN: break;
    }
    return "";
}

static bool known(double v)
{
    return isfinite(v) && v >= 0;
}

/* The vCPU signal: NAN when no workload has known vCPUs and usage. */
static double from_vcpus(const struct demand_cpu_in *in)
{
    double top = 0, placed = 0;
    size_t n = 0;
    for (size_t j = 0; in->w && j < in->nw; j++) {
        const struct demand_workload *w = &in->w[j];
        if (!known(w->usage))
            continue;
        placed += w->usage;
        if (known(w->vcpus) && w->vcpus > 0) {
            double share = w->usage / w->vcpus;
            if (share > top)
                top = share;
            n++;
        }
    }
    if (n == 0)
        return NAN;
    if (top > 1)
        top = 1;
    double d = in->usage > placed ? in->usage - placed : 0; /* usage outside the workloads, as it is */
    for (size_t j = 0; j < in->nw; j++) {
        const struct demand_workload *w = &in->w[j];
        if (!known(w->usage))
            continue;
        bool throttled = known(w->vcpus) && w->vcpus > 0 && w->usage / w->vcpus >= top * (1 - DEMAND_SHARE_TOLERANCE);
        d += throttled ? w->vcpus : w->usage;
    }
    return d;
}

static void take(double v, enum demand_source s, double *best, enum demand_source *src)
{
    if (known(v) && (!known(*best) || v < *best)) {
        *best = v;
        *src = s;
    }
}

void demand_cpu(const struct demand_cpu_in *in, struct demand_cpu_out *out)
{
    *out = (struct demand_cpu_out){NAN, DEMAND_UNKNOWN, false};
    bool have_usage = known(in->usage), have_cpus = known(in->cpus) && in->cpus > 0;
    out->saturated = (known(in->pressure) && in->pressure >= DEMAND_NEAR_FULL) ||
                     (have_usage && have_cpus && in->usage >= DEMAND_BUSY * in->cpus);
    if (!out->saturated) {
        if (have_usage)
            *out = (struct demand_cpu_out){in->usage, DEMAND_USAGE, false};
        else if (known(in->from_pressure))
            *out = (struct demand_cpu_out){in->from_pressure, DEMAND_PRESSURE, false};
        return;
    }
    double best = NAN;
    enum demand_source src = DEMAND_UNKNOWN;
    take(from_vcpus(in), DEMAND_VCPUS, &best, &src);
    if (have_usage && known(in->waiting))
        take(in->usage + in->waiting, DEMAND_SCHEDSTAT, &best, &src);
    take(in->load1, DEMAND_RUNQUEUE, &best, &src);
    if (!known(best) && have_cpus)
        take(DEMAND_MAX_LOAD * in->cpus, DEMAND_PRESSURE, &best, &src);
    /* below the curve's flat part the inference is an estimate; on it, only a least load */
    bool flat = have_cpus && in->from_pressure >= rebalance_load_from_some(REBALANCE_FLAT) * in->cpus * (1 - 1e-9);
    if (!flat)
        take(in->from_pressure, DEMAND_PRESSURE, &best, &src);
    if (have_usage && (!known(best) || best < in->usage)) {
        best = in->usage; /* what runs is wanted */
        if (src == DEMAND_UNKNOWN)
            src = DEMAND_USAGE;
    }
    out->demand = known(best) ? best : NAN;
    out->source = src;
}
