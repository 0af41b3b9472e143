/* api_status: encode/decode round trip, conditions, and the change detection that decides
 * whether the operator writes status. */
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

#define T0 1714557600 /* 2024-05-01T10:00:00Z */

/* A status like one a cycle produces: 3 nodes, one tainted, conditions, a MachineConfig. */
static void build(struct api_status *st)
{
    memset(st, 0, sizeof(*st));
    st->observed_generation = 3;
    st->last_successful_cycle_time = T0;
    api_status_set_condition(st, API_CONDITION_READY, API_CONDITION_TRUE, "CycleSucceeded", "3 nodes measured", 3, T0);
    api_status_set_condition(st, API_CONDITION_PSI_ENABLED, API_CONDITION_TRUE, "MachineConfigUpdated",
                             "PSI is on for role worker", 3, T0 - 600);
    api_status_set_condition(st, API_CONDITION_DEGRADED, API_CONDITION_FALSE, "AsExpected", "", 3, T0 - 900);
    st->summary = (struct api_summary){.nodes = 3,
                                       .pressured = 1,
                                       .tainted = 1,
                                       .evictions = 2,
                                       .migrations_succeeded = 2,
                                       .migrations_failed = 0,
                                       .migrations_in_flight = 0,
                                       .node_states = {1, 1, 1, 0, 0}};
    struct api_machine_config_status *mc = api_status_add_machine_config(st, "worker");
    mc->name = strdup("99-worker-psi-rebalancer");
    mc->role = strdup("worker");
    mc->updated = true;
    mc->updated_machines = mc->machines = 3;
    static const char *const names[] = {"worker-0", "worker-1", "worker-2"};
    static const double cpu[] = {31.24, 4.0, 0.0};
    for (int i = 0; i < 3; i++) {
        struct api_node_status *n = api_status_add_node(st, names[i]);
        n->pressure[API_RESOURCE_CPU] = cpu[i];
        n->pressure[API_RESOURCE_MEMORY] = 0.0;
        n->pressure[API_RESOURCE_IO] = 1.1;
        n->state = i == 0 ? API_NODE_TAINTED : API_NODE_NORMAL;
        n->since = T0 - 120 * (i + 1);
    }
    st->nodes[0].evictions = 2;
    st->nodes[0].tainted_since = T0 - 3600; /* tainted an hour ago, Tainted again for two minutes */
    st->nodes[0].migrations.succeeded = 2;
    st->nodes[1].utilization = 12.5;
    snprintf(st->nodes[0].demand_source, sizeof(st->nodes[0].demand_source), "VCPUs");
    st->nodes[0].saturated = true;
    st->nodes[0].nworkloads = 2;
    st->nodes[0].workloads[0] = (struct api_node_workload){"VirtualMachineInstance",
                                                           "vms",
                                                           "noisy",
                                                           API_ROLE_CAUSES,
                                                           {21.0, NAN, 3.5, 3.91, API_DEMAND_FROM_OWN_PRESSURE}};
    st->nodes[0].workloads[1] = (struct api_node_workload){"VirtualMachineInstance",
                                                           "vms",
                                                           "quiet",
                                                           API_ROLE_SUFFERS,
                                                           {63.4, 1.0, 0.12, 0.47, API_DEMAND_FROM_OWN_PRESSURE}};
}

static cJSON *parse(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("test JSON does not parse: %s", text);
    return j;
}

