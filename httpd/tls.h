/* psi_tls: the TLS side of a psi_serve server (OpenSSL): the serving certificate and the
 * protocol settings.
 *
 * The certificate and key come from a directory (tls.crt and tls.key, PEM, as a
 * kubernetes.io/tls Secret mounts them, e.g. the one OpenShift's service CA writes for a
 * Service annotated service.beta.openshift.io/serving-cert-secret-name). The files are
 * checked again at most once a second, when a connection arrives; when either changed
 * (inode, size or modification time: a Secret volume swaps a symlink) and the new pair
 * loads and matches, new connections get it; existing ones keep theirs. A pair that does
 * not load leaves the previous one in use and is reported through the log callback.
 * Or the pair is given in memory (PEM text, e.g. one cert.h issued), and kept. Without either,
 * a self-signed certificate (cert.h: EC P-256, one year) is made in memory at start, as
 * controller-runtime does: encryption without a verifiable identity. With a client CA, a
 * client must present a certificate that CA signed (as a kubelet asks of the API server).
 *
 * Protocol: TLS 1.2 or 1.3 only (the minimum is a setting; older versions are refused),
 * no compression, no renegotiation, no session tickets, HTTP/1.1 (no ALPN). The TLS 1.2
 * cipher suites default to the ECDHE AEAD suites of the intermediate profile that
 * Mozilla and OpenShift define; a list of IANA names replaces them. Single-threaded: the
 * server thread alone uses a psi_tls once serving started. */
#ifndef PSI_HTTPD_TLS_H
#define PSI_HTTPD_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

/* How to serve TLS; every field may be 0/NULL. */
struct psi_tls_options {
    const char *cert_dir;                   /* tls.crt and tls.key here */
    const char *cert_pem, *key_pem;         /* or the pair in memory (copied); neither: self-signed */
    const char *client_ca;                  /* PEM file of the CA client certificates must be signed
                                             * by; NULL: no client certificate asked for */
    const char *min_version;                /* "VersionTLS12" (default) or "VersionTLS13" */
    const char *ciphers;                    /* comma-separated IANA names of TLS 1.2 suites, e.g.
                                             * "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"; NULL: the default */
    void (*log)(const char *msg, void *ud); /* a reload that failed or succeeded */
    void *log_ud;
};

struct psi_tls;

/* The TLS version constant (TLS1_2_VERSION, TLS1_3_VERSION) for a name as Kubernetes and
 * OpenShift TLS profiles spell it ("VersionTLS12", "VersionTLS13"). Returns 0, or -1 with
 * a message in err (older versions are named as refused). */
int psi_tls_parse_version(const char *name, int *version, char *err, size_t errlen);

/* Translate a comma-separated list of IANA cipher suite names into an OpenSSL cipher list
 * (TLS 1.2 suites only; TLS 1.3 suites are not configurable, as in Go). Returns 0, or -1
 * with a message naming the first unknown or unsupported suite. */
int psi_tls_cipher_list(const char *iana, char *out, size_t outlen, char *err, size_t errlen);

/* Load (or make) the certificate and set up the protocol. NULL with a message in err. */
struct psi_tls *psi_tls_new(const struct psi_tls_options *o, char *err, size_t errlen);

/* The context new connections use, after checking the files (at most once a second).
 * Borrowed: valid until the next call or psi_tls_free; an SSL made from it keeps its own
 * reference. */
SSL_CTX *psi_tls_context(struct psi_tls *t);

/* How many times a changed certificate was loaded since start. */
unsigned psi_tls_reloads(const struct psi_tls *t);

/* Free (NULL is fine). */
void psi_tls_free(struct psi_tls *t);

#endif
