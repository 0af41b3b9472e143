/* optimum: the fewest migrations below a pressure threshold (see optimum.h). */
#include "hack/sim/optimum.h"

#include <stdlib.h>
#include <string.h>

struct search {
    const struct optimum_problem *p;
    size_t *at;
    bool *moved;
    struct optimum_result *r;
    bool out_of_steps;
};

static void node_out(const struct optimum_problem *p, const size_t *at, size_t j, double drop_cpu, double drop_memory,
                     struct model_node_out *out)
{
    struct model_node_in in = {.cpus = p->nodes[j].cpus,
                               .cpu_demand = p->nodes[j].base_cpu - drop_cpu,
                               .memory = p->nodes[j].memory,
                               .memory_demand = -drop_memory};
    for (size_t v = 0; v < p->n_vms; v++)
        if (at[v] == j) {
            in.cpu_demand += p->vms[v].cpu;
            in.memory_demand += p->vms[v].memory;
        }
    model_node(p->model, &in, out);
}

static bool out_hot(const struct optimum_problem *p, size_t j, const struct model_node_out *out)
{
    bool memory = p->nodes[j].memory > 0 && out->memory_some > 0;
    return out->cpu_some >= p->threshold || (memory && out->memory_some >= p->threshold);
}

bool optimum_node_hot(const struct optimum_problem *p, const size_t *at, size_t j)
{
    struct model_node_out out;
    node_out(p, at, j, 0, 0, &out);
    return out_hot(p, j, &out);
}

/* The fewest VMs in idx[0..n) whose leaving node j makes its cpu (memory: false) pressure
 * alone fall below the threshold: the largest first, since pressure grows with demand; past any
 * depth when even all of them do not. */
static int must_leave_one(const struct search *s, size_t j, const size_t *idx, size_t n, bool memory)
{
    const struct optimum_problem *p = s->p;
    bool taken[OPTIMUM_MAX_VMS] = {false};
    double cpu = 0, mem = 0;
    for (size_t k = 0;; k++) {
        struct model_node_out out;
        node_out(p, s->at, j, cpu, mem, &out);
        bool hot = memory ? p->nodes[j].memory > 0 && out.memory_some > 0 && out.memory_some >= p->threshold
                          : out.cpu_some >= p->threshold;
        if (!hot)
            return (int)k;
        if (k == n)
            return OPTIMUM_MAX_DEPTH + 1;
        size_t m = n;
        for (size_t q = 0; q < n; q++)
            if (!taken[q] && (m == n || (memory ? p->vms[idx[q]].memory > p->vms[idx[m]].memory
                                                : p->vms[idx[q]].cpu > p->vms[idx[m]].cpu)))
                m = q;
        taken[m] = true;
        cpu += p->vms[idx[m]].cpu;
        mem += p->vms[idx[m]].memory;
    }
}

/* A lower bound on the VMs that must leave node j: the larger of what cpu and memory alone need. */
static int must_leave(const struct search *s, size_t j)
{
    const struct optimum_problem *p = s->p;
    size_t idx[OPTIMUM_MAX_VMS], n = 0;
    for (size_t v = 0; v < p->n_vms; v++)
        if (s->at[v] == j && !s->moved[v] && p->vms[v].migratable)
            idx[n++] = v;
    int c = must_leave_one(s, j, idx, n, false), m = must_leave_one(s, j, idx, n, true);
    return c > m ? c : m;
}

/* The lower bound on the moves still needed, and the first hot node (n_nodes: none). */
static int bound(const struct search *s, size_t *first_hot)
{
    int lb = 0;
    *first_hot = s->p->n_nodes;
    for (size_t j = 0; j < s->p->n_nodes; j++)
        if (optimum_node_hot(s->p, s->at, j)) {
            if (*first_hot == s->p->n_nodes)
                *first_hot = j;
            lb += must_leave(s, j);
        }
    return lb;
}

