/* Unit tests of controller/reconcile/move (predict, fit, plan): fit, prediction, the
 * convergence rule, ranking, limits, the plan's reasons, and the
 * convergence property over random static loads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/move/plan.h"
#include "testutil.h"

/* ---- fit ---- */

static struct rebalance_node node(const char *name, double cpus, double demand, double pressure)
{
    return (struct rebalance_node){
        .name = name,
        .selected = true,
        .pressure = pressure,
        .sustained = true,
        .cpus = cpus,
        .demand = demand,
        .alloc_cpu = cpus,
        .alloc_memory = 64.0 * 1073741824,
        .alloc_pods = 110,
        .req_cpu = 0,
        .req_memory = 0,
        .req_pods = 0,
    };
}

static struct rebalance_candidate cand(const char *ns, const char *name, size_t on, double demand)
{
    return (struct rebalance_candidate){
        .ns = ns,
        .name = name,
        .workload = name,
        .node = on,
        .req_cpu = 0.2,
        .req_memory = 4.0 * 1073741824,
        .demand = demand,
        .migrate_s = NAN,
        .vm = true,
    };
}

static void test_fit(void **state)
{
    (void)state;
    char why[256];
    struct rebalance_node n = node("worker-1", 3, 0.3, 0);
    cJSON *labels = parse("{\"kubevirt.io/schedulable\":\"true\",\"zone\":\"a\",\"gen\":\"5\"}");
    cJSON *taints = parse("[{\"key\":\"dedicated\",\"value\":\"db\",\"effect\":\"NoSchedule\"},"
                          "{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"}]");
    bool oom;
    struct nodelabels *kept = nodelabels_new(labels, &oom);
    assert_non_null(kept);
    n.labels = kept;
    struct rebalance_candidate c = cand("vms", "p", 0, 1);
    assert_null(rebalance_fit(&c, &n, why, sizeof(why)));

    /* requests against allocatable minus what is placed */
    n.req_cpu = 2.9;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why)));
    assert_non_null(strstr(why, "insufficient cpu"));
    n.req_cpu = 2.8;
    assert_null(rebalance_fit(&c, &n, why, sizeof(why)));
    n.req_memory = 61.0 * 1073741824;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why)));
    assert_non_null(strstr(why, "insufficient memory"));
    n.req_memory = 0;
    n.req_pods = 110;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why)));
    n.req_pods = 0;

    /* node selector */
    cJSON *sel = parse("{\"kubevirt.io/schedulable\":\"true\"}");
    c.node_selector = sel;
    assert_null(rebalance_fit(&c, &n, why, sizeof(why)));
    cJSON *sel2 = parse("{\"zone\":\"b\"}");
    c.node_selector = sel2;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why)));
    c.node_selector = NULL;

    /* required node affinity: terms are ORed, expressions ANDed */
    cJSON *aff = parse("{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
                       "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"b\"]}]},"
                       "{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"4\"]},"
                       "{\"key\":\"gpu\",\"operator\":\"DoesNotExist\"}]}]}}}");
    c.affinity = aff;
    assert_null(rebalance_fit(&c, &n, why, sizeof(why)));
    cJSON *aff2 =
        parse("{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
              "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]},"
              "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"worker-2\"]}]}]}}}");
    c.affinity = aff2;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why)));
    assert_non_null(strstr(why, "affinity"));
    cJSON *aff3 =
        parse("{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
              "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"worker-1\"]}]}]}}}");
    c.affinity = aff3;
    assert_null(rebalance_fit(&c, &n, why, sizeof(why)));
    cJSON *empty_term = parse("{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
                              "{\"nodeSelectorTerms\":[{}]}}}");
    c.affinity = empty_term;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why))); /* an empty term matches nothing */
    c.affinity = NULL;

    /* taints: NoSchedule not tolerated; PreferNoSchedule does not matter */
    n.taints = taints;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why)));
    assert_non_null(strstr(why, "dedicated"));
    cJSON *tol = parse("[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"db\",\"effect\":\"NoSchedule\"}]");
    c.tolerations = tol;
    assert_null(rebalance_fit(&c, &n, why, sizeof(why)));
    cJSON *tol_wrong = parse("[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"web\"}]");
    c.tolerations = tol_wrong;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why)));
    cJSON *tol_all = parse("[{\"operator\":\"Exists\"}]");
    c.tolerations = tol_all;
    assert_null(rebalance_fit(&c, &n, why, sizeof(why)));

    /* cordoned: only a toleration of node.kubernetes.io/unschedulable lets it on */
    n.unschedulable = true;
    assert_null(rebalance_fit(&c, &n, why, sizeof(why))); /* tolerates everything */
    c.tolerations = tol;
    assert_non_null(rebalance_fit(&c, &n, why, sizeof(why)));
    assert_string_equal(why, "cordoned");

    nodelabels_free(kept);
    cJSON *items[] = {labels, taints, sel, sel2, aff, aff2, aff3, empty_term, tol, tol_wrong, tol_all};
    for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
        cJSON_Delete(items[i]);
}

/* ---- prediction and the convergence rule ---- */

