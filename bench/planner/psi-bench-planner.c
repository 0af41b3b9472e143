/* psi-bench-planner: the planner's cost in a storm, without a cluster.
 *
 * Per size (nodes; ten VMs a node on average) it generates one storm cycle as the mover
 * (controller/reconcile/mover.c) hands it to the planner: node sizes 4 to 96 CPUs, a share of
 * the nodes (--hot, default 15 %) pushed 10 to 20 points above evictAbovePercent and sustained
 * there, the rest spread from idle to warm; every reading is the kernel's CPU "some" at the
 * node's demand (model_kernel_cpu_some, hack/sim/model.h, fitted in bench/psi-kernel), usage is
 * what the kernel serves (the capacity at most), and demand is inferred from usage and the
 * reading by the planner's own rebalance_node_demand_scaled / rebalance_demand_scaled with the
 * node's first calibration, as the mover infers it. The PsiRebalance sets nothing but
 * eviction.mode Automatic (every other field at its default); VMs move by targeted live
 * migration. The candidates are the VMs on the sources (gather_candidates collects no other
 * pods); requests are read on the MOVER_MAX_LISTED nodes cycle_listing puts first, as the
 * mover lists them.
 *
 * Timed, --runs times each, median and p90 of wall (CLOCK_MONOTONIC) and CPU
 * (CLOCK_PROCESS_CPUTIME_ID) time:
 *   plan     rebalance_plan, the pure function the mover calls each cycle;
 *   listing  cycle_listing, which picks the nodes whose requests are read;
 *   gather   gather_candidates: the pods of an informer (fed the generated pods through its
 *            pure list entry points, projected by gather_pod_projection) matched to the
 *            source nodes by name.
 * Memory: the process's peak resident set (VmHWM) over the size's runs, reset at the start of
 * the size through /proc/self/clear_refs, beside the resident set before the runs (the
 * generated cluster and informer): their difference is what the timed calls added at most.
 *
 * It also prints a digest of the plan (its moves in order, reason and message): two builds
 * that decide alike print the same digest for the same seed.
 *
 *   psi-bench-planner [--sizes 50,500,5000] [--runs 15] [--seed 1] [--hot 0.15] [--scenario room|full|limited]
 *
 * Nothing here asserts a timing: it is not part of the test command (bench/README.md). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "api/psirebalance.h"
#include "hack/sim/model.h"
#include "kube/informer.h"
#include "reconcile/gather.h"
#include "reconcile/move/cycle.h"
#include "reconcile/move/plan.h"
#include "reconcile/mover.h"

#define GIB 1073741824.0
#define VMS_PER_NODE 10
#define NAMESPACES 20

struct bench_vm {
    char name[24], ns[8], workload[64];
    double cpu, vcpus, mem; /* true demand (cores), vCPUs, memory requested (bytes) */
    size_t node;
};

struct bench_cluster {
    size_t nn, nv;
    char (*names)[16];
    double *cpus, *demand; /* per node: capacity, true demand (cores) */
    struct bench_vm *v;
    uint64_t rng;
};

static double rnd(struct bench_cluster *cl)
{
    cl->rng ^= cl->rng << 13, cl->rng ^= cl->rng >> 7, cl->rng ^= cl->rng << 17;
    return (double)(cl->rng >> 11) / 9007199254740992.0;
}

/* The load at which the kernel curve reads pressure p (percent, below 100). */
static double load_for(double p)
{
    return MODEL_KERNEL_CPU_SCALE * pow(-log(1 - p / 100.0), 1.0 / MODEL_KERNEL_CPU_SHAPE);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "psi-bench-planner: out of memory\n");
        exit(1);
    }
    return p;
}

/* nn nodes, about VMS_PER_NODE VMs each; a share `hot` of the nodes 10 to 20 points above
 * evict_above, the others at loads low to high. */