/* Whether node j looks like node k now (same sizes and the same demand on it). */
static bool nodes_alike(const struct search *s, size_t j, size_t k)
{
    const struct optimum_problem *p = s->p;
    const struct optimum_node *a = &p->nodes[j], *b = &p->nodes[k];
    if (a->cpus != b->cpus || a->memory != b->memory || a->base_cpu != b->base_cpu)
        return false;
    double cj = 0, ck = 0, mj = 0, mk = 0;
    for (size_t v = 0; v < p->n_vms; v++) {
        if (s->at[v] == j) {
            cj += p->vms[v].cpu;
            mj += p->vms[v].memory;
        } else if (s->at[v] == k) {
            ck += p->vms[v].cpu;
            mk += p->vms[v].memory;
        }
    }
    return cj == ck && mj == mk;
}

static bool dfs(struct search *s, int depth, int left)
{
    if (++s->r->steps > OPTIMUM_MAX_STEPS) {
        s->out_of_steps = true;
        return false;
    }
    size_t hot;
    int lb = bound(s, &hot);
    if (hot == s->p->n_nodes) {
        s->r->moves = depth;
        return true;
    }
    if (lb > left)
        return false;
    const struct optimum_problem *p = s->p;
    for (size_t v = 0; v < p->n_vms; v++) {
        if (s->at[v] != hot || s->moved[v] || !p->vms[v].migratable)
            continue;
        bool seen = false; /* an alike VM on this node was tried already */
        for (size_t u = 0; u < v && !seen; u++)
            seen = s->at[u] == hot && !s->moved[u] && p->vms[u].migratable && p->vms[u].cpu == p->vms[v].cpu &&
                   p->vms[u].memory == p->vms[v].memory;
        if (seen)
            continue;
        for (size_t to = 0; to < p->n_nodes; to++) {
            if (to == hot)
                continue;
            bool alike = false;
            for (size_t k = 0; k < to && !alike; k++)
                alike = k != hot && nodes_alike(s, k, to);
            if (alike)
                continue;
            s->at[v] = to;
            s->moved[v] = true;
            s->r->vm[depth] = v;
            s->r->to[depth] = to;
            bool ok = dfs(s, depth + 1, left - 1);
            s->at[v] = hot;
            s->moved[v] = false;
            if (ok || s->out_of_steps)
                return ok;
        }
    }
    return false;
}

void optimum_search(const struct optimum_problem *p, struct optimum_result *r)
{
    memset(r, 0, sizeof(*r));
    r->status = OPTIMUM_NOT_EXACT;
    if (p->n_nodes > OPTIMUM_MAX_NODES || p->n_vms > OPTIMUM_MAX_VMS || p->max_depth > OPTIMUM_MAX_DEPTH ||
        p->max_depth < 0)
        return;
    size_t at[OPTIMUM_MAX_VMS + 1];
    bool moved[OPTIMUM_MAX_VMS + 1];
    for (size_t v = 0; v < p->n_vms; v++) {
        at[v] = p->vms[v].node;
        moved[v] = false;
    }
    struct search s = {.p = p, .at = at, .moved = moved, .r = r};
    for (int d = 0; d <= p->max_depth; d++) {
        if (dfs(&s, 0, d)) {
            r->status = OPTIMUM_FOUND;
            return;
        }
        if (s.out_of_steps)
            return;
    }
    r->status = OPTIMUM_NONE;
}

/* The index of node name in names[0..*n), added when new; n_max when full. */
static size_t node_index(const char **names, size_t *n, size_t n_max, const char *name)
{
    for (size_t j = 0; j < *n; j++)
        if (strcmp(names[j], name) == 0)
            return j;
    if (*n == n_max)
        return n_max;
    names[*n] = name;
    return (*n)++;
}