static void test_encode_shape(void **state)
{
    (void)state;
    struct api_status st;
    build(&st);
    cJSON *j = api_status_encode(&st);
    assert_non_null(j);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *n0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(n0, "pressure"), "cpu")), "31.2");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(n0, "pressure"), "memory")),
                        "0.0");
    assert_null(cJSON_GetObjectItem(n0, "utilization")); /* NAN: left out */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(n0, "demandSource")), "VCPUs");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(n0, "saturated")));
    cJSON *n1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 1);
    assert_null(cJSON_GetObjectItem(n1, "demandSource")); /* not looked at: left out */
    assert_null(cJSON_GetObjectItem(n1, "saturated"));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(n0, "state")), "Tainted");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(n0, "since")), "2024-05-01T09:58:00Z");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(n0, "taintedSince")), "2024-05-01T09:00:00Z");
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 1), "taintedSince"));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "lastSuccessfulCycleTime")),
                        "2024-05-01T10:00:00Z");
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "conditions"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c0, "type")), "Ready");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c0, "status")), "True");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c0, "lastTransitionTime")), "2024-05-01T10:00:00Z");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"), "migrationsSucceeded")->valueint, 2);
    cJSON *by = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"), "nodeStates");
    assert_int_equal(cJSON_GetObjectItem(by, "normal")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(by, "tainted")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(by, "cooling")->valueint, 0);
    free(text);
    cJSON_Delete(j);

    /* An empty status: only what always has a value. */
    struct api_status empty = {0};
    j = api_status_encode(&empty);
    cJSON *want = parse("{\"observedGeneration\":0,\"summary\":{\"nodes\":0,\"pressured\":0,\"tainted\":0,"
                        "\"evictions\":0,\"migrationsSucceeded\":0,\"migrationsFailed\":0,\"migrationsInFlight\":0}}");
    assert_true(cJSON_Compare(j, want, 1));
    cJSON_Delete(j);
    cJSON_Delete(want);
    api_status_free(&st);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct api_status st, back = {0};
    struct api_errors errs = {0}, warns = {0};
    build(&st);
    cJSON *j = api_status_encode(&st);
    assert_int_equal(api_status_decode(j, &back, &errs, &warns), 0);
    assert_int_equal(errs.n, 0);
    assert_int_equal(warns.n, 0);
    assert_false(api_status_changed(&st, &back, NULL));
    assert_false(api_status_changed(&back, &st, NULL));
    assert_int_equal(back.nnodes, 3);
    assert_true(isnan(back.nodes[0].utilization));
    assert_true(fabs(back.nodes[1].utilization - 12.5) < 1e-9);
    assert_string_equal(back.nodes[0].demand_source, "VCPUs");
    assert_true(back.nodes[0].saturated);
    assert_string_equal(back.nodes[1].demand_source, "");
    assert_false(back.nodes[1].saturated);
    assert_int_equal(back.nodes[0].nworkloads, 2);
    const struct api_node_workload *quiet = &back.nodes[0].workloads[1];
    assert_string_equal(quiet->name, "quiet");
    assert_int_equal(quiet->role, API_ROLE_SUFFERS);
    assert_true(fabs(quiet->p.cpu - 63.4) < 1e-9 && fabs(quiet->p.demand - 0.47) < 1e-9);
    assert_int_equal(quiet->p.from, API_DEMAND_FROM_OWN_PRESSURE);
    assert_true(isnan(back.nodes[0].workloads[0].p.memory));
    assert_int_equal(back.nodes[1].nworkloads, 0);
    back.nodes[0].workloads[1].role = API_ROLE_NONE; /* a role is a change */
    assert_true(api_status_changed(&st, &back, NULL));
    back.nodes[0].workloads[1].role = API_ROLE_SUFFERS;
    assert_int_equal(back.nodes[0].since, T0 - 120);
    assert_int_equal(back.nodes[0].tainted_since, T0 - 3600);
    assert_int_equal(back.nodes[1].tainted_since, 0);
    assert_int_equal(back.conditions[1].last_transition_time, T0 - 600);
    assert_string_equal(back.machine_configs[0].name, "99-worker-psi-rebalancer");
    assert_int_equal(back.summary.node_states[API_NODE_PRESSURED], 1);
    back.summary.node_states[API_NODE_COOLING] = 1; /* a count by state is a change */
    assert_true(api_status_changed(&st, &back, NULL));
    back.summary.node_states[API_NODE_COOLING] = 0;
    cJSON *j2 = api_status_encode(&back);
    assert_true(cJSON_Compare(j, j2, 1));
    cJSON_Delete(j);
    cJSON_Delete(j2);
    api_status_free(&st);
    api_status_free(&back);
}

/* taintKeys: the record of the keys written, kept through encode, decode and copy; a change of
 * it is a change of the status. */
