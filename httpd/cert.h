/* cert: the project's one maker of TLS serving certificates (OpenSSL, EC P-256 keys), issued
 * on the spot either by a CA whose key we hold (the simulator's webhook and kubelets: the test
 * bed's CA, $PSI_TESTBED/pki/ca.{crt,key}, so that the API server can verify them through a
 * caBundle or --kubelet-certificate-authority) or by the certificate's own key (self-signed:
 * the operator's endpoints when no certificate is mounted, encryption without a verifiable
 * identity, as controller-runtime does). */
#ifndef PSI_HTTPD_CERT_H
#define PSI_HTTPD_CERT_H

#include <stddef.h>

/* A serving certificate and what goes with it; all PEM text, owned by the struct. */
struct cert_bundle {
    char *cert_pem; /* the leaf certificate */
    char *key_pem;  /* its private key (EC P-256, PKCS#8) */
    char *ca_pem;   /* the issuing CA's certificate (for caBundle); NULL when self-signed */
};

/* What to issue: a certificate valid for days days for the subject alternative names ips
 * (IPv4 or IPv6 literals) and dns (host names), each NULL-terminated (either may be NULL),
 * with common name cn and extendedKeyUsage serverAuth, signed by the CA in ca_cert / ca_key
 * (PEM files), or self-signed when both are NULL. All borrowed. */
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
