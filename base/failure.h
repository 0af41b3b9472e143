/* failure: how this project reports failure. One convention; the error a caller passes is
 * sized to what that caller does with it.
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
 * The error, by what the caller does with it (three forms, one record)
 *   - Logs it or shows it: the sentence alone, written into the caller's buffer
 *     (char *why, size_t len). Parsers (kube_yamljson_parse, psi_promreply_read), pure
 *     decisions that say no (evictor_room, rebalance_fit: the sentence returned, NULL for
 *     yes), the metrics server's set-up, kubectl-psi and the simulator.
 *   - Branches on it or puts it in a condition: struct kube_err (kube/err.h), the one error
 *     record: the HTTP status of a reply (0 when none), a CamelCase reason and the sentence.
 *     For the API server and files the reason is the server's metav1.Status reason (NotFound,
 *     Conflict) or a local one (Transport, Config, Decode), and callers branch on the status
 *     (404, 409, 429); for a pressure source (psi/source.h) it is already the MetricsAvailable
 *     condition's reason (api/reasons.h), copied there as it is. Clear it first
 *     (kube_err_clear), fill it with kube_err_set, or psi_fail for a pressure source (which
 *     keeps a server's words printable); kube_err_failed says whether it holds an error.
 *   - Shows the user every problem at once: struct api_errors (api/errors.h), the validation
 *     of a PsiRebalance, each problem with the path of its field.
 *
 * A function that cannot fail returns void or its value and says so in its header. */
#ifndef PSI_BASE_FAILURE_H
#define PSI_BASE_FAILURE_H
#endif
