/* cert: a TLS serving certificate for the simulator's admission webhook, issued on the
 * spot by a CA whose key we hold (the test bed's, $PSI_TESTBED/pki/ca.{crt,key}), so the
 * API server can verify it through the webhook's caBundle. OpenSSL. */
#ifndef PSI_SIM_CERT_H
#define PSI_SIM_CERT_H

#include <stddef.h>

/* A serving certificate and what goes with it; all PEM text, owned by the struct. */
struct cert_bundle {
    char *cert_pem; /* the leaf certificate */
    char *key_pem;  /* its private key (EC P-256, PKCS#8) */
    char *ca_pem;   /* the issuing CA's certificate (for caBundle) */
};

/* What to issue: a certificate valid for days days for the subject alternative names ips
 * (IPv4 or IPv6 literals) and dns (host names), each NULL-terminated (either may be NULL),
 * with common name cn and extendedKeyUsage serverAuth, signed by the CA in ca_cert / ca_key
 * (PEM files). All borrowed. */
struct cert_request {
    const char *ca_cert, *ca_key;
    const char *cn;
    const char *const *ips;
    const char *const *dns;
    int days;
};

/* Issue the certificate req asks for. Returns 0 and fills out (free with cert_bundle_clear),
 * or -1 with why in err. */
int cert_issue(const struct cert_request *req, struct cert_bundle *out, char *err, size_t errlen);

/* Free the PEM strings of b and zero it. */
void cert_bundle_clear(struct cert_bundle *b);

#endif