static void test_prediction(void **state)
{
    (void)state;
    /* below capacity the kernel serves every demand: a workload wants what it uses */
    assert_true(fabs(rebalance_demand(1.0, 0) - 1.0) < 1e-12);
    assert_true(fabs(rebalance_demand(1.0, NAN) - 1.0) < 1e-12);
    assert_true(fabs(rebalance_demand(1.0, 50) - 1.0) < 1e-12);
    /* 83 % is load 1.07: each workload is served 1 / 1.07 of what it wants */
    assert_true(fabs(rebalance_demand(1.0, 83.31) - 1.07) < 0.001);
    /* on the flat part, at most the flat point's load: never unbounded */
    double flat = rebalance_load_from_some(REBALANCE_FLAT);
    assert_true(fabs(flat - 1.141) < 0.001);
    assert_true(fabs(rebalance_demand(1.0, 99) - flat) < 1e-9);
    assert_true(fabs(rebalance_demand(1.0, 100) - flat) < 1e-9);
    /* read with a scale: 50 % on a node that reads 2.5 times the curve is 20 %, load 0.63 */
    assert_true(fabs(rebalance_demand_scaled(1.0, 50, 2.5) - 1.0) < 1e-12);
    assert_true(fabs(rebalance_node_demand_scaled(0.5, 3, 50, 2.5) - 3 * rebalance_load_from_some(0.2)) < 1e-9);
    assert_true(fabs(rebalance_demand_scaled(1.0, 83.31, 0) - 1.07) < 0.001); /* no scale: 1 */
    /* a node: the load the reading says times its CPUs (29 %: 0.7), never below its usage */
    assert_true(fabs(rebalance_node_demand(1.5, 3, 28.85) - 2.1) < 0.003);
    assert_true(fabs(rebalance_node_demand(3.2, 3, 50) - 3.2) < 1e-9); /* above its CPUs: as measured */
    assert_true(fabs(rebalance_node_demand(3.0, 3, 100) - 3 * flat) < 1e-9);
    assert_true(fabs(rebalance_node_demand(1.5, 3, NAN) - 1.5) < 1e-12);
    assert_true(isnan(rebalance_node_demand(NAN, 3, 0)));
    assert_true(isnan(rebalance_node_demand(1, 0, 0)));
    /* memory: a node at its memory shows what waits only as pressure (114 GiB wanted of 64: ~44 %) */
    double gi = 1024.0 * 1024 * 1024;
    assert_true(fabs(rebalance_node_memory_demand(64 * gi, 64 * gi, 44) - 64 * gi / 0.56) < 1);
    assert_true(fabs(rebalance_node_memory_demand(60 * gi, 64 * gi, 20) - 64 * gi / 0.8) < 1); /* 94 %: saturated */
    assert_true(fabs(rebalance_node_memory_demand(40 * gi, 64 * gi, 1) - 40 * gi) < 1);        /* in use */
    assert_true(fabs(rebalance_node_memory_demand(64 * gi, 64 * gi, 90) - 128 * gi) < 1);      /* twice at most */
    assert_true(fabs(rebalance_node_memory_demand(114 * gi, 64 * gi, 44) - 114 * gi) < 1);     /* summed working sets */
    assert_true(isnan(rebalance_node_memory_demand(NAN, 64 * gi, 0)));
    assert_true(isnan(rebalance_node_memory_demand(gi, NAN, 0)));

    /* the curve: the kernel's, rising well below capacity and flat a little above it */
    assert_true(fabs(rebalance_curve(0.5) - 0.087) < 0.001);
    assert_true(fabs(rebalance_curve(0.7) - 0.289) < 0.001);
    assert_true(fabs(rebalance_curve(0.9) - 0.597) < 0.001);
    assert_true(fabs(rebalance_curve(1.0) - 0.747) < 0.001);
    assert_true(rebalance_curve(1.4) > 0.99 && rebalance_curve(3) <= 1);
    for (double L = 0.05; L < 1.6; L += 0.05)
        assert_true(rebalance_curve(L + 0.05) > rebalance_curve(L));
    assert_true(rebalance_curve(NAN) == 0 && rebalance_curve(0) == 0 && rebalance_curve(-1) == 0);
    assert_true(fabs(rebalance_predicted_pressure(1.0) - 74.7) < 0.1);
    assert_true(fabs(rebalance_predict(0.7, 1.5) - 43.3) < 0.1);
    assert_true(rebalance_predict(1.2, 5) == 100); /* capped */
    assert_true(rebalance_predicted_pressure(NAN) == 0);
    /* the inverse */
    assert_true(rebalance_load_from_some(0) == 0 && rebalance_load_from_some(-1) == 0);
    assert_true(isnan(rebalance_load_from_some(NAN)));
    assert_true(rebalance_load_from_some(1) == flat);
}

static void test_calibration(void **state)
{
    (void)state;
    /* the load from the share served: the kernel serves every demand below capacity */
    for (double L = 0.1; L < 0.97; L += 0.1)
        assert_true(fabs(rebalance_load_from_served(L) - L) < 1e-12);
    assert_true(isnan(rebalance_load_from_served(0.98))); /* saturated: the load cannot be told */
    assert_true(isnan(rebalance_load_from_served(NAN)));
    assert_true(isnan(rebalance_load_from_served(-0.1)));
    /* a node whose readings are twice the curve */
    double L = 0.8, served = L, P = 200 * rebalance_curve(L);
    assert_true(fabs(rebalance_calibrate(0, served, P) - 2.0) < 1e-6);
    assert_true(fabs(rebalance_calibrate(1.0, served, P) - (0.7 + 0.3 * 2.0)) < 1e-6);
    /* converges on repeated readings */
    double k = 0;
    for (int i = 0; i < 40; i++)
        k = rebalance_calibrate(k ? k : 1.0, served, P);
    assert_true(fabs(k - 2.0) < 0.01);
    /* uninformative readings (well below saturation, saturated, unknown) keep what was */
    assert_true(rebalance_calibrate(1.7, 0.3, 30) == 1.7);
    assert_true(rebalance_calibrate(1.7, 0.99, 30) == 1.7);
    assert_true(rebalance_calibrate(1.7, served, NAN) == 1.7);
    assert_true(rebalance_calibrate(0, 0.3, 30) == 0);
    /* clamped */
    assert_true(rebalance_calibrate(0, served, 100) <= REBALANCE_SCALE_MAX);
    assert_true(rebalance_calibrate(0, served, 0) >= REBALANCE_SCALE_MIN);
}

/* Plan with source s, destination t and one candidate of demand d on s; the moves' count
 * (the first to *mv). */
static size_t plan_one(const struct rebalance_params *p, struct rebalance_node s, struct rebalance_node t, double d,
                       struct rebalance_move *mv)
{
    struct rebalance_node n[2] = {s, t};
    struct rebalance_candidate c = cand("a", "vm", 0, d);
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(p, n, 2, &c, 1, &plan), 0);
    size_t k = plan.nmoves;
    if (k && mv)
        *mv = plan.moves[0];
    rebalance_plan_free(&plan);
    return k;
}

