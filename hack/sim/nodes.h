/* nodes: what the simulator does to the simulated Node objects: label them
 * kubevirt.io/schedulable=true (as virt-handler does, and launcher pods select it), set
 * their CPU and memory capacity to the scenario's when it asks (nodes.cpus, nodes.memory,
 * nodes.sizes; restored on exit), and cordon / uncordon them. */
#ifndef PSI_SIM_NODES_H
#define PSI_SIM_NODES_H

#include <stdbool.h>

#include "hack/sim/sim.h"

struct nodes;

/* New node handling over s (borrowed). NULL when out of memory. */
struct nodes *nodes_new(struct sim *s);

/* Restore every capacity changed and free (NULL is fine). */
void nodes_free(struct nodes *n);

/* Prepare the simulated nodes not prepared yet (label; capacity when asked). Call on
 * every pass: new nodes are prepared as they appear. */
void nodes_sync(struct nodes *n);

/* Whether every simulated node is prepared (and there are as many as the scenario wants). */
bool nodes_ready(const struct nodes *n);

/* The model capacity of a node: the scenario's CPUs and memory (its nodes.sizes entry first),
 * else the node's own. */
void nodes_capacity(const struct nodes *n, const char *node, double *cpus, double *memory);

/* Set spec.unschedulable of node. Returns 0 or -1 (logged). */
int nodes_cordon(struct sim *s, const char *node, bool cordon);

/* Put the original CPU and memory capacity back on every node changed (also done by
 * nodes_free). */
void nodes_restore(struct nodes *n);

#endif
