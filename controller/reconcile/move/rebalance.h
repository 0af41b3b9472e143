/* rebalance: which workloads to move off which pressured nodes, and which cooler nodes take
 * them. Pure: plain structs (and the pods' and nodes' JSON as the informers keep it) in, a
 * plan out; the edge (mover.h) gathers the inputs, keeps the history and makes the moves.
 *
 * Trigger on pressure, predict with usage. PSI says *that* a node suffers; usage says how much
 * each workload contributes. Usage understates what a workload wants on a saturated node (it
 * gets only what is not stalled), so usage becomes demand with the node's unserved share u:
 *     demand = usage / (1 - u),   u = min(cpu_some / (100 k), REBALANCE_MAX_STALL)
 * where k is the node's calibrated scale (below; 1 when unknown). A saturated node's reading
 * says little about how far past saturation it is, so a workload's demand is capped at what it
 * can use (max_demand: a VM's vCPUs), and its node's demand loses what the caps took off. A
 * node's load on a resource
 * is L = D / C: CPU demand over its CPUs, or memory in use (the workloads' working sets) over
 * its memory.
 *
 * Prediction. Pressure is predicted from load with a queueing-like curve: the share of demand
 * that waits when the instantaneous demand fluctuates around its mean (normally, with a
 * coefficient of variation b = REBALANCE_BURSTINESS),
 *     f(L) = (1 - 1/L) * Phi(z) + b * phi(z),   z = (1 - 1/L) / b,
 *     P(L) = 100 * min(1, k * f(L))   (percent)
 * which is ~0 well below saturation (f(0.6) < 0.1 %), rises before it (f(0.8) = 2 %,
 * f(1) = 10 %) and tends to the unserved share 1 - 1/L past it. k scales the curve per node and
 * resource, because what PSI reads is not exactly the unserved share:
 *   - a source is calibrated on its own current reading (k = P / (100 f(L)), clamped to
 *     REBALANCE_SCALE_MIN..MAX), so its predicted relief is relative to what it shows now;
 *   - a destination takes its calibrated scale (rebalance_node.scale, which the edge keeps with
 *     rebalance_calibrate from the node's own (load, pressure) readings), or without one the
 *     safety margin REBALANCE_SAFETY (readings up to that many times the curve), and never less
 *     than what its current reading shows when that is informative.
 * No destination is predicted at or above taintAbovePercent, on any resource balanced on.
 *
 * Sources and the target. A node is a source when it is selected and its pressure (`pressure`:
 * the highest of the resources balanced on) stayed above evictAbovePercent for the sustain
 * window, or when it carries our taint and is still above taintAbovePercent (the band between
 * the two levels: a tainted node is relieved where a placement exists, not left tainted for
 * good), or when it was a source before (`relieving`) and is not yet below the target
 * (params.target, by default untaintBelowPercent, so that a relieved node loses its taint).
 * For each source, hottest first, the planner plans the set of moves that gets it predicted
 * below the target: on the resource it is hottest on, the smallest workload that alone reaches
 * the target, else the biggest that can go (fewest moves); again until the target is reached
 * or nothing more can go. The set is made only when it contributes: when it brings the source
 * below the target, or below another level it is above now (taintAbovePercent or
 * evictAbovePercent) by REBALANCE_MIN_RELIEF at least (an idle VM crossing a level by a hair
 * is no relief). A source
 * that cannot cross any of them keeps its workloads (two small moves off a node whose big VM
 * cannot go anywhere help nothing). The per-cycle limits then cut the set: what they leave
 * out is planned again next cycle, when the source, still above the target, is a source again.
 *
 * Destinations. A selected, schedulable node without our taint, whose pressure is known and
 * below untaintBelowPercent, that is no source, not settling after a move, whose usage and
 * requests are known, where the workload fits (requests against allocatable minus what is
 * placed; memory in use against allocatable; node selector, required node affinity, NoSchedule
 * and NoExecute taints it does not tolerate) and stays predicted below the taint level. The
 * coolest is taken: the lowest predicted pressure after the move (within
 * REBALANCE_NOISE), then the lowest load after it, then by name. An evicted workload lands
 * where the scheduler wants (the taints on hot nodes steer it): each destination takes at most
 * one eviction per cycle. A targeted live migration (params.targeted) goes to the destination
 * chosen, so a destination may take several, each predicted on top of the ones before.
 *
 * Convergence and oscillation. On the resource the source is hottest on, a move must lower the
 * pair's maximum load by the margin:
 *     max(L_s', L_t') <= max(L_s, L_t) - margin,
 * and on every other resource balanced on it may not raise the pair's predicted maximum
 * pressure by more than REBALANCE_NOISE, unless that maximum stays below untaintBelowPercent
 * (where a rise changes nothing a node is judged on). With one resource the vector of node loads sorted in
 * decreasing order strictly decreases with every move, so under a static load rebalancing ends.
 * Readings are not static and not exactly the model, so history holds what the rule cannot: a
 * workload never returns to a node it left within the history window (params.recent), and a
 * node never sends load back to a node that sent it some within the window (two nodes trading
 * load). What history holds is counted and named in the plan (held, held_message) and, when
 * nothing else can move, is the plan's reason (REBALANCE_OSCILLATION).
 *
 * Limits per cycle: maxPerNode moves off a node, maxPerNamespace per namespace, maxTotal in all;
 * a VM move (a live migration) also needs room under maxInFlightMigrations and KubeVirt's
 * parallel limits, counting every migration in flight, whoever started it. The moves made in
 * earlier planning rounds of the same cycle (params.made: the edge plans again after a refusal)
 * count against every limit, so no limit is exceeded through re-planning. */
