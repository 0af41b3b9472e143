/* optimum: the fewest VM migrations that bring every node of a placement below a pressure
 * threshold, by exact search with the simulator's model (model.h). Pure: numbers in, numbers out.
 *
 *   psi-sim --optimum FILE [THRESHOLD]
 *
 * A node is hot when its model cpu "some" (or, when its memory is known and its VMs have memory
 * demand, its memory "some") is at or above the threshold. Moving a VM in only raises a node's
 * pressure, so a hot node is relieved only by moving VMs off it, and a solution moves each VM
 * at most once. The search is iterative deepening: at each step it takes the first hot node and
 * tries each of its VMs not yet moved (one of each alike VM) to each other node (one of each
 * alike node), pruning when the sum over hot nodes of the fewest VMs that must leave each one
 * (its largest first) exceeds the moves left. It gives up ("not searched exactly") past
 * OPTIMUM_MAX_NODES nodes, OPTIMUM_MAX_VMS VMs, the depth limit or OPTIMUM_MAX_STEPS steps,
 * rather than answer wrong. */
#ifndef PSI_SIM_OPTIMUM_H
#define PSI_SIM_OPTIMUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hack/sim/model.h"
#include "hack/sim/scenario.h"

#define OPTIMUM_MAX_NODES 64
#define OPTIMUM_MAX_VMS 128
#define OPTIMUM_MAX_DEPTH 24
#define OPTIMUM_MAX_STEPS 20000000L

/* One node: capacities and the demand of what runs there besides the VMs. */
struct optimum_node {
    double cpus, memory, base_cpu;
};

/* One VM: its demand, the node it is on (index), and whether it can move. */
struct optimum_vm {
    double cpu, memory;
    size_t node;
    bool migratable;
};

struct optimum_problem {
    const struct model_params *model;
    const struct optimum_node *nodes;
    size_t n_nodes;
    const struct optimum_vm *vms;
    size_t n_vms;
    double threshold; /* 0..1 */
    int max_depth;    /* at most OPTIMUM_MAX_DEPTH */
};

enum optimum_status {
    OPTIMUM_FOUND,     /* moves is the optimum; vm[i] goes to to[i] */
    OPTIMUM_NONE,      /* no set of at most max_depth moves does it (exact) */
    OPTIMUM_NOT_EXACT, /* over a limit: not searched exactly */
};

struct optimum_result {
    enum optimum_status status;
    int moves;
    size_t vm[OPTIMUM_MAX_DEPTH], to[OPTIMUM_MAX_DEPTH];
    long steps; /* search steps taken */
};

/* Whether node j is hot with the VMs placed as at[] (at[v]: node of VM v). */
bool optimum_node_hot(const struct optimum_problem *p, const size_t *at, size_t j);

/* Search p; fills r. */
void optimum_search(const struct optimum_problem *p, struct optimum_result *r);

/* Build the problem of sc (its pinned VMs on their nodes, nodes worker-0..count-1 as
 * hack/cluster/up names the bed's nodes, and any a VM names; cpus for a node whose CPUs the scenario leaves open),
 * search it with threshold and print the optimum and one optimal set of moves to f. 0, or -1 with why printed to f. */
int optimum_print(FILE *f, const struct scenario *sc, double threshold, double cpus);

#endif
