/* kubectl-psi's model and views (top, moves, why) on one PsiRebalance as the API server
 * serves it (tests/testdata/cli/psirebalance.json), at a fixed now. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model.h"
#include "cli/moves.h"
#include "cli/top.h"
#include "cli/why.h"

#define T0 1714557600 /* 2024-05-01T10:00:00Z */

static const struct cli_style plain = {false};

struct fx {
    cJSON *json;
    struct cli_psir p;
    struct cli_vms vms;
};

static cJSON *load(void)
{
    char path[1024];
    const char *dir = getenv("PSI_TESTDATA");
    snprintf(path, sizeof(path), "%s/cli/psirebalance.json", dir ? dir : "tests/testdata");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    assert_non_null(j);
    return j;
}

/* The item of status[key] whose "name" is name. */
static cJSON *entry(cJSON *json, const char *key, const char *name)
{
    cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(cJSON_GetObjectItem(json, "status"), key)) {
        if (strcmp(cJSON_GetObjectItem(it, "name")->valuestring, name) == 0)
            return it;
    }
    fail_msg("no %s entry %s", key, name);
    return NULL;
}

static void set_str(cJSON *o, const char *key, const char *v)
{
    cJSON_DeleteItemFromObject(o, key);
    cJSON_AddStringToObject(o, key, v);
}

static void decode(struct fx *fx)
{
    char err[256];
    cli_psir_free(&fx->p);
    assert_int_equal(cli_psir_decode(fx->json, &fx->p, err, sizeof(err)), 0);
}

static int setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));
    fx->json = load();
    decode(fx);
    cJSON *vmis = cJSON_Parse("{\"items\": [{\"status\": {\"nodeName\": \"worker-0\"}}, {\"status\": {\"nodeName\": "
                              "\"worker-0\"}}, {\"status\": {\"nodeName\": \"worker-0\"}}, {\"status\": {\"nodeName\": "
                              "\"worker-1\"}}, {\"status\": {}}, {\"metadata\": {}}]}");
    assert_int_equal(cli_vms_from_list(&fx->vms, vmis), 0);
    cJSON_Delete(vmis);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    cli_psir_free(&fx->p);
    cli_vms_free(&fx->vms);
    cJSON_Delete(fx->json);
    free(fx);
    return 0;
}

/* What render printed. */
struct out {
    char *s;
    size_t len;
    FILE *f;
};

static FILE *out_open(struct out *o)
{
    o->f = open_memstream(&o->s, &o->len);
    assert_non_null(o->f);
    return o->f;
}

static const char *out_text(struct out *o)
{
    fclose(o->f);
    return o->s;
}

/* ---- model ---- */

