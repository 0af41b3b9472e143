/* webhook: KubeVirt's eviction interceptor and migration create admitter, served over
 * HTTPS and registered with the API server.
 *
 * It listens on a loopback address with a certificate issued by the test bed's CA (see
 * cert.h), and registers a ValidatingWebhookConfiguration psi-sim.<namespace> with two
 * webhooks for the scenario's namespace (caBundle: that CA):
 * virt-launcher-eviction-interceptor.kubevirt.io receives CREATE of pods/eviction, and
 * migration-create-validator.kubevirt.io CREATE of virtualmachineinstancemigrations (it
 * reads the VMI and the namespace's migrations and answers as admission.h says: 400 for a
 * VMI that cannot migrate, is final or has a migration in flight). For each AdmissionReview
 * it reads the pod and its VMI from the API server (with a client of its own: it runs in
 * the server's threads, one request at a time), decides as admission.h says, marks the
 * VMI (a JSON patch of status.evacuationNodeName; with dry run, a dry-run patch; the
 * annotation kubevirt.io/eviction-source: descheduler when the Eviction says it comes
 * from the descheduler), records the request and answers. The evacuation controller then
 * creates the migration.
 *
 * failurePolicy is Fail (KubeVirt uses Ignore and protects launchers with PDBs as well):
 * with the simulator down, evictions in its namespace fail rather than silently delete
 * VMs. webhook_free deletes the registration. */
#ifndef PSI_SIM_WEBHOOK_H
#define PSI_SIM_WEBHOOK_H

#include <stddef.h>

#include "hack/sim/record.h"
#include "hack/sim/scenario.h"
#include "kube/config.h"

struct webhook;

/* Options; strings are borrowed for the call. */
struct webhook_opts {
    struct kube_config *cfg;   /* a config for the webhook's own client (borrowed; not shared with another thread) */
    const struct scenario *sc; /* borrowed, must outlive the webhook */
    struct record *rec;        /* borrowed, may be NULL */
    const char *host;          /* address to listen on and to register, e.g. "127.0.0.1" */
    int port;                  /* 0: any */
    const char *ca_cert;       /* the CA that signs the serving certificate ... */
    const char *ca_key;        /* ... and its key */
};

/* Start serving and register. NULL with why in err. */
struct webhook *webhook_start(const struct webhook_opts *opts, char *err, size_t errlen);

/* The port served. */
int webhook_port(const struct webhook *w);

/* Deregister, stop, free (NULL is fine). */
void webhook_free(struct webhook *w);

#endif