static void test_move_rules(void **state)
{
    (void)state;
    /* a target of 35 %: one move that gets the source below it contributes */
    struct rebalance_params p = {.evict_above = 30,
                                 .taint_above = 25,
                                 .untaint_below = 15,
                                 .target = 35,
                                 .max_per_node = 5,
                                 .max_per_namespace = 5,
                                 .max_total = 5,
                                 .max_in_flight = 5};
    struct rebalance_node s = node("worker-0", 6, 6.4, 83), t = node("worker-1", 6, 0.25, 0);
    struct rebalance_move mv;
    /* a hot VM to an idle node: the source's relief is its reading moved along its curve */
    assert_int_equal(plan_one(&p, s, t, 2.0, &mv), 1);
    assert_true(fabs(mv.src_load_after - 4.4 / 6) < 1e-9);
    assert_true(fabs(mv.dst_load_after - 2.25 / 6) < 1e-9);
    double k = 83 / (100 * rebalance_curve(6.4 / 6));
    assert_true(fabs(mv.src_pressure_after - (83 + 100 * k * (rebalance_curve(4.4 / 6) - rebalance_curve(6.4 / 6)))) <
                1e-6);
    /* the destination, uncalibrated, is predicted with the safety margin */
    assert_true(fabs(mv.dst_pressure_after -
                     REBALANCE_SAFETY * 100 * (rebalance_curve(2.25 / 6) - rebalance_curve(0.25 / 6))) < 1e-6);
    /* an idle VM lowers the pair's maximum but cannot get the source below any level: not made */
    assert_int_equal(plan_one(&p, s, t, 0.05, NULL), 0);
    /* the second hot VM to the node that took the first: it would pass the taint level */
    struct rebalance_node s2 = node("worker-0", 6, 4.4, 33), t2 = node("worker-1", 6, 2.25, 2.9);
    p.target = 30;
    assert_int_equal(plan_one(&p, s2, t2, 2.0, NULL), 0);
    assert_int_equal(plan_one(&p, s2, node("worker-2", 6, 0.25, 0), 2.0, NULL), 1);
    p.target = 35;
    /* a move that would make the destination the new, higher maximum: the convergence rule */
    struct rebalance_params q = p;
    q.evict_above = 15, q.taint_above = 90, q.target = 19;
    struct rebalance_node s4 = node("a", 3, 3.3, 20), t4 = node("b", 3, 1.5, 0);
    t4.scale[REBALANCE_CPU] = REBALANCE_SCALE_MIN;        /* read low: not the taint level, the rule stops it */
    assert_int_equal(plan_one(&q, s4, t4, 2.5, NULL), 0); /* 1.1 -> max(0.27, 1.33) */
    assert_int_equal(plan_one(&q, s4, node("big", 12, 1, 0), 2.5, NULL), 1);
    /* the pressure form of the rule: a lone VM on a node read high per load goes to a node read
     * low, though that one ends at a higher load (0.49 -> 0.56) */
    struct rebalance_params b = p;
    b.evict_above = 40, b.target = 0;
    struct rebalance_node s6 = node("high", 24, 11.8, 25.8),
                          t6 = node("low", 64, 23.9, 0.5 * 100 * rebalance_curve(23.9 / 64));
    s6.sustained = false, s6.tainted = true; /* the band: tainted, below evictAbovePercent */
    t6.scale[REBALANCE_CPU] = 0.5;
    assert_int_equal(plan_one(&b, s6, t6, 11.8, &mv), 1);
    assert_true(mv.dst_load_after > 11.8 / 24 && mv.dst_pressure_after < 10);
    /* not where the destination would end within 5 points of the taint level (20.8 %) */
    t6.scale[REBALANCE_CPU] = 1.6, t6.pressure = 1.6 * 100 * rebalance_curve(23.9 / 64);
    assert_int_equal(plan_one(&b, s6, t6, 11.8, NULL), 0);
    /* the safety margin against a calibration: 5 cores on 8 CPUs reads 29 % with the margin,
     * 19.5 % on a node calibrated at 1 */
    struct rebalance_node s5 = node("hot", 8, 8, 75), t5 = node("cool", 8, 1.4, 0);
    assert_int_equal(plan_one(&p, s5, t5, 3.6, NULL), 0);
    t5.scale[REBALANCE_CPU] = 1;
    assert_int_equal(plan_one(&p, s5, t5, 3.6, &mv), 1);
    assert_true(mv.dst_pressure_after > 19 && mv.dst_pressure_after < 20);
    /* what a destination reads beyond its curve counts too */
    t5.pressure = 3;
    assert_int_equal(plan_one(&p, s5, t5, 3.6, &mv), 1);
    assert_true(mv.dst_pressure_after > 22 && mv.dst_pressure_after < 23);
    /* unknowns never pass */
    assert_int_equal(plan_one(&p, s, node("u", 3, NAN, 0), 1, NULL), 0);
    assert_int_equal(plan_one(&p, s, node("u", 0, 0, 0), 1, NULL), 0);
    assert_int_equal(plan_one(&p, s, t, NAN, NULL), 0);
}

/* ---- the plan ---- */

static struct rebalance_params seed_params(void)
{
    return (struct rebalance_params){
        .evict_above = 30,
        .taint_above = 25,
        .untaint_below = 15,
        .max_per_node = 1,
        .max_per_namespace = 1,
        .max_total = 2,
        .max_in_flight = 2,
    };
}

/* The seed: three hot (2 cores) and three idle VMs on worker-0 of three 6-CPU workers. */
struct seed {
    struct rebalance_node nodes[3];
    struct rebalance_candidate c[6];
};

static void seed(struct seed *s)
{
    s->nodes[0] = node("worker-0", 6, 6.4, 83);
    s->nodes[1] = node("worker-1", 6, 0.25, 0);
    s->nodes[2] = node("worker-2", 6, 0.25, 0);
    const char *names[] = {"virt-launcher-hot-0-a",  "virt-launcher-hot-1-b",  "virt-launcher-hot-2-c",
                           "virt-launcher-idle-0-d", "virt-launcher-idle-1-e", "virt-launcher-idle-2-f"};
    for (int i = 0; i < 6; i++)
        s->c[i] = cand("psi-sim-seed", names[i], 0, i < 3 ? 2.0 : 0.05);
}

static void test_plan_seed(void **state)
{
    (void)state;
    struct seed s;
    seed(&s);
    struct rebalance_params p = seed_params();
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_MOVING);
    assert_int_equal(plan.nmoves, 1);             /* maxPerNode 1 */
    assert_int_equal(plan.moves[0].candidate, 0); /* a hot VM, ties broken by name */
    assert_int_equal(plan.moves[0].source, 0);
    assert_int_equal(plan.moves[0].destination, 1);
    assert_true(fabs(plan.moves[0].demand - 2) < 1e-9);
    assert_true(plan.moves[0].src_pressure_after > 30); /* 83 - (82.9 - 33.5) */
    rebalance_plan_free(&plan);

    /* at equal relief the cheaper move: the shorter migration expected, when both are known */
    s.c[0].migrate_s = 60, s.c[1].migrate_s = 20, s.c[2].migrate_s = 40;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.moves[0].candidate, 1);
    rebalance_plan_free(&plan);
    /* before that, the one whose own stall is higher: the move removes that stall too */
    s.c[2].stall = 40, s.c[1].stall = 10, s.c[0].stall = NAN;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.moves[0].candidate, 2);
    rebalance_plan_free(&plan);
    s.c[2].stall = 0; /* hot-1's 10 % over none (a missing reading counts as none) */
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.moves[0].candidate, 1);
    rebalance_plan_free(&plan);
    s.c[0].stall = 70, s.c[1].stall = 0; /* the most stalled first, its migration the longest (60 s) */
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.moves[0].candidate, 0);
    rebalance_plan_free(&plan);
    s.c[0].stall = 0;
    s.c[1].migrate_s = NAN; /* not estimated: after every estimated one (hot-2, 40 s, first) */
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.moves[0].candidate, 2);
    rebalance_plan_free(&plan);
    for (int i = 0; i < 3; i++) /* none estimated: the smaller memory request, then the name */
        s.c[i].migrate_s = NAN;
    s.c[2].req_memory = 2.0 * 1073741824;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.moves[0].candidate, 2);
    rebalance_plan_free(&plan);
    seed(&s);

    /* after it: worker-0 at 4.4 cores (33 %), worker-1 holds hot-0 (2.9 %) */
    s.nodes[0].demand = 4.4, s.nodes[0].pressure = 33;
    s.nodes[1].demand = 2.25, s.nodes[1].pressure = 2.9, s.nodes[1].req_cpu = 0.2;
    s.c[0].node = 1;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_int_equal(plan.moves[0].candidate, 1);
    assert_int_equal(plan.moves[0].destination, 2); /* worker-1 would reach the taint level */
    rebalance_plan_free(&plan);

    /* after the second: worker-0 at 2.4 cores, 3.8 %: nothing to do */
    s.nodes[0].demand = 2.4, s.nodes[0].pressure = 3.8;
    s.nodes[2].demand = 2.25, s.nodes[2].pressure = 2.9;
    s.c[1].node = 2;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.nmoves, 0);
    assert_string_equal(plan.reason, REBALANCE_NO_PRESSURE);
    rebalance_plan_free(&plan);
}

