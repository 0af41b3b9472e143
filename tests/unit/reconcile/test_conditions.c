/* Unit tests of controller/reconcile/status/conditions: metav1.Condition semantics and Ready/Degraded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/status/conditions.h"

static const struct api_condition *cond(const struct api_status *st, const char *type)
{
    const struct api_condition *c = api_status_condition(st, type);
    assert_non_null(c);
    return c;
}

static void test_transition_time_moves_only_on_status_change(void **state)
{
    (void)state;
    struct api_status st = {0};
    assert_int_equal(conditions_set(&st, "MetricsAvailable", API_CONDITION_TRUE, "QuerySucceeded", "ok", 1, 100), 1);
    assert_int_equal(cond(&st, "MetricsAvailable")->last_transition_time, 100);
    /* Same status, same words: nothing changes. */
    assert_int_equal(conditions_set(&st, "MetricsAvailable", API_CONDITION_TRUE, "QuerySucceeded", "ok", 1, 200), 0);
    /* Same status, new message or generation: changed, but the transition time stays. */
    assert_int_equal(conditions_set(&st, "MetricsAvailable", API_CONDITION_TRUE, "QuerySucceeded", "fine", 2, 300), 1);
    const struct api_condition *c = cond(&st, "MetricsAvailable");
    assert_int_equal(c->last_transition_time, 100);
    assert_int_equal(c->observed_generation, 2);
    assert_string_equal(c->message, "fine");
    /* New status: the transition time moves. */
    assert_int_equal(conditions_set(&st, "MetricsAvailable", API_CONDITION_FALSE, "Unreachable", "down", 2, 400), 1);
    assert_int_equal(cond(&st, "MetricsAvailable")->last_transition_time, 400);
    assert_int_equal(cond(&st, "MetricsAvailable")->status, API_CONDITION_FALSE);
    assert_int_equal(st.nconditions, 1);
    api_status_free(&st);
}

static void test_reason_and_message_kept_valid(void **state)
{
    (void)state;
    assert_true(conditions_reason_valid("Enabled"));
    assert_true(conditions_reason_valid("A"));
    assert_true(conditions_reason_valid("Pool_Degraded:x,y"));
    assert_false(conditions_reason_valid(""));
    assert_false(conditions_reason_valid(NULL));
    assert_false(conditions_reason_valid("1Bad"));
    assert_false(conditions_reason_valid("Has Space"));
    assert_false(conditions_reason_valid("Ends:"));
    struct api_status st = {0};
    assert_int_equal(conditions_set(&st, "Ready", API_CONDITION_FALSE, "not a reason", NULL, 1, 1), 1);
    assert_string_equal(cond(&st, "Ready")->reason, CONDITIONS_REASON_INVALID);
    const char *msg = cond(&st, "Ready")->message; /* api/status keeps "" as NULL */
    assert_true(!msg || !*msg);
    /* A message over the CRD's limit is cut, never in the middle of a UTF-8 character. */
    size_t n = CONDITIONS_MESSAGE_MAX + 10;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\0';
    big[CONDITIONS_MESSAGE_MAX - 1] = (char)0xC3; /* "é" straddling the limit */
    big[CONDITIONS_MESSAGE_MAX] = (char)0xA9;
    assert_int_equal(conditions_set(&st, "Degraded", API_CONDITION_TRUE, "Big", big, 1, 1), 1);
    assert_int_equal(strlen(cond(&st, "Degraded")->message), CONDITIONS_MESSAGE_MAX - 1);
    free(big);
    api_status_free(&st);
}

static void test_find_and_remove(void **state)
{
    (void)state;
    struct api_status st = {0};
    assert_int_equal(conditions_status(&st, "Ready"), API_CONDITION_UNKNOWN);
    assert_false(conditions_is(&st, "Ready", API_CONDITION_UNKNOWN));
    conditions_set(&st, "A", API_CONDITION_TRUE, "R", "", 1, 1);
    conditions_set(&st, "B", API_CONDITION_FALSE, "R", "", 1, 1);
    conditions_set(&st, "C", API_CONDITION_TRUE, "R", "", 1, 1);
    assert_true(conditions_is(&st, "B", API_CONDITION_FALSE));
    assert_int_equal(conditions_remove(&st, "B"), 1);
    assert_int_equal(conditions_remove(&st, "B"), 0);
    assert_int_equal(st.nconditions, 2);
    assert_true(conditions_is(&st, "A", API_CONDITION_TRUE));
    assert_true(conditions_is(&st, "C", API_CONDITION_TRUE));
    assert_int_equal(conditions_remove(&st, "A"), 1);
    assert_int_equal(conditions_remove(&st, "C"), 1);
    assert_int_equal(st.nconditions, 0);
    api_status_free(&st);
}

