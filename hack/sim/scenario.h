/* scenario: a simulation described in YAML (the files in hack/sim/scenarios/), loaded into plain
 * structs with defaults applied and every value checked. Pure apart from scenario_load,
 * which reads the file.
 *
 * Document shape (every key optional unless marked; durations like "30s", "1m30s",
 * "500ms"; sizes and CPUs as Kubernetes quantities, "4Gi", "200m"):
 *
 *   name: seed                        # required
 *   description: text
 *   namespace: psi-sim                # where VMs, VMIs, pods and migrations live
 *   seed: 1                           # random seed (failure injection)
 *   tick: 1s                          # model and timeline period
 *   nodes:
 *     selector: node-role.kubernetes.io/worker   # label selector of the simulated nodes
 *     count: 3                        # wait until this many nodes exist (0: any)
 *     cpus: 4                         # model CPUs (default: the node's capacity)
 *     applyCapacity: true             # also set the Node's cpu capacity/allocatable to
 *                                     # `cpus` (restored on exit), so the scheduler and
 *                                     # the operator see what the model uses
 *     memory: 64Gi                    # model memory (default: the node's capacity); with
 *                                     # applyCapacity also the Node's memory capacity/allocatable
 *     sizes:                          # per-node cpus and memory, over the two above (heterogeneous
 *       worker-0: {cpus: 8, memory: 16Gi}   # clusters); applied to the Node like them
 *     io: 1000                        # io capacity, abstract units per second
 *     baseCpu: 0.1                    # cores of system load on every node
 *     psi: true                       # export PSI without waiting for a pool with psi=1
 *                                     # (default: true unless mco.enabled)
 *     cpuSeconds: false               # with PSI, also export the nodes' CPU use as node_exporter's
 *                                     # node_cpu_seconds_total{mode="user"} (exporter.h), which a
 *                                     # Prometheus source then reads as the node's usage instead
 *                                     # of the sum of its VMs' (needed for Deployments' pods)
 *   model:                            # see model.h; curve: kernel | queueing (burstiness
 *                                     # and fullRatio apply to queueing; default kernel for cpu)
 *     cpu:    {curve: kernel}
 *     memory: {burstiness: 0.25, fullRatio: 0.5}
 *     io:     {burstiness: 0.25, fullRatio: 0.5}
 *   kubevirt:
 *     evictionStrategy: LiveMigrate   # cluster-wide default: None | LiveMigrate |
 *                                     # LiveMigrateIfPossible | External
 *     parallelMigrationsPerCluster: 5
 *     parallelOutboundMigrationsPerNode: 2
 *     cpuAllocationRatio: 10          # launcher CPU request = vCPUs / ratio
 *     restartDelay: 1s                # before a VM whose VMI ended starts again
 *     migration:
 *       base: 2s                      # fixed part of the Running phase
 *       bandwidth: 1Gi                # bytes of guest memory copied per second
 *       phaseDelay: 200ms             # Scheduled -> PreparingTarget -> TargetReady -> Running
 *       failureRate: 0                # probability (0..1) that a migration fails
 *       failVMs: [name, ...]          # VMs whose migrations always fail
 *       backoff: 20s                  # first evacuation retry backoff after a failure (doubles)
 *       unschedulableTimeout: 5m      # a target pod pending that long fails the migration
 *       completionTimeoutPerGiB: 150  # seconds per GiB of guest memory a migration may take
 *                                     # (KubeVirt's migrations config, its default 150)
 *   vms:                              # at least one VM or one Deployment
 *   - name: hot                       # required; with count > 1 the VMs are hot-0, hot-1, ...
 *     count: 3
 *     vcpus: 2
 *     memory: 4Gi                     # guest memory
 *     cpu: 2                          # CPU demand in cores (default 0.05 per vCPU)
 *     memoryDemand: 2Gi               # working set (default: half the guest memory)
 *     io: 10                          # io demand (default 1)
 *     evictionStrategy: LiveMigrate   # default: the cluster's
 *     migratable: true                # the LiveMigratable condition
 *     dirtyRate: 0                    # guest memory dirtied per second (bytes); at or above
 *                                     # kubevirt.migration.bandwidth its live migrations never
 *                                     # converge (migration.c)
 *     cpuRequest: 200m                # default: vcpus / cpuAllocationRatio
 *     labels: {app: web}              # copied to the VM template, VMI and launcher pod
 *     node: worker-1                  # create its launcher pods (not migration targets) bound
 *                                     # to this node (spec.nodeName, no scheduler, no selector
 *                                     # left on the pod), so a scenario can start VMs on
 *                                     # different nodes
 *   deployments:                      # workloads that are not VMs (scenario_deployments.h)
 *   - {name: web, replicas: 2, cpu: 2, labels: {app: web}}
 *   start:
 *     node: worker-0                  # start every VM (and Deployment pod) here: the other
 *                                     # simulated nodes are cordoned until all launchers (and
 *                                     # Deployment pods) run, then uncordoned
 *   kubelet:                          # the Summary API each node's kubelet serves (kubelet.h)
 *     noPsi: [worker-3]               # nodes whose kubelet reports no PSI (KubeletPSI off, no psi=1)
 *     podPsi: true                    # per-pod PSI where the node has PSI: Summary pods[].cpu.psi
 *                                     # and .memory.psi, cAdvisor's container_pressure_* of the
 *                                     # Deployments' pods (false: a kubelet before 1.34)
 *     slow: [worker-4]                # nodes whose kubelet answers only after slowDelay
 *     slowDelay: 30s
 *   mco:
 *     enabled: false                  # run the MachineConfig operator stand-in
 *     pools: [worker]                 # pools to create when absent (role = pool name)
 *     paused: [worker]                # pools created paused (spec.paused: no rollout)
 *     compact: false                  # a compact cluster: the simulated nodes also get the
 *                                     # master and control-plane role labels (removed on
 *                                     # exit), so with pools [master, worker] they are the
 *                                     # master pool's and the worker pool is empty
 *     rebootDelay: 10s
 *     drainTimeout: 10m               # a drain that takes longer degrades the pool
 *   events:                           # the timeline; `at` counts from the end of the start
 *   - at: 60s
 *     demand: {vm: hot-0, cpu: 0.1}   # or vms: [...], or group: hot; keys cpu, memory, io
 *   - at: 90s
 *     drain: {node: worker-0, rebootDelay: 10s}
 *   - at: 0s
 *     rollingDrain: {rebootDelay: 10s}   # every simulated node in turn, by name
 *   - at: 5s
 *     machineConfig: {name: 99-worker-psi, role: worker, kernelArguments: [psi=1]}
 */
