/* policyguard: whether the admission policies are in force (see policyguard.h). */
#include "reconcile/mc/policyguard.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

enum found { FOUND_IN_FORCE, FOUND_MISSING, FOUND_UNREADABLE };

/* Append printf-formatted text to out->msg, cut at its end. */
#define msg_add(out, ...) base_append((out)->msg, (out)->msglen, __VA_ARGS__)

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool denies(const cJSON *binding)
{
    const cJSON *a, *actions = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(binding, "spec"),
                                                                "validationActions");
    cJSON_ArrayForEach (a, actions)
        if (cJSON_IsString(a) && strcmp(a->valuestring, "Deny") == 0)
            return true;
    return false;
}

/* Why a present object is not in force (NULL: it is). */
static const char *not_in_force(const cJSON *obj, bool binding, const char *name)
{
    if (!binding) {
        const char *fp = str_at(obj, "spec", "failurePolicy");
        return fp && strcmp(fp, "Ignore") == 0 ? "has failurePolicy Ignore" : NULL;
    }
    const char *bound = str_at(obj, "spec", "policyName");
    if (!bound || strcmp(bound, name) != 0)
        return "binds another policy";
    return denies(obj) ? NULL : "does not deny (no Deny in validationActions)";
}

/* Judge one object and add what is wrong with it to the message. */
static enum found judge_one(const struct policyguard_read *r, bool binding, const char *name,
                            struct policyguard_result *out, bool *first)
{
    const char *kind = binding ? "ValidatingAdmissionPolicyBinding" : "ValidatingAdmissionPolicy";
    const char *why = NULL;
    enum found f = FOUND_IN_FORCE;
    if (r->obj)
        f = (why = not_in_force(r->obj, binding, name)) ? FOUND_MISSING : FOUND_IN_FORCE;
    else if (r->status == 404)
        f = FOUND_MISSING, why = "is missing";
    else
        f = FOUND_UNREADABLE;
    if (f == FOUND_IN_FORCE)
        return f;
    msg_add(out, "%s%s %s ", *first ? ": " : "; ", kind, name);
    *first = false;
    if (f == FOUND_MISSING)
        msg_add(out, "%s", why);
    else if (r->status)
        msg_add(out, "could not be read (HTTP %ld%s%s)", r->status, r->error ? ": " : "", r->error ? r->error : "");
    else
        msg_add(out, "could not be read (%s)", r->error ? r->error : "no answer");
    return f;
}

void policyguard_judge(const struct policyguard_policy *p, size_t n, const char *what, struct policyguard_result *out)
{
    if (out->msglen)
        out->msg[0] = '\0';
    msg_add(out, "%s", what ? what : "");
    bool missing = false, unreadable = false, first = true;
    for (size_t i = 0; i < n; i++) {
        enum found a = judge_one(&p[i].policy, false, p[i].name, out, &first);
        enum found b = judge_one(&p[i].binding, true, p[i].name, out, &first);
        missing = missing || a == FOUND_MISSING || b == FOUND_MISSING;
        unreadable = unreadable || a == FOUND_UNREADABLE || b == FOUND_UNREADABLE;
    }
    out->verdict = missing ? POLICYGUARD_MISSING : unreadable ? POLICYGUARD_UNVERIFIED : POLICYGUARD_ENFORCED;
    out->reason = missing ? POLICYGUARD_REASON_MISSING : unreadable ? POLICYGUARD_REASON_UNVERIFIED : NULL;
    if (out->verdict == POLICYGUARD_ENFORCED && out->msglen)
        out->msg[0] = '\0';
    else if (missing)
        msg_add(out, "; apply config/admission: %s (README, Admission policies)", POLICYGUARD_APPLY);
    else
        msg_add(out, "; the operator needs get on them (config/rbac)");
}