static const struct conditions_cycle ok = {true, NULL, NULL};

static void test_derive_pending_then_ready(void **state)
{
    (void)state;
    struct api_status st = {0};
    assert_int_equal(conditions_derive(&st, &ok, 1, 10), 1);
    assert_int_equal(cond(&st, "Ready")->status, API_CONDITION_UNKNOWN);
    assert_string_equal(cond(&st, "Ready")->reason, CONDITIONS_REASON_PENDING);
    assert_int_equal(cond(&st, "Degraded")->status, API_CONDITION_FALSE);
    assert_string_equal(cond(&st, "Degraded")->reason, CONDITIONS_REASON_AS_EXPECTED);
    conditions_set(&st, API_CONDITION_METRICS_AVAILABLE, API_CONDITION_TRUE, "QuerySucceeded", "", 1, 20);
    assert_int_equal(conditions_derive(&st, &ok, 1, 20), 1);
    assert_int_equal(cond(&st, "Ready")->status, API_CONDITION_TRUE);
    assert_string_equal(cond(&st, "Ready")->reason, CONDITIONS_REASON_CYCLE_SUCCEEDED);
    assert_int_equal(cond(&st, "Ready")->last_transition_time, 20);
    /* Nothing new: nothing changes. */
    assert_int_equal(conditions_derive(&st, &ok, 1, 30), 0);
    /* PSIEnabled progressing is no problem. */
    conditions_set(&st, API_CONDITION_PSI_ENABLED, API_CONDITION_FALSE, "Progressing", "1 of 3", 1, 40);
    assert_int_equal(conditions_derive(&st, &ok, 1, 40), 0);
    assert_int_equal(cond(&st, "Degraded")->status, API_CONDITION_FALSE);
    api_status_free(&st);
}

static void test_derive_metrics_lost(void **state)
{
    (void)state;
    struct api_status st = {0};
    conditions_set(&st, API_CONDITION_METRICS_AVAILABLE, API_CONDITION_TRUE, "QuerySucceeded", "", 1, 10);
    conditions_derive(&st, &ok, 1, 10);
    conditions_set(&st, API_CONDITION_METRICS_AVAILABLE, API_CONDITION_FALSE, "Unauthorized", "401 from Prometheus", 1,
                   50);
    assert_int_equal(conditions_derive(&st, &ok, 1, 50), 1);
    const struct api_condition *ready = cond(&st, "Ready"), *degraded = cond(&st, "Degraded");
    assert_int_equal(ready->status, API_CONDITION_FALSE);
    assert_string_equal(ready->reason, "Unauthorized");
    assert_int_equal(ready->last_transition_time, 50);
    assert_int_equal(degraded->status, API_CONDITION_TRUE);
    assert_string_equal(degraded->reason, "Unauthorized");
    assert_non_null(strstr(degraded->message, "401 from Prometheus"));
    assert_non_null(strstr(degraded->message, "taints held"));
    api_status_free(&st);
}

/* Some nodes not measured: Ready stays True and says so, Degraded names them; none measured:
 * Ready False. */
static void test_derive_partially_and_not_measured(void **state)
{
    (void)state;
    struct api_status st = {0};
    conditions_set(&st, API_CONDITION_METRICS_AVAILABLE, API_CONDITION_FALSE, "PartiallyMeasured",
                   "Prometheus: 2 of 3 nodes measured (cpu pressure); not measured: w3 (NoSeries)", 1, 10);
    assert_int_equal(conditions_derive(&st, &ok, 1, 10), 1);
    const struct api_condition *ready = cond(&st, "Ready");
    assert_int_equal(ready->status, API_CONDITION_TRUE);
    assert_string_equal(ready->reason, "PartiallyMeasured");
    assert_non_null(strstr(ready->message, "w3 (NoSeries)"));
    const struct api_condition *degraded = cond(&st, "Degraded");
    assert_int_equal(degraded->status, API_CONDITION_TRUE);
    assert_string_equal(degraded->reason, "PartiallyMeasured");
    assert_non_null(strstr(degraded->message, "some nodes not measured"));
    conditions_set(&st, API_CONDITION_METRICS_AVAILABLE, API_CONDITION_FALSE, "NoNodeMeasured",
                   "Prometheus: 0 of 3 nodes measured", 1, 20);
    assert_int_equal(conditions_derive(&st, &ok, 1, 20), 1);
    assert_int_equal(cond(&st, "Ready")->status, API_CONDITION_FALSE);
    assert_string_equal(cond(&st, "Ready")->reason, "NoNodeMeasured");
    assert_string_equal(cond(&st, "Degraded")->reason, "NoNodeMeasured");
    api_status_free(&st);
}

