/* psi_promtoken: the bearer token the Prometheus client sends by default, minted for a
 * ServiceAccount of its own (psi-rebalancer-pressure-reader) that may only read monitoring
 * data, so that the operator's own token, which may taint nodes and write MachineConfigs,
 * never leaves for a URL that a PsiRebalance names.
 *
 * The token comes from the TokenRequest API
 * (POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token, which the operator's RBAC
 * allows for that one ServiceAccount by resourceNames), with a lifetime of
 * PSI_PROMTOKEN_LIFETIME_S and no audience (the API server's own, which a kube-rbac-proxy
 * reviews with TokenReview). It is requested again once 80 % of the lifetime the API server
 * granted has passed, as the kubelet does for projected tokens; a failed renewal keeps the
 * token in hand while it is valid and tries again at most every PSI_PROMTOKEN_RETRY_S.
 * Not thread-safe: one owner (the reconciler) calls it. */
#ifndef PSI_PSI_PROMTOKEN_H
#define PSI_PSI_PROMTOKEN_H

#include <stdint.h>

#include "kube/rest.h"
#include "psi/source.h"

/* The ServiceAccount whose tokens go to Prometheus, in the operator's namespace. */
#define PSI_PRESSURE_READER_SA "psi-rebalancer-pressure-reader"

/* Requested token lifetime (the API server may grant another) and retry spacing. */
#define PSI_PROMTOKEN_LIFETIME_S 3600
#define PSI_PROMTOKEN_RETRY_S 10

struct psi_promtoken;

/* A token source for ServiceAccount ns/name through client (borrowed; it must outlive the
 * source). Nothing is requested yet. NULL on no memory. */
struct psi_promtoken *psi_promtoken_new(struct kube_client *client, const char *ns, const char *name);

/* Free it, wiping the token (NULL is fine). */
void psi_promtoken_free(struct psi_promtoken *t);

/* The token to send at now_ms (wall clock), requesting one when none is held or the one held
 * is due for renewal. Returns it (owned by t, valid until the next call), or NULL with st
 * failed (reason PSI_REASON_CREDENTIAL, a message naming the ServiceAccount, the HTTP status
 * and the RBAC object to check). */
const char *psi_promtoken_get(struct psi_promtoken *t, int64_t now_ms, struct kube_err *st);

/* When a token issued at issued_ms that expires at expires_ms is to be renewed: once 80 % of
 * its lifetime has passed (pure). */
int64_t psi_promtoken_renew_at(int64_t issued_ms, int64_t expires_ms);

/* Read a TokenRequest reply (pure): the token into *token (caller frees) and its expiry
 * (status.expirationTimestamp) into *expires_ms. Returns 0, or -1 with a reason in errbuf. */
int psi_promtoken_parse(const cJSON *reply, char **token, int64_t *expires_ms, char *errbuf, size_t errlen);

#endif
