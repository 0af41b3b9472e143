/* Unit tests of controller/reconcile/taint/taintfsm: hysteresis, sustain, Unknown, the cap, and
 * when a held taint was put on (tainted_since_ms, what NodeTaintedLong ages). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/taint/taintfsm.h"

#define MAXN 16
#define SEC 1000

/* A little cluster: the record the controller keeps, and the taints as the API would hold
 * them after the actions are applied. */
struct sim {
    size_t n;
    char names[MAXN][16];
    struct taintfsm_input in[MAXN];
    struct taintfsm_result last;
};

static void sim_init(struct sim *s, size_t n)
{
    memset(s, 0, sizeof(*s));
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(s->names[i], sizeof(s->names[i]), "node-%zu", i);
        s->in[i].name = s->names[i];
        s->in[i].selected = true;
        s->in[i].pressure = NAN;
        s->in[i].utilization = NAN;
    }
}

static size_t sim_index(const struct sim *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return i;
    fail_msg("unknown node %s", name);
    return 0;
}

/* The node record of input i in the last result, or NULL when not selected. */
static const struct taintfsm_node *sim_node(const struct sim *s, size_t i)
{
    for (size_t k = 0; k < s->last.nnodes; k++)
        if (s->last.nodes[k].input == i)
            return &s->last.nodes[k];
    return NULL;
}

/* Run one cycle with these samples, apply the actions, keep the record. */
static void sim_cycle(struct sim *s, const struct taintfsm_params *p, const double *pressure, int64_t now)
{
    for (size_t i = 0; i < s->n; i++)
        s->in[i].pressure = pressure[i];
    taintfsm_result_free(&s->last);
    assert_int_equal(taintfsm_step(p, s->in, s->n, now, &s->last), 0);
    for (size_t a = 0; a < s->last.nactions; a++) {
        size_t i = sim_index(s, s->last.actions[a].node);
        bool add = s->last.actions[a].op == TAINTFSM_ADD;
        assert_true(add != s->in[i].tainted); /* an action always changes something */
        s->in[i].tainted = add;
    }
    for (size_t i = 0; i < s->n; i++) {
        const struct taintfsm_node *o = sim_node(s, i);
        s->in[i].has_prev = o != NULL;
        if (o) {
            s->in[i].state = o->state;
            s->in[i].since_ms = o->since_ms;
            s->in[i].tainted_since_ms = o->tainted_since_ms; /* as taintstate keeps it */
            assert_int_equal(o->tainted, s->in[i].tainted);
        }
    }
}

static void sim_free(struct sim *s)
{
    taintfsm_result_free(&s->last);
}

/* The action on node i in the last cycle, or NULL. */
static const struct taintfsm_action *sim_action(const struct sim *s, size_t i)
{
    for (size_t a = 0; a < s->last.nactions; a++)
        if (strcmp(s->last.actions[a].node, s->names[i]) == 0)
            return &s->last.actions[a];
    return NULL;
}

static struct taintfsm_params params(int64_t sustain_ms, int64_t max_pct)
{
    struct taintfsm_params p = {
        .taint_above = 25,
        .untaint_below = 15,
        .sustain_ms = sustain_ms,
        .max_tainted_percent = max_pct,
        .swap_margin = 10,
    };
    return p;
}

/* Drive node 0 of a 3-node cluster (cap 1 at 50%) into Tainted at t=0..60s. */
static void taint_node0(struct sim *s, const struct taintfsm_params *p)
{
    double v[3] = {30, 5, 5};
    sim_cycle(s, p, v, 0);
    sim_cycle(s, p, v, 30 * SEC);
    sim_cycle(s, p, v, 60 * SEC);
    assert_true(s->in[0].tainted);
    assert_int_equal(s->in[0].state, API_NODE_TAINTED);
}

static void test_params_from_spec(void **state)
{
    (void)state;
    struct api_spec spec;
    memset(&spec, 0, sizeof(spec));
    spec.pressure.taint_above_percent = 40;
    spec.pressure.untaint_below_percent = 10;
    spec.pressure.sustain_ms = 90000;
    spec.pressure.max_tainted_percent = 30;
    spec.pressure.has_utilization_floor = true;
    spec.pressure.utilization_floor_percent = 60;
    struct taintfsm_params p;
    taintfsm_params_from_spec(&spec, &p);
    assert_true(p.taint_above == 40 && p.untaint_below == 10 && p.sustain_ms == 90000);
    assert_true(p.max_tainted_percent == 30 && p.utilization_floor == 60 && p.swap_margin == 30);
    spec.pressure.untaint_below_percent = 40; /* no band (invalid spec): margin still 1 */
    spec.pressure.has_utilization_floor = false;
    taintfsm_params_from_spec(&spec, &p);
    assert_true(p.swap_margin == 1 && p.utilization_floor == 0);
}

