/* conditions: the status conditions of a PsiRebalance with metav1.Condition semantics, and
 * how Ready and Degraded follow from the others. Works on struct api_status (api/status.h),
 * whose api_status_set_condition keeps lastTransitionTime still unless the status changes.
 *
 * The rule for Ready and Degraded (conditions_derive):
 *
 *   A problem is any of, in this order:
 *     1. the last cycle failed (cycle->ok false): its reason and message;
 *     2. MetricsAvailable is False (pressure unreadable, or some nodes not measured: reason
 *        PartiallyMeasured or NoNodeMeasured, coverage.h; the unmeasured nodes' taints held);
 *     3. PSIEnabled is False with reason PoolDegraded (a MachineConfigPool degraded), or
 *        AdmissionPolicyMissing or AdmissionPolicyUnverified (MachineConfig mode refused,
 *        policyguard.h);
 *     4. NodeConflict is True (another PsiRebalance owns some of the selected nodes).
 *   PSIEnabled False while machines update (reason Progressing) is no problem: it is a rollout.
 *   PSIEnabled Unknown (no MachineConfig API, or machineConfig disabled) is no problem either.
 *
 *   Degraded = True when there is any problem: reason of the first one, message all of them
 *              joined by "; ". Otherwise False, reason AsExpected.
 *   Ready    = True when the last cycle succeeded and MetricsAvailable is True (the operator
 *              measured every node and acted on it): reason CycleSucceeded; True with reason
 *              PartiallyMeasured (and MetricsAvailable's message, naming the unmeasured
 *              nodes) when MetricsAvailable is False for that reason: the measured nodes are
 *              acted on. False when the cycle failed (its reason) or MetricsAvailable is False
 *              for any other reason (its reason: NoNodeMeasured when the source answered for
 *              no node). Unknown, reason Pending, while MetricsAvailable is not set yet or
 *              Unknown (before the first reading).
 *   So a degraded pool, a refused MachineConfig mode or a node conflict makes the object
 *   Degraded but still Ready: the operator does its work on the nodes it can.
 *
 * Reasons must match the CRD's pattern (one CamelCase word, ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$)
 * and messages are at most 32768 bytes, or the API server refuses the whole status write;
 * conditions_set enforces both.
 */
#ifndef PSI_RECONCILE_CONDITIONS_H
#define PSI_RECONCILE_CONDITIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "api/reasons.h"
#include "api/status.h"

/* Condition types beyond those of api/status.h. */
#define CONDITIONS_NODE_CONFLICT "NodeConflict" /* the condition type; its reason is API_REASON_NODE_CONFLICT */

/* Reasons set by conditions_derive. */
#define CONDITIONS_REASON_AS_EXPECTED API_REASON_AS_EXPECTED
#define CONDITIONS_REASON_CYCLE_SUCCEEDED API_REASON_CYCLE_SUCCEEDED
#define CONDITIONS_REASON_PENDING API_REASON_PENDING
#define CONDITIONS_REASON_INVALID API_REASON_INVALID_REASON      /* stands in for a reason the CRD would refuse */
#define CONDITIONS_REASON_POOL_DEGRADED API_REASON_POOL_DEGRADED /* PSIEnabled False: a pool degraded */

/* Longest message the CRD accepts. */
#define CONDITIONS_MESSAGE_MAX 32768

/* How the last reconcile cycle ended. */
struct conditions_cycle {
    bool ok;
    const char *reason;  /* when !ok: CamelCase, e.g. "APIError" */
    const char *message; /* when !ok: what failed and why */
};

/* True when reason matches the CRD's pattern for a condition reason. */
bool conditions_reason_valid(const char *reason);

/* Set condition type in st (lastTransitionTime moves to now only when status changes or the
 * condition is new); a reason the CRD would refuse becomes InvalidReason, a message longer
 * than the CRD allows is cut at a UTF-8 boundary. Returns 1 when st changed, 0 when not, -1
 * on no memory. */
int conditions_set(struct api_status *st, const char *type, enum api_condition_status status, const char *reason,
                   const char *message, int64_t generation, int64_t now);

/* The status of condition type in st; API_CONDITION_UNKNOWN when absent. */
enum api_condition_status conditions_status(const struct api_status *st, const char *type);

/* True when condition type is present with this status. */
bool conditions_is(const struct api_status *st, const char *type, enum api_condition_status status);

/* Remove condition type from st; returns 1 when it was there, 0 when not. */
int conditions_remove(struct api_status *st, const char *type);

/* Set Ready and Degraded from cycle and the other conditions of st (rule above). Returns 1
 * when st changed, 0 when not, -1 on no memory. */
int conditions_derive(struct api_status *st, const struct conditions_cycle *cycle, int64_t generation, int64_t now);

#endif
