/* failure: how this project reports failure. One convention, in three shapes chosen by what
 * failed; every module follows it, and every failure path fills in its error.
 *
 * The convention
 *   - A function that can fail returns int 0 on success and -1 on failure (or a pointer,
 *     NULL on failure), and fills in the error its caller passed, on every failure path: no
 *     path returns -1 with the error left as it was (an uninitialised error is never logged).
 *   - The error says what failed and why, in a sentence fit for a log line, an Event note or
 *     a condition message ("GET /api/v1/nodes/x: 404 NotFound: nodes \"x\" not found").
 *   - Where the failure reaches a condition, its reason is a CamelCase word listed in
 *     api/reasons.h.
 *   - Out of memory is a failure like another: reported ("out of memory"), never ignored,
 *     never a crash; what was read so far is released.
 *
 * The shapes
 *   1. I/O (the API server, files, a metrics source): a record with the reason and the
 *      message. struct kube_err (kube/err.h: HTTP status, reason, msg) for everything that
 *      talks to the API server or reads a file; struct psi_status (psi/source.h: failed,
 *      reason, message) for a pressure source, whose reason becomes MetricsAvailable's.
 *      Clear it first (kube_err_clear, psi_status_ok), fill it with kube_err_set or
 *      psi_status_fail.
 *   2. Validation of a PsiRebalance: struct api_errors (api/errors.h), which collects every
 *      problem with the path of its field, so that a user sees all of them at once.
 *   3. A pure decision that says no: a static reason string returned (NULL: yes), or a
 *      sentence written into a caller's buffer (char *why, size_t len) and returned, as
 *      evictor_check, rebalance_fit and rebalance_destination_check do.
 *
 * A function that cannot fail returns void or its value and says so in its header. */
#ifndef PSI_BASE_FAILURE_H
#define PSI_BASE_FAILURE_H
#endif