static void test_taint_after_sustain_not_before(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(60 * SEC, 50);
    sim_init(&s, 3);
    double v[3] = {30, 5, 5};
    sim_cycle(&s, &p, v, 0);
    assert_int_equal(s.in[0].state, API_NODE_PRESSURED);
    assert_int_equal(s.in[0].since_ms, 0);
    assert_int_equal(s.last.nactions, 0);
    assert_int_equal(s.last.pressured, 1);
    sim_cycle(&s, &p, v, 30 * SEC);
    assert_int_equal(s.in[0].state, API_NODE_PRESSURED);
    assert_int_equal(s.last.nactions, 0);
    sim_cycle(&s, &p, v, 60 * SEC - 1); /* one millisecond short */
    assert_int_equal(s.last.nactions, 0);
    assert_false(s.in[0].tainted);
    sim_cycle(&s, &p, v, 60 * SEC);
    assert_int_equal(s.last.nactions, 1);
    assert_string_equal(s.last.actions[0].node, "node-0");
    assert_int_equal(s.last.actions[0].op, TAINTFSM_ADD);
    assert_int_equal(s.last.actions[0].why, TAINTFSM_WHY_PRESSURE);
    assert_int_equal(s.in[0].state, API_NODE_TAINTED);
    assert_int_equal(s.in[0].since_ms, 60 * SEC);
    assert_int_equal(s.last.tainted, 1);
    assert_int_equal(s.in[1].state, API_NODE_NORMAL);
    sim_free(&s);
}

static void test_exactly_at_threshold_is_not_above(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(0, 50);
    sim_init(&s, 3);
    double v[3] = {25, 15, 5};
    sim_cycle(&s, &p, v, 0);
    assert_int_equal(s.in[0].state, API_NODE_NORMAL);
    assert_int_equal(s.last.pressured, 0);
    assert_int_equal(s.last.nactions, 0);
    sim_free(&s);
}

static void test_pressured_falls_back_to_normal(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(60 * SEC, 50);
    sim_init(&s, 3);
    double hot[3] = {30, 5, 5}, mid[3] = {20, 5, 5};
    sim_cycle(&s, &p, hot, 0);
    sim_cycle(&s, &p, hot, 30 * SEC);
    sim_cycle(&s, &p, mid, 45 * SEC); /* between the levels: the level did not hold */
    assert_int_equal(s.in[0].state, API_NODE_NORMAL);
    assert_int_equal(s.in[0].since_ms, 45 * SEC);
    sim_cycle(&s, &p, hot, 60 * SEC);
    assert_int_equal(s.in[0].state, API_NODE_PRESSURED);
    assert_int_equal(s.in[0].since_ms, 60 * SEC);
    sim_cycle(&s, &p, hot, 90 * SEC);
    assert_false(s.in[0].tainted); /* the window restarted at 60 s */
    sim_cycle(&s, &p, hot, 120 * SEC);
    assert_true(s.in[0].tainted);
    sim_free(&s);
}

static void test_no_flapping_between_levels(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(30 * SEC, 50);
    sim_init(&s, 3);
    taint_node0(&s, &p);
    /* node 0 tainted, node 1 normal: both oscillate between untaint (15) and taint (25). */
    int64_t t = 60 * SEC;
    for (int i = 0; i < 200; i++) {
        t += 10 * SEC;
        double v[3] = {i % 2 ? 16 : 24.9, i % 2 ? 24 : 15.5, 5};
        sim_cycle(&s, &p, v, t);
        assert_int_equal(s.last.nactions, 0);
        assert_int_equal(s.in[0].state, API_NODE_TAINTED);
        assert_int_equal(s.in[1].state, API_NODE_NORMAL);
    }
    assert_int_equal(s.in[0].since_ms, 30 * SEC); /* tainted at 30 s, untouched since */
    sim_free(&s);
}