#ifndef PSI_RECONCILE_REBALANCE_H
#define PSI_RECONCILE_REBALANCE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/reasons.h"
#include "api/selector.h"
#include "reconcile/status/nodelabels.h"

/* KubeVirt's default parallel limits (parallelMigrationsPerCluster, ...PerNode). */
#define REBALANCE_KUBEVIRT_PER_CLUSTER 5
#define REBALANCE_KUBEVIRT_PER_NODE 2
/* Default margin: a move must lower the pair's maximum load by 1 % of a node's capacity. */
#define REBALANCE_MARGIN 0.01
/* The largest unserved share used to turn usage into demand (a factor of 50 at most). */
#define REBALANCE_MAX_STALL 0.98
/* The largest unserved share used to infer a saturated node's memory demand (twice its
 * memory at most): memory pressure read high, as when it is skewed against the unserved
 * share, must not make a node look beyond relief. */
#define REBALANCE_MAX_MEMORY_STALL 0.5
/* A node using this share of its CPUs or more is saturated (rebalance_node_demand). */
#define REBALANCE_SATURATED 0.9
/* The burstiness b of the prediction curve (see above). */
#define REBALANCE_BURSTINESS 0.25
/* The scale of the curve of a destination that has no calibration: readings up to 2.5 times
 * the curve keep it below the taint level. */
#define REBALANCE_SAFETY 2.5
/* The bounds of a scale calibrated from readings. */
#define REBALANCE_SCALE_MIN 0.2
#define REBALANCE_SCALE_MAX 10.0
/* A reading calibrates only where the curve is at least this (2 %): below, noise rules. */
#define REBALANCE_INFORMATIVE 0.02
/* The weight of a new reading in a calibrated scale (rebalance_calibrate). */
#define REBALANCE_CALIBRATION_WEIGHT 0.3
/* The least relief (percentage points) a source's set of moves must bring to be made. */
#define REBALANCE_MIN_RELIEF 5.0
/* Percentage points within which two predictions count as equal. */
#define REBALANCE_NOISE 1.0

/* The resources the planner balances on. */
enum rebalance_resource { REBALANCE_CPU = 0, REBALANCE_MEMORY = 1, REBALANCE_NRES = 2 };
#define REBALANCE_RES_CPU (1u << REBALANCE_CPU)
#define REBALANCE_RES_MEMORY (1u << REBALANCE_MEMORY)

/* Reasons of a plan, fit for the Rebalancing condition (api/reasons.h). */
#define REBALANCE_MOVING API_REASON_MOVING                    /* moves planned */
#define REBALANCE_NO_PRESSURE API_REASON_NO_PRESSURED_NODE    /* no source: nothing to do */
#define REBALANCE_SETTLING API_REASON_SETTLING                /* sources wait for the signal to settle */
#define REBALANCE_USAGE_UNKNOWN API_REASON_USAGE_UNAVAILABLE  /* no usage reading for the sources */
#define REBALANCE_NO_CANDIDATE API_REASON_NO_CANDIDATE        /* nothing on the sources may move */
#define REBALANCE_NO_DESTINATION API_REASON_NO_DESTINATION    /* no node could take anything */
#define REBALANCE_NO_IMPROVEMENT API_REASON_NO_IMPROVING_MOVE /* nodes could, but no set of moves relieves a source */
#define REBALANCE_LIMITED API_REASON_LIMIT_REACHED            /* the limits left no room */
#define REBALANCE_OSCILLATION API_REASON_OSCILLATION_HELD     /* the only moves left would undo recent ones */

/* ---- prediction ---- */