static void test_model(void **state)
{
    struct fx *fx = *state;
    const struct cli_psir *p = &fx->p;
    assert_string_equal(p->pr.name, "workers");
    assert_int_equal(p->pr.status.nnodes, 6);
    assert_int_equal(p->pr.status.nmoves, 2);
    assert_non_null(cli_psir_node(p, "worker-4"));
    assert_null(cli_psir_node(p, "worker-9"));
    assert_non_null(cJSON_GetObjectItem(cli_psir_raw_move(p, 0), "prediction"));
    assert_null(cli_psir_raw_move(p, 2));
    assert_string_equal(cli_psir_condition(p, "Rebalancing")->reason, "MigrationsInFlight");
    /* methods: the operator's own migration, KubeVirt's evacuation, and a reported method */
    assert_string_equal(cli_move_method(&p->pr.status.moves[0], cli_psir_raw_move(p, 0)), "Migrate");
    assert_string_equal(cli_move_method(&p->pr.status.moves[1], cli_psir_raw_move(p, 1)), "Evict");
    cJSON *raw = cJSON_Parse("{\"method\": \"Auto\"}");
    assert_string_equal(cli_move_method(&p->pr.status.moves[1], raw), "Auto");
    cJSON_Delete(raw);
    struct api_move dry = {.phase = API_MOVE_WOULD_MOVE};
    assert_string_equal(cli_move_method(&dry, NULL), "DryRun");
    /* under way: Migrating; Requested only for a while */
    assert_true(cli_move_under_way(&p->pr.status.moves[1], T0));
    assert_false(cli_move_under_way(&p->pr.status.moves[0], T0));
    struct api_move req = {.phase = API_MOVE_REQUESTED, .time = T0 - 60};
    assert_true(cli_move_under_way(&req, T0));
    req.time = T0 - CLI_REQUESTED_UNDER_WAY_S;
    assert_false(cli_move_under_way(&req, T0));
    /* moves in and out: the target where known, else the destination */
    int64_t in, out;
    cli_move_counts(p, "worker-0", &in, &out);
    assert_int_equal(in, 0);
    assert_int_equal(out, 2);
    cli_move_counts(p, "worker-1", &in, &out);
    assert_int_equal(in, 1);
    cli_move_counts(p, "worker-4", &in, &out);
    assert_int_equal(in, 1);
    /* VMs per node; not known without a list */
    assert_int_equal(cli_vms_on(&fx->vms, "worker-0"), 3);
    assert_int_equal(cli_vms_on(&fx->vms, "worker-1"), 1);
    assert_int_equal(cli_vms_on(&fx->vms, "worker-2"), 0);
    struct cli_vms none = {0};
    assert_int_equal(cli_vms_on(&none, "worker-0"), -1);
    assert_int_equal(cli_vms_on(NULL, "worker-0"), -1);
    /* many VMs over many nodes, counted once sorted */
    struct cli_vms many = {.known = true};
    char node[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(node, sizeof(node), "node-%d", (i * 7919) % 500);
        assert_int_equal(cli_vms_add(&many, node), 0);
    }
    assert_int_equal(cli_vms_on(&many, "node-3"), -1); /* not sorted yet */
    cli_vms_sort(&many);
    assert_int_equal(many.n, 500);
    assert_int_equal(cli_vms_on(&many, "node-3"), 10);
    assert_int_equal(cli_vms_on(&many, "node-499"), 10);
    assert_int_equal(cli_vms_on(&many, "node-500"), 0);
    cli_vms_free(&many);
}

static void test_decode_bad(void **state)
{
    (void)state;
    char err[256];
    struct cli_psir p = {0};
    cJSON *j = cJSON_Parse("{\"kind\": \"PsiRebalance\", \"spec\": {\"pressure\": {\"resource\": 3}}}");
    assert_int_equal(cli_psir_decode(j, &p, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "metadata.name"));
    cli_psir_free(&p);
    cJSON_Delete(j);
    /* a spec with errors still decodes: what is readable is shown */
    j = cJSON_Parse("{\"metadata\": {\"name\": \"x\"}, \"spec\": {\"pressure\": {\"taintAbovePercent\": \"high\"}},"
                    " \"status\": {\"nodes\": [{\"name\": \"n1\", \"state\": \"Tainted\", \"newField\": 1}]}}");
    memset(&p, 0, sizeof(p));
    assert_int_equal(cli_psir_decode(j, &p, err, sizeof(err)), 0);
    assert_int_equal(p.pr.status.nnodes, 1);
    assert_int_equal(p.pr.spec.pressure.taint_above_percent, 25); /* the default */
    cli_psir_free(&p);
    cJSON_Delete(j);
}

/* ---- top ---- */

static void test_state_why(void **state)
{
    struct fx *fx = *state;
    char b[512];
    const struct cli_psir *p = &fx->p;
    assert_string_equal(cli_top_state_why(p, cli_psir_node(p, "worker-2"), T0, b, sizeof(b)),
                        "above taint 25% for 4s of sustain 10s");
    assert_string_equal(cli_top_state_why(p, cli_psir_node(p, "worker-2"), T0 + 60, b, sizeof(b)),
                        "above taint 25% for 1m4s; no taint: maxTaintedPercent 50% reached");
    assert_string_equal(cli_top_state_why(p, cli_psir_node(p, "worker-4"), T0, b, sizeof(b)),
                        "below untaint 15% for 3s of sustain 10s; taint held");
    assert_string_equal(cli_top_state_why(p, cli_psir_node(p, "worker-0"), T0, b, sizeof(b)),
                        "tainted; above evict 30%");
    assert_string_equal(cli_top_state_why(p, cli_psir_node(p, "worker-1"), T0, b, sizeof(b)), "not above taint 25%");
    assert_string_equal(cli_top_state_why(p, cli_psir_node(p, "worker-3"), T0, b, sizeof(b)),
                        "no cpu pressure reading for this node");
    /* metrics down: the condition says why */
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(fx->json, "status"), "conditions"), 1);
    set_str(c, "status", "False");
    set_str(c, "reason", "QueryFailed");
    set_str(c, "message", "Prometheus answered 503");
    decode(fx);
    assert_string_equal(cli_top_state_why(&fx->p, cli_psir_node(&fx->p, "worker-3"), T0, b, sizeof(b)),
                        "metrics unavailable (QueryFailed): Prometheus answered 503");
}