static void generate(struct bench_cluster *cl, size_t nn, uint64_t seed, double hot, double low, double high,
                     double evict_above)
{
    static const double sizes[] = {4, 8, 16, 24, 32, 48, 64, 96};
    *cl = (struct bench_cluster){.nn = nn, .rng = seed | 1};
    cl->names = xcalloc(nn, sizeof(*cl->names));
    cl->cpus = xcalloc(nn, sizeof(double));
    cl->demand = xcalloc(nn, sizeof(double));
    cl->v = xcalloc(nn * VMS_PER_NODE * 2, sizeof(*cl->v));
    for (size_t i = 0; i < nn; i++) {
        snprintf(cl->names[i], sizeof(cl->names[i]), "node-%05zu", i);
        cl->cpus[i] = sizes[(int)(rnd(cl) * 8)];
        double load = rnd(cl) < hot ? load_for(evict_above + 10 + rnd(cl) * 10) : low + rnd(cl) * (high - low);
        size_t k = VMS_PER_NODE / 2 + (size_t)(rnd(cl) * (VMS_PER_NODE + 1)); /* 5 to 15 */
        double weights[2 * VMS_PER_NODE], sum = 0;
        for (size_t j = 0; j < k; j++)
            sum += weights[j] = 0.2 + rnd(cl);
        for (size_t j = 0; j < k; j++) {
            struct bench_vm *v = &cl->v[cl->nv];
            v->cpu = load * cl->cpus[i] * weights[j] / sum;
            v->vcpus = fmax(1, ceil(v->cpu * (1 + rnd(cl))));
            v->mem = v->vcpus * 2 * GIB;
            v->node = i;
            snprintf(v->name, sizeof(v->name), "vm-%zu", cl->nv);
            snprintf(v->ns, sizeof(v->ns), "ns-%02d", (int)(rnd(cl) * NAMESPACES));
            snprintf(v->workload, sizeof(v->workload), "VirtualMachineInstance %s/%s", v->ns, v->name);
            cl->demand[i] += v->cpu;
            cl->nv++;
        }
    }
}

static void cluster_free(struct bench_cluster *cl)
{
    free(cl->names);
    free(cl->cpus);
    free(cl->demand);
    free(cl->v);
}

/* The planner's parameters for a PsiRebalance that sets eviction.mode Automatic alone. */
static struct rebalance_params automatic_params(void)
{
    struct api_spec spec = {0};
    if (api_spec_defaults(&spec) < 0) {
        fprintf(stderr, "psi-bench-planner: api_spec_defaults failed\n");
        exit(1);
    }
    spec.eviction.mode = API_MODE_AUTOMATIC;
    struct rebalance_params p = cycle_params(&spec);
    api_spec_free(&spec);
    p.targeted = true;
    return p;
}

/* The share of its demand a VM on node i is served: the kernel serves the capacity at most. */
static double served(const struct bench_cluster *cl, size_t i)
{
    return fmin(1, cl->cpus[i] / fmax(cl->demand[i], 1e-9));
}

/* The planner's input as the mover builds it: nodes, sources, candidates (the VMs on the
 * sources), requests on the nodes cycle_listing puts first. */
static size_t observe(const struct bench_cluster *cl, const struct rebalance_params *p, struct rebalance_node *nodes,
                      bool *is_source, struct rebalance_candidate *c)
{
    for (size_t i = 0; i < cl->nn; i++) {
        double pc = 100 * model_kernel_cpu_some(cl->demand[i], cl->cpus[i]);
        double usage = cl->demand[i] * served(cl, i);
        double k = rebalance_calibrate(0, usage / cl->cpus[i], pc);
        double memory = cl->cpus[i] * 4 * GIB;
        nodes[i] = (struct rebalance_node){
            .name = cl->names[i],
            .selected = true,
            .tainted = pc > p->taint_above,
            .pressure = pc,
            .sustained = pc > p->evict_above,
            .cpus = cl->cpus[i],
            .demand = rebalance_node_demand_scaled(usage, cl->cpus[i], pc, k),
            .alloc_cpu = cl->cpus[i],
            .alloc_memory = memory,
            .alloc_pods = 250,
            .req_cpu = NAN,
            .req_memory = NAN,
            .req_pods = NAN,
            .cpu_pressure = pc,
            .mem_pressure = NAN,
            .memory = memory,
            .mem_used = NAN,
        };
        nodes[i].scale[REBALANCE_CPU] = k;
        is_source[i] = rebalance_is_source(p, &nodes[i]);
    }
    size_t nc = 0;
    for (size_t j = 0; j < cl->nv; j++) {
        const struct bench_vm *v = &cl->v[j];
        if (!is_source[v->node])
            continue;
        const struct rebalance_node *n = &nodes[v->node];
        c[nc++] = (struct rebalance_candidate){
            .ns = v->ns,
            .name = v->name,
            .workload = v->workload,
            .node = v->node,
            .req_cpu = v->vcpus / 10,
            .req_memory = v->mem,
            .demand = rebalance_demand_scaled(v->cpu * served(cl, v->node), n->cpu_pressure, n->scale[REBALANCE_CPU]),
            .max_demand = v->vcpus,
            .mem_used = NAN,
            .vm = true,
        };
    }
    size_t *order = xcalloc(cl->nn, sizeof(size_t));
    size_t listed = cycle_listing(p, nodes, cl->nn, c, nc, order);
    for (size_t k = 0; k < listed && k < MOVER_MAX_LISTED; k++) {
        struct rebalance_node *t = &nodes[order[k]];
        t->req_cpu = t->req_memory = t->req_pods = 0;
        for (size_t j = 0; j < cl->nv; j++)
            if (cl->v[j].node == order[k])
                t->req_cpu += cl->v[j].vcpus / 10, t->req_memory += cl->v[j].mem, t->req_pods += 1;
    }
    free(order);
    return nc;
}

