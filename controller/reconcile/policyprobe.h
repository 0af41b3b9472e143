/* policyprobe: the edge of policyguard.h. GETs each named admission policy and its binding
 * (admissionregistration.k8s.io/v1, by name: the operator's RBAC grants get on exactly the
 * names of config/admission) and judges what it found. Two GETs per name, each call: callers
 * ask once per cycle that needs the answer. */
#ifndef PSI_RECONCILE_POLICYPROBE_H
#define PSI_RECONCILE_POLICYPROBE_H

#include <stddef.h>

#include "kube/rest.h"
#include "reconcile/mc/policyguard.h"

/* The policies MachineConfig mode needs: the one confining MachineConfig writes. */
extern const char *const policyprobe_machineconfig_mode[];
extern const size_t policyprobe_machineconfig_mode_n;

/* Every policy of config/admission (what the operator logs at start). */
extern const char *const policyprobe_all[];
extern const size_t policyprobe_all_n;

/* GET the policies names[0..n) and their bindings, and judge them into *out (policyguard_judge,
 * what prefixing the message). Returns 0, or -1 on no memory (out says Unverified). */
int policyprobe_check(struct kube_client *c, const char *const *names, size_t n, const char *what,
                      struct policyguard_result *out);

#endif
