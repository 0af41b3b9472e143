/* gather: what rebalancing and the reconcile read, and nothing they decide. The informer
 * projections (each informer keeps only the fields the decisions read), the migrations in
 * the cluster, the candidate pods on the source nodes, their CPU usage and the nodes'
 * (one Prometheus query, or the kubelet summaries), the requests placed on a node (one
 * pod LIST), and whether KubeVirt takes targeted live migrations (its CRD).
 * Not thread-safe: run it from the event loop's thread. */
#ifndef PSI_RECONCILE_GATHER_H
#define PSI_RECONCILE_GATHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcile/move/migrate.h"
#include "reconcile/mover.h"
#include "reconcile/move/moves.h"
#include "reconcile/move/plan.h"
#include "reconcile/promrun.h"

/* ---- informer projections (kube_informer_project_fn: a new cJSON object, or NULL; nodes:
 * nodeproj.h) ---- */

/* Pods: what the evictor, fit and requests need (see evictor_pod_check, rebalance_fit), and
 * the pod's requests summed as requests.{cpu, memory}. */
void *gather_pod_projection(const cJSON *pod, void *ud);

/* VMIs: node, evacuation mark, migration state, the LiveMigratable condition, the eviction
 * strategy (spec.evictionStrategy), the CPU topology (spec.domain.cpu cores, sockets, threads). */
void *gather_vmi_projection(const cJSON *vmi, void *ud);

/* VirtualMachineInstanceMigrations: what moves_migration_read reads. */
void *gather_vmim_projection(const cJSON *vmim, void *ud);

/* The plan's view of a node from its projection: unschedulable, labels, taints, capacity (CPU,
 * memory) and allocatable (NAN where absent); everything this cycle learns (name, pressure, demand,
 * requests, flags) left unknown or false for the caller to fill. */
void gather_node_view(const struct nodeproj *node, struct rebalance_node *out);

/* ---- migrations ---- */

/* Every migration in the cluster (strings borrowed from the informer: valid until it runs
 * again). Free v with free(). */
struct gather_migrations {
    struct moves_migration *v;
    size_t n;
};

/* Read the migrations of informer vmims into *out; one not handed off yet takes its VMI's node
 * (from vmis, may be NULL) as its source. Returns 0, or -1 on no memory (out holds those read). */
int gather_migrations(const struct kube_informer *vmims, const struct kube_informer *vmis,
                      struct gather_migrations *out);

/* ---- candidates ---- */

/* A candidate's workload, beside its rebalance_candidate. */
struct gather_workload {
    char *key;            /* workload key (history_key), owned */
    const char *kind;     /* workload kind (borrowed from the pod; NULL: no controller) */
    const char *name;     /* workload name (borrowed) */
    const cJSON *pod;     /* borrowed from the informer */
    const char *vmi;      /* the VMI's name for a VM, else NULL */
    const char *restarts; /* moved by eviction, the VM restarts (evictor_vm_restarts; allowed), else NULL */
    double usage;         /* cores, NAN when unknown */
    double mem;           /* bytes in use (working set), NAN when unknown or not asked */
    double cpu_stall;     /* its own CPU PSI "some", percent; NAN when its kubelet has none */
    double mem_stall;     /* its own memory PSI "some", percent; NAN likewise */
    struct api_workload_pressure pressure; /* what the planner used (vmstall.h), for the move's record */
    double dirty_bps;                      /* a VM's memory dirty rate, bytes per second (cost.h); NAN: not known */
    struct api_move_cost cost;             /* a VM's move (cost.h), once the mover checked the candidates */
};

/* The pods on the source nodes; c[j] and w[j] describe one pod. */
struct gather_candidates {
    struct rebalance_candidate *c;
    struct gather_workload *w;
    size_t n, cap;
};

/* Collect the pods of informer pods that run on a node nodes[i] with is_source[i] (n nodes)
 * into *out (empty before). Returns 0, or -1 on no memory. */
int gather_candidates(struct kube_informer *pods, const struct mover_node *nodes, size_t n, const bool *is_source,
                      struct gather_candidates *out);