static void test_no_flapping_across_a_level_faster_than_sustain(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(60 * SEC, 50);
    sim_init(&s, 3);
    taint_node0(&s, &p);
    int64_t t = 60 * SEC;
    for (int i = 0; i < 100; i++) {
        t += 20 * SEC;
        /* node 0 dips below untaint every other cycle, node 1 spikes above taint every other. */
        double v[3] = {i % 2 ? 10 : 20, i % 2 ? 40 : 5, 5};
        sim_cycle(&s, &p, v, t);
        assert_int_equal(s.last.nactions, 0);
        assert_true(s.in[0].tainted);
        assert_false(s.in[1].tainted);
    }
    sim_free(&s);
}

static void test_cooling_and_removal(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(60 * SEC, 50);
    sim_init(&s, 3);
    taint_node0(&s, &p);
    double cool[3] = {10, 5, 5};
    sim_cycle(&s, &p, cool, 90 * SEC);
    assert_int_equal(s.in[0].state, API_NODE_COOLING);
    assert_int_equal(s.in[0].since_ms, 90 * SEC);
    assert_true(s.in[0].tainted);
    assert_int_equal(s.last.nactions, 0);
    sim_cycle(&s, &p, cool, 120 * SEC);
    assert_int_equal(s.in[0].state, API_NODE_COOLING);
    assert_int_equal(s.last.nactions, 0);
    sim_cycle(&s, &p, cool, 150 * SEC);
    assert_int_equal(s.last.nactions, 1);
    assert_int_equal(s.last.actions[0].op, TAINTFSM_REMOVE);
    assert_int_equal(s.last.actions[0].why, TAINTFSM_WHY_COOLED);
    assert_int_equal(s.in[0].state, API_NODE_NORMAL);
    assert_int_equal(s.in[0].since_ms, 150 * SEC);
    assert_false(s.in[0].tainted);
    assert_int_equal(s.last.tainted, 0);
    sim_free(&s);
}

static void test_cooling_back_to_tainted(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(60 * SEC, 50);
    sim_init(&s, 3);
    taint_node0(&s, &p);
    double cool[3] = {10, 5, 5}, mid[3] = {18, 5, 5};
    sim_cycle(&s, &p, cool, 90 * SEC);
    sim_cycle(&s, &p, mid, 120 * SEC); /* back above the untaint level */
    assert_int_equal(s.in[0].state, API_NODE_TAINTED);
    assert_int_equal(s.in[0].since_ms, 120 * SEC);
    sim_cycle(&s, &p, cool, 150 * SEC);
    assert_int_equal(s.in[0].state, API_NODE_COOLING);
    assert_int_equal(s.in[0].since_ms, 150 * SEC);
    sim_cycle(&s, &p, cool, 180 * SEC);
    assert_true(s.in[0].tainted); /* only 30 s below since the last rise */
    sim_cycle(&s, &p, cool, 210 * SEC);
    assert_false(s.in[0].tainted);
    sim_free(&s);
}

static void test_sustain_zero_acts_at_once(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(0, 50);
    sim_init(&s, 3);
    double hot[3] = {30, 5, 5}, cool[3] = {10, 5, 5};
    sim_cycle(&s, &p, hot, 0);
    assert_int_equal(s.in[0].state, API_NODE_TAINTED);
    assert_true(s.in[0].tainted);
    sim_cycle(&s, &p, cool, 1);
    assert_int_equal(s.in[0].state, API_NODE_NORMAL);
    assert_false(s.in[0].tainted);
    assert_int_equal(s.last.actions[0].why, TAINTFSM_WHY_COOLED);
    sim_free(&s);
}

static void test_unknown_holds_the_taint(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(60 * SEC, 50);
    sim_init(&s, 3);
    taint_node0(&s, &p);
    double hot1[3] = {NAN, 40, 5};
    sim_cycle(&s, &p, hot1, 70 * SEC); /* node 1 starts being pressured */
    double none[3] = {NAN, NAN, INFINITY};
    for (int i = 0; i < 10; i++) {
        sim_cycle(&s, &p, none, (100 + 30 * i) * SEC);
        assert_int_equal(s.last.nactions, 0);
        for (size_t k = 0; k < 3; k++)
            assert_int_equal(s.in[k].state, API_NODE_UNKNOWN);
        assert_true(s.in[0].tainted);
        assert_false(s.in[1].tainted);
        assert_int_equal(s.last.tainted, 1);
        assert_int_equal(s.last.pressured, 0);
    }
    assert_int_equal(s.in[0].since_ms, 70 * SEC); /* when it became Unknown, kept */
    assert_int_equal(s.in[1].since_ms, 100 * SEC);
    /* Readings return: node 0 below untaint starts Cooling now, node 1 above starts Pressured now. */
    double back[3] = {5, 40, 5};
    int64_t t = 400 * SEC;
    sim_cycle(&s, &p, back, t);
    assert_int_equal(s.in[0].state, API_NODE_COOLING);
    assert_int_equal(s.in[0].since_ms, t);
    assert_int_equal(s.in[1].state, API_NODE_PRESSURED);
    assert_int_equal(s.in[1].since_ms, t);
    assert_int_equal(s.last.nactions, 0);
    sim_cycle(&s, &p, back, t + 59 * SEC);
    assert_int_equal(s.last.nactions, 0);
    sim_cycle(&s, &p, back, t + 60 * SEC);
    /* node 0 cooled off, node 1 takes the (single) place. */
    assert_false(s.in[0].tainted);
    assert_true(s.in[1].tainted);
    sim_free(&s);
}

