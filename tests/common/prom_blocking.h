/* prom_blocking: a Prometheus pressure read or instant query run to its end on the calling
 * thread, for the tests of psi/prom.h. The operator runs both on its event loop
 * (reconcile/promrun.h); a test has no loop to wait on. */
#ifndef PSI_TESTS_PROM_BLOCKING_H
#define PSI_TESTS_PROM_BLOCKING_H

#include <string.h>

#include <curl/curl.h>

#include "psi/prom.h"

/* psi_sample_init out for req, then read it through p: 0, or -1 with out->status failed. */
static inline int prom_read_blocking(struct psi_prom *p, const struct psi_request *req, struct psi_sample *out)
{
    if (psi_sample_init(out, req) < 0)
        return -1;
    CURL *e = psi_prom_sample_start(p, req, out);
    return e ? psi_prom_sample_finish(p, curl_easy_perform(e)) : -1;
}

/* The instant query promql through p: 0 with out filled (free with psi_prom_vector_free), or
 * -1 with st failed and out empty. */
static inline int prom_query_blocking(struct psi_prom *p, const char *promql, struct psi_prom_vector *out,
                                      struct kube_err *st)
{
    memset(out, 0, sizeof(*out));
    CURL *e = psi_prom_query_start(p, promql, st);
    return e ? psi_prom_query_finish(p, curl_easy_perform(e), out, st) : -1;
}

#endif