/* Targeted live migration (eviction.method Migrate): the VM goes to the destination chosen, so
 * a destination may take several VM moves in one cycle, each predicted on top of the ones
 * before; an evicted pod still makes its destination used (it lands where the scheduler wants). */
static void test_plan_targeted(void **state)
{
    (void)state;
    struct rebalance_node nodes[3] = {node("w0", 8, 8, 60), node("w1", 8, 0, 0), node("w2", 4, 3.5, 20)};
    struct rebalance_candidate c[3] = {cand("a", "vm-a", 0, 1.5), cand("b", "vm-b", 0, 1.5), cand("c", "vm-c", 0, 1.5)};
    struct rebalance_params p = seed_params();
    p.max_per_node = 3, p.max_total = 3, p.max_in_flight = 5, p.max_per_namespace = 1, p.kubevirt_per_node = 5;
    struct rebalance_plan plan;

    /* Evict: w2 is no destination (above untaintBelow), w1 takes one move per cycle */
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_int_equal(plan.moves[0].destination, 1);
    rebalance_plan_free(&plan);

    /* Migrate: w1 takes three, each predicted on top: 1.5, 3 and 4.5 cores on 8 CPUs */
    p.targeted = true;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 3);
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(plan.moves[k].source, 0);
        assert_int_equal(plan.moves[k].destination, 1);
        assert_true(fabs(plan.moves[k].dst_load - 1.5 * (double)k / 8) < 1e-9);
        assert_true(fabs(plan.moves[k].dst_load_after - 1.5 * (double)(k + 1) / 8) < 1e-9);
    }
    rebalance_plan_free(&plan);

    /* the destination stays below the taint level: on 4 CPUs only one fits (1.5/4 -> P 4.4 %,
     * 3/4 -> 54 %); that one leaves w0 above every level (37 %), but 23 points lower and w0 is
     * above evictAbovePercent: a higher evictAbovePercent would see it cross, so it is made */
    nodes[1].cpus = nodes[1].alloc_cpu = 4;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_int_equal(plan.moves[0].destination, 1);
    assert_true(fabs(plan.moves[0].src_pressure_after - 37) < 1);
    rebalance_plan_free(&plan);
    nodes[1].cpus = nodes[1].alloc_cpu = 8;

    /* pods that are not VMs are evicted: one per destination even with Migrate */
    for (size_t i = 0; i < 3; i++)
        c[i].vm = false;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    rebalance_plan_free(&plan);

    /* a VM after an eviction: the evicted pod made w1 used, the VM may still be sent there */
    c[1].vm = true;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 2);
    assert_int_equal(plan.moves[1].destination, 1);
    rebalance_plan_free(&plan);
}

static void test_plan_ranking_by_relief(void **state)
{
    (void)state;
    /* excess 2.1 cores (to below 10 %): the 2.2-core workload gets the node there as the 3-core
     * one does and is closer to the excess; a 0.5-core one does not */
    struct rebalance_node nodes[2] = {node("hot", 4, 4.2, 80), node("cool", 8, 1, 0)};
    struct rebalance_candidate c[3] = {cand("a", "big", 0, 3), cand("b", "fit", 0, 2.2), cand("c", "small", 0, 0.5)};
    struct rebalance_params p = seed_params();
    p.evict_above = 15, p.taint_above = 15, p.untaint_below = 10;
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 2, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_int_equal(plan.moves[0].candidate, 1);
    rebalance_plan_free(&plan);
    /* blocked ones are skipped */
    c[1].blocked = "cooling down";
    assert_int_equal(rebalance_plan(&p, nodes, 2, c, 3, &plan), 0);
    assert_int_equal(plan.moves[0].candidate, 0);
    rebalance_plan_free(&plan);
}