static void test_top_text(void **state)
{
    struct fx *fx = *state;
    struct out o;
    cli_top_render(out_open(&o), &fx->p, 1, NULL, &fx->vms, T0, &plain);
    const char *s = out_text(&o);
    assert_non_null(strstr(s, "PsiRebalance workers: cpu pressure (some); taint above 25%, untaint below 15%, "
                              "evict above 30%, sustain 10s; eviction Automatic, method Auto"));
    /* worker-0's row: pressures, the bar (11 of 20 cells, marks at 25 and 30 %), state, VMs, moves */
    const char *row = strstr(s, "\nworker-0");
    assert_non_null(row);
    char line[512];
    snprintf(line, sizeof(line), "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
    assert_non_null(strstr(line, "53.2%"));
    assert_non_null(strstr(line, "[#####|!####.........]"));
    assert_non_null(strstr(line, "100.0%"));
    assert_non_null(strstr(line, "Tainted"));
    assert_non_null(strstr(line, " 2m "));
    assert_non_null(strstr(line, " 3   0   2  tainted; above evict 30%"));
    /* the unknown node: no reading, no bar */
    assert_non_null(strstr(s, "[     |!             ]"));
    assert_non_null(
        strstr(s, "nodes 7, pressured 2, tainted 2; evictions 2; migrations 1 succeeded, 0 failed, 1 in flight"));
    assert_non_null(strstr(s, "1 selected nodes are not listed in status"));
    assert_non_null(strstr(s, "Rebalancing True (MigrationsInFlight): 1 move under way"));
    assert_null(strchr(s, '\033')); /* no colour */
    free(o.s);
    /* colour on: the state and the level are coloured */
    const struct cli_style color = {true};
    cli_top_render(out_open(&o), &fx->p, 1, "worker-0", NULL, T0, &color);
    s = out_text(&o);
    assert_non_null(strstr(s, "\033[31mTainted"));
    assert_null(strstr(s, "worker-1 ")); /* filtered */
    /* one node: its workloads as the planner saw them, the one causing the load first */
    const char *noisy = strstr(s, "VirtualMachineInstance vms/noisy"),
               *quiet = strstr(s, "VirtualMachineInstance vms/quiet");
    assert_true(noisy && quiet && noisy < quiet);
    assert_non_null(strstr(quiet, "Suffers     63.4%     1.0%    0.12    0.47  OwnPressure\n"));
    free(o.s);
    /* a relief target, where the spec has one */
    cJSON_AddNumberToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(fx->json, "spec"), "eviction"),
                            "reliefTargetPercent", 20);
    decode(fx);
    assert_true(fabs(cli_psir_relief_target(&fx->p) - 20) < 1e-9);
    cli_top_render(out_open(&o), &fx->p, 1, NULL, NULL, T0, &plain);
    s = out_text(&o);
    assert_non_null(strstr(s, "evict above 30%, relieved to below 20%, sustain 10s"));
    free(o.s);
    /* no PsiRebalance; one without status */
    cli_top_render(out_open(&o), NULL, 0, NULL, NULL, T0, &plain);
    assert_string_equal(out_text(&o), "No PsiRebalance found.\n");
    free(o.s);
}