static void test_taint_keys(void **state)
{
    (void)state;
    struct api_status st = {0}, back = {0}, copy = {0};
    struct api_errors errs = {0};
    assert_int_equal(api_status_add_taint_key(&st, "rebalance.psi.dev/pressure"), 1);
    assert_int_equal(api_status_add_taint_key(&st, "rebalance.psi.dev/pressure"), 0);
    assert_int_equal(api_status_add_taint_key(&st, "example.com/hot"), 1);
    cJSON *j = api_status_encode(&st);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "taintKeys")), 2);
    assert_int_equal(api_status_decode(j, &back, &errs, NULL), 0);
    assert_int_equal(back.ntaint_keys, 2);
    assert_string_equal(back.taint_keys[1], "example.com/hot");
    assert_false(api_status_changed(&st, &back, NULL));
    assert_int_equal(api_status_copy(&copy, &back), 0);
    assert_int_equal(api_status_remove_taint_key(&copy, "rebalance.psi.dev/pressure"), 1);
    assert_int_equal(api_status_remove_taint_key(&copy, "rebalance.psi.dev/pressure"), 0);
    assert_int_equal(copy.ntaint_keys, 1);
    assert_string_equal(copy.taint_keys[0], "example.com/hot");
    assert_true(api_status_changed(&back, &copy, NULL));
    assert_int_equal(back.ntaint_keys, 2); /* the copy is its own */
    cJSON_Delete(j);
    api_status_free(&st);
    api_status_free(&back);
    api_status_free(&copy);
}

static void test_copy(void **state)
{
    (void)state;
    struct api_status st, copy;
    build(&st);
    struct api_move *m = api_status_add_move(&st);
    m->kind = strdup("VirtualMachineInstance");
    m->ns = strdup("vms");
    m->name = strdup("vm-1");
    m->source_node = strdup("worker-0");
    m->destination_node = strdup("worker-2");
    m->phase = API_MOVE_MIGRATING;
    m->time = T0 - 30;
    assert_int_equal(api_status_copy(&copy, &st), 0);
    assert_false(api_status_changed(&st, &copy, NULL));
    cJSON *a = api_status_encode(&st), *b = api_status_encode(&copy);
    assert_true(cJSON_Compare(a, b, 1));
    cJSON_Delete(a);
    cJSON_Delete(b);
    /* Nothing is shared: the copy outlives the original, and changing it changes only it. */
    assert_ptr_not_equal(copy.nodes, st.nodes);
    assert_ptr_not_equal(copy.nodes[0].name, st.nodes[0].name);
    copy.nodes[1].state = API_NODE_PRESSURED;
    assert_true(api_status_changed(&st, &copy, NULL));
    api_status_free(&st);
    assert_int_equal(copy.nnodes, 3);
    assert_string_equal(copy.nodes[2].name, "worker-2");
    assert_string_equal(copy.conditions[1].reason, "MachineConfigUpdated");
    assert_string_equal(copy.machine_configs[0].pool, "worker");
    assert_string_equal(copy.moves[0].destination_node, "worker-2");
    assert_null(copy.moves[0].pod);
    api_status_free(&copy);

    struct api_status empty = {0}, empty_copy;
    assert_int_equal(api_status_copy(&empty_copy, &empty), 0);
    assert_null(empty_copy.nodes);
    assert_int_equal(empty_copy.nnodes, 0);
    api_status_free(&empty_copy);
}