#ifndef PSI_SIM_SCENARIO_H
#define PSI_SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hack/sim/model.h"

/* Eviction strategies, as KubeVirt names them. */
enum scenario_strategy {
    SCENARIO_STRATEGY_UNSET = 0, /* a VM without one takes the cluster's */
    SCENARIO_STRATEGY_NONE,
    SCENARIO_STRATEGY_LIVE_MIGRATE,
    SCENARIO_STRATEGY_LIVE_MIGRATE_IF_POSSIBLE,
    SCENARIO_STRATEGY_EXTERNAL,
};

/* A label. */
struct scenario_label {
    char *key;
    char *value;
};

/* One node's own size (nodes.sizes); 0: the scenario-wide value. */
struct scenario_node_size {
    char *node;
    double cpus;
    double memory; /* bytes */
};

/* One VM (groups with count are expanded into one entry per VM). */
struct scenario_vm {
    char *name;
    char *group; /* the `name` of the entry it came from */
    int vcpus;
    double memory;        /* guest memory, bytes */
    double cpu_demand;    /* cores */
    double memory_demand; /* bytes */
    double io_demand;
    enum scenario_strategy strategy; /* UNSET: the cluster's */
    bool migratable;
    double dirty_rate;  /* bytes per second */
    double cpu_request; /* cores */
    struct scenario_label *labels;
    size_t n_labels;
    char *node; /* NULL, or the node its launcher pods are bound to */
};

enum scenario_event_kind {
    SCENARIO_EVENT_DEMAND,
    SCENARIO_EVENT_DRAIN,
    SCENARIO_EVENT_ROLLING_DRAIN,
    SCENARIO_EVENT_MACHINE_CONFIG,
};