static void test_top_json(void **state)
{
    struct fx *fx = *state;
    cJSON *j = cli_top_json(&fx->p, 1, NULL, &fx->vms, T0);
    assert_non_null(j);
    cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0);
    assert_string_equal(cJSON_GetObjectItem(item, "name")->valuestring, "workers");
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(item, "thresholds"), "reliefTargetPercent"));
    assert_true(isnan(cli_psir_relief_target(&fx->p)));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(item, "thresholds"), "evictAbovePercent")->valueint, 30);
    cJSON *nodes = cJSON_GetObjectItem(item, "nodes");
    assert_int_equal(cJSON_GetArraySize(nodes), 6);
    cJSON *w0 = cJSON_GetArrayItem(nodes, 0), *w3 = cJSON_GetArrayItem(nodes, 3);
    assert_true(fabs(cJSON_GetObjectItem(cJSON_GetObjectItem(w0, "pressure"), "cpu")->valuedouble - 53.2) < 1e-9);
    assert_string_equal(cJSON_GetObjectItem(w0, "state")->valuestring, "Tainted");
    assert_string_equal(cJSON_GetObjectItem(w0, "since")->valuestring, "2024-05-01T09:58:00Z");
    assert_int_equal(cJSON_GetObjectItem(w0, "vms")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(w0, "movesOut")->valueint, 2);
    cJSON *quiet = cJSON_GetArrayItem(cJSON_GetObjectItem(w0, "workloads"), 1);
    assert_string_equal(cJSON_GetObjectItem(quiet, "role")->valuestring, "Suffers");
    assert_true(fabs(cJSON_GetObjectItem(quiet, "cpu")->valuedouble - 63.4) < 1e-9);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(w3, "pressure"), "cpu")));
    assert_string_equal(cJSON_GetObjectItem(w3, "why")->valuestring, "no cpu pressure reading for this node");
    cJSON_Delete(j);
    /* one node; VMs unknown */
    j = cli_top_json(&fx->p, 1, "worker-1", NULL, T0);
    nodes = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0), "nodes");
    assert_int_equal(cJSON_GetArraySize(nodes), 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 0), "vms")));
    cJSON_Delete(j);
}

/* ---- moves ---- */

static void test_moves(void **state)
{
    struct fx *fx = *state;
    struct out o;
    cli_moves_render(out_open(&o), &fx->p, 1, T0, &plain);
    const char *s = out_text(&o);
    assert_non_null(strstr(s, "PsiRebalance workers: 2 moves in the last 1h"));
    const char *h2 = strstr(s, "hot-2"), *h1 = strstr(s, "hot-1");
    assert_true(h2 && h1 && h2 < h1); /* newest first */
    assert_non_null(strstr(s, "VirtualMachineInstance vms/hot-1"));
    assert_non_null(strstr(s, "worker-0 -> worker-1 "));
    assert_non_null(strstr(s, " 31.0%/12.5% "));
    assert_non_null(strstr(s, " 33.1%/14.0% "));
    const char *row1 = strstr(s, " 1m30s  VirtualMachineInstance vms/hot-1");
    assert_non_null(row1);
    assert_non_null(strstr(row1, "Migrate"));
    assert_non_null(strstr(row1, "Succeeded"));
    assert_non_null(strstr(row1, " 1m "));           /* cooldown left */
    assert_non_null(strstr(row1, " 12s/15s "));      /* the migration: expected, took */
    assert_non_null(strstr(row1, " 48.3%/1.12c\n")); /* its own stall and the demand given it */
    const char *row2 = strstr(s, "VirtualMachineInstance vms/hot-2");
    assert_non_null(row2);
    assert_true(strchr(row2, '\n') - row2 > 2 && strncmp(strchr(row2, '\n') - 2, " -", 2) == 0); /* not timed yet */
    free(o.s);

    cJSON *j = cli_moves_json(&fx->p, 1, T0);
    cJSON *items = cJSON_GetObjectItem(j, "items"), *m0 = cJSON_GetArrayItem(items, 0),
          *m1 = cJSON_GetArrayItem(items, 1);
    assert_int_equal(cJSON_GetArraySize(items), 2);
    assert_string_equal(cJSON_GetObjectItem(m0, "name")->valuestring, "hot-2");
    assert_string_equal(cJSON_GetObjectItem(m0, "method")->valuestring, "Evict");
    assert_string_equal(cJSON_GetObjectItem(m0, "phase")->valuestring, "Migrating");
    assert_int_equal(cJSON_GetObjectItem(m0, "cooldownSeconds")->valueint, 50);
    assert_null(cJSON_GetObjectItem(m0, "predicted"));
    assert_null(cJSON_GetObjectItem(m0, "target"));
    assert_string_equal(cJSON_GetObjectItem(m1, "predicted")->valuestring, "31.0%/12.5%");
    assert_string_equal(cJSON_GetObjectItem(m1, "observed")->valuestring, "33.1%/14.0%");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(m1, "prediction"), "observedDestination")->valuestring,
                        "14.0");
    assert_null(cJSON_GetObjectItem(m0, "prediction"));
    assert_null(cJSON_GetObjectItem(m0, "durationSeconds"));
    assert_int_equal(cJSON_GetObjectItem(m1, "expectedSeconds")->valueint, 12);
    assert_int_equal(cJSON_GetObjectItem(m1, "durationSeconds")->valueint, 15);
    assert_string_equal(cJSON_GetObjectItem(m1, "target")->valuestring, "worker-1");
    cJSON_Delete(j);
    /* other shapes a status may use; none at all */
    char b[128];
    j = cJSON_Parse("[{\"prediction\": {\"source\": \"40.0\"}}, {\"predictedPressure\": \"20.0\", "
                    "\"observed\": {\"source\": 18}}, {\"prediction\": \"x\"}]");
    assert_string_equal(cli_moves_predicted(cJSON_GetArrayItem(j, 0), b, sizeof(b)), "40.0%/-");
    assert_null(cli_moves_observed(cJSON_GetArrayItem(j, 0), b, sizeof(b)));
    assert_string_equal(cli_moves_predicted(cJSON_GetArrayItem(j, 1), b, sizeof(b)), "20.0%");
    assert_string_equal(cli_moves_observed(cJSON_GetArrayItem(j, 1), b, sizeof(b)), "source 18.0%");
    assert_null(cli_moves_predicted(cJSON_GetArrayItem(j, 2), b, sizeof(b)));
    assert_null(cli_moves_predicted(NULL, b, sizeof(b)));
    cJSON_Delete(j);
}

