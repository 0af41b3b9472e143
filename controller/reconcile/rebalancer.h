/* rebalancer: the edge where the pure rebalancing decisions of this directory (rebalance,
 * moves, cooldown, usage, resources) meet the API, for one PsiRebalance. The reconciler
 * calls rebalancer_run once per reconcile; it:
 *
 *   1. reads back, once, the moves and counters the status holds (so cooldowns and counts
 *      survive a restart);
 *   2. follows every move through the VirtualMachineInstanceMigrations (every reconcile):
 *      phases, counters per source node, an Event for each migration outcome; a failed
 *      migration counts as a repeat move in the workload's cooldown;
 *   2b. deletes our targeted migrations (migrate.h) that failed, and those stuck before their
 *      target runs (counted as failed, cooldown grows); a targeted move whose migration is gone
 *      counts as failed;
 *   3. on cycles with a new pressure sample, decides (Disabled: nothing; a resource other than
 *      cpu: not rebalanced; method Migrate: VMs move by targeted live migration to the
 *      destination the plan chose, when the VirtualMachineInstanceMigration CRD has
 *      spec.addedNodeSelector, read every 10 minutes; otherwise they are evicted and the
 *      condition and a MigrateUnsupported Event say why):
 *      - sources: selected nodes above evictAbovePercent for the sustain window, not
 *        settling (a node a move touched is not judged until metrics.window plus two
 *        intervals, standing in for two scrape intervals, have passed since the move
 *        finished; a node a live migration runs from or to, whoever started it, neither);
 *      - only then the footprint grows for the cycle: the candidates come from a pod
 *        informer narrowed by podSelector (asked of the manager), one usage query (or the
 *        kubelet summaries) gives their CPU usage and the nodes', and the pods of at most
 *        REBALANCER_MAX_LISTED eligible destinations are listed for their requests;
 *      - rebalance_plan, then each VM move of method Migrate through a
 *        VirtualMachineInstanceMigration with addedNodeSelector (DryRun: created with
 *        dryRun=All), every other move through policy/v1 Eviction (DryRun: the same call
 *        with dryRun=All, so PodDisruptionBudgets and KubeVirt's webhook answer without any
 *        effect). 200: evicted (the restart path); 429 "Eviction triggered evacuation" or
 *        "Evacuation in progress": a live migration accepted (counted, remembered, not asked
 *        again); another 429 (a PDB, a VM that cannot migrate): skipped with its reason and
 *        held back as a move would be (cooldown.initial, doubling while refusals repeat),
 *        and the plan is made again without it;
 *      - a look that finds nothing to move (nothing may move, no destination, no move that
 *        helps, limits) is not repeated before the settle time has passed (or the spec
 *        changed): the decision and its reason stand meanwhile, so a node that stays hot
 *        with nothing to do costs no usage query and no pod list every cycle;
 *      - DryRun keeps the moves it would have made as if made (their predicted effect on the
 *        nodes' load and pressure, a cooldown of their own, settle times), so it reports the
 *        same sequence of moves Automatic would make, and counts each once; changing the mode
 *        forgets that;
 *   4. writes status.moves, the eviction and migration counters (summary and per node) and
 *      the Rebalancing condition (True while moves run; otherwise why nothing moves) into the
 *      status the reconciler is about to write, and Events for every eviction.
 * Not thread-safe: run it from the event loop's thread. */
#ifndef PSI_RECONCILE_REBALANCER_H
#define PSI_RECONCILE_REBALANCER_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "informer.h"
#include "prom.h"
#include "psirebalance.h"
#include "rest.h"

/* Most destination nodes whose pods are listed in one cycle (the coolest ones). */
#define REBALANCER_MAX_LISTED 16

/* The requested-by annotation of the Evictions it asks for. */
#define REBALANCER_REQUESTED_BY "rebalance.psi.dev/psi-rebalancer"

/* The API group of KubeVirt. */
#define REBALANCER_KUBEVIRT_GV "kubevirt.io/v1"

/* What a rebalancer works with; all borrowed. */
struct rebalancer_deps {
    struct kube_client *client;
    struct kube_events *events;         /* may be NULL */
    struct kube_informer *vmis, *vmims; /* NULL: the KubeVirt API does not exist */
    /* The pod informer for a labelSelector (made and started on the first ask, kept while it
     * is asked for); NULL when it cannot be made. */
    struct kube_informer *(*pods)(void *ud, const char *label_selector);
    void *pods_ud;
};

/* A selected node this cycle. */
struct rebalancer_node {
    const char *name;
    const cJSON *node;              /* the informer's projection (reconciler_node_projection) */
    bool tainted;                   /* carries our taint after this cycle's writes */
    double pressure[API_RESOURCES]; /* this cycle's reading, NAN when unknown */
};

/* One reconcile's input. */
struct rebalancer_input {
    const cJSON *obj;                  /* the PsiRebalance */
    const struct api_psirebalance *pr; /* decoded */
    const struct rebalancer_node *nodes;
    size_t nnodes;
    bool sampled;                      /* a new pressure sample was taken: decide */
    bool metrics_ok;                   /* the last sample succeeded */
    const struct psi_prom_config *prom; /* the Prometheus for usage; NULL with the Kubelet source */
    int64_t now_ms;                    /* wall clock, ms since the epoch */
};

/* Counters for the metrics endpoint. */
struct rebalancer_stats {
    uint64_t evictions;          /* evictions made (200) */
    uint64_t migrations_requested; /* evictions answered with a live migration */
    uint64_t dry_run_moves;      /* moves DryRun would have made */
    uint64_t refused;            /* evictions refused (PDB, ...) */
    uint64_t eviction_failures;  /* evictions that failed otherwise */
    uint64_t migrations_succeeded, migrations_failed;
    uint64_t usage_queries, usage_failures;
};

struct rebalancer;

/* A new rebalancer (no state yet); NULL on no memory. */
struct rebalancer *rebalancer_new(void);

/* Free it (NULL is fine). */
void rebalancer_free(struct rebalancer *rb);

/* One reconcile (see above). next is the status being built (its nodes already filled by the
 * taint cycle, when there was one). Returns 0, or -1 when an eviction failed in a way that
 * needs attention (*fail_reason and fail_msg say how; the cycle counts as failed). */
int rebalancer_run(struct rebalancer *rb, const struct rebalancer_deps *d, const struct rebalancer_input *in,
                   struct api_status *next, const char **fail_reason, char *fail_msg, size_t fail_len);

/* The counters so far. */
const struct rebalancer_stats *rebalancer_stats(const struct rebalancer *rb);

/* Informer projections: pods (what the checks, fit and requests need), VMIs (node,
 * evacuation mark, migration state, LiveMigratable) and migrations (see moves.h). */
void *rebalancer_pod_projection(const cJSON *pod, void *ud);
void *rebalancer_vmi_projection(const cJSON *vmi, void *ud);
void *rebalancer_vmim_projection(const cJSON *vmim, void *ud);

#endif
