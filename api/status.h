/* api_status: the status of a PsiRebalance as C types: decode (from what the API server
 * holds), encode (for a status update), conditions in the metav1.Condition way, and the
 * comparison that lets the operator write status only when a reader would learn something. */
#ifndef PSI_API_STATUS_H
#define PSI_API_STATUS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/errors.h"
#include "api/movehistory.h"

/* The pressures PSI reports; also the values of spec.pressure.resource. */
enum api_resource { API_RESOURCE_CPU, API_RESOURCE_MEMORY, API_RESOURCE_IO };
#define API_RESOURCES 3

enum api_condition_status { API_CONDITION_TRUE, API_CONDITION_FALSE, API_CONDITION_UNKNOWN };

/* Condition types the operator sets. */
#define API_CONDITION_READY "Ready"
#define API_CONDITION_DEGRADED "Degraded"
#define API_CONDITION_PSI_ENABLED "PSIEnabled"
#define API_CONDITION_METRICS_AVAILABLE "MetricsAvailable"
#define API_CONDITION_REBALANCING "Rebalancing"

struct api_condition {
    char *type;
    enum api_condition_status status;
    int64_t observed_generation;
    int64_t last_transition_time; /* Unix seconds */
    char *reason;
    char *message;
};

enum api_node_state { API_NODE_NORMAL, API_NODE_PRESSURED, API_NODE_TAINTED, API_NODE_COOLING, API_NODE_UNKNOWN };
#define API_NODE_STATES 5

struct api_summary {
    int64_t nodes, pressured, tainted, evictions;
    int64_t migrations_succeeded, migrations_failed, migrations_in_flight;
    int64_t node_states[API_NODE_STATES]; /* selected nodes by state (summary.nodeStates) */
};

struct api_machine_config_status {
    char *role, *name, *pool;
    bool updated;
    int64_t updated_machines, machines;
};

/* Where a workload's CPU demand came from (demandFrom). */
enum api_demand_from {
    API_DEMAND_FROM_NONE,          /* not estimated */
    API_DEMAND_FROM_OWN_PRESSURE,  /* its usage plus the node's unserved demand shared by the workloads' own stall */
    API_DEMAND_FROM_NODE_PRESSURE, /* its usage scaled as its node's (no per-pod PSI on the node) */
};
#define API_DEMAND_FROMS 3

/* A workload's own pressure and demand as the planner read them (status.moves[].workloadPressure
 * and status.nodes[].workloads[]). */
struct api_workload_pressure {
    double cpu, memory;   /* its own PSI "some", percent; NAN: not reported (a kubelet before 1.34) */
    double usage, demand; /* CPU cores; NAN: unknown */
    enum api_demand_from from;
};

/* What a workload's own pressure says of it on a pressured node (role). */
enum api_workload_role {
    API_ROLE_NONE,
    API_ROLE_SUFFERS, /* it waits for a CPU a large part of the time, on a small share of the load */
    API_ROLE_CAUSES,  /* it carries a large share of the node's load */
};
#define API_WORKLOAD_ROLES 3

/* One workload of a node the planner looked at (status.nodes[].workloads[]). Fixed size, so a
 * node entry copies with memcpy. */
struct api_node_workload {
    char kind[32], ns[64], name[254];
    enum api_workload_role role;
    struct api_workload_pressure p;
};

/* Most workloads listed per node: the ones most stalled, then the busiest. */
#define API_NODE_WORKLOADS 3

struct api_node_status {
    char *name;
    double pressure[API_RESOURCES]; /* percent, by enum api_resource; NAN: no reading */
    double utilization;             /* CPU utilisation percent; NAN: not measured */
    enum api_node_state state;
    int64_t since;         /* Unix seconds the node entered state; 0: unknown */
    int64_t tainted_since; /* Unix seconds the taint was put on, kept while it stays on; 0: none */
    int64_t evictions;
    struct {
        int64_t succeeded, failed, in_flight;
    } migrations;
    /* Where the planner's CPU demand of the node came from this cycle (demandSource: Usage,
     * Pressure, VCPUs, Schedstat, RunQueue; "" when the planner did not look at it), and
     * whether its reading was near 100 % or its CPUs busy (saturated). */
    char demand_source[16];
    bool saturated;
    /* Its workloads' own pressure, in the last cycle that planned moves off it. */
    struct api_node_workload workloads[API_NODE_WORKLOADS];
    size_t nworkloads;
};

