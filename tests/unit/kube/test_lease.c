/* Unit tests for kube_lease_decide: leader election decisions over an injected clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kube/lease.h"

static const struct kube_lease_timing T = {15000, 10000, 2000};

static struct kube_lease_record rec(const char *holder, int64_t dur, const char *rv)
{
    struct kube_lease_record r = {0};
    r.exists = 1;
    snprintf(r.holder, sizeof(r.holder), "%s", holder);
    r.duration_s = dur;
    snprintf(r.resource_version, sizeof(r.resource_version), "%s", rv);
    return r;
}

static void test_create_when_absent(void **state)
{
    (void)state;
    struct kube_lease_memory m = {0};
    struct kube_lease_record none = {0};
    assert_int_equal(kube_lease_decide(&m, &none, "me", &T, 5), KUBE_LEASE_ACT_CREATE);
}

static void test_wait_for_valid_lease_then_acquire(void **state)
{
    (void)state;
    struct kube_lease_memory m = {0};
    struct kube_lease_record r = rec("other", 15, "100");
    /* first seen at t=1000: valid on our clock until 16000, whatever its renewTime says */
    assert_int_equal(kube_lease_decide(&m, &r, "me", &T, 1000), KUBE_LEASE_ACT_WAIT);
    assert_int_equal(kube_lease_expiry_ms(&m), 16000);
    assert_int_equal(kube_lease_decide(&m, &r, "me", &T, 15999), KUBE_LEASE_ACT_WAIT);
    /* the same unchanged record: expired now */
    assert_int_equal(kube_lease_decide(&m, &r, "me", &T, 16000), KUBE_LEASE_ACT_ACQUIRE);
}

static void test_renewal_by_other_extends_wait(void **state)
{
    (void)state;
    struct kube_lease_memory m = {0};
    struct kube_lease_record r1 = rec("other", 15, "100"), r2 = rec("other", 15, "101");
    assert_int_equal(kube_lease_decide(&m, &r1, "me", &T, 0), KUBE_LEASE_ACT_WAIT);
    /* the holder renewed (new resourceVersion) at t=10000: valid until 25000 */
    assert_int_equal(kube_lease_decide(&m, &r2, "me", &T, 10000), KUBE_LEASE_ACT_WAIT);
    assert_int_equal(kube_lease_decide(&m, &r2, "me", &T, 20000), KUBE_LEASE_ACT_WAIT);
    assert_int_equal(kube_lease_decide(&m, &r2, "me", &T, 25000), KUBE_LEASE_ACT_ACQUIRE);
}

static void test_released_lease_taken_at_once(void **state)
{
    (void)state;
    struct kube_lease_memory m = {0};
    struct kube_lease_record held = rec("other", 15, "100"), released = rec("", 1, "101");
    assert_int_equal(kube_lease_decide(&m, &held, "me", &T, 0), KUBE_LEASE_ACT_WAIT);
    /* ReleaseOnCancel: holder "" → acquire now, not after leaseDuration */
    assert_int_equal(kube_lease_decide(&m, &released, "me", &T, 2000), KUBE_LEASE_ACT_ACQUIRE);
}

static void test_leader_renews_and_steps_down_after_deadline(void **state)
{
    (void)state;
    struct kube_lease_memory m = {0};
    struct kube_lease_record mine = rec("me", 15, "7");
    m.leader = 1;
    m.last_renew_ms = 0;
    assert_int_equal(kube_lease_decide(&m, &mine, "me", &T, 2000), KUBE_LEASE_ACT_RENEW);
    assert_int_equal(kube_lease_decide(&m, &mine, "me", &T, 10000), KUBE_LEASE_ACT_RENEW);
    /* renewals failed for longer than renewDeadline: stop leading */
    assert_int_equal(kube_lease_decide(&m, &mine, "me", &T, 10001), KUBE_LEASE_ACT_STEP_DOWN);
    assert_int_equal(m.leader, 0);
}

static void test_read_failure(void **state)
{
    (void)state;
    struct kube_lease_memory m = {0};
    m.leader = 1;
    m.last_renew_ms = 1000;
    /* the API is unreachable: keep leading until the renew deadline, then step down */
    assert_int_equal(kube_lease_decide(&m, NULL, "me", &T, 5000), KUBE_LEASE_ACT_WAIT);
    assert_int_equal(m.leader, 1);
    assert_int_equal(kube_lease_decide(&m, NULL, "me", &T, 11001), KUBE_LEASE_ACT_STEP_DOWN);
    assert_int_equal(m.leader, 0);
    /* a follower just waits */
    assert_int_equal(kube_lease_decide(&m, NULL, "me", &T, 20000), KUBE_LEASE_ACT_WAIT);
}