static void test_unknown_utilization_floor(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(0, 50);
    p.utilization_floor = 50;
    sim_init(&s, 3);
    s.in[0].utilization = 30;  /* throttled, not busy: counts as no pressure */
    s.in[1].utilization = NAN; /* unknown utilisation: unknown reading */
    s.in[2].utilization = 80;
    double v[3] = {60, 60, 60};
    sim_cycle(&s, &p, v, 0);
    assert_int_equal(s.in[0].state, API_NODE_NORMAL);
    assert_true(sim_node(&s, 0)->pressure == 0);
    assert_int_equal(s.in[1].state, API_NODE_UNKNOWN);
    assert_int_equal(s.in[2].state, API_NODE_TAINTED);
    assert_int_equal(s.last.pressured, 1);
    sim_free(&s);
}

static void test_cap_values(void **state)
{
    (void)state;
    assert_int_equal(taintfsm_cap(0, 50), 0);
    assert_int_equal(taintfsm_cap(1, 50), 0);
    assert_int_equal(taintfsm_cap(1, 99), 0);
    assert_int_equal(taintfsm_cap(2, 50), 1);
    assert_int_equal(taintfsm_cap(3, 50), 1);
    assert_int_equal(taintfsm_cap(4, 50), 2);
    assert_int_equal(taintfsm_cap(10, 99), 9);
    assert_int_equal(taintfsm_cap(5, 0), 0);
    assert_int_equal(taintfsm_cap(7, -3), 0);
    assert_int_equal(taintfsm_cap(100, 100), 99); /* never every node */
    assert_int_equal(taintfsm_cap(1000, 33), 330);
    assert_int_equal(taintfsm_cap(5000, 25), 1250);
    assert_int_equal(taintfsm_cap(199, 50), 99);
}

static void test_single_node_never_tainted(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(0, 99);
    sim_init(&s, 1);
    double v[1] = {100};
    for (int i = 0; i < 5; i++) {
        sim_cycle(&s, &p, v, i * SEC);
        assert_false(s.in[0].tainted);
        assert_int_equal(s.in[0].state, API_NODE_PRESSURED);
        assert_int_equal(s.in[0].since_ms, 0); /* denied by the cap, its window still counts */
    }
    sim_free(&s);
}

static void test_cap_hottest_wins(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(30 * SEC, 50);
    sim_init(&s, 5); /* cap 2 */
    double v[5] = {30, 50, 40, 35, 5};
    sim_cycle(&s, &p, v, 0);
    sim_cycle(&s, &p, v, 30 * SEC);
    assert_int_equal(s.last.cap, 2);
    assert_int_equal(s.last.tainted, 2);
    assert_false(s.in[0].tainted);
    assert_true(s.in[1].tainted);
    assert_true(s.in[2].tainted);
    assert_false(s.in[3].tainted);
    assert_int_equal(s.in[0].state, API_NODE_PRESSURED);
    assert_int_equal(s.in[3].state, API_NODE_PRESSURED);
    assert_int_equal(s.in[3].since_ms, 0);
    assert_int_equal(s.last.pressured, 4);
    /* Ties by name. */
    struct sim t;
    sim_init(&t, 4); /* cap 2 */
    double w[4] = {30, 30, 30, 30};
    sim_cycle(&t, &p, w, 0);
    sim_cycle(&t, &p, w, 30 * SEC);
    assert_true(t.in[0].tainted && t.in[1].tainted);
    assert_false(t.in[2].tainted || t.in[3].tainted);
    sim_free(&s);
    sim_free(&t);
}

