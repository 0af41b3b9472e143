/* expect: what the model gives a scenario's placement, for its header.
 *
 *   psi-sim --expect FILE [CPUS]
 *
 * Sums each node's demand from the VMs the scenario pins (vms[].node, else start.node) plus
 * nodes.baseCpu and
 * prints one line per node, in node order: CPUs, cpu demand and load, cpu some, memory
 * some/full (when the node's memory is known) and io some/full, all from model_node with the
 * scenario's model. A node's CPUs and memory come from nodes.cpus / nodes.memory /
 * nodes.sizes; CPUS stands in for the node's capacity when the scenario leaves it to the node
 * object (the bed's kwok nodes). VMs with no node are listed on one line: the scheduler
 * places them, so their pressure is the run's, not the header's. */
#ifndef PSI_SIM_EXPECT_H
#define PSI_SIM_EXPECT_H

#include <stdio.h>

#include "hack/sim/scenario.h"

/* Print the expectation of sc to f, with cpus for a node whose CPUs the scenario leaves open. */
void expect_print(FILE *f, const struct scenario *sc, double cpus);

#endif