/* The generated VMs' virt-launcher pods, as the API server lists them. */
static struct kube_informer *pods_informer(const struct bench_cluster *cl)
{
    struct kube_err err;
    struct kube_informer_opts o = {
        .path = "/api/v1/pods", .project = gather_pod_projection, .free_value = (void (*)(void *))cJSON_Delete};
    struct kube_informer *inf = kube_informer_new(&o, &err);
    if (!inf) {
        fprintf(stderr, "psi-bench-planner: informer: %s\n", err.msg);
        exit(1);
    }
    kube_informer_list_begin(inf);
    for (size_t j = 0; j < cl->nv; j++) {
        const struct bench_vm *v = &cl->v[j];
        char text[1024];
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"virt-launcher-%s\",\"namespace\":\"%s\",\"uid\":\"u%zu\","
                 "\"resourceVersion\":\"%zu\",\"labels\":{\"kubevirt.io\":\"virt-launcher\"},"
                 "\"ownerReferences\":[{\"kind\":\"VirtualMachineInstance\",\"name\":\"%s\",\"controller\":true}]},"
                 "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"compute\",\"resources\":{\"requests\":"
                 "{\"cpu\":\"%.0fm\",\"memory\":\"%.0f\"}}}]},\"status\":{\"phase\":\"Running\"}}",
                 v->name, v->ns, j, j + 1, v->name, cl->names[v->node], v->vcpus * 100, v->mem);
        cJSON *pod = cJSON_Parse(text);
        if (!pod) {
            fprintf(stderr, "psi-bench-planner: bad pod JSON\n");
            exit(1);
        }
        kube_informer_list_item(inf, pod);
    }
    kube_informer_list_end(inf, "1");
    return inf;
}

/* ---- timing ---- */

struct sample {
    double wall_ms, cpu_ms;
};

