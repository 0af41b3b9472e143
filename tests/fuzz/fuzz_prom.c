/* A Prometheus /api/v1/query reply: read at a 200 and a 503, and the PSI sample read from
 * it for three nodes, which must fail exactly when the reply does and for the same reason
 * (or, the reply being good, for an invalid value). */
#include "fuzz.h"
#include "psi/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct psi_prom_vector v;
    struct kube_err st;
    psi_prom_parse_reply((const char *)data, size, 503, "http://fuzz", &v, &st);
    psi_prom_vector_free(&v);
    int reply_rc = psi_prom_parse_reply((const char *)data, size, 200, "http://fuzz", &v, &st);
    psi_prom_vector_free(&v);
    const char *ip = "10.0.0.1";
    const struct psi_node_desc nodes[] = {{"worker-0", &ip, 1, 0}, {"worker-1", NULL, 0, 0}, {"", NULL, 0, 0}};
    struct psi_request req = {nodes, 3, 0, 0, 60, 1};
    struct psi_sample s;
    if (psi_sample_init(&s, &req) < 0)
        return 0;
    int rc = psi_prom_read_sample((const char *)data, size, 200, "http://fuzz", &req, &s);
    if (reply_rc < 0 && (rc == 0 || strcmp(s.status.reason, st.reason) != 0))
        abort();
    if (reply_rc == 0 && rc < 0 && strcmp(s.status.reason, PSI_REASON_INVALID) != 0)
        abort();
    psi_sample_free(&s);
    return 0;
}
