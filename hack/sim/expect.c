/* expect: what the model gives a scenario's placement (see expect.h). */
#include "hack/sim/expect.h"

#include <stdlib.h>
#include <string.h>

#include "hack/sim/model.h"

struct expect_node {
    const char *name;
    double cpu, memory, io;
};

static int by_name(const void *a, const void *b)
{
    const struct expect_node *x = a, *y = b;
    size_t lx = strlen(x->name), ly = strlen(y->name);
    return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x->name, y->name);
}

void expect_print(FILE *f, const struct scenario *sc, double cpus)
{
    struct expect_node *nodes = calloc(sc->n_vms ? sc->n_vms : 1, sizeof(*nodes));
    size_t n = 0, unplaced = 0;
    for (size_t i = 0; nodes && i < sc->n_vms; i++) {
        const struct scenario_vm *vm = &sc->vms[i];
        const char *node = vm->node ? vm->node : sc->start_node;
        if (!node) {
            unplaced++;
            continue;
        }
        size_t j = 0;
        while (j < n && strcmp(nodes[j].name, node) != 0)
            j++;
        if (j == n)
            nodes[n++].name = node;
        nodes[j].cpu += vm->cpu_demand;
        nodes[j].memory += vm->memory_demand;
        nodes[j].io += vm->io_demand;
    }
    if (!nodes) {
        fprintf(f, "out of memory\n");
        return;
    }
    qsort(nodes, n, sizeof(*nodes), by_name);
    fprintf(f, "%s: cpu curve %s\n", sc->name, sc->model.cpu.shape == MODEL_SHAPE_KERNEL ? "kernel" : "queueing");
    for (size_t j = 0; j < n; j++) {
        struct model_node_in in = {.cpu_demand = sc->node_base_cpu + nodes[j].cpu,
                                   .memory_demand = nodes[j].memory,
                                   .io = sc->node_io,
                                   .io_demand = nodes[j].io};
        scenario_node_size(sc, nodes[j].name, &in.cpus, &in.memory);
        if (in.cpus <= 0)
            in.cpus = cpus;
        struct model_node_out out;
        model_node(&sc->model, &in, &out);
        fprintf(f, "  %-12s cpus %5.1f demand %6.2f load %4.2f cpu some %5.1f %%", nodes[j].name, in.cpus,
                in.cpu_demand, in.cpu_demand / in.cpus, 100 * out.cpu_some);
        if (in.memory > 0)
            fprintf(f, "  memory %5.1f/%5.1f %%", 100 * out.memory_some, 100 * out.memory_full);
        if (in.io > 0)
            fprintf(f, "  io %5.1f/%5.1f %%", 100 * out.io_some, 100 * out.io_full);
        fprintf(f, "\n");
    }
    if (unplaced)
        fprintf(f, "  %zu VMs without a node (placed by the scheduler)\n", unplaced);
    free(nodes);
}
