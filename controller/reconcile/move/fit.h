/* fit: the plan's view of a node and of a workload that might move, whether the workload may
 * run on the node (requests, cordon, node selector, required node affinity, taints), and the
 * VMI facts that make a candidate (live-migratable, its vCPUs). Pure. The rules a destination
 * must meet besides: docs/architecture.md, "Rebalancing: the model". */
#ifndef PSI_RECONCILE_MOVE_FIT_H
#define PSI_RECONCILE_MOVE_FIT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "reconcile/move/predict.h"
#include "reconcile/status/nodelabels.h"

/* A node, as the plan sees it. */
struct rebalance_node {
    const char *name;
    bool selected;                   /* owned by this PsiRebalance */
    bool tainted;                    /* carries our pressure taint */
    bool unschedulable;              /* spec.unschedulable (cordoned) */
    const struct nodelabels *labels; /* metadata.labels (may be NULL) */
    const cJSON *taints;             /* spec.taints (may be NULL) */
    double pressure;                 /* percent: the highest of the resources balanced on; NAN when unknown */
    bool sustained;                  /* above evictAbovePercent for the whole sustain window */
    bool relieving;                  /* a source in an earlier cycle, not yet seen below the target */
    bool settling;                   /* a move touched it less than the settle time ago, or one runs */
    const char *held;                /* maintenance holds it (rollout.h): why; neither source nor destination */
    double cpus;                     /* CPU capacity (cores) the load is relative to; <= 0 or NAN: unknown */
    double demand;                   /* cores wanted (rebalance_demand of its usage); NAN: unknown */
    double alloc_cpu, alloc_memory, alloc_pods; /* allocatable; NAN: not checked */
    double req_cpu, req_memory, req_pods;       /* requested by the pods placed there; NAN: unknown */
    int outbound;                               /* live migrations running from it (any origin) */
    /* read only when params.resources is set (else CPU alone, and `pressure` is its pressure): */
    double cpu_pressure;          /* CPU pressure, percent; NAN: unknown */
    double mem_pressure;          /* memory pressure, percent; NAN: unknown */
    double memory;                /* memory capacity (bytes) memory load is relative to; <= 0 or NAN: unknown */
    double mem_used;              /* memory in use (bytes: the working sets); NAN: unknown */
    double scale[REBALANCE_NRES]; /* calibrated curve scale per resource (rebalance_calibrate); <= 0: none */
};

/* A workload that might move: one pod on a node. */
struct rebalance_candidate {
    const char *ns, *name; /* the pod */
    const char *workload;  /* cooldown, history and report key, e.g. "VirtualMachineInstance ns/vm" */
    size_t node;           /* index of the node it runs on */
    double req_cpu, req_memory;
    double demand;              /* cores wanted (rebalance_demand of its usage); NAN: unknown */
    double max_demand;          /* cores it cannot want more than (a VM's vCPUs); <= 0 or NAN: unknown */
    double mem_used;            /* memory in use (bytes); NAN: unknown (its memory request stands in) */
    double migrate_s;           /* a VM's live migration, seconds expected (cost.h); NAN: not estimated */
    double stall;               /* its own CPU PSI "some", percent; NAN: not reported */
    bool vm;                    /* a KubeVirt VM: the eviction becomes a live migration */
    const cJSON *node_selector; /* spec.nodeSelector (may be NULL) */
    const cJSON *affinity;      /* spec.affinity (may be NULL) */
    const cJSON *tolerations;   /* spec.tolerations (may be NULL) */
    const char *blocked;        /* NULL: it may move; else why not (evictor.h) */
};

/* Why c cannot run on node n (written to why, and returned), or NULL when it fits:
 * requests against allocatable minus requested, spec.unschedulable, node selector, required
 * node affinity, NoSchedule/NoExecute taints it does not tolerate. */
const char *rebalance_fit(const struct rebalance_candidate *c, const struct rebalance_node *n, char *why, size_t len);

/* Whether c can run on node n: rebalance_fit(c, n, ...) == NULL, without formatting why not
 * (the planner asks this of every destination it tries, and says why only of the last). */
bool rebalance_fits(const struct rebalance_candidate *c, const struct rebalance_node *n);

/* Whether tolerations (a JSON array, may be NULL) tolerate taint (a JSON object). */
bool rebalance_tolerates(const cJSON *tolerations, const cJSON *taint);

/* Whether a required node affinity (spec.affinity, may be NULL) lets the pod on a node with
 * these labels and name. */
bool rebalance_affinity_matches(const cJSON *affinity, const struct nodelabels *labels, const char *node_name);

/* Why a VMI (VirtualMachineInstance JSON) may not be live-migrated, or NULL: its
 * LiveMigratable condition is False (the message names KubeVirt's reason). A static string. */
const char *rebalance_vmi_check(const cJSON *vmi);

/* A VMI's vCPUs (spec.domain.cpu: cores x sockets x threads, each 1 when absent), what its
 * demand cannot exceed; NAN when the VMI states no CPU topology. */
double rebalance_vmi_vcpus(const cJSON *vmi);

#endif