/* ---- why ---- */

static bool has(const struct cli_why *w, const char *code, const char *text)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->reasons[i].code, code) == 0 && (!text || strstr(w->reasons[i].text, text)))
            return true;
    return false;
}

static void test_why(void **state)
{
    struct fx *fx = *state;
    struct cli_why w;
    /* a move off it runs */
    cli_why(&fx->p, 1, "worker-0", T0, &w);
    assert_int_equal(w.verdict, CLI_VERDICT_RELIEVING);
    assert_true(has(&w, "moving", "vms/hot-2 is moving to worker-4 (Migrating, Evict, asked 10s ago)"));
    assert_true(has(&w, "cooldown", "vms/hot-1 moved off it to worker-1 and may not move again for 1m"));
    /* below the evict level: nothing to relieve; a VM arrived and cools down */
    cli_why(&fx->p, 1, "worker-1", T0, &w);
    assert_int_equal(w.verdict, CLI_VERDICT_NOTHING);
    assert_true(has(&w, "below-evict", "cpu pressure 4.0% is not above evictAbovePercent 30%"));
    assert_true(has(&w, "cooldown", "onto it from worker-0"));
    /* above, nothing under way: the last decision says why */
    cli_why(&fx->p, 1, "worker-5", T0, &w);
    assert_int_equal(w.verdict, CLI_VERDICT_BLOCKED);
    assert_true(has(&w, "decision", "no node can take a workload"));
    assert_false(has(&w, "limits", NULL)); /* 1 in flight of 2 */
    /* a reason newer than the plugin is still shown */
    cJSON *rb = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(fx->json, "status"), "conditions"), 2);
    set_str(rb, "reason", "SomethingNew");
    set_str(rb, "message", "worker-5: a reason from a newer operator");
    decode(fx);
    cli_why(&fx->p, 1, "worker-5", T0, &w);
    assert_true(has(&w, "decision", "Rebalancing SomethingNew): worker-5: a reason from a newer operator"));
    set_str(rb, "reason", "OscillationHeld");
    decode(fx);
    cli_why(&fx->p, 1, "worker-5", T0, &w);
    assert_true(has(&w, "oscillation", NULL));
    set_str(rb, "reason", "MoveBudgetReached");
    decode(fx);
    cli_why(&fx->p, 1, "worker-5", T0, &w);
    assert_true(has(&w, "budget", "worker-5: a reason from a newer operator"));
    set_str(rb, "reason", "IneffectiveMoveHeld");
    decode(fx);
    cli_why(&fx->p, 1, "worker-5", T0, &w);
    assert_true(has(&w, "ineffective", NULL));
    /* maintenance names the node: its clause, and the decision is not repeated; a node whose
     * name another's begins with is not taken for it */
    set_str(rb, "reason", "MaintenanceInProgress");
    set_str(rb, "message",
            "maintenance holds 2 nodes (neither source nor destination): worker-50: being updated by the "
            "MachineConfig operator (state Working); worker-5: still to be updated in the rollout of pool worker "
            "(1 of 3 machines updated). worker-5 is to be relieved but ...");
    decode(fx);
    cli_why(&fx->p, 1, "worker-5", T0, &w);
    assert_int_equal(w.verdict, CLI_VERDICT_BLOCKED);
    assert_true(has(&w, "maintenance",
                    "maintenance holds it: still to be updated in the rollout of pool worker (1 of 3 machines "
                    "updated); until that ends"));
    size_t held = 0;
    for (size_t i = 0; i < w.n; i++)
        held += strcmp(w.reasons[i].code, "maintenance") == 0;
    assert_int_equal(held, 1);
    /* below the evict level, a held node is still no destination: said so */
    cli_why(&fx->p, 1, "worker-1", T0, &w);
    assert_false(has(&w, "maintenance", NULL));
    /* metrics unknown; not listed */
    cli_why(&fx->p, 1, "worker-3", T0, &w);
    assert_true(has(&w, "metrics-unknown", "no reading for it"));
    cli_why(&fx->p, 1, "worker-9", T0, &w);
    assert_int_equal(w.verdict, CLI_VERDICT_NOT_LISTED);
    assert_null(w.psir);
}

