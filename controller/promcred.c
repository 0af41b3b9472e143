/* promcred: the Prometheus settings of a PsiRebalance as the running operator applies them. */
#include "promcred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/config.h"
#include "psi/promtoken.h"

struct promcred {
    struct kube_client *client;
    struct psi_promtoken *token; /* made on first use: NULL while the namespace is unknown */
    struct psi_prom_token_fn fn;
    char identity[320];
    char service_ca[4096];
};

/* The pressure reader's token now, or NULL with st failed. */
static const char *reader_token(void *ud, struct kube_err *st)
{
    struct promcred *pc = ud;
    if (!pc->token) {
        const char *ns = kube_client_config(pc->client)->namespace;
        if (!ns) {
            psi_fail(st, PSI_REASON_CREDENTIAL,
                     "the operator's namespace is unknown (no namespace file in the ServiceAccount "
                     "directory, no namespace in the kubeconfig context), so no token of the ServiceAccount "
                     "%s can be requested: run it in its namespace, or set bearerTokenFile",
                     PSI_PRESSURE_READER_SA);
            return NULL;
        }
        pc->token = psi_promtoken_new(pc->client, ns, PSI_PRESSURE_READER_SA);
        if (!pc->token) {
            psi_fail(st, PSI_REASON_CREDENTIAL, "out of memory");
            return NULL;
        }
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return psi_promtoken_get(pc->token, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, st);
}

struct promcred *promcred_new(struct kube_client *client)
{
    struct promcred *pc = calloc(1, sizeof(*pc));
    if (!pc)
        return NULL;
    pc->client = client;
    const char *ns = kube_client_config(client)->namespace;
    snprintf(pc->identity, sizeof(pc->identity), "ServiceAccount %s/%s", ns ? ns : "(the operator's namespace)",
             PSI_PRESSURE_READER_SA);
    pc->fn = (struct psi_prom_token_fn){reader_token, pc, pc->identity};
    snprintf(pc->service_ca, sizeof(pc->service_ca), "%s/service-ca.crt", kube_config_serviceaccount_dir());
    return pc;
}

void promcred_free(struct promcred *pc)
{
    if (!pc)
        return;
    psi_promtoken_free(pc->token);
    free(pc);
}

void promcred_config(struct promcred *pc, const struct api_spec *spec, struct psi_prom_config *cfg)
{
    const char *file = spec->metrics.prometheus.bearer_token_file;
    const struct kube_config *kc = kube_client_config(pc->client);
    *cfg = (struct psi_prom_config){
        .url = spec->metrics.prometheus.url,
        .token_file = file && file[0] ? file : NULL,
        .ca_file = spec->metrics.prometheus.ca_file,
        .service_ca_file = pc->service_ca,
        .token_fn = file ? NULL : &pc->fn,
        .own_token_file = kc->token_file,
        .own_token = kc->token,
        .plain_http_token = spec->metrics.prometheus.send_token_over_plain_http,
    };
}