/* A move's prediction and what was observed: encoded as percent strings, read back, compared. */
static void test_move_prediction(void **state)
{
    (void)state;
    struct api_status st = {0}, back = {0};
    struct api_errors errs = {0}, warns = {0};
    struct api_move *m = api_status_add_move(&st);
    m->name = strdup("vm-1");
    m->source_node = strdup("worker-0");
    m->phase = API_MOVE_SUCCEEDED;
    m->predicted = true, m->predicted_source = 12.34, m->predicted_destination = 2.6;
    cJSON *j = api_status_encode(&st);
    cJSON *pr = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0), "prediction");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(pr, "source")), "12.3");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(pr, "destination")), "2.6");
    assert_null(cJSON_GetObjectItem(pr, "observedSource")); /* not settled yet */
    cJSON_Delete(j);
    m->observed = true, m->observed_source = 14.0, m->observed_destination = 3.1;
    m->vm_restart = true;
    m->cost = (struct api_move_cost){
        .memory = 4LL << 30, .basis = API_COST_CLUSTER_RATE, .expected_s = 12, .timed = true, .duration_s = 0};
    m->pressure = (struct api_workload_pressure){48.25, NAN, 0.5, 1.125, API_DEMAND_FROM_OWN_PRESSURE};
    j = api_status_encode(&st);
    cJSON *wp = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0), "workloadPressure");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(wp, "cpu")), "48.3");
    assert_null(cJSON_GetObjectItem(wp, "memory")); /* not reported: left out */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(wp, "demandCores")), "1.12");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(wp, "demandFrom")), "OwnPressure");
    cJSON *cost = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0), "cost");
    assert_int_equal((int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(cost, "memoryBytes")), 4LL << 30);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cost, "expectedFrom")), "ClusterRate");
    assert_int_equal((int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(cost, "expectedSeconds")), 12);
    /* a migration under a second took 0 s, and says so */
    assert_non_null(cJSON_GetObjectItem(cost, "durationSeconds"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0), "vmRestart")));
    assert_int_equal(api_status_decode(j, &back, &errs, &warns), 0);
    assert_int_equal(warns.n, 0);
    assert_true(back.moves[0].predicted && back.moves[0].observed);
    assert_true(fabs(back.moves[0].observed_destination - 3.1) < 1e-9);
    assert_true(back.moves[0].vm_restart);
    assert_true(back.moves[0].cost.timed && back.moves[0].cost.duration_s == 0);
    assert_int_equal(back.moves[0].cost.basis, API_COST_CLUSTER_RATE);
    assert_int_equal(back.moves[0].pressure.from, API_DEMAND_FROM_OWN_PRESSURE);
    assert_true(fabs(back.moves[0].pressure.cpu - 48.3) < 1e-9 && isnan(back.moves[0].pressure.memory));
    assert_false(api_status_changed(&st, &back, NULL));
    back.moves[0].cost.duration_s = 7;
    assert_true(api_status_changed(&st, &back, NULL));
    back.moves[0].cost.duration_s = 0;
    back.moves[0].observed_source = 20;
    assert_true(api_status_changed(&st, &back, NULL));
    cJSON_Delete(j);
    /* a move without one has none */
    struct api_status plain = {0}, plain_back = {0};
    struct api_move *q = api_status_add_move(&plain);
    q->name = strdup("vm-2");
    q->source_node = strdup("worker-1");
    j = api_status_encode(&plain);
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0), "prediction"));
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0), "vmRestart"));
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0), "cost"));
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "moves"), 0), "workloadPressure"));
    assert_int_equal(api_status_decode(j, &plain_back, &errs, &warns), 0);
    assert_false(api_status_changed(&plain, &plain_back, NULL)); /* none decoded equals none made */
    assert_false(plain_back.moves[0].predicted);
    assert_false(plain_back.moves[0].vm_restart);
    cJSON_Delete(j);
    /* a bad reading is named */
    cJSON *bad = parse("{\"moves\":[{\"name\":\"vm\",\"sourceNode\":\"a\",\"phase\":\"Succeeded\","
                       "\"prediction\":{\"source\":\"-3\"}}]}");
    struct api_status bad_back = {0};
    assert_int_not_equal(api_status_decode(bad, &bad_back, &errs, &warns), 0);
    assert_non_null(strstr(errs.v[errs.n - 1].field, "status.moves[0].prediction.source"));
    cJSON_Delete(bad);
    api_status_free(&st);
    api_status_free(&back);
    api_status_free(&plain);
    api_status_free(&plain_back);
    api_status_free(&bad_back);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