/* What became of a move (status.moves[].phase). */
enum api_move_phase {
    API_MOVE_WOULD_MOVE, /* DryRun: the move that would have been made */
    API_MOVE_EVICTED,    /* the pod was evicted (it restarts elsewhere) */
    API_MOVE_REQUESTED,  /* KubeVirt accepted the eviction as a live migration, none runs yet */
    API_MOVE_MIGRATING,  /* its live migration runs */
    API_MOVE_SUCCEEDED,  /* its live migration completed */
    API_MOVE_FAILED,     /* its latest live migration failed */
};
#define API_MOVE_PHASES 6

/* Where a move's expected migration time came from (status.moves[].cost.expectedFrom). */
enum api_cost_basis {
    API_COST_NONE,           /* not estimated: no migration of it seen, nor any timed one in the cluster */
    API_COST_LAST_MIGRATION, /* the VM's last live migration (its VMI's status.migrationState) */
    API_COST_CLUSTER_RATE,   /* its guest memory at the seconds per GiB the timed moves took (median) */
    API_COST_DIRTY_RATE,     /* the same, less what its memory is dirtied at while it is copied */
};
#define API_COST_BASES 4

/* What a VM's move costs (status.moves[].cost): its guest memory, the live migration's time
 * expected when the move was decided and the time it took. */
struct api_move_cost {
    int64_t memory; /* guest memory, bytes; 0: not known */
    enum api_cost_basis basis;
    int64_t expected_s; /* with a basis: seconds expected */
    bool timed;         /* the migration's start and end are known */
    int64_t duration_s; /* then: seconds it took (its migrationState's start to end) */
};

/* One move of a workload (status.moves[]). Strings owned; NULL when unset. */
struct api_move {
    char *kind, *ns, *name; /* the workload: VirtualMachineInstance ns/name, or the pod's controller */
    char *pod;              /* the pod evicted */
    char *source_node;
    char *destination_node; /* the node predicted to take it */
    char *target_node;      /* where it went (a live migration's target), once known */
    int64_t time;           /* requested (decided, in DryRun) */
    int64_t end_time;       /* finished; 0 while it runs */
    enum api_move_phase phase;
    char *migration;        /* the VirtualMachineInstanceMigration carrying it */
    bool vm_restart;        /* a VM moved by eviction that KubeVirt restarts (allowVMRestart) */
    int64_t failures;       /* failed live migrations of it since it was requested */
    int64_t cooldown_until; /* not moved again before this */
    /* The pressure (percent) predicted after the move for source and destination, and observed
     * once it settled: how good the decision was. */
    bool predicted;
    double predicted_source, predicted_destination;
    double source_before; /* the source's pressure when the move was decided; NAN: not known */
    bool observed;
    double observed_source, observed_destination;
    struct api_move_cost cost;             /* VMs only */
    struct api_workload_pressure pressure; /* when decided; from API_DEMAND_FROM_NONE: not recorded */
};

/* Most entries in status.moves (the CRD's maxItems). */
#define API_STATUS_MAX_MOVES 50

/* Owns its strings and arrays; zero-initialise, release with api_status_free. Times are Unix
 * seconds, 0 meaning unset. */