static void test_derive_several_problems(void **state)
{
    (void)state;
    struct api_status st = {0};
    conditions_set(&st, API_CONDITION_METRICS_AVAILABLE, API_CONDITION_TRUE, "QuerySucceeded", "", 1, 10);
    conditions_set(&st, API_CONDITION_PSI_ENABLED, API_CONDITION_FALSE, CONDITIONS_REASON_POOL_DEGRADED,
                   "pool worker is degraded", 1, 10);
    conditions_set(&st, CONDITIONS_NODE_CONFLICT, API_CONDITION_TRUE, "NodeConflict", "w3 owned by older", 1, 10);
    assert_int_equal(conditions_derive(&st, &ok, 1, 10), 1);
    /* Degraded but still Ready: the operator works on the nodes it can. */
    assert_int_equal(cond(&st, "Ready")->status, API_CONDITION_TRUE);
    const struct api_condition *d = cond(&st, "Degraded");
    assert_int_equal(d->status, API_CONDITION_TRUE);
    assert_string_equal(d->reason, CONDITIONS_REASON_POOL_DEGRADED);
    assert_non_null(strstr(d->message, "pool worker is degraded"));
    assert_non_null(strstr(d->message, "; "));
    assert_non_null(strstr(d->message, "w3 owned by older"));
    /* A failed cycle comes first. */
    struct conditions_cycle bad = {false, "APIError", "PATCH node w1: 503"};
    assert_int_equal(conditions_derive(&st, &bad, 2, 20), 1);
    assert_int_equal(cond(&st, "Ready")->status, API_CONDITION_FALSE);
    assert_string_equal(cond(&st, "Ready")->reason, "APIError");
    assert_string_equal(cond(&st, "Ready")->message, "PATCH node w1: 503");
    assert_int_equal(cond(&st, "Ready")->observed_generation, 2);
    d = cond(&st, "Degraded");
    assert_string_equal(d->reason, "APIError");
    assert_int_equal(d->last_transition_time, 10); /* still True since 10 */
    assert_non_null(strstr(d->message, "PATCH node w1: 503"));
    /* Everything resolved. */
    conditions_remove(&st, CONDITIONS_NODE_CONFLICT);
    conditions_set(&st, API_CONDITION_PSI_ENABLED, API_CONDITION_TRUE, "Enabled", "", 2, 30);
    assert_int_equal(conditions_derive(&st, &ok, 2, 30), 1);
    assert_int_equal(cond(&st, "Degraded")->status, API_CONDITION_FALSE);
    assert_int_equal(cond(&st, "Degraded")->last_transition_time, 30);
    assert_int_equal(cond(&st, "Ready")->status, API_CONDITION_TRUE);
    api_status_free(&st);
}

/* MachineConfig mode refused for want of the admission policies: Degraded with its reason and
 * message, still Ready (taints go on); for either refusal reason. */
static void test_derive_machineconfig_mode_refused(void **state)
{
    (void)state;
    const char *reasons[] = {API_REASON_ADMISSION_POLICY_MISSING, API_REASON_ADMISSION_POLICY_UNVERIFIED};
    for (size_t i = 0; i < 2; i++) {
        struct api_status st = {0};
        conditions_set(&st, API_CONDITION_METRICS_AVAILABLE, API_CONDITION_TRUE, "SampleSucceeded", "", 1, 10);
        conditions_set(&st, API_CONDITION_PSI_ENABLED, API_CONDITION_FALSE, reasons[i],
                       "MachineConfig mode refused, no MachineConfig written: ValidatingAdmissionPolicy x is missing",
                       1, 10);
        assert_int_equal(conditions_derive(&st, &ok, 1, 10), 1);
        assert_int_equal(cond(&st, "Ready")->status, API_CONDITION_TRUE);
        const struct api_condition *d = cond(&st, "Degraded");
        assert_int_equal(d->status, API_CONDITION_TRUE);
        assert_string_equal(d->reason, reasons[i]);
        assert_non_null(strstr(d->message, "ValidatingAdmissionPolicy x is missing"));
        /* applied: no problem left */
        conditions_set(&st, API_CONDITION_PSI_ENABLED, API_CONDITION_FALSE, "Progressing", "pool worker updating", 1,
                       20);
        assert_int_equal(conditions_derive(&st, &ok, 1, 20), 1);
        assert_int_equal(cond(&st, "Degraded")->status, API_CONDITION_FALSE);
        api_status_free(&st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transition_time_moves_only_on_status_change),
        cmocka_unit_test(test_reason_and_message_kept_valid),
        cmocka_unit_test(test_find_and_remove),
        cmocka_unit_test(test_derive_pending_then_ready),
        cmocka_unit_test(test_derive_metrics_lost),
        cmocka_unit_test(test_derive_partially_and_not_measured),
        cmocka_unit_test(test_derive_several_problems),
        cmocka_unit_test(test_derive_machineconfig_mode_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
