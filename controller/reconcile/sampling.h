/* sampling: the pressure readings of one PsiRebalance's nodes, from the source its spec names
 * (Prometheus or the kubelets). A read is started (sampling_start) and taken once it ended
 * (sampling_take): Prometheus's query runs on the event loop (promrun.h), and its end wakes the
 * PsiRebalance, so the loop never waits for Prometheus; the kubelets' reads run at once (each
 * node's within its own timeout, kubelet.h). The Prometheus client is made anew only when its
 * settings change; the last good sample is kept for the next cycles and the metrics endpoint;
 * the metrics state (MetricsAvailable's reason and message) follows each sample taken, with an
 * Event when the readings go away or come back. Not thread-safe. */
#ifndef PSI_RECONCILE_SAMPLING_H
#define PSI_RECONCILE_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "api/psirebalance.h"
#include "kube/events.h"
#include "kube/loop.h"
#include "kube/rest.h"
#include "psi/prom.h"
#include "psi/source.h"
#include "reconcile/promrun.h"
#include "reconcile/status/ownership.h"

/* Owned; zero it, then sampling_init. */
struct sampling {
    struct promrun prom;       /* the Prometheus client and the read in flight on it */
    struct psi_source *source; /* the Kubelet source, or NULL (not made yet) */
    struct psi_sample sample;  /* the last successful sample, nodes sorted by name */
    bool have_sample;
    unsigned full;   /* PSI_RES_BIT set of the resources the sample read as "full" */
    int metrics;     /* -1 not read yet, 0 failed or no node measured, 1 ok */
    bool partial;    /* ok, but some nodes not measured (coverage.h) */
    size_t measured; /* nodes the last answered sample measured (of the resource acted on) */
    char reason[48]; /* MetricsAvailable's */
    char message[1024];
    double last_seconds; /* how long the last read took, from its start to its end */
    /* the read sampling_start began, until sampling_take */
    struct psi_sample read;
    bool read_ended;       /* it ended: read.status says how */
    unsigned read_full;    /* as full, for it */
    size_t read_asked;     /* nodes it asked for */
    const char *read_from; /* the source's name */
    uint64_t read_started_ms;
    void (*wake)(void *ud); /* called when a read on the loop ended */
    void *wake_ud;
};

/* What a read needs; all borrowed for the call. */
struct sampling_in {
    struct kube_client *client;       /* for the kubelet source */
    struct kube_events *events;       /* may be NULL */
    const struct kube_event_ref *ref; /* the PsiRebalance, for Events */
    const struct api_spec *spec;
    const struct ownership_nodes *nodes; /* the owned ones are sampled */
    const struct psi_prom_config *prom;  /* the Prometheus settings (promcred.h); NULL: no memory */
    int64_t now_ms;
    struct kube_loop *loop; /* where a Prometheus read runs; NULL: at once, blocking */
    void (*wake)(void *ud); /* with loop: called (ud wake_ud) on the loop when the read ended */
    void *wake_ud;
};

/* Make s ready (no sample, metrics not read yet). */
void sampling_init(struct sampling *s);

/* Release what s owns; a read in flight is dropped. */
void sampling_free(struct sampling *s);

/* Start a read of the owned nodes, unless one runs or ended and was not taken yet. With
 * Prometheus and a loop it runs on, and sampling_ready says when it ended; otherwise it has
 * ended on return. A read that cannot start (a bad URL, no memory) has ended, failed. */
void sampling_start(struct sampling *s, const struct sampling_in *in);

/* Whether a read runs. */
bool sampling_busy(const struct sampling *s);

/* Whether a read ended and waits for sampling_take. */
bool sampling_ready(const struct sampling *s);

/* Take the read that ended: the metrics state follows it and, when it succeeded, it becomes the
 * sample. Returns 0 on a good sample (partial when some nodes were not measured), -1 when the
 * source failed or measured no node (the message says why; taints are held), or when no read
 * had ended. */
int sampling_take(struct sampling *s, const struct sampling_in *in);

/* The last sample of node, or NULL. */
const struct psi_node_sample *sampling_of(const struct sampling *s, const char *node);

/* A node sample's reading of an API resource (percent), NAN when unknown or ns is NULL. */
double sampling_reading(const struct psi_node_sample *ns, enum api_resource res);

/* A node sample's CPU utilisation (percent), NAN when unknown or ns is NULL. */
double sampling_utilization(const struct psi_node_sample *ns);

#endif