static void test_plan_limits(void **state)
{
    (void)state;
    /* two hot nodes, four cool ones, plenty of candidates */
    struct rebalance_node nodes[6] = {node("h0", 8, 11, 90), node("h1", 8, 10, 85), node("c0", 8, 0.5, 0),
                                      node("c1", 8, 0.5, 0), node("c2", 8, 0.5, 0), node("c3", 8, 0.5, 0)};
    struct rebalance_candidate c[8];
    char names[8][8];
    for (int i = 0; i < 8; i++) {
        snprintf(names[i], sizeof(names[i]), "p%d", i);
        c[i] = cand(i % 2 ? "ns-b" : "ns-a", names[i], (size_t)(i / 4), 2);
    }
    struct rebalance_params p = seed_params();
    p.max_per_node = 2, p.max_per_namespace = 10, p.max_total = 10, p.max_in_flight = 10;
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 6, c, 8, &plan), 0);
    assert_int_equal(plan.nmoves, 4); /* 2 per node, 4 destinations */
    for (size_t k = 0; k < plan.nmoves; k++)
        for (size_t j = k + 1; j < plan.nmoves; j++)
            assert_int_not_equal(plan.moves[k].destination, plan.moves[j].destination);
    rebalance_plan_free(&plan);

    p.max_total = 3; /* maxTotal */
    assert_int_equal(rebalance_plan(&p, nodes, 6, c, 8, &plan), 0);
    assert_int_equal(plan.nmoves, 3);
    rebalance_plan_free(&plan);

    p.max_total = 10, p.max_per_namespace = 1; /* one from ns-a, one from ns-b */
    assert_int_equal(rebalance_plan(&p, nodes, 6, c, 8, &plan), 0);
    assert_int_equal(plan.nmoves, 2);
    assert_string_not_equal(c[plan.moves[0].candidate].ns, c[plan.moves[1].candidate].ns);
    rebalance_plan_free(&plan);

    p.max_per_namespace = 10, p.max_in_flight = 3, p.in_flight = 2; /* one more migration may start */
    assert_int_equal(rebalance_plan(&p, nodes, 6, c, 8, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    rebalance_plan_free(&plan);

    p.in_flight = 3; /* none */
    assert_int_equal(rebalance_plan(&p, nodes, 6, c, 8, &plan), 0);
    assert_int_equal(plan.nmoves, 0);
    assert_string_equal(plan.reason, REBALANCE_LIMITED);
    assert_non_null(strstr(plan.message, "maxInFlightMigrations"));
    rebalance_plan_free(&plan);

    /* KubeVirt's limits, counting migrations anyone started: 5 per cluster ... */
    p.in_flight = 0, p.max_in_flight = 100, p.running = 4;
    assert_int_equal(rebalance_plan(&p, nodes, 6, c, 8, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    rebalance_plan_free(&plan);
    /* ... and 2 outbound per node */
    p.running = 0;
    nodes[0].outbound = 2;
    nodes[1].outbound = 1;
    assert_int_equal(rebalance_plan(&p, nodes, 6, c, 8, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_int_equal(plan.moves[0].source, 1);
    rebalance_plan_free(&plan);
    /* a pod that is no VM is not held by migration limits */
    for (int i = 0; i < 8; i++)
        c[i].vm = false;
    p.in_flight = 100, p.max_in_flight = 1;
    assert_int_equal(rebalance_plan(&p, nodes, 6, c, 8, &plan), 0);
    assert_int_equal(plan.nmoves, 4);
    rebalance_plan_free(&plan);
}

static void test_plan_reasons(void **state)
{
    (void)state;
    struct seed s;
    struct rebalance_params p = seed_params();
    struct rebalance_plan plan;

    /* every node hot: no destination, and the message says why for each */
    seed(&s);
    s.nodes[1].demand = 5, s.nodes[1].pressure = 41;
    s.nodes[2].demand = 4, s.nodes[2].pressure = 20; /* not a source (below 30) but above untaint */
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_int_equal(plan.nmoves, 0);
    assert_string_equal(plan.reason, REBALANCE_NO_DESTINATION);
    assert_non_null(strstr(plan.message, "worker-2: pressure not below untaintBelowPercent 15%"));
    assert_non_null(strstr(plan.message, "no node can take a workload"));
    rebalance_plan_free(&plan);
    s.nodes[2].pressure = 45; /* all three sources */
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_NO_DESTINATION);
    assert_non_null(strstr(plan.message, "every other selected node is a source too"));
    rebalance_plan_free(&plan);

    /* tainted, settling, cordoned destinations */
    seed(&s);
    s.nodes[1].tainted = true;
    s.nodes[2].unschedulable = true;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_NO_DESTINATION);
    assert_non_null(strstr(plan.message, "worker-1: tainted"));
    assert_non_null(strstr(plan.message, "worker-2: cordoned"));
    rebalance_plan_free(&plan);

    /* no source yet: not sustained */
    seed(&s);
    s.nodes[0].sustained = false;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_NO_PRESSURE);
    rebalance_plan_free(&plan);

    /* the source settles after a move */
    seed(&s);
    s.nodes[0].settling = true;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_SETTLING);
    rebalance_plan_free(&plan);

    /* nothing may move: the reasons are counted */
    seed(&s);
    for (int i = 0; i < 6; i++)
        s.c[i].blocked = i < 2 ? "cooling down" : i < 5 ? "prefer-no-eviction" : "excluded namespace";
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_NO_CANDIDATE);
    assert_non_null(strstr(plan.message, "2 cooling down, 3 prefer-no-eviction, 1 excluded namespace"));
    /* the count on its own too, for a verdict that replaces the message (NoPlacement) */
    assert_string_equal(plan.blocked, "of 6 pods there: 2 cooling down, 3 prefer-no-eviction, 1 excluded namespace");
    rebalance_plan_free(&plan);
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, NULL, 0, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_NO_CANDIDATE);
    assert_non_null(strstr(plan.message, "no pod there matches"));
    assert_string_equal(plan.blocked, "no pod there matches spec.eviction.podSelector");
    rebalance_plan_free(&plan);

    /* only idle VMs and held ones: no improving move, and the count says what was held */
    seed(&s);
    for (int i = 0; i < 3; i++)
        s.c[i].blocked = "migrating";
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_NO_IMPROVEMENT);
    assert_non_null(strstr(plan.blocked, "3 migrating"));
    assert_non_null(strstr(plan.message, plan.blocked));
    rebalance_plan_free(&plan);

    /* no usage reading */
    seed(&s);
    for (int i = 0; i < 6; i++)
        s.c[i].demand = NAN;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_USAGE_UNKNOWN);
    rebalance_plan_free(&plan);
    seed(&s);
    s.nodes[0].demand = NAN;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_USAGE_UNKNOWN);
    rebalance_plan_free(&plan);

    /* nothing fits (requests): no improving move, and the message names the misfit */
    seed(&s);
    s.nodes[1].req_cpu = 5.9, s.nodes[2].req_cpu = 5.9;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_NO_IMPROVEMENT);
    assert_non_null(strstr(plan.message, "insufficient cpu"));
    rebalance_plan_free(&plan);

    /* a destination with unknown requests or usage is no destination */
    seed(&s);
    s.nodes[1].req_cpu = NAN, s.nodes[2].demand = NAN;
    assert_int_equal(rebalance_plan(&p, s.nodes, 3, s.c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_NO_DESTINATION);
    rebalance_plan_free(&plan);
}

/* A source stays one until it is below the target (untaintBelow by default). */
static void test_relieving(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    struct rebalance_node n = node("n", 4, 5, 30);
    n.sustained = false;
    assert_false(rebalance_is_source(&p, &n)); /* below evictAbove 40 */
    n.tainted = true;
    assert_true(rebalance_is_source(&p, &n)); /* tainted, above taintAbove 25: the band is relieved */
    n.pressure = 25;
    assert_false(rebalance_is_source(&p, &n)); /* not above taintAbove */
    n.tainted = false, n.pressure = 30;
    n.relieving = true;
    assert_true(rebalance_is_source(&p, &n)); /* a source before, not yet below 15 */
    n.pressure = 14.9;
    assert_false(rebalance_is_source(&p, &n));
    p.target = 10;
    assert_true(rebalance_is_source(&p, &n));
    assert_true(rebalance_target(&p) == 10);
    p.target = 0;
    assert_true(rebalance_target(&p) == 15);
    n.selected = false;
    assert_false(rebalance_is_source(&p, &n));

    /* a relieving node at 30 %: one more move gets it below the target */
    struct rebalance_node nodes[2] = {node("w0", 4, 5.2, 30), node("w1", 8, 0.5, 0)};
    nodes[0].sustained = false, nodes[0].relieving = true;
    struct rebalance_candidate c[2] = {cand("a", "vm-a", 0, 2), cand("b", "vm-b", 0, 2)};
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 2, c, 2, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_true(plan.moves[0].src_pressure_after < 15);
    rebalance_plan_free(&plan);
}