/* One timeline event. */
struct scenario_event {
    int64_t at_ms;
    enum scenario_event_kind kind;
    /* demand: the VMs it applies to (names, already expanded from vm/vms/group), and the
     * values to set (NaN: unchanged) */
    char **vms;
    size_t n_vms, vms_cap;
    double cpu, memory, io;
    /* drain: node name; drain and rollingDrain: reboot delay */
    char *node;
    int64_t reboot_delay_ms;
    /* machineConfig */
    char *mc_name;
    char *mc_role;
    char **kernel_args;
    size_t n_kernel_args;
};

struct scenario {
    char *name;
    char *description;
    char *namespace;
    uint64_t seed;
    int64_t tick_ms;

    char *node_selector;
    int node_count;
    double node_cpus; /* 0: the node's capacity */
    bool apply_capacity;
    double node_memory; /* 0: the node's capacity */
    struct scenario_node_size *node_sizes;
    size_t n_node_sizes;
    double node_io;
    double node_base_cpu;
    bool psi_without_pool;
    bool node_cpu_seconds; /* nodes.cpuSeconds */

    struct model_params model;

    enum scenario_strategy cluster_strategy;
    int parallel_per_cluster;
    int parallel_outbound_per_node;
    double cpu_allocation_ratio;
    int64_t restart_delay_ms;
    int64_t migration_base_ms;
    double migration_bandwidth; /* bytes per second */
    int64_t migration_phase_delay_ms;
    double migration_failure_rate;
    char **fail_vms;
    size_t n_fail_vms;
    int64_t migration_backoff_ms;
    int64_t unschedulable_timeout_ms;
    int64_t completion_timeout_per_gib_s;

    struct scenario_vm *vms;
    size_t n_vms;

    struct scenario_deployment *deployments; /* scenario_deployments.h */
    size_t n_deployments;

    char *start_node; /* NULL: let the scheduler spread them */

    char **kubelet_no_psi; /* nodes whose summary has no psi */
    size_t n_kubelet_no_psi;
    bool kubelet_pod_psi; /* pods carry their own PSI where their node has PSI */
    char **kubelet_slow;  /* nodes whose kubelet answers after kubelet_slow_delay_ms */
    size_t n_kubelet_slow;
    int64_t kubelet_slow_delay_ms;

    bool mco_enabled;
    char **mco_pools;
    size_t n_mco_pools;
    char **mco_paused; /* pools created with spec.paused */
    size_t n_mco_paused;
    bool mco_compact; /* the simulated nodes are masters in the worker role too */
    int64_t mco_reboot_delay_ms;
    int64_t mco_drain_timeout_ms;

    struct scenario_event *events; /* sorted by at_ms (stable) */
    size_t n_events;
};

/* Parse YAML text into a new scenario (caller frees with scenario_free). NULL with why in
 * err (naming the field, e.g. "vms[1].memory: invalid quantity ...") on bad input. */
struct scenario *scenario_parse(const char *text, size_t len, char *err, size_t errlen);

/* Read and parse a file; errors are prefixed with the path. */
struct scenario *scenario_load(const char *path, char *err, size_t errlen);

/* Free (NULL is fine). */
void scenario_free(struct scenario *s);

/* The VM named name, or NULL. */
const struct scenario_vm *scenario_vm_find(const struct scenario *s, const char *name);

/* The CPUs and memory the scenario gives node: its nodes.sizes entry over nodes.cpus and
 * nodes.memory (0: the node's own capacity). */
void scenario_node_size(const struct scenario *s, const char *node, double *cpus, double *memory);

/* Whether name is in the fail list. */
bool scenario_vm_always_fails(const struct scenario *s, const char *name);

/* KubeVirt's spelling of a strategy ("None", "LiveMigrate", ...); "" for UNSET. */
const char *scenario_strategy_name(enum scenario_strategy st);

/* Parse KubeVirt's spelling; -1 when unknown. */
int scenario_strategy_parse(const char *s, enum scenario_strategy *out);

#endif
