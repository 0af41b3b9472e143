#include "psi/kubelet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "kube/rest.h"

static const char *const avg_names[3] = {"avg10", "avg60", "avg300"};

enum psi_kubelet_avg psi_kubelet_avg_for_window(long window_s)
{
    if (window_s >= 300)
        return PSI_AVG300;
    if (window_s >= 60)
        return PSI_AVG60;
    return PSI_AVG10;
}

const char *psi_kubelet_avg_name(enum psi_kubelet_avg a)
{
    return (a >= PSI_AVG10 && a <= PSI_AVG300) ? avg_names[a] : "?";
}

int psi_kubelet_parse_summary(const cJSON *summary, unsigned resources, unsigned full, long window_s,
                              struct psi_value out[PSI_NRESOURCES], char *errbuf, size_t errlen)
{
    for (int r = 0; r < PSI_NRESOURCES; r++) {
        out[r].known = 0;
        out[r].percent = 0;
    }
    if (resources == 0)
        resources = PSI_RES_ALL;
    const cJSON *node = cJSON_IsObject(summary) ? cJSON_GetObjectItemCaseSensitive(summary, "node") : NULL;
    if (!cJSON_IsObject(node))
        return psi_errbuf_fail(errbuf, errlen, "reply is not a stats summary: no \"node\" object");
    const char *avg = psi_kubelet_avg_name(psi_kubelet_avg_for_window(window_s));
    struct psi_value tmp[PSI_NRESOURCES] = {{0, 0}};
    for (int r = 0; r < PSI_NRESOURCES; r++) {
        if (!(resources & PSI_RES_BIT(r)))
            continue;
        const char *rname = psi_resource_name((enum psi_resource)r);
        const char *kname = full & PSI_RES_BIT(r) ? "full" : "some";
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(node, rname);
        if (!res || cJSON_IsNull(res))
            continue;
        if (!cJSON_IsObject(res))
            return psi_errbuf_fail(errbuf, errlen, "node.%s is not an object", rname);
        const cJSON *psi = cJSON_GetObjectItemCaseSensitive(res, "psi");
        if (!psi || cJSON_IsNull(psi))
            continue; /* no PSI for this resource: Unknown */
        if (!cJSON_IsObject(psi))
            return psi_errbuf_fail(errbuf, errlen, "node.%s.psi is not an object", rname);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(psi, kname);
        if (!k || cJSON_IsNull(k))
            continue;
        if (!cJSON_IsObject(k))
            return psi_errbuf_fail(errbuf, errlen, "node.%s.psi.%s is not an object", rname, kname);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(k, avg);
        if (!v || cJSON_IsNull(v))
            continue;
        if (!cJSON_IsNumber(v))
            return psi_errbuf_fail(errbuf, errlen, "node.%s.psi.%s.%s is not a number", rname, kname, avg);
        double d = v->valuedouble;
        if (isnan(d) || isinf(d) || d < 0 || d > 100)
            return psi_errbuf_fail(errbuf, errlen, "node.%s.psi.%s.%s = %g is outside 0..100", rname, kname, avg, d);
        tmp[r].known = 1;
        tmp[r].percent = d;
    }
    memcpy(out, tmp, sizeof(tmp));
    return 0;
}

void psi_kubelet_parse_utilization(const cJSON *summary, double cpus, struct psi_value *out)
{
    out->known = 0;
    out->percent = 0;
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(summary, "node"), "cpu");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cpu, "usageNanoCores");
    if (!(cpus > 0) || !cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return;
    double pct = v->valuedouble / 1e9 / cpus * 100.0;
    out->known = 1;
    out->percent = pct > 100.0 ? 100.0 : pct;
}

char *psi_kubelet_summary_path(const char *node)
{
    char *base = kube_path("v1", NULL, "nodes", node, "proxy");
    if (!base)
        return NULL;
    char *p = NULL;
    if (asprintf(&p, "%s/stats/summary", base) < 0)
        p = NULL;
    free(base);
    return p;
}

/* The condition reason for a kube error of a node's request. The API server answers a
 * node proxy request it cannot forward (no route to the kubelet, DNS, dial timeout) with
 * 400, 500 or 503 and a metav1.Status, so those mean the kubelet is unreachable; an error
 * reply that is no Status is the kubelet's own answer. */
static const char *reason_of(const struct kube_err *e)
{
    if (e->status == 401)
        return PSI_REASON_UNAUTHORIZED;
    if (e->status == 403)
        return PSI_REASON_FORBIDDEN;
    if (e->status == 404)
        return PSI_REASON_NOT_FOUND;
    if (strcmp(e->reason, "Decode") == 0) /* an error not in a metav1.Status: the kubelet's own */
        return e->status >= 200 && e->status < 300 ? PSI_REASON_MALFORMED : PSI_REASON_BAD_STATUS;
    if (e->status == 0 && strcmp(e->reason, "Timeout") == 0)
        return PSI_REASON_TIMEOUT;
    if (e->status == 0 || e->status == 400 || e->status == 500 || e->status == 502 || e->status == 503 ||
        e->status == 504)
        return PSI_REASON_UNREACHABLE;
    return PSI_REASON_BAD_STATUS;
}