/* Release what gather_candidates made. */
void gather_candidates_free(struct gather_candidates *g);

/* ---- usage ---- */

/* The usage queries to Prometheus of one decision, run on the event loop (promrun.h): the CPU
 * query, then the memory query when memory is balanced. Their replies wait for gather_usage.
 * Zero it before use; release with gather_usage_read_release. */
struct gather_usage_read {
    struct promrun run;         /* its own client (the pressure read has one too) */
    char *mem_query;            /* to run once the CPU query ended, or NULL */
    struct psi_prom_vector cpu; /* the CPU query's reply */
    struct psi_prom_vector mem; /* the memory query's reply */
    struct kube_err cpu_err;    /* failed: why the CPU query gave no reply */
    struct kube_err mem_err;    /* likewise the memory query (asked and failed) */
    bool on_memory;             /* the memory query runs (else the CPU query) */
    bool ended;                 /* both ended: the replies wait */
    struct kube_loop *loop;     /* where they run; NULL: they blocked */
    void (*wake)(void *ud);     /* on the loop: called (wake_ud) once both ended */
    void *wake_ud;
};

/* What a usage read needs. */
struct gather_usage_in {
    struct kube_client *client;           /* for the kubelet summaries */
    const struct gather_usage_read *prom; /* Prometheus: the queries' replies (ended); NULL: the kubelets */
    long window_s;                        /* spec.metrics.window */
    const struct mover_node *nodes;
    size_t nnodes;
    double *node_mem;                  /* non-NULL: also read memory in use (bytes) into node_mem[i] and the
                                        * candidates' mem field (a second query; NAN where it has no answer) */
    double *node_load1, *node_waiting; /* non-NULL: node_load1 and schedstat's waiting tasks per
                                        * node (usage.h; Prometheus only, NAN where absent) */
};

/* Start the usage queries for the candidates (in->prom is not read) with the client of cfg on
 * loop (NULL: at once, blocking), unless they run or ended and wait; r->ended says when they
 * did, and wake (ud) is called then when they ran on the loop. A query that cannot start ends
 * failed at once. */
void gather_usage_read_start(struct gather_usage_read *r, const struct gather_usage_in *in,
                             const struct gather_candidates *cands, const struct psi_prom_config *cfg,
                             struct kube_loop *loop, void (*wake)(void *ud), void *ud);

/* Whether a usage query is in flight. */
bool gather_usage_read_busy(const struct gather_usage_read *r);

/* Drop the replies that ended (the next decision asks anew). */
void gather_usage_read_drop(struct gather_usage_read *r);

/* Drop the queries in flight and the replies; free the client. */
void gather_usage_read_release(struct gather_usage_read *r);

/* Read the CPU usage of the nodes (node_usage[i], cores, NAN unknown) and of the candidates
 * (their usage field), and memory in use when in->node_mem asks: from in->prom's replies, or
 * from the kubelet summaries. Returns 0, or -1 with why (len bytes) when no CPU usage could be
 * read. */
int gather_usage(const struct gather_usage_in *in, struct gather_candidates *cands, double *node_usage, char *why,
                 size_t len);

/* The requests of the pods placed on a node. */
struct gather_requests {
    double cpu, memory, pods;
};

/* Sum the requests of the pods on node (one LIST) into *out. Returns 0, or -1 (logged). */
int gather_node_requests(struct kube_client *client, const char *node, struct gather_requests *out);

/* ---- targeted live migration ---- */

/* Whether KubeVirt takes addedNodeSelector, as last read. */
struct gather_support {
    enum migrate_support support;
    int64_t checked_ms; /* 0: never */
    char why[512];
    bool warned; /* the MigrateUnsupported Event was raised */
};

/* Read the VirtualMachineInstanceMigration CRD when the last read is older than 10 minutes (a
 * minute while it could not be read) into *s; owner names the PsiRebalance for the log.
 * Returns s->support. */
enum migrate_support gather_migrate_support(struct kube_client *client, struct gather_support *s, int64_t now_ms,
                                            const char *owner);

#endif
