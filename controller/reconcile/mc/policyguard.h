/* policyguard: whether the admission policies of config/admission that the operator relies on
 * are in force, from what GETs of them found; a pure decision (policyprobe.h does the GETs).
 *
 * Each policy is a ValidatingAdmissionPolicy and a ValidatingAdmissionPolicyBinding of the
 * same name (admissionregistration.k8s.io/v1). One is in force when
 * - the policy exists and its failurePolicy is not Ignore (Ignore lets a write through when a
 *   rule cannot be evaluated);
 * - the binding exists, binds that policy (spec.policyName) and denies (spec.validationActions
 *   holds Deny: Warn and Audit alone let every write through).
 * The verdict over several: Enforced when every one is in force; else Missing when some object
 * is absent (HTTP 404) or present but not in force as above; else Unverified (some could not
 * be read: forbidden, no answer). The message (when not Enforced) starts with the caller's
 * what ("MachineConfig mode refused"), names every object that is wrong and why, and, when
 * some is Missing, the command that applies them: POLICYGUARD_APPLY. */
#ifndef PSI_RECONCILE_POLICYGUARD_H
#define PSI_RECONCILE_POLICYGUARD_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "api/reasons.h"

/* The policies of config/admission, by name (the binding of each has the same name). */
#define POLICYGUARD_MACHINECONFIGS "psi-rebalancer-machineconfigs"
#define POLICYGUARD_NODE_TAINTS "psi-rebalancer-node-taints"
#define POLICYGUARD_MOVES "psi-rebalancer-moves"
#define POLICYGUARD_WRITERS "psi-rebalancer-writers"
#define POLICYGUARD_API_VERSION "admissionregistration.k8s.io/v1"
#define POLICYGUARD_APPLY "kubectl apply -k config/admission"

#define POLICYGUARD_REASON_MISSING API_REASON_ADMISSION_POLICY_MISSING
#define POLICYGUARD_REASON_UNVERIFIED API_REASON_ADMISSION_POLICY_UNVERIFIED

/* What the GET of one object found: the object, or (obj NULL) the HTTP status of the failed
 * GET (404: absent; anything else, 0 for no answer: not read) and why. Borrowed. */
struct policyguard_read {
    const cJSON *obj;
    long status;
    const char *error; /* may be NULL */
};

/* One policy: its name, and what the GETs of the policy and of its binding found. */
struct policyguard_policy {
    const char *name;
    struct policyguard_read policy, binding;
};

enum policyguard_verdict { POLICYGUARD_ENFORCED, POLICYGUARD_MISSING, POLICYGUARD_UNVERIFIED };

/* The verdict; reason NULL when Enforced; msg and msglen set by the caller (msg gets "" when
 * Enforced; a longer message is cut at msglen - 1). */
struct policyguard_result {
    enum policyguard_verdict verdict;
    const char *reason;
    char *msg;
    size_t msglen;
};

/* Judge the policies p[0..n) (rule above); what prefixes the message. */
void policyguard_judge(const struct policyguard_policy *p, size_t n, const char *what, struct policyguard_result *out);

#endif