/* Demand (cores) from usage (cores) and the CPU "some" pressure (percent; NAN as 0) of the
 * node it runs on: rebalance_demand_scaled with scale 1. */
double rebalance_demand(double usage, double cpu_pressure);

/* Demand from usage and the pressure of the node it runs on, read with the node's scale (<= 0
 * or NAN: 1): usage / (1 - min(pressure / (100 scale), REBALANCE_MAX_STALL)). */
double rebalance_demand_scaled(double usage, double pressure, double scale);

/* Demand (cores) of a node from its usage, CPUs and CPU "some" pressure: rebalance_demand,
 * except that a node using at least REBALANCE_SATURATED of its CPUs counts as using all of
 * them (it is saturated; what usage misses there, such as system load outside the measured
 * workloads, waits too). NAN when usage or cpus is unknown. */
double rebalance_node_demand(double usage, double cpus, double cpu_pressure);

/* Memory demand (bytes) of a node from its memory in use, its memory and its memory "some"
 * pressure. A node cannot hold more than its memory: one using at least REBALANCE_SATURATED
 * of it is saturated, and what waits shows only as pressure, so its demand is its memory /
 * (1 - min(pressure / 100, REBALANCE_MAX_MEMORY_STALL)), as for CPU. In use beyond the
 * memory (the workloads' working sets summed) is the demand itself; below saturation, in
 * use. NAN when in use or the memory is unknown. */
double rebalance_node_memory_demand(double used, double memory, double mem_pressure);

/* rebalance_node_demand with the pressure read with the node's scale (rebalance_demand_scaled). */
double rebalance_node_demand_scaled(double usage, double cpus, double cpu_pressure, double scale);

/* The curve f(L) (a share, 0..1) at load L; 0 for NAN or L <= 0. */
double rebalance_curve(double load);

/* Predicted pressure (percent) of a node at load L with scale k: 100 * min(1, k * f(L)). */
double rebalance_predict(double load, double scale);

/* Predicted pressure (percent) at load L with scale 1. */
double rebalance_predicted_pressure(double load);

/* The load L at which a node uses the share `served` of its capacity (usage over capacity):
 * the L with L * (1 - f(L)) = served. NAN when served is unknown, negative, or too close to
 * saturation (0.97 and more) to tell the load from it. */
double rebalance_load_from_served(double served);

/* A node's scale for one resource after one more reading: served is its usage over capacity,
 * pressure the reading (percent). The reading calibrates when the load it implies
 * (rebalance_load_from_served) has f(L) >= REBALANCE_INFORMATIVE: its own scale
 * P / (100 f(L)), clamped to the bounds, weighted REBALANCE_CALIBRATION_WEIGHT against prev
 * (<= 0: none yet, the reading's scale is taken as is). Otherwise prev is returned. */
double rebalance_calibrate(double prev, double served, double pressure);

/* ---- plan ---- */

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
    bool vm;                    /* a KubeVirt VM: the eviction becomes a live migration */
    const cJSON *node_selector; /* spec.nodeSelector (may be NULL) */
    const cJSON *affinity;      /* spec.affinity (may be NULL) */
    const cJSON *tolerations;   /* spec.tolerations (may be NULL) */
    const char *blocked;        /* NULL: it may move; else why not (evictor.h) */
};

/* One move within the history window, most recent last (what oscillation is judged on). */
struct rebalance_recent {
    const char *workload;             /* rebalance_candidate.workload */
    const char *source, *destination; /* node names */
};

struct rebalance_move;

struct rebalance_params {
    double evict_above, taint_above, untaint_below; /* percent */
    double target;                                  /* percent: relieve a source below this; <= 0 takes untaint_below */
    double margin;                                  /* load; 0 takes REBALANCE_MARGIN */
    unsigned resources; /* REBALANCE_RES_* balanced on; 0: CPU alone, read from `pressure` */
    int max_per_node, max_per_namespace, max_total; /* per cycle */
    int max_in_flight;                              /* spec.eviction.maxInFlightMigrations */
    int in_flight;            /* migrations not finished in the cluster, any origin, before this cycle */
    int kubevirt_per_cluster; /* 0 takes REBALANCE_KUBEVIRT_PER_CLUSTER */
    int kubevirt_per_node;    /* 0 takes REBALANCE_KUBEVIRT_PER_NODE */
    int running;              /* migrations running in the cluster (KubeVirt's count) before this cycle */
    bool targeted;            /* VM moves are targeted live migrations (the VM goes where it is sent) */
    /* moves made in earlier planning rounds of this cycle (borrowed; their candidates index the
     * same candidates). The nodes are as measured: the planner applies these first, and they
     * count against every limit. */
    const struct rebalance_move *made;
    size_t nmade;
    const struct rebalance_recent *recent; /* moves within the history window (borrowed) */
    size_t nrecent;
};

