/* budget: how often workloads may move (see budget.h). */
#include "reconcile/move/budget.h"

#include <math.h>
#include <stdlib.h>

const char *budget_workload(const struct api_move_history *mh, const char *key, const struct budget_params *p,
                            int64_t now_s)
{
    const struct api_move_workload *w = api_move_history_workload(mh, key);
    if (!w)
        return NULL;
    int64_t since = now_s - p->history_s;
    if (w->unhelpful && w->unhelpful >= since)
        return BUDGET_UNHELPFUL;
    if ((int64_t)api_move_history_moves_since(mh, key, since) >= p->per_workload)
        return BUDGET_WORKLOAD_USED;
    return NULL;
}

int64_t budget_hour_room(const struct api_move_history *mh, const struct budget_params *p, int64_t now_s)
{
    int64_t used = (int64_t)api_move_history_moves_since(mh, NULL, now_s - BUDGET_HOUR_S);
    return used < p->per_hour ? p->per_hour - used : 0;
}

static int cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

int64_t budget_hour_until(const struct api_move_history *mh, const struct budget_params *p, int64_t now_s)
{
    if (budget_hour_room(mh, p, now_s) > 0 || p->per_hour < 1)
        return 0;
    size_t n = api_move_history_moves_since(mh, NULL, now_s - BUDGET_HOUR_S), k = 0;
    int64_t *t = malloc(n * sizeof(*t));
    if (!t)
        return now_s + BUDGET_HOUR_S; /* no memory: the longest it can be */
    for (size_t i = 0; i < mh->nworkloads; i++)
        for (size_t j = 0; j < mh->workloads[i].nmoved; j++)
            if (mh->workloads[i].moved[j] >= now_s - BUDGET_HOUR_S && k < n)
                t[k++] = mh->workloads[i].moved[j];
    qsort(t, k, sizeof(*t), cmp_desc);
    /* room comes back when fewer than per_hour moves are left in the hour: once the
     * per_hour-th newest is over an hour old */
    int64_t until = t[p->per_hour - 1] + BUDGET_HOUR_S + 1;
    free(t);
    return until;
}

bool budget_move_unhelpful(double before, double predicted, double observed)
{
    if (isnan(before) || isnan(predicted) || isnan(observed))
        return false;
    double want = before - predicted, got = before - observed;
    return want > 0 && got < BUDGET_RELIEF_SHARE * want && want - got >= BUDGET_RELIEF_SHORTFALL;
}
