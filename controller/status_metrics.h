/* status_metrics: what the operator's alerts and dashboard need to know of a PsiRebalance,
 * read from the object as the API server stores it (spec and the status the operator
 * wrote), as plain numbers. Pure: no I/O, no allocation. The manager publishes them as
 * psi_rebalancer_psirebalance_* gauges (see manager.c). */
#ifndef PSI_STATUS_METRICS_H
#define PSI_STATUS_METRICS_H

#include <cjson/cJSON.h>
#include <stdint.h>

struct status_health {
    int ready;                         /* the Ready condition is True */
    int64_t selected;                  /* nodes selected (status.summary.nodes) */
    int64_t tainted;                   /* nodes tainted (status.summary.tainted) */
    int64_t taint_cap;                 /* the most nodes spec.pressure.maxTaintedPercent lets be tainted */
    int64_t held;                      /* nodes above the taint level left untainted (summary.nodeStates.pressured) */
    int64_t unknown;                   /* selected nodes without a pressure reading (summary.nodeStates.unknown) */
    int rebalancing;                   /* spec.eviction.mode is Automatic: moves are made */
    int64_t interval_ms;               /* spec.metrics.interval: how often a cycle runs */
    double taint_above, untaint_below; /* spec.pressure.taintAbovePercent, untaintBelowPercent */
    /* status.lastSuccessfulCycleTime, Unix seconds; never succeeded: metadata.creationTimestamp,
     * so that one failing from the start ages like one that stopped succeeding */
    int64_t last_success_s;
};

/* Read obj (a PsiRebalance) into out; fields absent from obj read as 0. tainted (may be
 * NULL) is called for each node the status shows tainted (Tainted or Cooling) with the Unix
 * time the taint was put on (taintedSince; without it, since: when it entered its state; 0:
 * unknown). */
void status_health_of(const cJSON *obj, struct status_health *out,
                      void (*tainted)(const char *node, int64_t since, void *ud), void *ud);

#endif
