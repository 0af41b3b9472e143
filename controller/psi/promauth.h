/* psi_promauth: what the Prometheus client trusts and which credential it sends.
 *
 * Trust (https; peer and host name verification are always on, there is no switch):
 *   - a CA file the spec names (caFile): that PEM bundle alone;
 *   - otherwise the service CA beside the ServiceAccount token (service-ca.crt, which
 *     OpenShift mounts into every pod) when the file exists, plus the system trust store
 *     (libcurl's default CA bundle).
 *   The files are read into one PEM bundle handed to libcurl, which is all it trusts: its
 *   build-time CA directory (CURLOPT_CAPATH, /etc/ssl/certs on Debian) is cleared, or a caFile
 *   would come with the whole system store. The files are read again when one of them
 *   changes (device, inode, size or mtime: the kubelet replaces them); the first request
 *   after a change opens a new connection, so the new trust is what verifies it.
 *   The spec's files (caFile, bearerTokenFile) are read only by the rule of psi/specfile.h:
 *   a regular file under the allowed roots, never a pipe, device or /proc path; any refusal
 *   is the one message that rule gives (SourceConfigError).
 * Credential, one of:
 *   - a token function (the pressure-reading ServiceAccount's TokenRequest, promtoken.h);
 *   - a token file the spec names (bearerTokenFile), read again when it changes; a file
 *     that holds the operator's own API token is refused, never sent;
 *   - none.
 *   A token goes over https only, unless the spec says sendTokenOverPlainHTTP.
 * Not thread-safe: one Prometheus client owns one. */
#ifndef PSI_PSI_PROMAUTH_H
#define PSI_PSI_PROMAUTH_H

#include <curl/curl.h>

#include "psi/source.h"

/* A token minted elsewhere: get returns the current one (owned by ud's owner, valid until
 * the next call), or NULL with st failed. identity names whose token it is, for messages
 * ("ServiceAccount psi-rebalancer/psi-rebalancer-pressure-reader"). */
struct psi_prom_token_fn {
    const char *(*get)(void *ud, struct kube_err *st);
    void *ud;
    const char *identity;
};

/* Settings; strings are copied, token_fn's struct too (its ud stays the caller's). */
struct psi_promauth_config {
    const struct psi_prom_token_fn *token_fn; /* the token to send, or NULL */
    const char *token_file;                   /* or a token file (used when token_fn is NULL), or NULL: none */
    const char *own_token_file;               /* the operator's own API token file, never sent (may be NULL) */
    const char *own_token;                    /* the operator's own static API token, never sent (may be NULL) */
    const char *ca_file;                      /* CA bundle trusted alone, or NULL */
    const char *service_ca_file;              /* with ca_file NULL: trusted when present, with the system store */
    int plain_http_token;                     /* a token may go over http:// (the spec asks for it by name) */
    const char *const *file_roots;            /* where token_file and ca_file may be (psi/specfile.h; borrowed,
                                                 must outlive the state), or NULL: psi_specfile_roots */
};

struct psi_promauth;

/* New state for cfg; NULL with st failed (SourceConfigError) on no memory. */
struct psi_promauth *psi_promauth_new(const struct psi_promauth_config *cfg, struct kube_err *st);

/* Free it, wiping the token it holds (NULL is fine). */
void psi_promauth_free(struct psi_promauth *a);

/* Before a request over https (or http when https is 0): re-read what changed, and set
 * *token to the token to send (NULL: none; owned by a or the token function, valid until the
 * next call). Returns 0, or -1 with st failed: SourceConfigError (unreadable or empty file,
 * the operator's own token, a token over plain http), TLSError (a CA file without a PEM
 * certificate), or the token function's failure. */
int psi_promauth_prepare(struct psi_promauth *a, int https, const char **token, struct kube_err *st);

/* Set the trust read by the last psi_promauth_prepare on easy (after curl_easy_reset): the
 * CA bundle, and a fresh connection when the trust changed since the previous request. */
void psi_promauth_apply(struct psi_promauth *a, CURL *easy);

/* What verified the server, for a TLS error message: "CA file /x.pem", "service CA
 * /sa/service-ca.crt and the system trust store /etc/...". Owned by a. */
const char *psi_promauth_trust(const struct psi_promauth *a);

/* Whose token was sent, for a 401/403 message: "the token of ServiceAccount ns/name", "the
 * token in /path", "no token". Owned by a. */
const char *psi_promauth_identity(const struct psi_promauth *a);

#endif
