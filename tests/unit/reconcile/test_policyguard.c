/* Unit tests of controller/reconcile/mc/policyguard: the verdict on the admission policies
 * over every combination of what the GETs of one and of two policies (and their bindings)
 * can find, and the message's bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/mc/policyguard.h"
#include "reconcile/status/conditions.h"

/* What a GET of one object may find. The first NOT_IN_FORCE_* apply to one kind each. */
enum state {
    IN_FORCE,
    ABSENT,          /* 404 */
    FORBIDDEN,       /* 403: not read */
    NO_ANSWER,       /* status 0: not read */
    IGNORE_FAILURES, /* policy: failurePolicy Ignore */
    BINDS_OTHER,     /* binding: spec.policyName of another policy */
    AUDIT_ONLY,      /* binding: validationActions [Warn, Audit] */
    NSTATES
};

static bool applies(enum state s, bool binding)
{
    if (s == IGNORE_FAILURES)
        return !binding;
    if (s == BINDS_OTHER || s == AUDIT_ONLY)
        return binding;
    return true;
}

static bool missing(enum state s)
{
    return s == ABSENT || s == IGNORE_FAILURES || s == BINDS_OTHER || s == AUDIT_ONLY;
}

static bool unreadable(enum state s)
{
    return s == FORBIDDEN || s == NO_ANSWER;
}