static void test_cap_newcomer_needs_margin(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(60 * SEC, 50);
    sim_init(&s, 3);
    taint_node0(&s, &p); /* node 0 at 30, the single place */
    double v[3] = {30, 39.9, 5};
    int64_t t = 60 * SEC;
    for (int i = 0; i < 6; i++) {
        t += 30 * SEC;
        sim_cycle(&s, &p, v, t);
        assert_true(s.in[0].tainted);
        assert_false(s.in[1].tainted);
        assert_int_equal(s.in[1].state, API_NODE_PRESSURED);
    }
    /* Hotter by the margin (10 points): it takes the place at once (its sustain passed long ago). */
    double w[3] = {30, 40, 5};
    t += 30 * SEC;
    sim_cycle(&s, &p, w, t);
    assert_false(s.in[0].tainted);
    assert_true(s.in[1].tainted);
    const struct taintfsm_action *a0 = sim_action(&s, 0), *a1 = sim_action(&s, 1);
    assert_non_null(a0);
    assert_non_null(a1);
    assert_int_equal(a0->op, TAINTFSM_REMOVE);
    assert_int_equal(a0->why, TAINTFSM_WHY_CAP);
    assert_int_equal(a1->op, TAINTFSM_ADD);
    assert_int_equal(a1->why, TAINTFSM_WHY_PRESSURE);
    assert_ptr_equal(a0, &s.last.actions[0]);            /* the removal comes first */
    assert_int_equal(s.in[0].state, API_NODE_PRESSURED); /* still above the taint level */
    assert_int_equal(s.in[0].since_ms, t);
    assert_int_equal(s.in[1].state, API_NODE_TAINTED);
    /* Node 0 does not come straight back: it needs its sustain again and then the margin. */
    double x[3] = {45, 40, 5};
    sim_cycle(&s, &p, x, t + 30 * SEC);
    assert_false(s.in[0].tainted);
    sim_cycle(&s, &p, x, t + 60 * SEC);
    assert_false(s.in[0].tainted); /* 45 < 40 + 10 */
    sim_free(&s);
}

static void test_cap_cooling_gives_way(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(60 * SEC, 50);
    sim_init(&s, 3);
    taint_node0(&s, &p);
    double v[3] = {10, 26, 5}; /* node 0 cooling, node 1 just above */
    sim_cycle(&s, &p, v, 70 * SEC);
    assert_int_equal(s.in[0].state, API_NODE_COOLING);
    sim_cycle(&s, &p, v, 130 * SEC - 1);
    assert_true(s.in[0].tainted);
    sim_cycle(&s, &p, v, 130 * SEC); /* both windows end: cooled, and the place is free */
    assert_false(s.in[0].tainted);
    assert_true(s.in[1].tainted);
    /* And a Cooling node gives way to any newcomer before its own window ends. */
    struct sim c;
    sim_init(&c, 3);
    taint_node0(&c, &p);
    double w[3] = {30, 26, 5};
    sim_cycle(&c, &p, w, 70 * SEC); /* node 1 pressured from 70 s */
    double y[3] = {14, 26, 5};
    sim_cycle(&c, &p, y, 100 * SEC); /* node 0 cooling from 100 s */
    sim_cycle(&c, &p, y, 130 * SEC); /* node 1 ready: 26 >= 14 + 10 */
    assert_false(c.in[0].tainted);
    assert_true(c.in[1].tainted);
    assert_int_equal(sim_action(&c, 0)->why, TAINTFSM_WHY_CAP);
    assert_int_equal(c.in[0].state, API_NODE_NORMAL);
    sim_free(&s);
    sim_free(&c);
}

static void test_cap_shrinks(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(0, 50);
    sim_init(&s, 6); /* cap 3 */
    double v[6] = {50, 40, 30, 5, 5, 5};
    sim_cycle(&s, &p, v, 0);
    assert_int_equal(s.last.tainted, 3);
    p.max_tainted_percent = 20; /* cap 1: the two coolest lose it */
    sim_cycle(&s, &p, v, SEC);
    assert_int_equal(s.last.cap, 1);
    assert_int_equal(s.last.tainted, 1);
    assert_true(s.in[0].tainted);
    assert_int_equal(sim_action(&s, 1)->why, TAINTFSM_WHY_CAP);
    assert_int_equal(sim_action(&s, 2)->why, TAINTFSM_WHY_CAP);
    p.max_tainted_percent = 0; /* tainting off */
    sim_cycle(&s, &p, v, 2 * SEC);
    assert_int_equal(s.last.tainted, 0);
    assert_false(s.in[0].tainted);
    sim_free(&s);
}

