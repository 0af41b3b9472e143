/* mover: rebalancing's edge for one PsiRebalance, where the pure decisions of this directory
 * (evictor, cycle, history, rebalance, moves, cooldown, usage, resources) meet the API. The
 * reconciler calls mover_run once per reconcile; it reads as the story of a cycle:
 *
 *   1. history: reads back, once, the moves and counters the status holds (so cooldowns and
 *      counts survive a restart); a change of eviction.mode ends DryRun's picture;
 *   2. gathering (gather.h): the migrations in the cluster; acting (act.h): every move
 *      followed through them (phases, counters per source node, an Event for each outcome; a
 *      failed migration counts as a repeat move in the workload's cooldown), our failed and
 *      stuck targeted migrations deleted (counted as failed), a targeted move whose migration
 *      is gone counted as failed; the moves that settled since have their predicted pressure
 *      checked against the nodes' readings (cycle_observe: status and the stats);
 *   3. eviction.method Auto or Migrate: whether KubeVirt takes targeted live migrations (its
 *      VirtualMachineInstanceMigration CRD has spec.addedNodeSelector, read every 10
 *      minutes); otherwise VMs are evicted, and with Migrate the condition and a
 *      MigrateUnsupported Event say why;
 *   4. on cycles with a new pressure sample, unless the gate (cycle.h) says nothing is to be
 *      decided, the decision:
 *      - maintenance (rollout.h): a node a MachineConfigPool's rollout or the MachineConfig
 *        daemon updates, one back from its update while its pool still rolls out or settles,
 *        and (targeted moves) one a drain's live migration waits on is held: neither a source
 *        nor a destination; when that leaves nothing to move, MaintenanceInProgress says which
 *        nodes and why;
 *      - sources: selected nodes above evictAbovePercent for the sustain window, or sources of
 *        an earlier cycle not yet below the relief target (history_node.relieving), not
 *        settling (cycle.h) nor held; the moves within cooldown.history go to the plan
 *        (history_recent);
 *      - only then the footprint grows for the cycle: the candidates come from a pod
 *        informer narrowed by podSelector (asked of the manager), the evictor (evictor.h)
 *        says which may go (and a VMI that is not LiveMigratable, or with Migrate a pod that
 *        is no VM, may not), one usage query (or the kubelet summaries) gives their CPU usage
 *        and the nodes' (which calibrate each node's curve), a second one their memory in use
 *        when memory is balanced, and the pods of at most MOVER_MAX_LISTED eligible
 *        destinations are listed for their requests;
 *      - DryRun's would-be moves are laid over the nodes (cycle.h);
 *      - rebalance_plan, then each move is made (act.h): a VM of method Migrate through a
 *        VirtualMachineInstanceMigration with addedNodeSelector, every other move through
 *        policy/v1 Eviction (DryRun: the same calls with dryRun=All, so PodDisruptionBudgets
 *        and KubeVirt's webhook answer without any effect). 200: evicted (the restart path);
 *        429 "Eviction triggered evacuation" or "Evacuation in progress": a live migration
 *        accepted (counted, remembered, not asked again); another 429 (a PDB, a VM that
 *        cannot migrate), or a 400 from KubeVirt's migration admitter: skipped with its reason
 *        and held back as a move would be, and the plan is made again without it, the moves
 *        already made counting against every limit (at most MOVER_MAX_ROUNDS plans);
 *      - nothing moved for want of a destination or of an improving move: when placement.h
 *        certifies that no set of moves can bring any source below taintAbovePercent, the
 *        reason is NoPlacement, its message the capacity each node lacks, with a NoPlacement
 *        Warning Event when it becomes so, and the count in mover_stats' unplaceable;
 *      - a look that finds nothing to move is not repeated before the settle time has passed
 *        (or the spec changed): the decision and its reason stand meanwhile, so a node that
 *        stays hot with nothing to do costs no usage query and no pod list every cycle;
 *   5. writes status.moves, the eviction and migration counters (summary and per node) and
 *      the Rebalancing condition (True while moves run; otherwise why nothing moves) into the
 *      status the reconciler is about to write, and Events for every move.
 * Not thread-safe: run it from the event loop's thread. See docs/architecture.md. */
#ifndef PSI_RECONCILE_MOVER_H
#define PSI_RECONCILE_MOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "api/psirebalance.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/rest.h"
#include "psi/prom.h"
#include "reconcile/status/nodeproj.h"

/* Most destination nodes whose pods are listed in one cycle (the coolest ones). */
#define MOVER_MAX_LISTED 16