int optimum_print(FILE *f, const struct scenario *sc, double threshold, double cpus)
{
    size_t n_max = OPTIMUM_MAX_NODES + 1, n = 0, n_vms = 0;
    const char **names = calloc(n_max, sizeof(*names));
    char(*workers)[32] = calloc(n_max, sizeof(*workers));
    struct optimum_node *nodes = calloc(n_max, sizeof(*nodes));
    struct optimum_vm *vms = calloc(sc->n_vms ? sc->n_vms : 1, sizeof(*vms));
    size_t *vm_of = calloc(sc->n_vms ? sc->n_vms : 1, sizeof(*vm_of));
    int rc = -1;
    if (!names || !workers || !nodes || !vms || !vm_of) {
        fprintf(f, "%s: out of memory\n", sc->name);
        goto out;
    }
    for (int i = 0; i < sc->node_count && (size_t)i < n_max; i++) {
        snprintf(workers[i], sizeof(workers[i]), "worker-%d", i);
        node_index(names, &n, n_max, workers[i]);
    }
    for (size_t i = 0; i < sc->n_vms; i++) {
        const struct scenario_vm *vm = &sc->vms[i];
        const char *node = vm->node ? vm->node : sc->start_node;
        if (!node) {
            fprintf(f, "%s: VM %s has no node (the scheduler places it): no placement to search from\n", sc->name,
                    vm->name);
            goto out;
        }
        vms[n_vms] = (struct optimum_vm){.cpu = vm->cpu_demand,
                                         .memory = vm->memory_demand,
                                         .node = node_index(names, &n, n_max, node),
                                         .migratable = vm->migratable};
        vm_of[n_vms++] = i;
    }
    if (n > OPTIMUM_MAX_NODES) {
        fprintf(f, "%s: not searched exactly (more than %d nodes)\n", sc->name, OPTIMUM_MAX_NODES);
        rc = 0;
        goto out;
    }
    for (size_t j = 0; j < n; j++) {
        scenario_node_size(sc, names[j], &nodes[j].cpus, &nodes[j].memory);
        if (nodes[j].cpus <= 0)
            nodes[j].cpus = cpus;
        if (!(nodes[j].cpus > 0)) {
            fprintf(f, "%s: node %s has no CPU count in the scenario: give CPUS\n", sc->name, names[j]);
            goto out;
        }
        nodes[j].base_cpu = sc->node_base_cpu;
    }
    struct optimum_problem p = {.model = &sc->model,
                                .nodes = nodes,
                                .n_nodes = n,
                                .vms = vms,
                                .n_vms = n_vms,
                                .threshold = threshold,
                                .max_depth = OPTIMUM_MAX_DEPTH};
    struct optimum_result r;
    optimum_search(&p, &r);
    fprintf(f, "%s: cpu curve %s, threshold %.1f %%, %zu nodes, %zu VMs\n", sc->name,
            sc->model.cpu.shape == MODEL_SHAPE_KERNEL ? "kernel" : "queueing", 100 * threshold, n, n_vms);
    if (r.status == OPTIMUM_NOT_EXACT)
        fprintf(f, "  not searched exactly (over %d nodes, %d VMs, %d moves or %ld steps)\n", OPTIMUM_MAX_NODES,
                OPTIMUM_MAX_VMS, OPTIMUM_MAX_DEPTH, OPTIMUM_MAX_STEPS);
    else if (r.status == OPTIMUM_NONE)
        fprintf(f, "  no set of at most %d migrations brings every node below the threshold\n", OPTIMUM_MAX_DEPTH);
    else {
        fprintf(f, "  optimum: %d migration%s (%ld search steps)\n", r.moves, r.moves == 1 ? "" : "s", r.steps);
        for (int i = 0; i < r.moves; i++)
            fprintf(f, "  move %s: %s -> %s\n", sc->vms[vm_of[r.vm[i]]].name, names[vms[r.vm[i]].node], names[r.to[i]]);
    }
    rc = 0;
out:
    free(names);
    free(workers);
    free(nodes);
    free(vms);
    free(vm_of);
    return rc;
}