static void test_cap_unknown_holder_counts_and_goes_last(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(0, 50);
    sim_init(&s, 4); /* cap 2 */
    double v[4] = {50, 40, 5, 5};
    sim_cycle(&s, &p, v, 0);
    assert_true(s.in[0].tainted && s.in[1].tainted);
    double w[4] = {NAN, 40, 90, 5}; /* node 0 unknown, holds; node 2 much hotter */
    sim_cycle(&s, &p, w, SEC);
    assert_true(s.in[0].tainted);
    assert_int_equal(s.in[0].state, API_NODE_UNKNOWN);
    assert_false(s.in[1].tainted); /* the known holder gave way */
    assert_true(s.in[2].tainted);
    assert_int_equal(s.last.tainted, 2);
    /* A node left: 3 selected, cap 1: known holder goes before the Unknown one. */
    s.in[3].selected = false;
    sim_cycle(&s, &p, w, 2 * SEC);
    assert_int_equal(s.last.cap, 1);
    assert_true(s.in[0].tainted);
    assert_false(s.in[2].tainted);
    assert_int_equal(s.in[2].state, API_NODE_PRESSURED);
    sim_free(&s);
}

static void test_left_selector_loses_taint(void **state)
{
    (void)state;
    struct sim s;
    struct taintfsm_params p = params(0, 50);
    sim_init(&s, 3);
    double v[3] = {50, 5, 5};
    sim_cycle(&s, &p, v, 0);
    assert_true(s.in[0].tainted);
    s.in[0].selected = false;
    sim_cycle(&s, &p, v, SEC);
    assert_int_equal(s.last.nnodes, 2);
    assert_null(sim_node(&s, 0));
    assert_int_equal(s.last.nactions, 1);
    assert_int_equal(s.last.actions[0].op, TAINTFSM_REMOVE);
    assert_int_equal(s.last.actions[0].why, TAINTFSM_WHY_UNSELECTED);
    assert_false(s.in[0].tainted);
    assert_int_equal(s.last.cap, 1); /* floor(2 * 50 / 100) */
    /* An unselected node without our taint: nothing to do. */
    sim_cycle(&s, &p, v, 2 * SEC);
    assert_int_equal(s.last.nactions, 0);
    sim_free(&s);
}

static void test_record_and_node_disagree(void **state)
{
    (void)state;
    struct taintfsm_params p = params(60 * SEC, 50);
    struct taintfsm_input in[4] = {
        /* the record says Tainted, the taint is gone: put back */
        {.name = "a", .selected = true, .has_prev = true, .state = API_NODE_TAINTED, .tainted = false, .pressure = 20},
        /* the record says Normal, our taint is there: taken off */
        {.name = "b", .selected = true, .has_prev = true, .state = API_NODE_NORMAL, .tainted = true, .pressure = 20},
        /* no record, tainted: adopted as Tainted, no write */
        {.name = "c", .selected = true, .has_prev = false, .tainted = true, .pressure = 20},
        {.name = "d", .selected = true, .has_prev = false, .tainted = false, .pressure = 20},
    };
    for (int i = 0; i < 4; i++)
        in[i].utilization = NAN;
    struct taintfsm_result r = {0};
    assert_int_equal(taintfsm_step(&p, in, 4, 1000, &r), 0);
    assert_int_equal(r.nactions, 2);
    assert_string_equal(r.actions[0].node, "b");
    assert_int_equal(r.actions[0].op, TAINTFSM_REMOVE);
    assert_int_equal(r.actions[0].why, TAINTFSM_WHY_RESTORE);
    assert_string_equal(r.actions[1].node, "a");
    assert_int_equal(r.actions[1].op, TAINTFSM_ADD);
    assert_int_equal(r.actions[1].why, TAINTFSM_WHY_RESTORE);
    assert_int_equal(r.nodes[2].state, API_NODE_TAINTED);
    assert_int_equal(r.nodes[2].since_ms, 1000);
    assert_true(r.nodes[2].tainted);
    assert_int_equal(r.nodes[3].state, API_NODE_NORMAL);
    assert_int_equal(r.tainted, 2);
    assert_string_equal(taintfsm_why_name(r.actions[0].why), "Restore");
    assert_string_equal(taintfsm_op_name(r.actions[0].op), "remove");
    taintfsm_result_free(&r);
}

