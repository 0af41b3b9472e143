/* cli_errors: see errors.h. */
#include "cli/errors.h"

#include <stdio.h>
#include <string.h>

bool cli_error_transient(const struct kube_err *err)
{
    return err->status == 429 || err->status == 503 || err->status == 504 ||
           (err->status == 500 && strcmp(err->reason, "InternalError") == 0);
}

char *cli_error_explain(const struct kube_err *err, enum cli_request req, const char *name, const char *server,
                        char *buf, size_t len)
{
    const char *msg = err->msg[0] ? err->msg : "no detail";
    if (req == CLI_REQUEST_CONFIG)
        snprintf(buf, len, "cannot use the kubeconfig: %s (set --kubeconfig, --context or KUBECONFIG)", msg);
    else if (err->status == 0 && strcmp(err->reason, "Transport") == 0)
        snprintf(buf, len, "cannot reach the API server%s%s: %s", server ? " at " : "", server ? server : "", msg);
    else if (err->status == 401)
        snprintf(buf, len, "the API server refused the credentials of this kubeconfig (401 Unauthorized): %s", msg);
    else if (err->status == 403)
        snprintf(buf, len,
                 "you may not read PsiRebalances (403 Forbidden): %s. Reading them needs get, list and watch "
                 "on %s (cluster-wide); ask an administrator for such a role",
                 msg, CLI_RESOURCE);
    else if (err->status == 404 && req == CLI_REQUEST_COLLECTION)
        snprintf(buf, len,
                 "the PsiRebalance API (%s) is not installed on this cluster (404 Not Found): install the CRD "
                 "(kubectl apply -f crds/) and the operator first",
                 CLI_RESOURCE);
    else if (err->status == 404)
        snprintf(buf, len, "PsiRebalance \"%s\" not found (kubectl get psirebalances lists them)", name ? name : "");
    else
        snprintf(buf, len, "the API server answered %ld %s: %s", err->status, err->reason[0] ? err->reason : "", msg);
    return buf;
}