/* The object of state s for policy name (NULL when the GET found none), and *r for it. */
static cJSON *make(enum state s, bool binding, const char *name, struct policyguard_read *r)
{
    *r = (struct policyguard_read){NULL, 0, NULL};
    if (s == ABSENT) {
        r->status = 404;
        r->error = "not found";
        return NULL;
    }
    if (s == FORBIDDEN) {
        r->status = 403;
        r->error = "forbidden: cannot get";
        return NULL;
    }
    if (s == NO_ANSWER) {
        r->error = "connection refused";
        return NULL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    if (!binding) {
        cJSON_AddStringToObject(spec, "failurePolicy", s == IGNORE_FAILURES ? "Ignore" : "Fail");
    } else {
        cJSON_AddStringToObject(spec, "policyName", s == BINDS_OTHER ? "someone-elses" : name);
        const char *deny[] = {"Deny"}, *audit[] = {"Warn", "Audit"};
        cJSON_AddItemToObject(spec, "validationActions",
                              s == AUDIT_ONLY ? cJSON_CreateStringArray(audit, 2) : cJSON_CreateStringArray(deny, 1));
    }
    r->obj = o;
    return o;
}

/* Whether msg names the object. */
static bool names(const char *msg, bool binding, const char *name)
{
    char needle[256];
    snprintf(needle, sizeof(needle), "%s %s ",
             binding ? "ValidatingAdmissionPolicyBinding" : "ValidatingAdmissionPolicy", name);
    return strstr(msg, needle) != NULL;
}

/* Judge n policies whose 2n objects are in states s[] (policy, binding, policy, ...) and check
 * the verdict and message against the rule. */
static void check_case(const enum state *s, size_t n)
{
    static const char *const policy_names[] = {"psi-rebalancer-machineconfigs", "psi-rebalancer-moves"};
    struct policyguard_policy p[2];
    cJSON *objs[4] = {0};
    bool any_missing = false, any_unreadable = false;
    for (size_t i = 0; i < n; i++) {
        p[i].name = policy_names[i];
        objs[2 * i] = make(s[2 * i], false, p[i].name, &p[i].policy);
        objs[2 * i + 1] = make(s[2 * i + 1], true, p[i].name, &p[i].binding);
    }
    for (size_t k = 0; k < 2 * n; k++) {
        any_missing = any_missing || missing(s[k]);
        any_unreadable = any_unreadable || unreadable(s[k]);
    }
    char msg[1024];
    struct policyguard_result out = {.msg = msg, .msglen = sizeof(msg)};
    policyguard_judge(p, n, "MachineConfig mode refused", &out);
    if (any_missing) {
        assert_int_equal(out.verdict, POLICYGUARD_MISSING);
        assert_string_equal(out.reason, "AdmissionPolicyMissing");
        assert_non_null(strstr(msg, POLICYGUARD_APPLY));
    } else if (any_unreadable) {
        assert_int_equal(out.verdict, POLICYGUARD_UNVERIFIED);
        assert_string_equal(out.reason, "AdmissionPolicyUnverified");
        assert_null(strstr(msg, POLICYGUARD_APPLY));
    } else {
        assert_int_equal(out.verdict, POLICYGUARD_ENFORCED);
        assert_null(out.reason);
        assert_string_equal(msg, "");
    }
    if (out.reason) {
        assert_true(conditions_reason_valid(out.reason));
        assert_int_equal(strncmp(msg, "MachineConfig mode refused: ", 28), 0);
    }
    for (size_t k = 0; k < 2 * n; k++) {
        bool binding = k % 2 == 1, wrong = s[k] != IN_FORCE;
        assert_int_equal(names(msg, binding, p[k / 2].name), wrong);
        if (s[k] == ABSENT)
            assert_non_null(strstr(msg, "is missing"));
        if (s[k] == FORBIDDEN)
            assert_non_null(strstr(msg, "could not be read (HTTP 403: forbidden: cannot get)"));
        if (s[k] == NO_ANSWER)
            assert_non_null(strstr(msg, "could not be read (connection refused)"));
        if (s[k] == AUDIT_ONLY)
            assert_non_null(strstr(msg, "does not deny"));
        if (s[k] == BINDS_OTHER)
            assert_non_null(strstr(msg, "binds another policy"));
        if (s[k] == IGNORE_FAILURES)
            assert_non_null(strstr(msg, "failurePolicy Ignore"));
    }
    for (size_t k = 0; k < 2 * n; k++)
        cJSON_Delete(objs[k]);
}

/* Advance s[0..m) to the next combination of states that apply to each object; false after
 * the last. */
static bool next_case(enum state *s, size_t m)
{
    for (size_t k = 0; k < m; k++) {
        do
            s[k] = (enum state)(s[k] + 1);
        while (s[k] < NSTATES && !applies(s[k], k % 2 == 1));
        if (s[k] < NSTATES)
            return true;
        s[k] = IN_FORCE;
    }
    return false;
}

static void test_every_combination(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 2; n++) {
        enum state s[4] = {IN_FORCE, IN_FORCE, IN_FORCE, IN_FORCE};
        size_t cases = 0;
        do {
            check_case(s, n);
            cases++;
        } while (next_case(s, 2 * n));
        /* a policy takes 5 states, a binding 6 */
        assert_int_equal(cases, n == 1 ? 30 : 900);
    }
}

/* The message is cut to any buffer, always terminated (ASan checks the bounds). */
static void test_message_bounds(void **state)
{
    (void)state;
    struct policyguard_read absent = {NULL, 404, "not found"};
    struct policyguard_policy p[] = {{"psi-rebalancer-machineconfigs", absent, absent},
                                     {"psi-rebalancer-node-taints", absent, absent}};
    char full[1024];
    struct policyguard_result out = {.msg = full, .msglen = sizeof(full)};
    policyguard_judge(p, 2, "refused", &out);
    size_t len = strlen(full);
    assert_true(len > 100 && len < sizeof(full) - 1);
    for (size_t cap = 0; cap <= len + 1; cap++) {
        char *buf = malloc(cap ? cap : 1);
        struct policyguard_result cut = {.msg = cap ? buf : NULL, .msglen = cap};
        policyguard_judge(p, 2, "refused", &cut);
        assert_int_equal(cut.verdict, POLICYGUARD_MISSING);
        if (cap) {
            assert_int_equal(strlen(buf), cap - 1 < len ? cap - 1 : len);
            assert_int_equal(strncmp(buf, full, strlen(buf)), 0);
        }
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_combination),
        cmocka_unit_test(test_message_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