static void test_taken_over_steps_down(void **state)
{
    (void)state;
    struct kube_lease_memory m = {0};
    struct kube_lease_record theirs = rec("other", 15, "9");
    m.leader = 1;
    m.last_renew_ms = 1000;
    assert_int_equal(kube_lease_decide(&m, &theirs, "me", &T, 2000), KUBE_LEASE_ACT_STEP_DOWN);
    assert_int_equal(m.leader, 0);
    /* afterwards a follower that respects their fresh lease */
    assert_int_equal(kube_lease_decide(&m, &theirs, "me", &T, 4000), KUBE_LEASE_ACT_WAIT);
}

static void test_restart_with_same_identity_renews(void **state)
{
    (void)state;
    /* the record names us (a restart with the same identity): renew, as client-go does */
    struct kube_lease_memory m = {0};
    struct kube_lease_record mine = rec("me", 15, "3");
    assert_int_equal(kube_lease_decide(&m, &mine, "me", &T, 0), KUBE_LEASE_ACT_RENEW);
}

/* A Lease as the server sends it; a duration that is no int32 (1e300: an undefined cast
 * before) reads as 0, which the decider takes as expired. */
static void test_record_read(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int64_t duration;
    } cases[] = {
        {"{\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":15},\"metadata\":{\"resourceVersion\":\"7\"}}",
         15},
        {"{\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":1e300}}", 0},
        {"{\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":-1e300}}", 0},
        {"{\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":2147483648}}", 0},
        {"{\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":-5}}", 0},
        {"{\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":1.5}}", 0},
        {"{\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":\"15\"}}", 0},
        {"{\"spec\":[]}", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *j = cJSON_Parse(cases[i].json);
        assert_non_null(j);
        struct kube_lease_record r;
        kube_lease_record_read(j, &r);
        assert_true(r.exists);
        if (r.duration_s != cases[i].duration)
            fail_msg("%s: duration %lld", cases[i].json, (long long)r.duration_s);
        cJSON_Delete(j);
    }
    char long_holder[600];
    memset(long_holder, 'h', sizeof(long_holder));
    long_holder[sizeof(long_holder) - 1] = '\0';
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(j, "spec"), "holderIdentity", long_holder);
    struct kube_lease_record r;
    kube_lease_record_read(j, &r);
    assert_int_equal(strlen(r.holder), sizeof(r.holder) - 1); /* cut, not overrun */
    cJSON_Delete(j);
}

static void test_timing_check(void **state)
{
    (void)state;
    struct kube_err err;
    struct kube_lease_timing t = {0};
    assert_int_equal(kube_lease_timing_check(&t, &err), 0);
    assert_int_equal(t.lease_duration_ms, 15000);
    assert_int_equal(t.renew_deadline_ms, 10000);
    assert_int_equal(t.retry_period_ms, 2000);
    t = (struct kube_lease_timing){10000, 10000, 2000};
    assert_int_equal(kube_lease_timing_check(&t, &err), -1);
    assert_string_equal(err.msg, "lease timing: need lease duration (10000 ms) > renew deadline (10000 ms) > retry "
                                 "period (2000 ms) > 0");
    t = (struct kube_lease_timing){1500, 1000, 200};
    assert_int_equal(kube_lease_timing_check(&t, &err), -1);
    assert_string_equal(err.msg, "lease duration 1500 ms: must be a whole number of seconds, at least 1 s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_read),
        cmocka_unit_test(test_create_when_absent),
        cmocka_unit_test(test_wait_for_valid_lease_then_acquire),
        cmocka_unit_test(test_renewal_by_other_extends_wait),
        cmocka_unit_test(test_released_lease_taken_at_once),
        cmocka_unit_test(test_leader_renews_and_steps_down_after_deadline),
        cmocka_unit_test(test_read_failure),
        cmocka_unit_test(test_taken_over_steps_down),
        cmocka_unit_test(test_restart_with_same_identity_renews),
        cmocka_unit_test(test_timing_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