/* Two small moves off a node whose big VM cannot go anywhere help nothing: none is made. */
static void test_no_useless_move(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    p.max_per_node = 5, p.max_per_namespace = 5, p.max_total = 5, p.max_in_flight = 5;
    struct rebalance_node nodes[3] = {node("big", 32, 64, 50), node("s1", 16, 1, 0), node("s2", 16, 1, 0)};
    struct rebalance_candidate c[3] = {cand("a", "vm-28", 0, 56), cand("b", "vm-1a", 0, 1), cand("c", "vm-1b", 0, 1)};
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 0);
    assert_string_equal(plan.reason, REBALANCE_NO_IMPROVEMENT);
    assert_non_null(strstr(plan.message, "the 2 moves that can go would leave big predicted at"));
    rebalance_plan_free(&plan);
    /* crossing a level by a hair is no relief: just above evictAbove, only idle VMs can go */
    struct rebalance_node hair[2] = {node("h", 3, 3.9, 30.2), node("c", 8, 0.5, 0)};
    struct rebalance_candidate idle[2] = {cand("a", "idle-0", 0, 0.05), cand("b", "idle-1", 0, 0.05)};
    struct rebalance_params q = p;
    q.evict_above = 30;
    assert_int_equal(rebalance_plan(&q, hair, 2, idle, 2, &plan), 0);
    assert_int_equal(plan.nmoves, 0);
    rebalance_plan_free(&plan);
    /* a trusted drop: 5 points at least; off the flat part's 90 % and more, 5 points at least with
     * the end predicted 1.5 times higher (a saturated reading bounds the scale from below only) */
    assert_true(rebalance_trusted_drop(80, 75));
    assert_false(rebalance_trusted_drop(80, 76));
    assert_true(rebalance_trusted_drop(89.9, 84));
    assert_false(rebalance_trusted_drop(100, 85));
    assert_false(rebalance_trusted_drop(100, 64));
    assert_true(rebalance_trusted_drop(100, 63));
    assert_true(rebalance_trusted_drop(95, 30));
    /* with room for the big one, the set is that one move */
    nodes[1].cpus = nodes[1].alloc_cpu = 128;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_int_equal(plan.moves[0].candidate, 0);
    rebalance_plan_free(&plan);
}

/* The coolest destination, not the first in node order; several destinations in one cycle. */
static void test_coolest(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    p.max_per_node = 3, p.max_per_namespace = 3, p.max_total = 3, p.max_in_flight = 3, p.kubevirt_per_node = 3;
    struct rebalance_node nodes[4] = {node("hot", 16, 16, 75), node("warm", 16, 3, 5), node("cool", 8, 0.5, 0),
                                      node("cooler", 8, 0.2, 0)};
    struct rebalance_candidate c[3] = {cand("a", "a", 0, 3), cand("b", "b", 0, 3), cand("c", "c", 0, 3)};
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 4, c, 3, &plan), 0);
    assert_int_equal(plan.nmoves, 3);
    assert_int_equal(plan.moves[0].destination, 3); /* "cooler" first */
    assert_int_equal(plan.moves[1].destination, 2);
    assert_int_equal(plan.moves[2].destination, 1); /* evictions: one per destination */
    rebalance_plan_free(&plan);
    /* the same load, but one reads 10 %: the other is cooler */
    nodes[2].demand = 0.2, nodes[2].pressure = 10;
    p.max_total = 1;
    assert_int_equal(rebalance_plan(&p, nodes, 4, c, 3, &plan), 0);
    assert_int_equal(plan.moves[0].destination, 3);
    rebalance_plan_free(&plan);
}

/* Sources planned across one another: the hottest node's small VMs would take the only node the
 * cooler source's big VM fits on (coolest first); planned first, the cooler source takes it and
 * the small VMs go to the small nodes. Both get moves in the one cycle. */
static void test_plan_across_sources(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    p.max_per_node = 4, p.max_per_namespace = 4, p.max_total = 6, p.max_in_flight = 6, p.kubevirt_per_node = 4;
    struct rebalance_node nodes[5] = {node("hot", 8, 10, 100), node("warm", 32, 28, 60), node("big", 48, 0.5, 0),
                                      node("small-a", 16, 0.2, 0), node("small-b", 16, 0.2, 0)};
    struct rebalance_candidate c[6] = {cand("a", "a", 0, 2.5), cand("a", "b", 0, 2.5), cand("a", "c", 0, 2.5),
                                       cand("a", "d", 0, 2.5), cand("b", "e", 1, 27),  cand("b", "f", 1, 1)};
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 5, c, 6, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_MOVING);
    assert_true(plan.nmoves >= 3);
    assert_int_equal(plan.moves[0].candidate, 4); /* the big VM first, to the only node it fits */
    assert_int_equal(plan.moves[0].destination, 2);
    for (size_t k = 1; k < plan.nmoves; k++) {
        assert_int_equal(plan.moves[k].source, 0);
        assert_true(plan.moves[k].destination >= 3);
    }
    assert_non_null(strstr(plan.message, "planned off warm, hot"));
    rebalance_plan_free(&plan);
}

/* A source stopped short is planned first too: with the defaults' two moves a cycle, the hottest
 * node's first VM would take the only node the cooler source's big VM fits on, and the cooler
 * source would move its small VM alone, which leaves it far above the target. Planned first, its
 * big VM takes that node, and the hottest node's VM goes to a small one: both within the two
 * moves. */
static void test_plan_across_sources_short(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    struct rebalance_node nodes[5] = {node("hot", 8, 12, 100), node("warm", 32, 29, 64), node("big", 50, 0, 0),
                                      node("small-a", 16, 0, 0), node("small-b", 8, 0, 0)};
    struct rebalance_candidate c[8] = {cand("a", "a", 0, 2.5), cand("a", "b", 0, 2.1), cand("a", "c", 0, 1.3),
                                       cand("a", "d", 0, 2.4), cand("a", "e", 0, 1.6), cand("a", "f", 0, 2.0),
                                       cand("b", "g", 1, 28),  cand("b", "h", 1, 1.2)};
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 5, c, 8, &plan), 0);
    assert_string_equal(plan.reason, REBALANCE_MOVING);
    assert_int_equal(plan.nmoves, 2);
    assert_int_equal(plan.moves[0].candidate, 6); /* the big VM, to the only node it fits */
    assert_int_equal(plan.moves[0].destination, 2);
    assert_true(plan.moves[0].src_pressure_after < rebalance_target(&p));
    assert_int_equal(plan.moves[1].source, 0);
    assert_true(plan.moves[1].destination >= 3);
    assert_non_null(strstr(plan.message, "planned off warm, hot"));
    rebalance_plan_free(&plan);
}

