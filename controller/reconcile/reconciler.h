/* reconciler: the reconcile of one PsiRebalance, the edge where the pure decisions of this
 * directory (taintfsm, taintpatch, machineconfig, conditions) meet the API and the pressure
 * source. One call does one cycle for one PsiRebalance:
 *
 *   1. decode and validate the object; an invalid spec is reported (Ready False, InvalidSpec)
 *      and nothing else is touched;
 *   2. deletion: take our taints off every node, then drop the finalizer (bodies.h);
 *      otherwise make sure the finalizer is there (so a deletion always cleans up);
 *   3. the nodes it owns (ownership.h): selected by spec.nodeSelector and not owned by an
 *      older PsiRebalance (NodeConflict reports the others);
 *   4. MachineConfigs (mcsync.h): one per role when spec.machineConfig.enabled and the API
 *      exists, PSIEnabled from the pools;
 *   5. when the sampling interval has passed: one sample from the pressure source
 *      (sampling.h); on success the taint state machine runs and its taint writes are made
 *      (tainter.h); on failure MetricsAvailable goes False and every taint is held as it is;
 *   6. rebalancing (mover.h): moves followed every cycle, decided on sampled cycles;
 *   7. status (conditions, summary, per-node entries, moves) written only when a reader would
 *      learn something, and Events for every taint, MachineConfig and metrics transition.
 *
 * The state the state machine needs between cycles (per node: state, since, taint;
 * taintstate.h) lives here, per PsiRebalance; after a restart it is adopted from the taints
 * on the nodes. The first failure of a cycle is the one Ready and Degraded report.
 * Not thread-safe: run it from the event loop's thread. See docs/architecture.md. */
#ifndef PSI_RECONCILE_RECONCILER_H
#define PSI_RECONCILE_RECONCILER_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/events.h"
#include "kube/informer.h"
#include "kube/loop.h"
#include "kube/rest.h"
#include "reconcile/mover.h"

/* What a reconciler works with; all borrowed, and they must outlive it. The informers'
 * values are cJSON objects (projections keeping at least the fields named in
 * gather_node_projection for nodes; whole objects for the others). */
struct reconciler_deps {
    struct kube_client *client;
    struct kube_events *events; /* may be NULL: no Events */
    struct kube_informer *psirebalances;
    struct kube_informer *nodes;
    struct kube_informer *machineconfigs; /* NULL: the MachineConfig API does not exist */
    struct kube_informer *pools;          /* NULL likewise */
    struct kube_informer *vmis, *vmims;   /* NULL: the KubeVirt API does not exist */
    /* The pod informer for a labelSelector, made on demand (see mover_deps); NULL: none. */
    struct kube_informer *(*pods)(void *ud, const char *label_selector);
    void *pods_ud;
    struct kube_informer *kubevirts; /* KubeVirt CRs; NULL: none (KubeVirt's default limits) */
    /* Where Prometheus queries run (promrun.h); NULL: they block. When one ends, wake (wake_ud,
     * the PsiRebalance's name) asks for a reconcile of it; NULL: none is asked for. */
    struct kube_loop *loop;
    void (*wake)(void *ud, const char *name);
    void *wake_ud;
};

/* Counters a metrics endpoint reads; zero-initialised by reconciler_new. */
struct reconciler_counters {
    uint64_t cycles, cycle_failures;
    uint64_t samples, sample_failures;
    double last_sample_seconds; /* how long the last sample took */
    uint64_t taints_added, taints_removed, taint_write_failures;
    uint64_t status_writes;
    /* rebalancing, summed over every PsiRebalance (mover_stats) */
    uint64_t evictions, migrations_requested, dry_run_moves, evictions_refused, eviction_failures;
    uint64_t migrations_succeeded, migrations_failed;
    /* moves whose prediction was checked once they settled, and the sums of their absolute
     * errors (percentage points) for sources and destinations */
    uint64_t predictions_checked;
    double prediction_error_source, prediction_error_destination;
    /* the moves' live migrations timed, and estimated (struct mover_stats) */
    uint64_t migrations_timed, migrations_estimated;
    double migration_seconds, migration_expected_seconds, migration_estimate_error_seconds;
};

struct reconciler;

/* A new reconciler over deps (copied); NULL on no memory. */
struct reconciler *reconciler_new(const struct reconciler_deps *deps);

/* Free it and the per-PsiRebalance state (NULL is fine). */
void reconciler_free(struct reconciler *r);

/* Reconcile PsiRebalance name at now_ms (wall clock, ms since the epoch). *requeue_ms gets
 * the delay after which it wants to run again (the next sample). Returns 0 when the cycle
 * succeeded, -1 when some part failed (it was logged and reported in status where
 * possible; the caller retries with backoff). */
int reconciler_reconcile(struct reconciler *r, const char *name, int64_t now_ms, int64_t *requeue_ms);

/* The counters so far. */
const struct reconciler_counters *reconciler_counters(const struct reconciler *r);

/* Unix seconds of this process' last successful cycle of PsiRebalance name: one that read
 * pressure and in which nothing failed (the lastSuccessfulCycleTime it writes); 0: none yet. */
int64_t reconciler_last_success(const struct reconciler *r, const char *name);

/* The nodes of PsiRebalance name its latest rebalancing decision found no placement for
 * (mover_stats' unplaceable: Rebalancing NoPlacement); 0 when none, or not decided here. */
size_t reconciler_unplaceable(const struct reconciler *r, const char *name);

/* The latest sample of every node of every PsiRebalance, for the metrics endpoint: fn is
 * called with the PsiRebalance, node, PSI line ("some" or "full"), resource name and percent of
 * each known value. */
void reconciler_foreach_pressure(const struct reconciler *r,
                                 void (*fn)(const char *psirebalance, const char *node, const char *stall,
                                            const char *resource, double percent, void *ud),
                                 void *ud);

#endif