static void test_empty_input(void **state)
{
    (void)state;
    struct taintfsm_params p = params(0, 50);
    struct taintfsm_result r = {0};
    assert_int_equal(taintfsm_step(&p, NULL, 0, 0, &r), 0);
    assert_int_equal(r.nnodes, 0);
    assert_int_equal(r.nactions, 0);
    assert_int_equal(r.cap, 0);
    taintfsm_result_free(&r);
}

/* ---- property test ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double rnd_unit(void)
{
    return (double)(rnd() >> 11) / (double)(1ULL << 53);
}

/* Random pressure traces, random thresholds, caps and sampling times. Asserted every cycle:
 * no taint added unless the node's effective pressure was above the taint level in every
 * sample of the last sustain window (an unbroken run of above-samples that began at least
 * sustain ago); none removed by cooling unless likewise below the untaint level; other
 * removals only by the cap; Unknown nodes written only by the cap; never more tainted
 * nodes than the cap; the states agree with the taints. */
static void test_property_random_traces(void **state)
{
    (void)state;
    size_t adds = 0, cooled = 0, capped = 0; /* the traces must exercise every kind of write */
    for (uint64_t seed = 1; seed <= 300; seed++) {
        rng_state = seed * 0x9E3779B97F4A7C15ULL;
        struct sim s;
        size_t n = 1 + rnd() % 12;
        sim_init(&s, n);
        struct taintfsm_params p = params((int64_t)(rnd() % 5) * 15 * SEC, (int64_t)(rnd() % 100));
        p.untaint_below = (double)(rnd() % 40);
        p.taint_above = p.untaint_below + 1 + (double)(rnd() % 30);
        p.swap_margin = 1 + (double)(rnd() % 10);
        double level[MAXN];
        int64_t above_since[MAXN], below_since[MAXN]; /* -1: not in such a run */
        for (size_t i = 0; i < n; i++) {
            level[i] = rnd_unit() * 60;
            above_since[i] = below_since[i] = -1;
        }
        int64_t t = (int64_t)(rnd() % 1000);
        for (int cycle = 0; cycle < 300; cycle++) {
            t += 5 * SEC + (int64_t)(rnd() % (30 * SEC));
            double v[MAXN];
            for (size_t i = 0; i < n; i++) {
                level[i] += (rnd_unit() - 0.5) * 12;
                if (level[i] < 0)
                    level[i] = 0;
                if (level[i] > 100)
                    level[i] = 100;
                v[i] = rnd() % 25 == 0 ? NAN : level[i];
                if (isnan(v[i])) {
                    above_since[i] = below_since[i] = -1;
                } else {
                    if (v[i] > p.taint_above) {
                        if (above_since[i] < 0)
                            above_since[i] = t;
                    } else {
                        above_since[i] = -1;
                    }
                    if (v[i] < p.untaint_below) {
                        if (below_since[i] < 0)
                            below_since[i] = t;
                    } else {
                        below_since[i] = -1;
                    }
                }
            }
            if (rnd() % 50 == 0)
                p.max_tainted_percent = (int64_t)(rnd() % 100);
            sim_cycle(&s, &p, v, t);
            for (size_t a = 0; a < s.last.nactions; a++) {
                const struct taintfsm_action *act = &s.last.actions[a];
                size_t i = sim_index(&s, act->node);
                assert_int_equal(act->input, i); /* the index of the node in the input */
                if (isnan(v[i])) {
                    assert_int_equal(act->op, TAINTFSM_REMOVE);
                    assert_int_equal(act->why, TAINTFSM_WHY_CAP);
                } else if (act->op == TAINTFSM_ADD) {
                    adds++;
                    assert_int_equal(act->why, TAINTFSM_WHY_PRESSURE);
                    assert_true(above_since[i] >= 0 && t - above_since[i] >= p.sustain_ms);
                } else if (act->why == TAINTFSM_WHY_COOLED) {
                    cooled++;
                    assert_true(below_since[i] >= 0 && t - below_since[i] >= p.sustain_ms);
                } else {
                    capped++;
                    assert_int_equal(act->why, TAINTFSM_WHY_CAP);
                }
            }
            size_t tainted = 0;
            for (size_t i = 0; i < n; i++) {
                tainted += s.in[i].tainted;
                enum api_node_state st = s.in[i].state;
                if (st != API_NODE_UNKNOWN)
                    assert_int_equal(s.in[i].tainted, st == API_NODE_TAINTED || st == API_NODE_COOLING);
                else
                    assert_true(isnan(v[i]));
            }
            assert_true(tainted <= taintfsm_cap(n, p.max_tainted_percent));
            assert_int_equal(tainted, s.last.tainted);
            assert_true(tainted < n);
        }
        sim_free(&s);
    }
    print_message("property: %zu adds, %zu removals by cooling, %zu by the cap\n", adds, cooled, capped);
    assert_true(adds > 100 && cooled > 100 && capped > 10);
}