static void test_decode_errors_and_unknown_fields(void **state)
{
    (void)state;
    struct api_status st = {0};
    struct api_errors errs = {0}, warns = {0};
    cJSON *j = parse("{\"nodes\":[{\"name\":\"a\",\"pressure\":{\"cpu\":\"high\",\"gpu\":\"1\"},\"state\":\"Hot\"}],"
                     "\"conditions\":[{\"type\":\"Ready\",\"status\":\"Yes\",\"lastTransitionTime\":\"yesterday\"}],"
                     "\"lastSuccessfulCycleTime\":\"2024-05-01T12:00:00+02:00\",\"extra\":1}");
    assert_int_equal(api_status_decode(j, &st, &errs, &warns), -1);
    assert_non_null(api_errors_find(&errs, "status.nodes[0].pressure.cpu"));
    assert_non_null(api_errors_find(&errs, "status.nodes[0].state"));
    assert_non_null(api_errors_find(&errs, "status.conditions[0].status"));
    assert_non_null(api_errors_find(&errs, "status.conditions[0].lastTransitionTime"));
    assert_int_equal(errs.n, 4);
    assert_non_null(api_errors_find(&warns, "status.extra"));
    assert_non_null(api_errors_find(&warns, "status.nodes[0].pressure.gpu"));
    assert_int_equal(st.last_successful_cycle_time, T0); /* the offset is honoured */
    cJSON_Delete(j);
    api_status_free(&st);
    api_errors_free(&errs);
    api_errors_free(&warns);
}

/* Bad status values, each alone: the decoder names the field, and what it keeps can be
 * compared and encoded without a crash. */
