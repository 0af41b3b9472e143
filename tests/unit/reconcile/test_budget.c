/* The oscillation hold and the move budgets over random move sequences (budget.h,
 * history.h, api/movehistory.h), against a reference that replays the full log of the moves
 * made.
 *
 * A case draws nodes, workloads, cooldown.history, maxMovesPerWorkload, maxMovesPerHour and a
 * pace (from seconds to an hour between proposals, so that the window holds from a few moves
 * to more than a thousand), then proposes moves: a random workload, from where it is to a
 * random other node. The operator's side decides as the mover does: the planner's hold
 * (plan.c's oscillation rule on history_recent's list), the workload's budget
 * (budget_workload) and the hour's (budget_hour_room); a move made is recorded
 * (history_record). Now and then the operator restarts: the status it wrote
 * (history_fill_status, api_status_encode) is printed, parsed, decoded and read back by a new
 * history. The reference replays every move made: a move back to a node its workload left
 * within the window is a return, one to a node that sent load to its source within the window
 * a trade, and the budgets are counted over the log. The decisions must be the reference's,
 * exactly: no return, no trade, no budget exceeded, and nothing held that the rules allow.
 *
 * The same proposals go to the hold as it was before status.moveHistory (history_recent read
 * the moves of status.moves, at most 50, and there were no budgets), whose returns and trades
 * are counted: the generator finds them, so it could find the new hold's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/status.h"
#include "base/jx.h"
#include "reconcile/move/budget.h"
#include "reconcile/move/history.h"
#include "reconcile/move/moves.h"

#define T0 1767225600LL /* s */
#define MAX_NODES 10
#define MAX_WORKLOADS 200

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int pick(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

/* ---- the rules under test ---- */

/* plan.c's oscillation(): the planner's hold on history_recent's list. */
static bool plan_holds(const struct rebalance_recent *r, size_t n, const char *key, const char *sn, const char *tn)
{
    for (size_t i = 0; i < n; i++) {
        if (jx_eq(r[i].workload, key) && jx_eq(r[i].source, tn))
            return true;
        if (jx_eq(r[i].source, tn) && jx_eq(r[i].destination, sn))
            return true;
    }
    return false;
}

/* history_recent as it was: the moves of status.moves since since_s. */
static void old_recent(const struct history *h, int64_t since_s, struct rebalance_recent *out, size_t *n,
                       char keys[][96])
{
    *n = 0;
    for (size_t i = 0; i < h->status.nmoves; i++) {
        const struct api_move *m = &h->status.moves[i];
        if (m->phase == API_MOVE_FAILED || m->time < since_s || !m->source_node)
            continue;
        snprintf(keys[*n], 96, "%s %s/%s", m->kind, m->ns, m->name);
        out[*n] =
            (struct rebalance_recent){keys[*n], m->source_node, m->target_node ? m->target_node : m->destination_node};
        (*n)++;
    }
}

/* ---- one operator ---- */

struct logged {
    int w, s, t;
    int64_t at;
};

struct operator
{
    bool old; /* the hold as it was: status.moves only, no budgets */
    struct history *h;
    struct api_status written; /* the status it last wrote (read back on a restart) */
    int loc[MAX_WORKLOADS];
    struct logged *log; /* every move it made (the reference's replay) */
    size_t nlog, cap;
    long made, returns, trades, over_budget, over_held, restarts;
    size_t most_in_window, most_bytes;
};

struct scenario {
    int nodes, workloads;
    int64_t history_s;
    struct budget_params budget;
    struct cooldown_params cp;
};

static char node_names[MAX_NODES][40];
static char keys[MAX_WORKLOADS][64], names[MAX_WORKLOADS][32];

static void names_init(void)
{
    for (int i = 0; i < MAX_NODES; i++)
        snprintf(node_names[i], sizeof(node_names[i]), "worker-%02d.example.com", i);
    for (int i = 0; i < MAX_WORKLOADS; i++) {
        snprintf(names[i], sizeof(names[i]), "vm-%03d", i);
        snprintf(keys[i], sizeof(keys[i]), "VirtualMachineInstance ns-%d/%s", i % 3, names[i]);
    }
}

static void op_begin(struct operator* o, const struct scenario *sc, int64_t now_s)
{
    history_begin(o->h, &sc->cp, now_s * 1000, &o->written);
    if (o->old) /* the 50 moves of status.moves, as history_fill_status keeps them every cycle */
        moves_prune(&o->h->status, now_s, sc->history_s);
}

/* Write the status, print it, parse and decode it, and read it back in a new history. */
static void op_restart(struct operator* o, const struct scenario *sc, int64_t now_s)
{
    struct api_status next = {0};
    history_fill_status(o->h, now_s * 1000, sc->history_s * 1000, &next);
    cJSON *j = api_status_encode(&next);
    assert_non_null(j);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *parsed = cJSON_Parse(text);
    struct api_errors errs = {0};
    assert_int_equal(api_status_decode(parsed, &o->written, &errs, NULL), 0);
    size_t bytes = api_move_history_bytes(&o->written.move_history);
    if (!o->old && bytes > o->most_bytes)
        o->most_bytes = bytes;
    api_errors_free(&errs);
    cJSON_Delete(parsed);
    cJSON_Delete(j);
    free(text);
    api_status_free(&next);
    history_free(o->h);
    o->h = history_new();
    assert_non_null(o->h);
    o->restarts++;
    op_begin(o, sc, now_s);
}

/* The operator's word on moving workload w from s to t now. */
static bool op_allows(struct operator* o, const struct scenario *sc, int w, int s, int t, int64_t now_s)
{
    int64_t since = now_s - sc->history_s;
    if (o->old) {
        static struct rebalance_recent r[API_STATUS_MAX_MOVES + 64];
        static char k[API_STATUS_MAX_MOVES + 64][96];
        size_t n;
        old_recent(o->h, since, r, &n, k);
        return !plan_holds(r, n, keys[w], node_names[s], node_names[t]);
    }
    struct rebalance_recent *r;
    size_t n;
    assert_int_equal(history_recent(o->h, since, &r, &n), 0);
    bool held = plan_holds(r, n, keys[w], node_names[s], node_names[t]);
    history_recent_free(r, n);
    const struct api_move_history *mh = &o->h->status.move_history;
    bool hour_full = budget_hour_room(mh, &sc->budget, now_s) <= 0;
    if (hour_full) { /* the time it names is when room comes back, with no move before */
        int64_t until = budget_hour_until(mh, &sc->budget, now_s);
        assert_true(until > now_s);
        assert_int_equal(budget_hour_room(mh, &sc->budget, until - 1), 0);
        assert_true(budget_hour_room(mh, &sc->budget, until) > 0);
    }
    return !held && !budget_workload(mh, keys[w], &sc->budget, now_s) && !hour_full;
}

/* The reference: what the full log says of the move. */
struct verdict {
    bool returns, trades, workload_full, hour_full;
    size_t in_window;
};

static struct verdict replay(const struct operator* o, const struct scenario *sc, int w, int s, int t, int64_t now_s)
{
    struct verdict v = {0};
    int64_t of_w = 0, in_hour = 0;
    for (size_t i = o->nlog; i-- > 0;) {
        const struct logged *e = &o->log[i];
        if (e->at < now_s - sc->history_s && e->at < now_s - BUDGET_HOUR_S)
            break; /* the log is in time order */
        if (e->at >= now_s - sc->history_s) {
            v.in_window++;
            v.returns = v.returns || (e->w == w && e->s == t);
            v.trades = v.trades || (e->s == t && e->t == s);
            of_w += e->w == w;
        }
        in_hour += e->at >= now_s - BUDGET_HOUR_S;
    }
    v.workload_full = of_w >= sc->budget.per_workload;
    v.hour_full = in_hour >= sc->budget.per_hour;
    return v;
}

static void op_propose(struct operator* o, const struct scenario *sc, int w, int t, int64_t now_s)
{
    int s = o->loc[w];
    bool allowed = op_allows(o, sc, w, s, t, now_s);
    struct verdict v = replay(o, sc, w, s, t, now_s);
    bool ref_allows = !v.returns && !v.trades && (o->old || (!v.workload_full && !v.hour_full));
    if (!allowed) {
        o->over_held += ref_allows;
        return;
    }
    o->returns += v.returns;
    o->trades += v.trades;
    o->over_budget += !o->old && (v.workload_full || v.hour_full);
    o->most_in_window = v.in_window + 1 > o->most_in_window ? v.in_window + 1 : o->most_in_window;
    struct history_entry e = {keys[w],       "VirtualMachineInstance", "ns", names[w], names[w], node_names[s],
                              node_names[t], API_MOVE_EVICTED};
    char ns[8];
    snprintf(ns, sizeof(ns), "ns-%d", w % 3);
    e.ns = ns;
    assert_non_null(history_record(o->h, &e, now_s * 1000));
    if (o->nlog == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 1024;
        o->log = realloc(o->log, o->cap * sizeof(*o->log));
        assert_non_null(o->log);
    }
    o->log[o->nlog++] = (struct logged){w, s, t, now_s};
    o->loc[w] = t;
    o->made++;
}

/* ---- the property ---- */

struct totals {
    long cases, proposals;
    struct operator now, before;
};

static void add(struct operator* sum, const struct operator* o)
{
    sum->made += o->made;
    sum->returns += o->returns;
    sum->trades += o->trades;
    sum->over_budget += o->over_budget;
    sum->over_held += o->over_held;
    sum->restarts += o->restarts;
    sum->most_in_window = o->most_in_window > sum->most_in_window ? o->most_in_window : sum->most_in_window;
    sum->most_bytes = o->most_bytes > sum->most_bytes ? o->most_bytes : sum->most_bytes;
}

static void run_case(const struct scenario *sc, int proposals, int max_gap_s, struct totals *tot)
{
    struct operator ops[2] = {{.old = false}, {.old = true}};
    int64_t now_s = T0;
    for (int k = 0; k < 2; k++) {
        ops[k].h = history_new();
        assert_non_null(ops[k].h);
        for (int w = 0; w < sc->workloads; w++)
            ops[k].loc[w] = w % sc->nodes;
        op_begin(&ops[k], sc, now_s);
    }
    for (int p = 0; p < proposals; p++) {
        now_s += 1 + pick(max_gap_s);
        int w = pick(sc->workloads), hop = 1 + pick(sc->nodes - 1), restart = pick(64) == 0;
        for (int k = 0; k < 2; k++) {
            if (restart)
                op_restart(&ops[k], sc, now_s);
            else
                op_begin(&ops[k], sc, now_s);
            op_propose(&ops[k], sc, w, (ops[k].loc[w] + hop) % sc->nodes, now_s);
        }
    }
    for (int k = 0; k < 2; k++) {
        add(k ? &tot->before : &tot->now, &ops[k]);
        history_free(ops[k].h);
        api_status_free(&ops[k].written);
        free(ops[k].log);
    }
    tot->cases++;
    tot->proposals += proposals;
}

static struct scenario draw(int nodes, int workloads, int64_t history_s, int per_workload, int per_hour)
{
    struct scenario sc = {nodes, workloads, history_s, {per_workload, per_hour, history_s}, {0}};
    int64_t initial = 60000 + pick(10) * 60000, max = initial + pick(20) * 60000;
    sc.cp = (struct cooldown_params){initial, max < history_s * 1000 ? max : history_s * 1000, history_s * 1000};
    if (sc.cp.initial_ms > sc.cp.max_ms)
        sc.cp.initial_ms = sc.cp.max_ms;
    return sc;
}

static void test_random_sequences(void **state)
{
    (void)state;
    names_init();
    rng_state = 0x853C49E6748FEA9BULL;
    static const int64_t windows[] = {600, 3600, 6 * 3600, 24 * 3600};
    static const int gaps[] = {2, 20, 120, 900, 3600};
    struct totals tot = {0};
    for (int c = 0; c < 60; c++) {
        struct scenario sc = draw(3 + pick(6), 1 + pick(60), windows[pick(4)], 1 + pick(16), 1 + pick(1000));
        run_case(&sc, 500 + pick(700), gaps[pick(5)], &tot);
    }
    /* the largest: many workloads at the highest budgets, fast, a day's window: thousands of
     * moves within it */
    for (int c = 0; c < 2; c++) {
        struct scenario sc = draw(MAX_NODES, MAX_WORKLOADS, 24 * 3600, 16, 1000);
        run_case(&sc, 4000, 3, &tot);
    }
    print_message("%ld cases, %ld proposals\n", tot.cases, tot.proposals);
    print_message("now:    %ld moves, at most %zu within the window, %ld restarts, %zu bytes of moveHistory at most; "
                  "%ld returns, %ld trades, %ld over a budget, %ld held that the rules allow\n",
                  tot.now.made, tot.now.most_in_window, tot.now.restarts, tot.now.most_bytes, tot.now.returns,
                  tot.now.trades, tot.now.over_budget, tot.now.over_held);
    print_message("before: %ld moves, at most %zu within the window; %ld returns, %ld trades\n", tot.before.made,
                  tot.before.most_in_window, tot.before.returns, tot.before.trades);
    assert_int_equal(tot.now.returns, 0);
    assert_int_equal(tot.now.trades, 0);
    assert_int_equal(tot.now.over_budget, 0);
    assert_int_equal(tot.now.over_held, 0);
    assert_true(tot.now.most_in_window > 1000);
    assert_true(tot.now.most_bytes <= API_MOVE_HISTORY_MAX_BYTES);
    /* the generator has the power to find them: the 50-move hold lets some through */
    assert_true(tot.before.returns + tot.before.trades > 0);
}

/* ---- the relief rule ---- */

static void test_relief_rule(void **state)
{
    (void)state;
    rng_state = 0x5851F42D4C957F2DULL;
    for (int c = 0; c < 20000; c++) {
        double before = pick(1001) / 10.0, predicted = pick(1001) / 10.0, observed = pick(1001) / 10.0;
        bool bad = budget_move_unhelpful(before, predicted, observed);
        double want = before - predicted, got = before - observed;
        /* never when the source came down at least as far as predicted, or nothing was predicted */
        if (got >= want || want <= 0)
            assert_false(bad);
        /* always when it came down less than half as far, by a margin over the noise */
        if (want > 0 && got < want / 2 && want - got >= BUDGET_RELIEF_SHORTFALL)
            assert_true(bad);
        /* a hotter observation is never better */
        if (bad && observed + 1 <= 100)
            assert_true(budget_move_unhelpful(before, predicted, observed + 1));
    }
    assert_false(budget_move_unhelpful(NAN, 20, 50));
    assert_false(budget_move_unhelpful(60, NAN, 50));
    assert_false(budget_move_unhelpful(60, 20, NAN));
    /* evicted and sent straight back: no relief at all */
    assert_true(budget_move_unhelpful(60, 40, 60));
    /* a small prediction missed by noise is no verdict */
    assert_false(budget_move_unhelpful(30, 28.5, 30));
}

/* A move judged unhelpful holds its workload for the window, through a restart. */
static void test_unhelpful_holds(void **state)
{
    (void)state;
    struct cooldown_params cp = {600000, 3600000, 86400000};
    struct budget_params bp = {16, 1000, 86400};
    struct history *h = history_new();
    struct api_status empty = {0};
    history_begin(h, &cp, T0 * 1000, &empty);
    struct history_entry e = {"Pod a/p", NULL, "a", NULL, "p", "w0", "w1", API_MOVE_EVICTED};
    struct api_move *m = history_record(h, &e, T0 * 1000);
    assert_non_null(m);
    m->predicted = m->observed = true;
    m->source_before = 70, m->predicted_source = 40, m->observed_source = 45; /* 25 of 30: it helped */
    assert_false(history_judge(h, m, (T0 + 300) * 1000));
    assert_null(budget_workload(&h->status.move_history, "Pod a/p", &bp, T0 + 300));
    m->observed_source = 66; /* 4 of 30 */
    assert_true(history_judge(h, m, (T0 + 300) * 1000));
    assert_string_equal(budget_workload(&h->status.move_history, "Pod a/p", &bp, T0 + 300), BUDGET_UNHELPFUL);
    /* read back after a restart, it holds until the window from the verdict ends */
    struct api_status next = {0}, back = {0};
    history_fill_status(h, (T0 + 300) * 1000, cp.history_ms, &next);
    cJSON *j = api_status_encode(&next);
    assert_int_equal(api_status_decode(j, &back, NULL, NULL), 0);
    struct history *h2 = history_new();
    history_begin(h2, &cp, (T0 + 86400 + 299) * 1000, &back);
    assert_string_equal(budget_workload(&h2->status.move_history, "Pod a/p", &bp, T0 + 86400 + 299), BUDGET_UNHELPFUL);
    history_begin(h2, &cp, (T0 + 86400 + 301) * 1000, &back);
    assert_null(budget_workload(&h2->status.move_history, "Pod a/p", &bp, T0 + 86400 + 301));
    cJSON_Delete(j);
    api_status_free(&next);
    api_status_free(&back);
    history_free(h);
    history_free(h2);
}

/* A status written before moveHistory existed: its moves seed the memory. */
static void test_seeded_from_moves(void **state)
{
    (void)state;
    struct cooldown_params cp = {600000, 3600000, 86400000};
    struct api_status st = {0};
    struct api_move *m = api_status_add_move(&st);
    m->kind = strdup("VirtualMachineInstance");
    m->ns = strdup("ns");
    m->name = strdup("vm");
    m->source_node = strdup("w0");
    m->destination_node = strdup("w1");
    m->phase = API_MOVE_SUCCEEDED;
    m->time = T0;
    struct history *h = history_new();
    history_begin(h, &cp, (T0 + 60) * 1000, &st);
    assert_int_equal(api_move_history_left_at(&h->status.move_history, "VirtualMachineInstance ns/vm", "w0"), T0);
    assert_int_equal(api_move_history_sent_at(&h->status.move_history, "w0", "w1"), T0);
    api_status_free(&st);
    history_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_sequences),
        cmocka_unit_test(test_relief_rule),
        cmocka_unit_test(test_unhelpful_holds),
        cmocka_unit_test(test_seeded_from_moves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