/* One planned move. */
struct rebalance_move {
    size_t candidate;           /* index into the candidates */
    size_t source, destination; /* node indexes: the coolest destination (a prediction with
                                 * eviction, the target of a targeted live migration) */
    double demand;              /* cores, estimated */
    double mem;                 /* bytes in use, estimated */
    double relief;              /* percentage points the source is predicted to lose */
    double src_load, src_load_after, dst_load, dst_load_after; /* on the resource driving it */
    double src_pressure_after;                                 /* predicted, percent (the highest of the resources) */
    double dst_pressure_after;                                 /* predicted, percent (the highest of the resources) */
    enum rebalance_resource resource;                          /* the resource the source was relieved on */
};

struct rebalance_plan {
    struct rebalance_move *moves;
    size_t nmoves, moves_cap; /* moves_cap: allocated (base/grow) */
    const char *reason;       /* one of REBALANCE_* */
    char message[2048];       /* what a person should know, without times (stable) */
    size_t held;              /* moves history held (oscillation) */
    char held_message[512];   /* the first ones: which workload, which nodes, why */
};

/* Why c cannot run on node n (written to why, and returned), or NULL when it fits:
 * requests against allocatable minus requested, spec.unschedulable, node selector, required
 * node affinity, NoSchedule/NoExecute taints it does not tolerate. */
const char *rebalance_fit(const struct rebalance_candidate *c, const struct rebalance_node *n, char *why, size_t len);

/* Whether tolerations (a JSON array, may be NULL) tolerate taint (a JSON object). */
bool rebalance_tolerates(const cJSON *tolerations, const cJSON *taint);

/* Whether a required node affinity (spec.affinity, may be NULL) lets the pod on a node with
 * these labels and name. */
bool rebalance_affinity_matches(const cJSON *affinity, const struct nodelabels *labels, const char *node_name);

/* The target of p: target, or untaint_below when it is unset. */
double rebalance_target(const struct rebalance_params *p);

/* Whether node n is a source now: selected, known pressure, and either above evict_above and
 * sustained, or tainted and above taint_above, or relieving and not below the target. The edge keeps `relieving` for
 * the next cycle with this very answer. */
bool rebalance_is_source(const struct rebalance_params *p, const struct rebalance_node *n);

/* Why node n may not be a destination before any workload is looked at (written to why and
 * returned), or NULL when it may be one. */
const char *rebalance_destination_check(const struct rebalance_params *p, const struct rebalance_node *n, char *why,
                                        size_t len);

/* Whether moving demand d (cores) from s to t passes the convergence rule and keeps t predicted
 * below the taint level on CPU (their demands as s->demand and t->demand, t with its scale or
 * REBALANCE_SAFETY); the loads after go to *s_after and *t_after (may be NULL). */
bool rebalance_move_ok(const struct rebalance_params *p, const struct rebalance_node *s, const struct rebalance_node *t,
                       double d, double *s_after, double *t_after);

/* Plan this cycle's moves (rules above) into *out (free with rebalance_plan_free). Returns 0,
 * or -1 on no memory. */
int rebalance_plan(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nnodes,
                   const struct rebalance_candidate *cands, size_t ncands, struct rebalance_plan *out);

/* Release what a plan owns. */
void rebalance_plan_free(struct rebalance_plan *plan);

/* Why a VMI (VirtualMachineInstance JSON) may not be live-migrated, or NULL: its
 * LiveMigratable condition is False (the message names KubeVirt's reason). A static string. */
const char *rebalance_vmi_check(const cJSON *vmi);

/* A VMI's vCPUs (spec.domain.cpu: cores x sockets x threads, each 1 when absent), what its
 * demand cannot exceed; NAN when the VMI states no CPU topology. */
double rebalance_vmi_vcpus(const cJSON *vmi);

/* ---- the Eviction API's answer ---- */

enum rebalance_evict_outcome {
    REBALANCE_EVICTED,   /* 200/201: the pod goes (it restarts elsewhere) */
    REBALANCE_MIGRATING, /* 429 "Eviction triggered evacuation" / "Evacuation in progress":
                          * KubeVirt accepted it as a live migration */
    REBALANCE_REFUSED,   /* another 429 (a PodDisruptionBudget, a VM that cannot migrate): skip */
    REBALANCE_GONE,      /* 404: the pod is gone already */
    REBALANCE_ERROR,     /* anything else: a failure */
};

/* Classify an eviction's answer: http status (0 for success) and the server's message. */
enum rebalance_evict_outcome rebalance_evict_outcome(long http_status, const char *message);

#endif