static void test_decode_bad_input_table(void **state)
{
    (void)state;
    static const struct {
        const char *json, *path;
    } cases[] = {
        {"[]", "status"},
        {"\"Ready\"", "status"},
        {"{\"conditions\":{}}", "status.conditions"},
        {"{\"conditions\":[1]}", "status.conditions[0]"},
        {"{\"conditions\":[{\"status\":\"True\",\"reason\":\"NoType\"}]}", "status.conditions[0].type"},
        {"{\"conditions\":[{\"type\":\"\",\"status\":\"True\"}]}", "status.conditions[0].type"},
        {"{\"conditions\":[{\"type\":7,\"status\":\"True\"}]}", "status.conditions[0].type"},
        {"{\"conditions\":[{\"type\":\"Ready\",\"observedGeneration\":1e300}]}",
         "status.conditions[0].observedGeneration"},
        {"{\"observedGeneration\":1.5}", "status.observedGeneration"},
        {"{\"observedGeneration\":-1e300}", "status.observedGeneration"},
        {"{\"observedGeneration\":\"3\"}", "status.observedGeneration"},
        {"{\"summary\":[]}", "status.summary"},
        {"{\"summary\":{\"tainted\":1e300}}", "status.summary.tainted"},
        {"{\"lastSuccessfulCycleTime\":17}", "status.lastSuccessfulCycleTime"},
        {"{\"lastSuccessfulCycleTime\":\"2024-02-30T00:00:00Z\"}", "status.lastSuccessfulCycleTime"},
        {"{\"nodes\":[{\"name\":\"a\",\"pressure\":{\"cpu\":\"1e3\"}}]}", "status.nodes[0].pressure.cpu"},
        {"{\"nodes\":[{\"name\":\"a\",\"pressure\":{\"cpu\":\"-1\"}}]}", "status.nodes[0].pressure.cpu"},
        {"{\"nodes\":[{\"name\":\"a\",\"pressure\":{\"io\":\"NaN\"}}]}", "status.nodes[0].pressure.io"},
        {"{\"nodes\":[{\"name\":\"a\",\"pressure\":{\"memory\":\"1.\"}}]}", "status.nodes[0].pressure.memory"},
        {"{\"nodes\":[{\"name\":\"a\",\"pressure\":{\"cpu\":\"100.1\"}}]}", "status.nodes[0].pressure.cpu"},
        {"{\"nodes\":[{\"name\":\"a\",\"pressure\":{\"cpu\":\"1000000000000000000000000000000000000000000000"
         "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
         "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
         "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\"}}]}",
         "status.nodes[0].pressure.cpu"},
        {"{\"nodes\":[{\"name\":\"a\",\"utilization\":5}]}", "status.nodes[0].utilization"},
        {"{\"nodes\":[{\"name\":\"a\",\"saturated\":\"yes\"}]}", "status.nodes[0]"},
        {"{\"nodes\":[{\"name\":\"a\",\"demandSource\":\"AVeryLongSourceName\"}]}", "status.nodes[0]"},
        {"{\"nodes\":[{\"name\":\"a\",\"pressure\":\"hot\"}]}", "status.nodes[0].pressure"},
        {"{\"nodes\":[{\"name\":\"a\",\"since\":\"2024-13-01T00:00:00Z\"}]}", "status.nodes[0].since"},
        {"{\"nodes\":[{\"name\":\"a\",\"migrations\":{\"failed\":\"x\"}}]}", "status.nodes[0].migrations.failed"},
        {"{\"nodes\":[null]}", "status.nodes[0]"},
        {"{\"moves\":[{\"name\":\"vm\",\"phase\":\"Teleported\"}]}", "status.moves[0].phase"},
        {"{\"moves\":[{\"name\":\"vm\",\"time\":\"\"}]}", "status.moves[0].time"},
        {"{\"moves\":[{\"name\":\"vm\",\"failures\":1e19}]}", "status.moves[0].failures"},
        {"{\"moves\":[{\"name\":\"vm\",\"vmRestart\":\"yes\"}]}", "status.moves[0].vmRestart"},
        {"{\"moves\":[{\"name\":\"vm\",\"cost\":{\"durationSeconds\":-1}}]}", "status.moves[0].cost.durationSeconds"},
        {"{\"moves\":[{\"name\":\"vm\",\"cost\":{\"expectedSeconds\":3}}]}", "status.moves[0].cost.expectedFrom"},
        {"{\"moves\":[{\"name\":\"vm\",\"cost\":{\"expectedFrom\":\"Guess\",\"expectedSeconds\":3}}]}",
         "status.moves[0].cost.expectedFrom"},
        {"{\"moves\":[{\"name\":\"vm\",\"cost\":{\"memoryBytes\":\"4Gi\"}}]}", "status.moves[0].cost.memoryBytes"},
        {"{\"moves\":[{\"name\":\"vm\",\"cost\":[]}]}", "status.moves[0].cost"},
        {"{\"moves\":[{\"name\":\"vm\",\"workloadPressure\":{\"cpu\":\"101\"}}]}",
         "status.moves[0].workloadPressure.cpu"},
        {"{\"moves\":[{\"name\":\"vm\",\"workloadPressure\":{\"demandFrom\":\"Guess\"}}]}",
         "status.moves[0].workloadPressure.demandFrom"},
        {"{\"moves\":[{\"name\":\"vm\",\"workloadPressure\":{\"demandCores\":\"-1\"}}]}",
         "status.moves[0].workloadPressure.demandCores"},
        {"{\"nodes\":[{\"name\":\"a\",\"workloads\":[{},{},{},{}]}]}", "status.nodes[0].workloads"},
        {"{\"nodes\":[{\"name\":\"a\",\"workloads\":[7]}]}", "status.nodes[0].workloads[0]"},
        {"{\"nodes\":[{\"name\":\"a\",\"workloads\":[{\"name\":\"v\",\"role\":\"Villain\"}]}]}",
         "status.nodes[0].workloads[0].role"},
        {"{\"nodes\":[{\"name\":\"a\",\"workloads\":[{\"name\":\"v\",\"kind\":\"AKindNameLongerThanThirtyOneBytes\"}]}]}",
         "status.nodes[0].workloads[0].kind"},
        {"{\"nodes\":[{\"name\":\"a\",\"workloads\":[{\"name\":\"v\",\"usageCores\":\"100001\"}]}]}",
         "status.nodes[0].workloads[0].usageCores"},
        {"{\"machineConfigs\":[{\"role\":\"worker\",\"updated\":\"yes\"}]}", "status.machineConfigs[0].updated"},
    };
    struct api_status ref;
    build(&ref);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct api_status st = {0};
        struct api_errors errs = {0};
        cJSON *j = parse(cases[i].json);
        if (api_status_decode(j, &st, &errs, NULL) != -1 || !api_errors_find(&errs, cases[i].path))
            fail_msg("case %zu %s: no error at %s", i, cases[i].json, cases[i].path);
        for (size_t k = 0; k < st.nconditions; k++)
            if (!st.conditions[k].type)
                fail_msg("case %zu: a condition without a type was kept", i);
        /* what was kept compares and encodes both ways without a crash */
        (void)api_status_changed(&ref, &st, NULL);
        (void)api_status_changed(&st, &ref, NULL);
        cJSON_Delete(api_status_encode(&st));
        cJSON_Delete(j);
        api_status_free(&st);
        api_errors_free(&errs);
    }
    api_status_free(&ref);
}

