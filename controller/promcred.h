/* promcred: the Prometheus client settings of a PsiRebalance as the operator runs them: the
 * URL, the trust and the credential its spec asks for, with what only the running operator
 * knows (where the ServiceAccount directory is, its own API token, its namespace).
 *
 * bearerTokenFile unset: the token of the pressure-reading ServiceAccount
 * (PSI_PRESSURE_READER_SA in the operator's namespace, from the TokenRequest API, promtoken.h);
 * "": no token; a path: that file, unless it holds the operator's own API token. A path
 * (bearerTokenFile or caFile) is read only under the allowed roots of psi/specfile.h.
 * caFile unset: the service CA in the ServiceAccount directory (service-ca.crt) when present,
 * plus the system trust store. One promcred per operator, shared by every PsiRebalance;
 * not thread-safe. */
#ifndef PSI_PROMCRED_H
#define PSI_PROMCRED_H

#include "api/psirebalance.h"
#include "kube/rest.h"
#include "psi/prom.h"

struct promcred;

/* Settings for the operator that talks to the API server through client (borrowed; it must
 * outlive the promcred). NULL on no memory. */
struct promcred *promcred_new(struct kube_client *client);

/* Free it and the token it holds (NULL is fine). */
void promcred_free(struct promcred *pc);

/* Fill *cfg for spec's metrics.prometheus (strings borrowed from spec and pc: valid while
 * both are). */
void promcred_config(struct promcred *pc, const struct api_spec *spec, struct psi_prom_config *cfg);

#endif