/* tainted_since_ms over random traces with dips below the untaint level and gaps in the
 * readings, against a reference kept from the taint writes alone: the time of the add that
 * put the taint on, while the node keeps it; 0 once it is off. The state's own since_ms (what
 * the metric was read from before) restarts at those dips and gaps: counted, so the traces
 * are known to have had them. */
static void test_tainted_since_across_dips_and_gaps(void **state)
{
    (void)state;
    size_t dips = 0, gaps = 0, adopted = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        rng_state = seed * 0x9E3779B97F4A7C15ULL;
        struct sim s;
        size_t n = 1 + rnd() % 8;
        sim_init(&s, n);
        struct taintfsm_params p = params((int64_t)(rnd() % 4) * 15 * SEC, 1 + (int64_t)(rnd() % 99));
        /* Some nodes start with the taint on and no record of when (adopted after a restart). */
        for (size_t i = 0; i < n; i++)
            s.in[i].tainted = rnd() % 3 == 0;
        int64_t ref[MAXN] = {0}, t = 1000 * SEC;
        double level[MAXN];
        for (size_t i = 0; i < n; i++)
            level[i] = rnd_unit() * 60;
        for (int cycle = 0; cycle < 200; cycle++) {
            t += 5 * SEC + (int64_t)(rnd() % (20 * SEC));
            double v[MAXN];
            bool was[MAXN];
            enum api_node_state before[MAXN];
            for (size_t i = 0; i < n; i++) {
                level[i] += (rnd_unit() - 0.5) * 16;
                level[i] = level[i] < 0 ? 0 : level[i] > 100 ? 100 : level[i];
                v[i] = rnd() % 12 == 0 ? NAN : level[i];
                was[i] = s.in[i].tainted;
                before[i] = s.in[i].has_prev ? s.in[i].state : API_NODE_UNKNOWN;
            }
            sim_cycle(&s, &p, v, t);
            for (size_t i = 0; i < n; i++) {
                const struct taintfsm_node *o = sim_node(&s, i);
                assert_non_null(o);
                if (!o->tainted)
                    ref[i] = 0;
                else if (!was[i] || ref[i] == 0)
                    ref[i] = t; /* put on now, or found on the node with no time of it */
                adopted += o->tainted && was[i] && cycle == 0;
                assert_int_equal(o->tainted_since_ms, ref[i]);
                if (o->tainted && was[i] && o->since_ms != ref[i]) {
                    dips += before[i] == API_NODE_COOLING && o->state == API_NODE_TAINTED;
                    gaps += before[i] == API_NODE_UNKNOWN && o->state == API_NODE_TAINTED;
                }
            }
        }
        sim_free(&s);
    }
    assert_true(dips > 0 && gaps > 0 && adopted > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_from_spec),
        cmocka_unit_test(test_taint_after_sustain_not_before),
        cmocka_unit_test(test_exactly_at_threshold_is_not_above),
        cmocka_unit_test(test_pressured_falls_back_to_normal),
        cmocka_unit_test(test_no_flapping_between_levels),
        cmocka_unit_test(test_no_flapping_across_a_level_faster_than_sustain),
        cmocka_unit_test(test_cooling_and_removal),
        cmocka_unit_test(test_cooling_back_to_tainted),
        cmocka_unit_test(test_sustain_zero_acts_at_once),
        cmocka_unit_test(test_unknown_holds_the_taint),
        cmocka_unit_test(test_unknown_utilization_floor),
        cmocka_unit_test(test_cap_values),
        cmocka_unit_test(test_single_node_never_tainted),
        cmocka_unit_test(test_cap_hottest_wins),
        cmocka_unit_test(test_cap_newcomer_needs_margin),
        cmocka_unit_test(test_cap_cooling_gives_way),
        cmocka_unit_test(test_cap_shrinks),
        cmocka_unit_test(test_cap_unknown_holder_counts_and_goes_last),
        cmocka_unit_test(test_left_selector_loses_taint),
        cmocka_unit_test(test_record_and_node_disagree),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_property_random_traces),
        cmocka_unit_test(test_tainted_since_across_dips_and_gaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
