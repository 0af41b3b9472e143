/* vmstall: a workload's demand and role from its own PSI (see vmstall.h). */
#include "reconcile/move/vmstall.h"

#include <math.h>
#include <stdbool.h>

static double or_zero(double v)
{
    return isnan(v) ? 0 : v;
}

/* The larger of a workload's CPU and memory stall (0 when neither is known). */
static double larger_stall(const struct vmstall_workload *w)
{
    return fmax(or_zero(w->cpu_stall), or_zero(w->mem_stall));
}

void vmstall_attribute(double node_usage, double node_demand, struct vmstall_workload *w, size_t n)
{
    bool own = n > 0;
    double used = 0, stalled = 0;
    for (size_t j = 0; j < n; j++) {
        if (isnan(w[j].usage))
            continue;
        own = own && !isnan(w[j].cpu_stall);
        used += w[j].usage;
        stalled += or_zero(w[j].cpu_stall);
    }
    double unserved =
        isfinite(node_demand) && isfinite(node_usage) && node_demand > node_usage ? node_demand - node_usage : 0;
    for (size_t j = 0; j < n; j++) {
        struct vmstall_workload *x = &w[j];
        x->role = API_ROLE_NONE;
        if (used > 0 && !isnan(x->usage) && x->usage >= VMSTALL_CAUSE_SHARE * used)
            x->role = API_ROLE_CAUSES;
        else if (larger_stall(x) >= VMSTALL_SUFFERS)
            x->role = API_ROLE_SUFFERS;
        if (isnan(x->usage)) {
            x->from = API_DEMAND_FROM_NONE;
            continue;
        }
        if (!own) {
            x->from = API_DEMAND_FROM_NODE_PRESSURE;
            continue;
        }
        double share = stalled > 0 ? x->cpu_stall / stalled : used > 0 ? x->usage / used : 0;
        double d = x->usage + unserved * share;
        if (x->vcpus > 0)
            d = fmin(d, fmax(x->usage, x->vcpus));
        x->demand = d;
        x->from = API_DEMAND_FROM_OWN_PRESSURE;
    }
}

/* Whether a goes before b in vmstall_rank's order. */
static bool ranks_before(const struct vmstall_workload *a, const struct vmstall_workload *b)
{
    bool ca = a->role == API_ROLE_CAUSES, cb = b->role == API_ROLE_CAUSES;
    if (ca != cb)
        return ca;
    if (!ca && larger_stall(a) != larger_stall(b))
        return larger_stall(a) > larger_stall(b);
    return or_zero(a->usage) > or_zero(b->usage);
}

size_t vmstall_rank(const struct vmstall_workload *w, size_t n, size_t *idx, size_t max)
{
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        /* insertion into the best max so far */
        size_t at = k < max ? k++ : max;
        while (at > 0 && ranks_before(&w[j], &w[idx[at - 1]])) {
            if (at < max)
                idx[at] = idx[at - 1];
            at--;
        }
        if (at < max)
            idx[at] = j;
    }
    return k;
}
