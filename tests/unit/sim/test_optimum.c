/* Unit tests of the simulator's optimum search (hack/sim/optimum.c): against brute force over
 * every placement of random small clusters, and on a known scenario (seed.yaml). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hack/sim/optimum.h"

#define MAX_NODES 4
#define MAX_VMS 6

/* A small deterministic generator (xorshift64). */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double rng_pick(uint64_t *s, const double *values, size_t n)
{
    return values[rng_next(s) % n];
}

/* The reference: every placement of the VMs (unmovable ones where they are), the fewest that
 * differ from the start with no node hot; -1 when none is cool. */
static int brute_force(const struct optimum_problem *p)
{
    size_t at[MAX_VMS], total = 1;
    for (size_t v = 0; v < p->n_vms; v++)
        total *= p->n_nodes;
    int best = -1;
    for (size_t code = 0; code < total; code++) {
        size_t c = code;
        int moves = 0;
        bool valid = true;
        for (size_t v = 0; v < p->n_vms; v++) {
            at[v] = c % p->n_nodes;
            c /= p->n_nodes;
            if (at[v] != p->vms[v].node) {
                moves++;
                valid = valid && p->vms[v].migratable;
            }
        }
        if (!valid || (best >= 0 && moves >= best))
            continue;
        bool cool = true;
        for (size_t j = 0; j < p->n_nodes && cool; j++)
            cool = !optimum_node_hot(p, at, j);
        if (cool)
            best = moves;
    }
    return best;
}

/* The moves of r applied to p's start leave no node hot, and r names moves of movable VMs. */
static void assert_moves_cool(const struct optimum_problem *p, const struct optimum_result *r)
{
    size_t at[MAX_VMS];
    for (size_t v = 0; v < p->n_vms; v++)
        at[v] = p->vms[v].node;
    for (int i = 0; i < r->moves; i++) {
        assert_true(r->vm[i] < p->n_vms);
        assert_true(p->vms[r->vm[i]].migratable);
        assert_true(r->to[i] < p->n_nodes);
        at[r->vm[i]] = r->to[i];
    }
    for (size_t j = 0; j < p->n_nodes; j++)
        assert_false(optimum_node_hot(p, at, j));
}

/* Random clusters of 2-4 nodes and 1-6 VMs, kernel or queueing cpu curve, with and without
 * memory: the search's optimum is brute force's, and its moves do it. */
static void test_matches_brute_force(void **state)
{
    (void)state;
    static const double cpus[] = {2, 4, 6, 8};
    static const double demand[] = {0, 0.5, 1, 2, 3, 4};
    static const double memory[] = {0, 1, 2, 4};
    static const double thresholds[] = {0.05, 0.15, 0.30};
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    int found = 0, none = 0;
    for (int round = 0; round < 3000; round++) {
        struct model_params model;
        model_params_default(&model);
        if (rng_next(&seed) % 2)
            model.cpu.shape = MODEL_SHAPE_QUEUEING;
        struct optimum_node nodes[MAX_NODES];
        struct optimum_vm vms[MAX_VMS];
        size_t n_nodes = 2 + rng_next(&seed) % (MAX_NODES - 1), n_vms = 1 + rng_next(&seed) % MAX_VMS;
        bool with_memory = rng_next(&seed) % 2;
        for (size_t j = 0; j < n_nodes; j++)
            nodes[j] = (struct optimum_node){.cpus = rng_pick(&seed, cpus, 4),
                                             .memory = with_memory ? 8 : 0,
                                             .base_cpu = rng_next(&seed) % 2 ? 0.25 : 0};
        for (size_t v = 0; v < n_vms; v++)
            vms[v] = (struct optimum_vm){.cpu = rng_pick(&seed, demand, 6),
                                         .memory = with_memory ? rng_pick(&seed, memory, 4) : 0,
                                         .node = rng_next(&seed) % (n_nodes > 2 ? 2 : 1),
                                         .migratable = rng_next(&seed) % 6 != 0};
        struct optimum_problem p = {.model = &model,
                                    .nodes = nodes,
                                    .n_nodes = n_nodes,
                                    .vms = vms,
                                    .n_vms = n_vms,
                                    .threshold = rng_pick(&seed, thresholds, 3),
                                    .max_depth = OPTIMUM_MAX_DEPTH};
        struct optimum_result r;
        optimum_search(&p, &r);
        int want = brute_force(&p);
        if (want < 0) {
            if (r.status != OPTIMUM_NONE)
                fail_msg("round %d: brute force finds no placement, search says %d (%d)", round, r.status, r.moves);
            none++;
            continue;
        }
        if (r.status != OPTIMUM_FOUND || r.moves != want)
            fail_msg("round %d: brute force %d, search status %d moves %d", round, want, r.status, r.moves);
        assert_moves_cool(&p, &r);
        found++;
    }
    /* the generator covers both outcomes and non-trivial optima */
    assert_true(found > 500);
    assert_true(none > 100);
}

/* Past the limits the search says so instead of answering. */
static void test_not_exact_past_limits(void **state)
{
    (void)state;
    struct model_params model;
    model_params_default(&model);
    struct optimum_node nodes[OPTIMUM_MAX_NODES + 1] = {{0}};
    struct optimum_vm vm = {.cpu = 1, .migratable = true};
    struct optimum_problem p = {
        .model = &model, .nodes = nodes, .n_nodes = OPTIMUM_MAX_NODES + 1, .vms = &vm, .n_vms = 1, .threshold = 0.15};
    struct optimum_result r;
    optimum_search(&p, &r);
    assert_int_equal(r.status, OPTIMUM_NOT_EXACT);
    p.n_nodes = 2;
    p.max_depth = OPTIMUM_MAX_DEPTH + 1;
    optimum_search(&p, &r);
    assert_int_equal(r.status, OPTIMUM_NOT_EXACT);
}

/* seed.yaml: three hot 2-vCPU VMs and three idle ones on a 6-CPU worker-0 (~83 %); two hot
 * ones must leave (one leaves ~33 %), to the two empty workers. */
static void test_seed_scenario(void **state)
{
    (void)state;
    const char *base = getenv("PSI_TESTDATA");
    assert_non_null(base);
    char path[1024];
    snprintf(path, sizeof(path), "%s/../../hack/sim/scenarios/seed.yaml", base);
    char err[512] = "";
    struct scenario *sc = scenario_load(path, err, sizeof(err));
    if (!sc)
        fail_msg("%s", err);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(optimum_print(f, sc, 0.15, 0), 0);
    fclose(f);
    scenario_free(sc);
    if (!strstr(text, "optimum: 2 migrations") || !strstr(text, "worker-0 -> worker-1") ||
        !strstr(text, "worker-0 -> worker-2"))
        fail_msg("unexpected: %s", text);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_brute_force),
        cmocka_unit_test(test_not_exact_past_limits),
        cmocka_unit_test(test_seed_scenario),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