struct api_status {
    int64_t observed_generation;
    struct api_condition *conditions;
    size_t nconditions;
    int64_t last_successful_cycle_time;
    struct api_summary summary;
    struct api_machine_config_status *machine_configs;
    size_t nmachine_configs;
    struct api_node_status *nodes;
    size_t nnodes;
    struct api_move *moves; /* oldest first */
    size_t nmoves;
    char **taint_keys; /* the taint keys written to nodes and maybe still there (taintKeys) */
    size_t ntaint_keys;
    struct api_move_history move_history; /* what the hold and the budgets remember (moveHistory) */
};

/* How api_status_changed tells a real change from noise. */
struct api_status_compare {
    /* lastSuccessfulCycleTime moving forward counts only once it moved this many seconds
     * (a heartbeat, so the dead-man switch stays fresh without a write every cycle);
     * 0: any move counts. Moving backward or being set/unset always counts. */
    int64_t heartbeat_s;
    /* Pressure and utilisation readings count as changed only when they differ by more than
     * this many percentage points, after rounding to the 0.1 they are written with. */
    double pressure_tolerance;
};

const char *api_condition_status_name(enum api_condition_status v);
const char *api_node_state_name(enum api_node_state v);
const char *api_move_phase_name(enum api_move_phase v);
const char *api_demand_from_name(enum api_demand_from v);     /* "", "OwnPressure", "NodePressure" */
const char *api_workload_role_name(enum api_workload_role v); /* "", "Suffers", "Causes" */

/* Decode json (the value of .status) into *st, replacing its content; type errors go to
 * errs, unknown fields to warns (may be NULL). Returns 0 or -1. */
int api_status_decode(const cJSON *json, struct api_status *st, struct api_errors *errs, struct api_errors *warns);

/* st as the JSON of .status (caller owns it; NULL on no memory). Unset times and empty lists
 * are left out; pressures are written as decimal strings with one digit after the point. */
cJSON *api_status_encode(const struct api_status *st);

/* True when writing next over cur would tell a reader something new. Ignored: the order of
 * conditions, machineConfigs and nodes (each keyed by type, role and name); a condition's
 * lastTransitionTime and a node's since, which move only with the status and state that are
 * compared; small moves of readings and of lastSuccessfulCycleTime, as opts says (NULL:
 * exact, at the resolution written). */
bool api_status_changed(const struct api_status *cur, const struct api_status *next,
                        const struct api_status_compare *opts);

/* The condition of this type in st, or NULL. */
struct api_condition *api_status_condition(const struct api_status *st, const char *type);

/* Set condition type as metav1 does: lastTransitionTime becomes now only when the status
 * changes (or the condition is new). Returns 1 when anything changed, 0 when not, -1 on no memory. */
int api_status_set_condition(struct api_status *st, const char *type, enum api_condition_status status,
                             const char *reason, const char *message, int64_t generation, int64_t now);

/* Append a node named name (readings NAN, state Unknown) and return it; NULL on no memory. */
struct api_node_status *api_status_add_node(struct api_status *st, const char *name);

/* Add key to st's taintKeys unless it is there. Returns 1 when added, 0 when there, -1 on no
 * memory. */
int api_status_add_taint_key(struct api_status *st, const char *key);

/* Remove key from st's taintKeys; returns 1 when it was there, 0 when not. */
int api_status_remove_taint_key(struct api_status *st, const char *key);

/* Append an empty move (phase WouldMove) and return it; NULL on no memory. */
struct api_move *api_status_add_move(struct api_status *st);

/* Copy move src into *dst (zeroed or freed before); returns 0, or -1 on no memory. */
int api_move_copy(struct api_move *dst, const struct api_move *src);

/* Release what a move owns and zero it. */
void api_move_free(struct api_move *m);

/* Append the status.machineConfigs entry of pool (the list's key) and return it; NULL on no memory. */
struct api_machine_config_status *api_status_add_machine_config(struct api_status *st, const char *pool);

/* Make dst a deep copy of src. Returns 0, or -1 on no memory (dst is then empty). */
int api_status_copy(struct api_status *dst, const struct api_status *src);

/* Release what st owns and zero it. */
void api_status_free(struct api_status *st);

#endif