int psi_kubelet_fetch(struct kube_client *client, const char *const *nodes, size_t n, kube_multiget_fn fn, void *ud,
                      struct kube_err *err)
{
    char **paths = calloc(n ? n : 1, sizeof(*paths));
    int rc = paths ? 0 : kube_err_set(err, 0, "Transport", "out of memory for %zu paths", n);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!(paths[i] = psi_kubelet_summary_path(nodes[i])))
            rc = kube_err_set(err, 0, "Transport", "out of memory");
    struct kube_multiget_opts o = {.max_in_flight = PSI_KUBELET_IN_FLIGHT,
                                   .timeout_ms = PSI_KUBELET_TIMEOUT_MS,
                                   .max_reply = PSI_KUBELET_MAX_REPLY};
    if (rc == 0)
        rc = kube_multiget(client, (const char *const *)paths, n, &o, fn, ud, err);
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    return rc;
}

/* What the sample's callback works with. */
struct sample_ctx {
    const struct psi_request *req;
    struct psi_sample *out;
    size_t read_ok;
    char fatal_reason[48]; /* set by a 401 or 403: the operator's RBAC is wrong for every node */
    char fatal_msg[900];
    char last_reason[48];
    char last_msg[900];
};

static void node_unread(struct sample_ctx *x, size_t i, const char *reason, const char *msg)
{
    struct psi_node_sample *ns = &x->out->nodes[i];
    for (int r = 0; r < PSI_NRESOURCES; r++)
        ns->value[r].known = 0;
    ns->utilization.known = 0;
    snprintf(x->last_reason, sizeof(x->last_reason), "%s", reason);
    snprintf(x->last_msg, sizeof(x->last_msg), "%s", msg);
    psi_sample_node_unread(x->out, i, reason, "node %s: %s: %s", ns->name, reason, msg);
}

/* Whether any requested resource has a reading. */
static int any_known(const struct psi_node_sample *ns, unsigned resources)
{
    for (int r = 0; r < PSI_NRESOURCES; r++)
        if ((resources & PSI_RES_BIT(r)) && ns->value[r].known)
            return 1;
    return 0;
}

/* One node's summary (or why there is none). */
static void on_summary(size_t i, const cJSON *sum, const struct kube_err *err, void *ud)
{
    struct sample_ctx *x = ud;
    const struct psi_request *req = x->req;
    if (i >= x->out->n_nodes)
        return;
    const char *name = req->nodes[i].name;
    if (!sum) {
        const char *reason = reason_of(err);
        if ((err->status == 401 || err->status == 403) && !x->fatal_reason[0]) {
            snprintf(x->fatal_reason, sizeof(x->fatal_reason), "%s", reason);
            snprintf(x->fatal_msg, sizeof(x->fatal_msg), "%s", err->msg);
        }
        node_unread(x, i, reason, err->msg);
        return;
    }
    char perrbuf[256], msg[512];
    struct psi_node_sample *ns = &x->out->nodes[i];
    const cJSON *nn = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sum, "node"), "nodeName");
    unsigned resources = req->resources ? req->resources : PSI_RES_ALL;
    if (psi_kubelet_parse_summary(sum, resources, req->full, req->window_s, ns->value, perrbuf, sizeof(perrbuf)) < 0) {
        node_unread(x, i, PSI_REASON_MALFORMED, perrbuf);
    } else if (cJSON_IsString(nn) && strcmp(nn->valuestring, name) != 0) {
        snprintf(msg, sizeof(msg), "the summary is of node %s", nn->valuestring);
        node_unread(x, i, PSI_REASON_MALFORMED, msg);
    } else if (!any_known(ns, resources)) {
        node_unread(x, i, PSI_REASON_NO_PSI,
                    "the kubelet's summary has no PSI (KubeletPSI off, or the kernel booted without psi=1)");
    } else {
        if (req->utilization)
            psi_kubelet_parse_utilization(sum, req->nodes[i].cpus, &ns->utilization);
        x->read_ok++;
    }
}

static int kubelet_sample(struct psi_source *src, const struct psi_request *req, struct psi_sample *out)
{
    struct kube_client *c = src->impl;
    size_t n = req->n_nodes < out->n_nodes ? req->n_nodes : out->n_nodes;
    const char **names = calloc(n ? n : 1, sizeof(*names));
    struct sample_ctx *x = calloc(1, sizeof(*x));
    if (!names || !x) {
        free(names);
        free(x);
        return psi_fail(&out->status, PSI_REASON_CONFIG, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        names[i] = req->nodes[i].name;
    x->req = req;
    x->out = out;
    snprintf(x->last_reason, sizeof(x->last_reason), "%s", PSI_REASON_UNREACHABLE);
    snprintf(x->last_msg, sizeof(x->last_msg), "no node to read");
    struct kube_err err;
    int rc = 0;
    if (psi_kubelet_fetch(c, names, n, on_summary, x, &err) < 0)
        rc = psi_fail(&out->status, PSI_REASON_UNREACHABLE, "%s", err.msg);
    else if (x->fatal_reason[0])
        rc = psi_fail(&out->status, x->fatal_reason, "%s", x->fatal_msg);
    else if (n > 0 && x->read_ok == 0)
        rc = psi_fail(&out->status, x->last_reason, "no node's summary could be read; last: %s", x->last_msg);
    free(names);
    free(x);
    return rc;
}

struct psi_source *psi_kubelet_source_new(struct kube_client *client, struct kube_err *st)
{
    kube_err_clear(st);
    return psi_source_new("Kubelet", kubelet_sample, NULL, client, st);
}