/* Planning again after a refusal: what earlier rounds made counts against every limit. */
static void test_limits_across_rounds(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    p.max_per_node = 4, p.max_per_namespace = 1, p.max_total = 4, p.max_in_flight = 4;
    struct rebalance_node nodes[5] = {node("h", 8, 10, 85), node("c0", 8, 0.2, 0), node("c1", 8, 0.2, 0),
                                      node("c2", 8, 0.2, 0), node("c3", 8, 0.2, 0)};
    struct rebalance_candidate c[4] = {cand("a", "a1", 0, 2.5), cand("a", "a2", 0, 2.5), cand("b", "b1", 0, 2.5),
                                       cand("b", "b2", 0, 2.5)};
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 5, c, 4, &plan), 0);
    assert_int_equal(plan.nmoves, 2); /* one per namespace */
    assert_string_not_equal(c[plan.moves[0].candidate].ns, c[plan.moves[1].candidate].ns);
    /* the second is refused; the first was made */
    struct rebalance_move made = plan.moves[0];
    const char *made_ns = c[made.candidate].ns;
    c[plan.moves[1].candidate].blocked = "eviction refused";
    rebalance_plan_free(&plan);
    p.made = &made, p.nmade = 1;
    assert_int_equal(rebalance_plan(&p, nodes, 5, c, 4, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_string_not_equal(c[plan.moves[0].candidate].ns, made_ns); /* maxPerNamespace holds across rounds */
    assert_int_not_equal(plan.moves[0].destination, made.destination);
    rebalance_plan_free(&plan);
    /* the total, too */
    p.max_total = 1;
    assert_int_equal(rebalance_plan(&p, nodes, 5, c, 4, &plan), 0);
    assert_int_equal(plan.nmoves, 0);
    assert_string_equal(plan.reason, REBALANCE_LIMITED);
    rebalance_plan_free(&plan);
}

/* History: a VM never returns to the node it left; a node never sends load back to one that
 * sent it some. */
static void test_history(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    struct rebalance_node nodes[3] = {node("w0", 8, 8, 75), node("w1", 16, 0.5, 0), node("w2", 16, 0.5, 0)};
    struct rebalance_candidate c[1] = {cand("a", "vm", 0, 5)};
    struct rebalance_recent recent[2] = {{"vm", "w1", "w0"}, {"other", "w2", "w0"}};
    p.recent = recent, p.nrecent = 1;
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 1, &plan), 0);
    assert_int_equal(plan.nmoves, 1);
    assert_int_equal(plan.moves[0].destination, 2); /* not back to w1 */
    assert_int_equal(plan.held, 1);
    rebalance_plan_free(&plan);
    p.nrecent = 2; /* and w2 sent load to w0: both ways back are held */
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 1, &plan), 0);
    assert_int_equal(plan.nmoves, 0);
    assert_string_equal(plan.reason, REBALANCE_OSCILLATION);
    assert_non_null(strstr(plan.message, "vm not moved from w0 to w1: it left that node recently"));
    assert_non_null(strstr(plan.held_message, "vm not moved from w0 to w2: that node sent load here recently"));
    assert_int_equal(plan.held, 2);
    rebalance_plan_free(&plan);
}

/* Memory: a memory-hot node relieved on memory; destinations fit by memory in use; a move may
 * not push another resource into the taint band. */
static void test_memory(void **state)
{
    (void)state;
    struct rebalance_params p = default_params();
    p.resources = REBALANCE_RES_CPU | REBALANCE_RES_MEMORY;
    p.max_per_node = 3, p.max_per_namespace = 3, p.max_total = 3, p.max_in_flight = 3;
    struct rebalance_node nodes[3] = {node("mem", 8, 2, 45), node("full", 8, 0.5, 0), node("room", 8, 0.5, 0)};
    for (int i = 0; i < 3; i++) {
        nodes[i].memory = 64.0 * 1073741824;
        nodes[i].cpu_pressure = 0;
        nodes[i].mem_pressure = 0;
        nodes[i].mem_used = 8.0 * 1073741824;
    }
    nodes[0].mem_used = 112.0 * 1073741824, nodes[0].mem_pressure = 45;
    nodes[1].mem_used = 60.0 * 1073741824; /* memory in use near its allocatable */
    struct rebalance_candidate c[4];
    for (int i = 0; i < 4; i++) {
        c[i] = cand("a", i == 0 ? "m0" : i == 1 ? "m1" : i == 2 ? "m2" : "m3", 0, 0.5);
        c[i].ns = i == 0 ? "a" : i == 1 ? "b" : i == 2 ? "c" : "d";
        c[i].mem_used = 28.0 * 1073741824;
        c[i].req_memory = 1.0 * 1073741824; /* requests say nothing */
    }
    struct rebalance_plan plan;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 4, &plan), 0);
    assert_int_equal(plan.nmoves, 1); /* one fits, on "room"; "full" has no memory left */
    assert_int_equal(plan.moves[0].destination, 2);
    assert_int_equal(plan.moves[0].resource, REBALANCE_MEMORY);
    rebalance_plan_free(&plan);
    char why[256];
    struct rebalance_node full = nodes[1];
    assert_non_null(rebalance_fit(&c[0], &full, why, sizeof(why)));
    assert_non_null(strstr(why, "insufficient memory in use"));
    /* CPU alone: memory pressure is not looked at */
    p.resources = 0;
    nodes[0].pressure = 0;
    assert_int_equal(rebalance_plan(&p, nodes, 3, c, 4, &plan), 0);
    assert_int_equal(plan.nmoves, 0);
    rebalance_plan_free(&plan);
}

static void test_vmi_check(void **state)
{
    (void)state;
    cJSON *no = parse("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
                      "{\"type\":\"LiveMigratable\",\"status\":\"False\",\"reason\":\"DisksNotLiveMigratable\"}]}}");
    cJSON *yes = parse("{\"status\":{\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":\"True\"}]}}");
    cJSON *none = parse("{\"status\":{}}");
    assert_string_equal(rebalance_vmi_check(no), "not live-migratable");
    assert_null(rebalance_vmi_check(yes));
    assert_null(rebalance_vmi_check(none));
    assert_null(rebalance_vmi_check(NULL));
    /* vCPUs: the topology's product, each part 1 when absent; unknown without a topology */
    cJSON *topo = parse("{\"spec\":{\"domain\":{\"cpu\":{\"cores\":4,\"sockets\":2}}}}");
    assert_true(rebalance_vmi_vcpus(topo) == 8);
    assert_true(isnan(rebalance_vmi_vcpus(none)));
    cJSON *silly = parse("{\"spec\":{\"domain\":{\"cpu\":{\"cores\":-1}}}}");
    assert_true(isnan(rebalance_vmi_vcpus(silly)));
    cJSON_Delete(topo);
    cJSON_Delete(silly);
    cJSON_Delete(no);
    cJSON_Delete(yes);
    cJSON_Delete(none);
}