/* A condition without a type (decoded from a status written by someone else) is dropped
 * with an error: the comparison looks conditions up by type. */
static void test_untyped_condition_is_dropped(void **state)
{
    (void)state;
    struct api_status cur, next = {0};
    struct api_errors warns = {0};
    build(&cur);
    cJSON *j = parse("{\"conditions\":[{\"status\":\"True\"},{\"type\":\"Ready\",\"status\":\"True\"}]}");
    assert_int_equal(api_status_decode(j, &next, &warns, &warns), -1);
    assert_non_null(api_errors_find(&warns, "status.conditions[0].type"));
    assert_int_equal(next.nconditions, 1);
    assert_string_equal(next.conditions[0].type, "Ready");
    assert_true(api_status_changed(&cur, &next, NULL));
    assert_null(api_status_condition(&cur, NULL));
    cJSON_Delete(j);
    api_status_free(&cur);
    api_status_free(&next);
    api_errors_free(&warns);
}

static void test_order_and_transition_times_do_not_count(void **state)
{
    (void)state;
    struct api_status a, b;
    build(&a);
    build(&b);
    /* reverse nodes and conditions */
    struct api_node_status tn = b.nodes[0];
    b.nodes[0] = b.nodes[2];
    b.nodes[2] = tn;
    struct api_condition tc = b.conditions[0];
    b.conditions[0] = b.conditions[1];
    b.conditions[1] = tc;
    assert_false(api_status_changed(&a, &b, NULL));
    /* lastTransitionTime and since move only with status/state; alone they are not news */
    b.conditions[0].last_transition_time += 77;
    b.nodes[1].since += 33;
    assert_false(api_status_changed(&a, &b, NULL));
    api_status_free(&a);
    api_status_free(&b);
}

