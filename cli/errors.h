/* cli_errors: what kubectl-psi tells its user when a request fails. Pure: a kube_err (the
 * project's client error: HTTP status, reason, message) becomes one sentence naming what
 * failed and what to do: the CRD is not installed (404 on the collection), the PsiRebalance
 * does not exist, the user may not read PsiRebalances (403), the credentials were refused
 * (401), the kubeconfig is unusable, the server cannot be reached. */
#ifndef PSI_CLI_ERRORS_H
#define PSI_CLI_ERRORS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* The resource kubectl-psi reads, as RBAC and kubectl spell it. */
#define CLI_RESOURCE "psirebalances.rebalance.psi.dev"

/* What was asked when err happened. */
enum cli_request {
    CLI_REQUEST_CONFIG,     /* loading the kubeconfig */
    CLI_REQUEST_COLLECTION, /* listing or watching every PsiRebalance */
    CLI_REQUEST_NAMED,      /* getting one PsiRebalance, name (the collection exists) */
};

/* Whether err is worth asking again after a pause, as kubectl does: 429 Too Many Requests
 * (also what a server answers while its storage initialises, e.g. just after a CRD is
 * created), 500 with reason InternalError, 503 and 504. */
bool cli_error_transient(const struct kube_err *err);

/* The sentence for err into buf; name is the PsiRebalance of CLI_REQUEST_NAMED (else NULL),
 * server the API server's URL (may be NULL). Returns buf. */
char *cli_error_explain(const struct kube_err *err, enum cli_request req, const char *name, const char *server,
                        char *buf, size_t len);

#endif
