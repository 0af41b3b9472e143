/* sampling: pressure readings of one PsiRebalance's nodes (see sampling.h). */
#include "reconcile/sampling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/reasons.h"
#include "base/jx.h"
#include "base/util.h"
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

/* Free the source (it is made anew on the next sample). */
static void drop_source(struct sampling *s)
{
    psi_source_free(s->source);
    free(s->source_key);
    s->source = NULL;
    s->source_key = NULL;
}

void sampling_free(struct sampling *s)
{
    drop_source(s);
    psi_prom_free(s->prom);
    free(s->prom_key);
    s->prom = NULL;
    s->prom_key = NULL;
    psi_sample_free(&s->sample);
    s->have_sample = false;
}

struct psi_prom *sampling_prom(struct sampling *s, const struct psi_prom_config *cfg, struct kube_err *st)
{
    if (!cfg) {
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
        return NULL;
    }
    char key[2048];
    snprintf(key, sizeof(key), "%s|%s|%s|%s|%d", base_or_empty(cfg->url), cfg->token_fn ? "reader" : "",
             base_or_empty(cfg->token_file), base_or_empty(cfg->ca_file), cfg->plain_http_token);
    if (s->prom && s->prom_key && strcmp(s->prom_key, key) == 0)
        return s->prom;
    drop_source(s); /* a Prometheus source uses the client: never let it outlive it */
    psi_prom_free(s->prom);
    free(s->prom_key);
    s->prom_key = NULL;
    s->prom = psi_prom_new(cfg, st);
    if (s->prom && !(s->prom_key = strdup(key))) { /* without its key it would be made anew every time */
        psi_prom_free(s->prom);
        s->prom = NULL;
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
    }
    return s->prom;
}

/* The pressure source for spec, made anew when the spec's metrics settings changed. */
static struct psi_source *source_for(struct sampling *s, const struct sampling_in *in, struct kube_err *st)
{
    const struct api_spec *spec = in->spec;
    char key[2048];
    const char *token = spec->metrics.prometheus.bearer_token_file;
    snprintf(key, sizeof(key), "%s|%s|%s%s|%s|%d", api_source_name(spec->metrics.source),
             base_or_empty(spec->metrics.prometheus.url), token ? "file:" : "reader", base_or_empty(token),
             base_or_empty(spec->metrics.prometheus.ca_file), spec->metrics.prometheus.send_token_over_plain_http);
    struct psi_prom *prom = NULL;
    if (spec->metrics.source != API_SOURCE_KUBELET && !(prom = sampling_prom(s, in->prom, st)))
        return NULL;
    if (s->source && s->source_key && strcmp(s->source_key, key) == 0)
        return s->source;
    drop_source(s);
    if (spec->metrics.source == API_SOURCE_KUBELET)
        s->source = psi_kubelet_source_new(in->client, st);
    else
        s->source = psi_prom_source_new(prom, st);
    if (s->source && !(s->source_key = strdup(key))) { /* without its key it would be made anew every time */
        drop_source(s);
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
    }
    return s->source;
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

int sampling_take(struct sampling *s, const struct sampling_in *in)
{
    const struct api_spec *spec = in->spec;
    struct descs d;
    struct kube_err st;
    kube_err_clear(&st);
    if (describe(in->nodes, &d) < 0)
        psi_fail(&st, PSI_REASON_CONFIG, "out of memory");
    struct psi_sample sample = {0};
    struct psi_source *src = kube_err_failed(&st) ? NULL : source_for(s, in, &st);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (src) {
        /* cpu "some" always: the rebalancer's predictions read it */
        unsigned full =
            spec->pressure.stall == API_STALL_FULL ? PSI_RES_BIT(psi_resource_of(spec->pressure.resource)) : 0;
        struct psi_request req = {
            d.v, d.n, PSI_RES_ALL, full, (long)(spec->metrics.window_ms / 1000), spec->pressure.has_utilization_floor};
        psi_source_sample(src, &req, &sample);
        st = sample.status;
    }
    free(d.v);
    free(d.ips);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s->last_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (kube_err_failed(&st)) {
        psi_sample_free(&sample);
        return follow_metrics(s, in, &st, NULL, d.n);
    }
    if (sample.n_node_errors)
        log_warn("some nodes unreadable", "psirebalance", in->ref->name, "error", sample.node_error);
    psi_sample_free(&s->sample);
    s->sample = sample;
    s->have_sample = true;
    s->full = spec->pressure.stall == API_STALL_FULL ? PSI_RES_BIT(psi_resource_of(spec->pressure.resource)) : 0;
    if (s->sample.n_nodes)
        qsort(s->sample.nodes, s->sample.n_nodes, sizeof(*s->sample.nodes), node_sample_cmp);
    return follow_metrics(s, in, &st, src ? src->name : "", d.n);
}