static void test_real_changes_count(void **state)
{
    (void)state;
    struct api_status a, b;
    build(&a);
#define EXPECT_CHANGE(mutation)                              \
    do {                                                     \
        build(&b);                                           \
        mutation;                                            \
        if (!api_status_changed(&a, &b, NULL))               \
            fail_msg("not seen as a change: %s", #mutation); \
        api_status_free(&b);                                 \
    } while (0)
    EXPECT_CHANGE(b.observed_generation = 4);
    EXPECT_CHANGE(b.summary.tainted = 2);
    EXPECT_CHANGE(b.summary.migrations_in_flight = 1);
    EXPECT_CHANGE(b.last_successful_cycle_time += 1);
    EXPECT_CHANGE(b.last_successful_cycle_time = 0);
    EXPECT_CHANGE(b.conditions[0].status = API_CONDITION_FALSE);
    EXPECT_CHANGE(api_status_set_condition(&b, API_CONDITION_READY, API_CONDITION_TRUE, "CycleSucceeded",
                                           "2 nodes measured", 3, T0));
    EXPECT_CHANGE(b.conditions[2].observed_generation = 4);
    EXPECT_CHANGE(api_status_set_condition(&b, API_CONDITION_REBALANCING, API_CONDITION_TRUE, "Moving", "", 3, T0));
    EXPECT_CHANGE(b.machine_configs[0].updated_machines = 2);
    EXPECT_CHANGE(b.nodes[1].state = API_NODE_PRESSURED);
    EXPECT_CHANGE(b.nodes[0].pressure[API_RESOURCE_CPU] = 31.3);
    EXPECT_CHANGE(b.nodes[2].pressure[API_RESOURCE_IO] = NAN);
    EXPECT_CHANGE(b.nodes[0].utilization = 50);
    EXPECT_CHANGE(b.nodes[0].migrations.failed = 1);
    EXPECT_CHANGE(free(b.nodes[2].name); b.nodes[2].name = strdup("worker-9"));
    EXPECT_CHANGE(api_status_add_node(&b, "worker-3"));
    EXPECT_CHANGE(free(b.nodes[2].name); b.nnodes = 2);
#undef EXPECT_CHANGE
    /* below the written resolution: no change */
    build(&b);
    b.nodes[0].pressure[API_RESOURCE_CPU] = 31.21;
    assert_false(api_status_changed(&a, &b, NULL));
    api_status_free(&b);
    api_status_free(&a);
}

static void test_tolerance_and_heartbeat(void **state)
{
    (void)state;
    struct api_status a, b;
    build(&a);
    build(&b);
    struct api_status_compare opts = {.heartbeat_s = 300, .pressure_tolerance = 2.0};
    b.nodes[0].pressure[API_RESOURCE_CPU] = 33.0; /* 31.2 -> 33.0: 1.8 points */
    b.nodes[1].pressure[API_RESOURCE_CPU] = 2.0;  /* 4.0 -> 2.0: 2.0 points, not more */
    b.last_successful_cycle_time = T0 + 299;
    assert_false(api_status_changed(&a, &b, &opts));
    assert_true(api_status_changed(&a, &b, NULL));
    b.last_successful_cycle_time = T0 + 300; /* the heartbeat is due */
    assert_true(api_status_changed(&a, &b, &opts));
    b.last_successful_cycle_time = T0 - 1; /* backwards always counts */
    assert_true(api_status_changed(&a, &b, &opts));
    b.last_successful_cycle_time = T0;
    b.nodes[1].pressure[API_RESOURCE_CPU] = 1.9; /* 2.1 points */
    assert_true(api_status_changed(&a, &b, &opts));
    b.nodes[1].pressure[API_RESOURCE_CPU] = 4.0;
    b.nodes[1].state = API_NODE_PRESSURED; /* tolerance never hides a state change */
    assert_true(api_status_changed(&a, &b, &opts));
    api_status_free(&a);
    api_status_free(&b);
}

static void test_set_condition(void **state)
{
    (void)state;
    struct api_status st = {0};
    assert_int_equal(api_status_set_condition(&st, "Ready", API_CONDITION_FALSE, "Starting", "first cycle", 1, T0), 1);
    assert_int_equal(st.nconditions, 1);
    assert_int_equal(st.conditions[0].last_transition_time, T0);
    /* same everything: nothing changes */
    assert_int_equal(api_status_set_condition(&st, "Ready", API_CONDITION_FALSE, "Starting", "first cycle", 1, T0 + 5),
                     0);
    assert_int_equal(st.conditions[0].last_transition_time, T0);
    /* new message, same status: lastTransitionTime stays */
    assert_int_equal(api_status_set_condition(&st, "Ready", API_CONDITION_FALSE, "NoMetrics", "no data", 1, T0 + 10),
                     1);
    assert_int_equal(st.conditions[0].last_transition_time, T0);
    assert_string_equal(st.conditions[0].reason, "NoMetrics");
    /* status flips: lastTransitionTime moves */
    assert_int_equal(api_status_set_condition(&st, "Ready", API_CONDITION_TRUE, "CycleSucceeded", "ok", 1, T0 + 20), 1);
    assert_int_equal(st.conditions[0].last_transition_time, T0 + 20);
    /* a new generation alone is a change */
    assert_int_equal(api_status_set_condition(&st, "Ready", API_CONDITION_TRUE, "CycleSucceeded", "ok", 2, T0 + 30), 1);
    assert_int_equal(st.conditions[0].observed_generation, 2);
    assert_int_equal(st.conditions[0].last_transition_time, T0 + 20);
    assert_non_null(api_status_condition(&st, "Ready"));
    assert_null(api_status_condition(&st, "Degraded"));
    api_status_free(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_shape),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_move_prediction),
        cmocka_unit_test(test_taint_keys),
        cmocka_unit_test(test_decode_errors_and_unknown_fields),
        cmocka_unit_test(test_decode_bad_input_table),
        cmocka_unit_test(test_untyped_condition_is_dropped),
        cmocka_unit_test(test_order_and_transition_times_do_not_count),
        cmocka_unit_test(test_real_changes_count),
        cmocka_unit_test(test_tolerance_and_heartbeat),
        cmocka_unit_test(test_set_condition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
