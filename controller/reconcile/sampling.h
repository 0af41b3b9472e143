/* sampling: the pressure readings of one PsiRebalance's nodes, from the source its spec names
 * (Prometheus or the kubelets). It owns the PsiRebalance's one Prometheus client, which the
 * pressure source and the usage query (sampling_prom) share. The client is made anew only
 * when its settings change, the source only when spec.metrics changes; the
 * last good sample is kept for the next cycles and the metrics endpoint; the metrics state
 * (MetricsAvailable's reason and message) follows each sample, with an Event when the
 * readings go away or come back. Not thread-safe. */
#ifndef PSI_RECONCILE_SAMPLING_H
#define PSI_RECONCILE_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "api/psirebalance.h"
#include "kube/events.h"
#include "kube/rest.h"
#include "psi/prom.h"
#include "psi/source.h"
#include "reconcile/status/ownership.h"

/* Owned; zero it, then sampling_init. */
struct sampling {
    struct psi_prom *prom; /* the Prometheus client, or NULL (not made yet, Kubelet source) */
    char *prom_key;        /* the settings it was made from */
    struct psi_source *source;
    char *source_key;         /* the spec fields the source was made from */
    struct psi_sample sample; /* the last successful sample, nodes sorted by name */
    bool have_sample;
    unsigned full;   /* PSI_RES_BIT set of the resources the sample read as "full" */
    int metrics;     /* -1 not read yet, 0 failed or no node measured, 1 ok */
    bool partial;    /* ok, but some nodes not measured (coverage.h) */
    size_t measured; /* nodes the last answered sample measured (of the resource acted on) */
    char reason[48]; /* MetricsAvailable's */
    char message[1024];
    double last_seconds; /* how long the last sample took */
};

/* What one sample needs; all borrowed. */
struct sampling_in {
    struct kube_client *client;       /* for the kubelet source */
    struct kube_events *events;       /* may be NULL */
    const struct kube_event_ref *ref; /* the PsiRebalance, for Events */
    const struct api_spec *spec;
    const struct ownership_nodes *nodes; /* the owned ones are sampled */
    const struct psi_prom_config *prom;  /* the Prometheus settings (promcred.h); NULL: no memory */
    int64_t now_ms;
};

/* Make s ready (no sample, metrics not read yet). */
void sampling_init(struct sampling *s);

/* Release what s owns. */
void sampling_free(struct sampling *s);

/* The PsiRebalance's Prometheus client for cfg (owned by s; the pressure source uses the same),
 * made anew when cfg's settings changed since it was made; NULL with st failed
 * (SourceConfigError) on a bad URL, no memory or cfg NULL. */
struct psi_prom *sampling_prom(struct sampling *s, const struct psi_prom_config *cfg, struct kube_err *st);

/* Sample the owned nodes; updates the metrics state and, on success, the sample. Returns 0 on
 * a good sample (partial when some nodes were not measured), -1 when the source failed or
 * measured no node (the message says why; taints are held). */
int sampling_take(struct sampling *s, const struct sampling_in *in);

/* The last sample of node, or NULL. */
const struct psi_node_sample *sampling_of(const struct sampling *s, const char *node);

/* A node sample's reading of an API resource (percent), NAN when unknown or ns is NULL. */
double sampling_reading(const struct psi_node_sample *ns, enum api_resource res);

/* A node sample's CPU utilisation (percent), NAN when unknown or ns is NULL. */
double sampling_utilization(const struct psi_node_sample *ns);

#endif