static double now_ms(clockid_t clk)
{
    struct timespec t;
    clock_gettime(clk, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (nearest rank) of n values (sorted in place). */
static double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof(double), cmp_double);
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

static void report(const char *what, size_t nodes, struct sample *s, size_t n)
{
    double *w = xcalloc(n, sizeof(double)), *c = xcalloc(n, sizeof(double));
    for (size_t k = 0; k < n; k++)
        w[k] = s[k].wall_ms, c[k] = s[k].cpu_ms;
    printf("%-8s %6zu nodes: wall median %9.3f ms p90 %9.3f ms; cpu median %9.3f ms p90 %9.3f ms (%zu runs)\n", what,
           nodes, quantile(w, n, 0.5), quantile(w, n, 0.9), quantile(c, n, 0.5), quantile(c, n, 0.9), n);
    free(w);
    free(c);
}

/* VmHWM or VmRSS of this process, KiB (-1 unknown). */
static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t len = strlen(field);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, field, len) == 0 && line[len] == ':')
            v = strtol(line + len + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* FNV-1a over the plan's moves, reason and message. */
static uint64_t digest(const struct rebalance_plan *plan)
{
    uint64_t h = 1469598103934665603ULL;
    char buf[256];
    for (size_t k = 0; k < plan->nmoves; k++) {
        const struct rebalance_move *m = &plan->moves[k];
        int len = snprintf(buf, sizeof(buf), "%zu %zu %zu %.9g %.9g %.9g|", m->candidate, m->source, m->destination,
                           m->relief, m->src_pressure_after, m->dst_pressure_after);
        for (int i = 0; i < len; i++)
            h = (h ^ (unsigned char)buf[i]) * 1099511628211ULL;
    }
    for (const char *s = plan->reason; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    for (const char *s = plan->message; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The storms: with room (the other nodes at loads 0.05 to 0.75, from idle to warm: moves are
 * planned), full (the other nodes at loads 0.6 to 0.68, reading 17 to 24 %: none below
 * untaintBelowPercent, so nothing can take a workload, and the planner looks at every source
 * before it says so), and limited (as room, with maxTotal 100: the in-flight migration limits
 * stop the moves after the first sources while maxTotal is not used, so every later source is
 * left with no move, each is planned in full, and the planner plans the cycle again with each
 * of the first REBALANCE_PROMOTIONS of them first: the most a plan does). */
struct scenario {
    const char *name;
    double low, high; /* the other nodes' loads */
    int max_total;    /* > 0: eviction.maxTotal */
};
static const struct scenario scenarios[] = {
    {"room", 0.05, 0.75, 0}, {"full", 0.6, 0.68, 0}, {"limited", 0.05, 0.75, 100}};

static void bench_size(size_t nn, int runs, uint64_t seed, double hot, const struct scenario *sc)
{
    struct rebalance_params p = automatic_params();
    if (sc->max_total > 0)
        p.max_total = sc->max_total;
    struct bench_cluster cl;
    generate(&cl, nn, seed, hot, sc->low, sc->high, p.evict_above);
    struct rebalance_node *nodes = xcalloc(nn, sizeof(*nodes));
    bool *is_source = xcalloc(nn, sizeof(bool));
    struct rebalance_candidate *c = xcalloc(cl.nv, sizeof(*c));
    size_t nc = observe(&cl, &p, nodes, is_source, c), nsrc = 0;
    for (size_t i = 0; i < nn; i++)
        nsrc += is_source[i];
    struct kube_informer *pods = pods_informer(&cl);
    struct mover_node *mn = xcalloc(nn, sizeof(*mn));
    for (size_t i = 0; i < nn; i++)
        mn[i] = (struct mover_node){.name = cl.names[i]};
    printf("-- %s: %zu nodes, %zu VMs, %zu sources, %zu candidates\n", sc->name, nn, cl.nv, nsrc, nc);

    struct sample *s = xcalloc((size_t)runs, sizeof(*s));
    long rss_before = status_kib("VmRSS");
    reset_peak();
    struct rebalance_plan plan = {0};
    for (int k = 0; k < runs; k++) {
        rebalance_plan_free(&plan);
        double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (rebalance_plan(&p, nodes, nn, c, nc, &plan) < 0) {
            fprintf(stderr, "psi-bench-planner: rebalance_plan: out of memory\n");
            exit(1);
        }
        s[k] = (struct sample){now_ms(CLOCK_MONOTONIC) - w0, now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0};
    }
    report("plan", nn, s, (size_t)runs);
    printf("         plan: %s, %zu moves, digest %016llx: %.160s\n", plan.reason, plan.nmoves,
           (unsigned long long)digest(&plan), plan.message);
    rebalance_plan_free(&plan);

    size_t *order = xcalloc(nn, sizeof(size_t));
    for (int k = 0; k < runs; k++) {
        double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
        cycle_listing(&p, nodes, nn, c, nc, order);
        s[k] = (struct sample){now_ms(CLOCK_MONOTONIC) - w0, now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0};
    }
    report("listing", nn, s, (size_t)runs);
    free(order);

    size_t matched = 0;
    for (int k = 0; k < runs; k++) {
        struct gather_candidates g = {0};
        double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (gather_candidates(pods, mn, nn, is_source, &g) < 0) {
            fprintf(stderr, "psi-bench-planner: gather_candidates: out of memory\n");
            exit(1);
        }
        s[k] = (struct sample){now_ms(CLOCK_MONOTONIC) - w0, now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0};
        matched = g.n;
        gather_candidates_free(&g);
    }
    report("gather", nn, s, (size_t)runs);
    printf("         gather: %zu pods matched to the sources (of %zu)\n", matched, cl.nv);
    printf("         memory: VmRSS %ld KiB before the runs, VmHWM %ld KiB over them\n", rss_before,
           status_kib("VmHWM"));

    free(s);
    free(mn);
    kube_informer_free(pods);
    free(c);
    free(is_source);
    free(nodes);
    cluster_free(&cl);
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: psi-bench-planner [--sizes 50,500,5000] [--runs 15] [--seed 1] [--hot 0.15] [--scenario room|full|limited]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *sizes = "50,500,5000";
    int runs = 15;
    uint64_t seed = 1;
    double hot = 0.15;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "--sizes") == 0)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--hot") == 0)
            hot = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--scenario") == 0)
            only = argv[++i];
        else
            usage();
    }
    if (runs < 1 || hot < 0 || hot > 1)
        usage();
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        long n = strtol(tok, NULL, 10);
        if (n < 1) {
            fprintf(stderr, "psi-bench-planner: bad size '%s'\n", tok);
            return 2;
        }
        for (size_t k = 0; k < sizeof(scenarios) / sizeof(scenarios[0]); k++)
            if (!only || strcmp(only, scenarios[k].name) == 0)
                bench_size((size_t)n, runs, seed, hot, &scenarios[k]);
    }
    free(list);
    return 0;
}