static void test_why_held_back(void **state)
{
    struct fx *fx = *state;
    struct cli_why w;
    /* worker-2 above evict for 4 s: sustain; the condition names no destination */
    set_str(cJSON_GetObjectItem(entry(fx->json, "nodes", "worker-2"), "pressure"), "cpu", "35.0");
    cJSON *rb = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(fx->json, "status"), "conditions"), 2);
    set_str(rb, "status", "False");
    set_str(rb, "reason", "NoDestination");
    set_str(rb, "message", "worker-2 is above evictAbovePercent 30% but no node can take a workload");
    /* hot-2's migration ended 5 s ago: worker-0 settles; 2 in flight reach the limit */
    cJSON *h2 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(fx->json, "status"), "moves"), 1);
    set_str(h2, "phase", "Succeeded");
    set_str(h2, "endTime", "2024-05-01T09:59:55Z");
    cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(fx->json, "status"), "summary"),
                                             "migrationsInFlight"),
                         2);
    decode(fx);
    cli_why(&fx->p, 1, "worker-2", T0, &w);
    assert_int_equal(w.verdict, CLI_VERDICT_BLOCKED);
    assert_true(has(&w, "sustain", "rose above the taint level 4s ago"));
    assert_true(has(&w, "no-destination", "Rebalancing NoDestination"));
    assert_true(has(&w, "limits", "2 live migrations are in flight, maxInFlightMigrations is 2"));
    cli_why(&fx->p, 1, "worker-0", T0, &w);
    assert_int_equal(w.verdict, CLI_VERDICT_BLOCKED);
    assert_true(has(&w, "settling", "a move touched it 5s ago: its pressure settles for 25s"));
    assert_false(has(&w, "sustain", NULL)); /* Tainted: its taint sustain passed */
    /* render: facts, verdict, reasons */
    struct out o;
    FILE *f = out_open(&o);
    cli_why_render(f, &w, "worker-0", T0, &plain);
    const char *s = out_text(&o);
    assert_non_null(strstr(s, "Node worker-0 (PsiRebalance workers; eviction Automatic, method Auto)"));
    assert_non_null(strstr(s, "cpu 53.2%, memory 0.0%, io 1.5%"));
    assert_non_null(strstr(s, "state      Tainted for 2m: tainted; above evict 30%"));
    assert_non_null(strstr(s, "  workloads  VirtualMachineInstance vms/noisy: causes the load, own CPU pressure 21.0%, "
                              "given demand 3.91 of 3.50 cores used (from its own pressure)\n"));
    assert_non_null(
        strstr(s, "             VirtualMachineInstance vms/quiet: suffers from it, own CPU pressure 63.4%"));
    assert_non_null(strstr(s, "verdict    not being relieved now"));
    assert_non_null(strstr(s, "  - [settling] "));
    free(o.s);
    /* no set of moves can relieve it: the decision says what capacity it lacks */
    set_str(rb, "reason", "NoPlacement");
    set_str(rb, "message",
            "worker-2 needs about 3 more CPUs free on some node: no set of moves brings it below "
            "taintAbovePercent 25%, so nothing is evicted");
    decode(fx);
    cli_why(&fx->p, 1, "worker-2", T0, &w);
    assert_int_equal(w.verdict, CLI_VERDICT_BLOCKED);
    assert_true(has(&w, "no-placement", "Rebalancing NoPlacement"));
    assert_true(has(&w, "no-placement", "needs about 3 more CPUs free on some node"));
    /* Disabled: that alone */
    set_str(cJSON_GetObjectItem(cJSON_GetObjectItem(fx->json, "spec"), "eviction"), "mode", "Disabled");
    decode(fx);
    cli_why(&fx->p, 1, "worker-2", T0, &w);
    assert_true(has(&w, "mode", "Disabled"));
    assert_false(has(&w, "sustain", NULL));
}

