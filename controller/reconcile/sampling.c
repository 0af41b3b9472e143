/* sampling: pressure readings of one PsiRebalance's nodes (see sampling.h). */
#include "reconcile/sampling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/reasons.h"
#include "base/logging.h"
#include "psi/kubelet.h"
#include "psi/prom.h"
#include "reconcile/status/coverage.h"
#include "reconcile/notify.h"
#include "reconcile/move/resources.h"

void sampling_init(struct sampling *s)
{
    memset(s, 0, sizeof(*s));
    s->metrics = -1;
}

void sampling_free(struct sampling *s)
{
    promrun_release(&s->prom);
    psi_source_free(s->source);
    s->source = NULL;
    psi_sample_free(&s->sample);
    psi_sample_free(&s->read);
    s->have_sample = false;
    s->read_ended = false;
}

/* The source's index of an API resource. */
static enum psi_resource psi_resource_of(enum api_resource res)
{
    static const enum psi_resource map[API_RESOURCES] = {PSI_CPU, PSI_MEMORY, PSI_IO};
    return map[res];
}

static int node_sample_cmp(const void *a, const void *b)
{
    return strcmp(((const struct psi_node_sample *)a)->name, ((const struct psi_node_sample *)b)->name);
}

const struct psi_node_sample *sampling_of(const struct sampling *s, const char *node)
{
    struct psi_node_sample key = {.name = (char *)node};
    return s->have_sample && s->sample.n_nodes
               ? bsearch(&key, s->sample.nodes, s->sample.n_nodes, sizeof(key), node_sample_cmp)
               : NULL;
}

double sampling_reading(const struct psi_node_sample *ns, enum api_resource res)
{
    if (!ns || !ns->value[psi_resource_of(res)].known)
        return NAN;
    return ns->value[psi_resource_of(res)].percent;
}

double sampling_utilization(const struct psi_node_sample *ns)
{
    return ns && ns->utilization.known ? ns->utilization.percent : NAN;
}

/* The owned nodes as the source wants them. */
struct descs {
    struct psi_node_desc *v;
    const char **ips;
    size_t n;
};

static int describe(const struct ownership_nodes *nodes, struct descs *d)
{
    d->v = calloc(nodes->n ? nodes->n : 1, sizeof(*d->v));
    d->ips = calloc(nodes->n ? nodes->n : 1, sizeof(*d->ips));
    d->n = 0;
    if (!d->v || !d->ips)
        return -1;
    for (size_t i = 0; i < nodes->n; i++) {
        if (!nodes->v[i].owned)
            continue;
        const struct nodeproj *np = nodes->v[i].node;
        d->ips[d->n] = np->ip[0] ? np->ip : NULL;
        d->v[d->n] = (struct psi_node_desc){np->name, &d->ips[d->n], d->ips[d->n] ? 1 : 0, np->cpus};
        d->n++;
    }
    return 0;
}

/* The metrics state after a sample with status st (src: the source that answered, n nodes
 * asked; on success the sample is s->sample already). */
static int follow_metrics(struct sampling *s, const struct sampling_in *in, const struct kube_err *st, const char *src,
                          size_t n)
{
    int was = s->metrics;
    if (kube_err_failed(st)) {
        s->metrics = 0;
        s->partial = false;
        snprintf(s->reason, sizeof(s->reason), "%s", st->reason);
        snprintf(s->message, sizeof(s->message), "%s; every taint is held as it is", st->msg);
        log_warn("pressure not readable: taints held", "psirebalance", in->ref->name, "reason", st->reason, "error",
                 st->msg);
        if (was != 0)
            notify_event(in->events, in->ref, "Warning", API_EVENT_METRICS_UNAVAILABLE, "Sample", s->message,
                         in->now_ms);
        return -1;
    }
    char unread[600];
    struct coverage cov = coverage_of(&s->sample, psi_resource_of(in->spec->pressure.resource), unread, sizeof(unread));
    snprintf(s->reason, sizeof(s->reason), "%s", coverage_reason(&cov));
    s->partial = cov.measured && cov.measured < cov.asked;
    s->measured = cov.measured;
    if (cov.measured == cov.asked) {
        psi_sample_unread_text(&s->sample, unread, sizeof(unread));
        snprintf(s->message, sizeof(s->message), "%s: %zu nodes sampled%s%s", src, n, unread[0] ? "; " : "", unread);
    } else {
        snprintf(s->message, sizeof(s->message), "%s: %zu of %zu nodes measured (%s pressure); not measured: %s; %s",
                 src, cov.measured, cov.asked, api_resource_name(in->spec->pressure.resource), unread,
                 cov.measured ? "their taints are held as they are" : "every taint is held as it is");
    }
    if (!cov.measured && cov.asked) {
        s->metrics = 0;
        log_warn("no node measured: taints held", "psirebalance", in->ref->name, "error", s->message);
        if (was != 0)
            notify_event(in->events, in->ref, "Warning", API_EVENT_METRICS_UNAVAILABLE, "Sample", s->message,
                         in->now_ms);
        return -1;
    }
    s->metrics = 1;
    if (was == 0)
        notify_event(in->events, in->ref, "Normal", API_EVENT_METRICS_AVAILABLE, "Sample", "pressure readings are back",
                     in->now_ms);
    return 0;
}