/* The requested-by annotation of the Evictions it asks for: the descheduler's value, the one
 * KubeVirt (>= 1.7) reads from the Eviction's own metadata.annotations (isDeschedulerEviction
 * in pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go). With it the
 * admitter annotates the VMI kubevirt.io/eviction-source: descheduler and the evacuation
 * controller (GenerateNewMigration, pkg/virt-controller/watch/drain/evacuation/evacuation.go)
 * queues its migration at system-maintenance (20, pkg/util/migrations) instead of
 * system-critical (100, as a node drain's): a rebalancing eviction never outranks maintenance. */
#define MOVER_REQUESTED_BY "sigs.k8s.io/descheduler"

/* The API group of KubeVirt. */
#define MOVER_KUBEVIRT_GV "kubevirt.io/v1"

/* What a mover works with; all borrowed. */
struct mover_deps {
    struct kube_client *client;
    struct kube_events *events;         /* may be NULL */
    struct kube_informer *vmis, *vmims; /* NULL: the KubeVirt API does not exist */
    /* The pod informer for a labelSelector (made and started on the first ask, kept while it
     * is asked for); NULL when it cannot be made. */
    struct kube_informer *(*pods)(void *ud, const char *label_selector);
    void *pods_ud;
    struct kube_informer *kubevirts; /* KubeVirt CRs (their migration limits); NULL: none */
    struct kube_informer *pools;     /* MachineConfigPools (rollouts, rollout.h); NULL: the API is absent */
    struct kube_loop *loop;          /* where the usage queries run (promrun.h); NULL: they block */
    void (*wake)(void *ud);          /* with loop: called (wake_ud) when the usage queries ended */
    void *wake_ud;
};

/* A selected node this cycle. */
struct mover_node {
    const char *name;
    const struct nodeproj *node;    /* the informer's projection */
    bool tainted;                   /* carries our taint after this cycle's writes */
    double pressure[API_RESOURCES]; /* this cycle's reading, NAN when unknown */
};

/* One reconcile's input. */
struct mover_input {
    const cJSON *obj;                  /* the PsiRebalance */
    const struct api_psirebalance *pr; /* decoded */
    const struct mover_node *nodes;
    size_t nnodes;
    bool sampled;    /* a new pressure sample was taken: decide */
    bool metrics_ok; /* the last sample succeeded */
    /* the Prometheus settings for the usage queries; NULL: the Kubelet source */
    const struct psi_prom_config *prom;
    int64_t now_ms; /* wall clock, ms since the epoch */
};

/* Counters for the metrics endpoint. */
struct mover_stats {
    uint64_t evictions;            /* evictions made (200) */
    uint64_t migrations_requested; /* evictions answered with a live migration */
    uint64_t dry_run_moves;        /* moves DryRun would have made */
    uint64_t refused;              /* evictions refused (PDB, ...) */
    uint64_t eviction_failures;    /* evictions that failed otherwise */
    uint64_t migrations_succeeded, migrations_failed;
    /* of the succeeded ones, those timed (cost.timed) and the seconds they took; of those, the
     * ones estimated when decided (cost.basis), the seconds expected and |took - expected| */
    uint64_t migrations_timed, migrations_estimated;
    double migration_seconds, migration_expected_seconds, migration_estimate_error_seconds;
    uint64_t usage_queries, usage_failures;
    /* predicted against observed pressure of moves that settled (cycle_observe): the sum of
     * the absolute errors, percentage points, and their count, for sources and destinations */
    double prediction_error_source, prediction_error_destination;
    uint64_t predictions_checked;
    /* nodes the latest decision found no placement for (NoPlacement; placement.h): a gauge */
    size_t unplaceable;
};

/* Re-plans in one cycle after evictions were refused. */
#define MOVER_MAX_ROUNDS 3

struct mover;

/* A new mover (no state yet); NULL on no memory. */
struct mover *mover_new(void);

/* Free it (NULL is fine). */
void mover_free(struct mover *mv);

/* One reconcile (see above). next is the status being built (its nodes already filled by the
 * taint cycle, when there was one). Returns 0, or -1 when an eviction failed in a way that
 * needs attention (*fail_reason and fail_msg, fail_len bytes, say how; the cycle counts as
 * failed). */
int mover_run(struct mover *mv, const struct mover_deps *d, const struct mover_input *in, struct api_status *next,
              const char **fail_reason, char *fail_msg, size_t fail_len);

/* The counters so far. */
const struct mover_stats *mover_stats(const struct mover *mv);

#endif