static void test_why_json(void **state)
{
    struct fx *fx = *state;
    struct cli_why w;
    cli_why(&fx->p, 1, "worker-0", T0, &w);
    cJSON *j = cli_why_json(&w, "worker-0", T0);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "node")->valuestring, "worker-0");
    assert_string_equal(cJSON_GetObjectItem(j, "psiRebalance")->valuestring, "workers");
    assert_string_equal(cJSON_GetObjectItem(j, "verdict")->valuestring, "relieving");
    assert_string_equal(cJSON_GetObjectItem(j, "verdictText")->valuestring, "being relieved");
    assert_string_equal(cJSON_GetObjectItem(j, "mode")->valuestring, "Automatic");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "thresholds"), "evictAbovePercent")->valueint, 30);
    /* the node as top -o json has it, without a VM count (why reads no VMs) */
    cJSON *st = cJSON_GetObjectItem(j, "status");
    assert_string_equal(cJSON_GetObjectItem(st, "state")->valuestring, "Tainted");
    assert_true(fabs(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "pressure"), "cpu")->valuedouble - 53.2) < 1e-9);
    assert_int_equal(cJSON_GetObjectItem(st, "movesOut")->valueint, 2);
    assert_null(cJSON_GetObjectItem(st, "vms"));
    /* the reasons, in order, as the text has them */
    cJSON *reasons = cJSON_GetObjectItem(j, "reasons");
    assert_int_equal(cJSON_GetArraySize(reasons), (int)w.n);
    for (size_t i = 0; i < w.n; i++) {
        cJSON *r = cJSON_GetArrayItem(reasons, (int)i);
        assert_string_equal(cJSON_GetObjectItem(r, "code")->valuestring, w.reasons[i].code);
        assert_string_equal(cJSON_GetObjectItem(r, "text")->valuestring, w.reasons[i].text);
    }
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(reasons, 0), "code")->valuestring, "moving");
    cJSON_Delete(j);
    /* not listed: the node, the verdict, no PsiRebalance */
    cli_why(&fx->p, 1, "worker-9", T0, &w);
    j = cli_why_json(&w, "worker-9", T0);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "verdict")->valuestring, "not-listed");
    assert_null(cJSON_GetObjectItem(j, "psiRebalance"));
    assert_null(cJSON_GetObjectItem(j, "status"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "reasons")), 0);
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_model, setup, teardown),
        cmocka_unit_test(test_decode_bad),
        cmocka_unit_test_setup_teardown(test_state_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_top_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_top_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_moves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_why_held_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_why_json, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