/* ---- convergence over random static loads ---- */

static uint64_t rng = 88172645463325252ULL;
static double rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* -1, 0, 1 as the sorted vectors compare lexicographically */
static int vcmp(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > 1e-12)
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

#define MAXN 8
#define MAXW 40

static void loads(const struct rebalance_node *nodes, size_t nn, double *out)
{
    for (size_t i = 0; i < nn; i++)
        out[i] = nodes[i].demand / nodes[i].cpus;
    qsort(out, nn, sizeof(double), cmp_desc);
}

static void test_convergence_random(void **state)
{
    (void)state;
    int total_moves = 0, multi_cycle = 0;
    for (int trial = 0; trial < 300; trial++) {
        size_t nn = 2 + (size_t)(rnd() * (MAXN - 1));
        size_t nw = 1 + (size_t)(rnd() * MAXW);
        struct rebalance_node nodes[MAXN];
        struct rebalance_candidate c[MAXW];
        char names[MAXW][8], node_names[MAXN][8];
        double base[MAXN];
        for (size_t i = 0; i < nn; i++) {
            snprintf(node_names[i], sizeof(node_names[i]), "n%zu", i);
            nodes[i] = node(node_names[i], 2 + (int)(rnd() * 15), 0, 0);
            base[i] = rnd() * 0.5;
        }
        for (size_t j = 0; j < nw; j++) {
            snprintf(names[j], sizeof(names[j]), "w%zu", j);
            /* piled up on the first nodes, as drains and restarts leave them */
            size_t on = (size_t)(rnd() * rnd() * (double)nn);
            c[j] = cand(rnd() < 0.5 ? "a" : "b", names[j], on, 0.05 + rnd() * 4);
            c[j].vm = rnd() < 0.7;
        }
        struct rebalance_params p = {
            .evict_above = 10 + rnd() * 30,
            .untaint_below = 5 + rnd() * 5,
            .max_per_node = 1 + (int)(rnd() * 3),
            .max_per_namespace = 1 + (int)(rnd() * 5),
            .max_total = 1 + (int)(rnd() * 6),
            .max_in_flight = 1000,
        };
        p.taint_above = p.untaint_below + 5 +
                        rnd() * (p.evict_above - p.untaint_below - 5 > 0 ? p.evict_above - p.untaint_below - 5 : 0);
        int moves = 0, cycles = 0;
        int moved[MAXW] = {0};
        unsigned visited[MAXW] = {0}; /* the nodes each workload has been on */
        for (size_t j = 0; j < nw; j++)
            visited[j] = 1u << c[j].node;
        static struct rebalance_recent recent[1024];
        size_t nrecent = 0;
        p.recent = recent;
        for (;; cycles++) {
            /* the static load: demand and (predicted) pressure from the placement */
            for (size_t i = 0; i < nn; i++) {
                nodes[i].demand = base[i];
                nodes[i].req_cpu = 0, nodes[i].req_memory = 0, nodes[i].req_pods = 0;
            }
            for (size_t j = 0; j < nw; j++) {
                nodes[c[j].node].demand += c[j].demand;
                nodes[c[j].node].req_cpu += c[j].req_cpu;
                nodes[c[j].node].req_memory += c[j].req_memory;
                nodes[c[j].node].req_pods += 1;
            }
            for (size_t i = 0; i < nn; i++) {
                nodes[i].pressure = rebalance_predicted_pressure(nodes[i].demand / nodes[i].cpus);
                nodes[i].alloc_cpu = 1000; /* requests are not what this property is about */
            }
            struct rebalance_plan plan;
            p.nrecent = nrecent;
            assert_int_equal(rebalance_plan(&p, nodes, nn, c, nw, &plan), 0);
            if (!plan.nmoves) {
                rebalance_plan_free(&plan);
                break;
            }
            /* apply the moves one by one: each strictly lowers the sorted load vector, and
             * lowers the pair's maximum by the margin */
            for (size_t k = 0; k < plan.nmoves; k++) {
                const struct rebalance_move *mv = &plan.moves[k];
                double before[MAXN], after[MAXN];
                loads(nodes, nn, before);
                double pair_before = fmax(nodes[mv->source].demand / nodes[mv->source].cpus,
                                          nodes[mv->destination].demand / nodes[mv->destination].cpus);
                nodes[mv->source].demand -= mv->demand;
                nodes[mv->destination].demand += mv->demand;
                double pair_after = fmax(nodes[mv->source].demand / nodes[mv->source].cpus,
                                         nodes[mv->destination].demand / nodes[mv->destination].cpus);
                loads(nodes, nn, after);
                assert_true(vcmp(after, before, nn) < 0);
                assert_true(pair_after <= pair_before - REBALANCE_MARGIN + 1e-9);
                assert_true(rebalance_predicted_pressure(nodes[mv->destination].demand / nodes[mv->destination].cpus) <
                            p.taint_above);
                assert_int_equal(mv->source, c[mv->candidate].node);
                assert_false(visited[mv->candidate] & (1u << mv->destination)); /* never back */
                visited[mv->candidate] |= 1u << mv->destination;
                assert_true(nrecent < 1024);
                recent[nrecent++] = (struct rebalance_recent){c[mv->candidate].workload, nodes[mv->source].name,
                                                              nodes[mv->destination].name};
                c[mv->candidate].node = mv->destination;
                moved[mv->candidate]++;
                moves++;
            }
            rebalance_plan_free(&plan);
            assert_true(cycles < 10000); /* it terminates */
        }
        total_moves += moves;
        multi_cycle += cycles > 1;
        for (size_t j = 0; j < nw; j++)
            assert_true(moved[j] <= (int)nn - 1);
    }
    /* the property was exercised: many moves, many multi-cycle runs */
    assert_true(total_moves > 300);
    assert_true(multi_cycle > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_prediction),
        cmocka_unit_test(test_calibration),
        cmocka_unit_test(test_move_rules),
        cmocka_unit_test(test_plan_seed),
        cmocka_unit_test(test_plan_targeted),
        cmocka_unit_test(test_plan_ranking_by_relief),
        cmocka_unit_test(test_plan_limits),
        cmocka_unit_test(test_plan_reasons),
        cmocka_unit_test(test_relieving),
        cmocka_unit_test(test_no_useless_move),
        cmocka_unit_test(test_coolest),
        cmocka_unit_test(test_plan_across_sources),
        cmocka_unit_test(test_plan_across_sources_short),
        cmocka_unit_test(test_limits_across_rounds),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_vmi_check),
        cmocka_unit_test(test_convergence_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