/* The read ended (its status says how). */
static void end_read(struct sampling *s)
{
    s->last_seconds = (double)(kube_loop_now_ms() - s->read_started_ms) / 1000.0;
    s->read_ended = true;
}

/* promrun's continuation of the Prometheus read. */
static void prom_read_ended(struct promrun *r, CURLcode rc, void *ud)
{
    struct sampling *s = ud;
    psi_prom_sample_finish(r->prom, rc);
    end_read(s);
    if (s->wake)
        s->wake(s->wake_ud);
}

/* Start the read of req from the spec's source (s->read prepared for req). */
static void read_from_source(struct sampling *s, const struct sampling_in *in, const struct psi_request *req)
{
    struct psi_sample *out = &s->read;
    if (in->spec->metrics.source == API_SOURCE_KUBELET) {
        s->read_from = "Kubelet";
        if (!s->source)
            s->source = psi_kubelet_source_new(in->client, &out->status);
        if (s->source)
            s->source->sample(s->source, req, out);
        end_read(s);
        return;
    }
    s->read_from = "Prometheus";
    struct psi_prom *prom = promrun_client(&s->prom, in->prom, &out->status);
    CURL *e = prom ? psi_prom_sample_start(prom, req, out) : NULL;
    s->wake = in->loop ? in->wake : NULL;
    s->wake_ud = in->wake_ud;
    if (!e || promrun_start(&s->prom, in->loop, e, prom_read_ended, s, &out->status) < 0)
        end_read(s);
}

void sampling_start(struct sampling *s, const struct sampling_in *in)
{
    if (s->read_ended || promrun_busy(&s->prom))
        return;
    const struct api_spec *spec = in->spec;
    psi_sample_free(&s->read);
    s->read_started_ms = kube_loop_now_ms();
    /* cpu "some" always: the rebalancer's predictions read it */
    s->read_full = spec->pressure.stall == API_STALL_FULL ? PSI_RES_BIT(psi_resource_of(spec->pressure.resource)) : 0;
    struct descs d;
    if (describe(in->nodes, &d) < 0) {
        psi_fail(&s->read.status, PSI_REASON_CONFIG, "out of memory");
    } else {
        s->read_asked = d.n;
        struct psi_request req = {d.v,
                                  d.n,
                                  PSI_RES_ALL,
                                  s->read_full,
                                  (long)(spec->metrics.window_ms / 1000),
                                  spec->pressure.has_utilization_floor};
        if (psi_sample_init(&s->read, &req) == 0)
            read_from_source(s, in, &req);
    }
    free(d.v);
    free(d.ips);
    if (!s->read_ended && !promrun_busy(&s->prom))
        end_read(s); /* it could not start */
}

bool sampling_busy(const struct sampling *s)
{
    return promrun_busy(&s->prom);
}

bool sampling_ready(const struct sampling *s)
{
    return s->read_ended;
}

int sampling_take(struct sampling *s, const struct sampling_in *in)
{
    if (!s->read_ended)
        return -1;
    s->read_ended = false;
    struct psi_sample sample = s->read;
    memset(&s->read, 0, sizeof(s->read));
    if (kube_err_failed(&sample.status)) {
        struct kube_err st = sample.status;
        psi_sample_free(&sample);
        return follow_metrics(s, in, &st, NULL, s->read_asked);
    }
    if (sample.n_node_errors)
        log_warn("some nodes unreadable", "psirebalance", in->ref->name, "error", sample.node_error);
    psi_sample_free(&s->sample);
    s->sample = sample;
    s->have_sample = true;
    s->full = s->read_full;
    if (s->sample.n_nodes)
        qsort(s->sample.nodes, s->sample.n_nodes, sizeof(*s->sample.nodes), node_sample_cmp);
    return follow_metrics(s, in, &sample.status, s->read_from, s->read_asked);
}
