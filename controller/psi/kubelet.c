#include "kubelet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "rest.h"

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

int psi_kubelet_parse_summary(const cJSON *summary, unsigned resources, unsigned full,
                              long window_s, struct psi_value out[PSI_NRESOURCES], char *errbuf,
                              size_t errlen)
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
            return psi_errbuf_fail(errbuf, errlen, "node.%s.psi.%s.%s = %g is outside 0..100", rname,
                                   kname, avg, d);
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
 * 400, 500 or 503, so those mean the kubelet is unreachable. */
static const char *reason_of(const struct kube_err *e)
{
    if (e->status == 401)
        return PSI_REASON_UNAUTHORIZED;
    if (e->status == 403)
        return PSI_REASON_FORBIDDEN;
    if (e->status == 404)
        return PSI_REASON_NOT_FOUND;
    if (strcmp(e->reason, "Decode") == 0)
        return PSI_REASON_MALFORMED;
    if (e->status == 0 || e->status == 400 || e->status == 500 || e->status == 502 ||
        e->status == 503 || e->status == 504)
        return PSI_REASON_UNREACHABLE;
    return PSI_REASON_BAD_STATUS;
}

static int kubelet_sample(struct psi_source *src, const struct psi_request *req,
                          struct psi_sample *out)
{
    struct kube_client *c = src->impl;
    size_t read_ok = 0;
    char last_reason[48] = PSI_REASON_UNREACHABLE;
    char last_msg[900] = "no node to read";
    for (size_t i = 0; i < req->n_nodes && i < out->n_nodes; i++) {
        const char *name = req->nodes[i].name;
        char *path = psi_kubelet_summary_path(name);
        if (!path)
            return psi_status_fail(&out->status, PSI_REASON_CONFIG, "out of memory");
        struct kube_err err;
        kube_err_clear(&err);
        cJSON *sum = kube_rest_get(c, path, &err);
        if (!sum) {
            const char *reason = reason_of(&err);
            if (err.status == 401 || err.status == 403) {
                psi_status_fail(&out->status, reason, "%s", err.msg);
                free(path);
                return -1;
            }
            snprintf(last_reason, sizeof(last_reason), "%s", reason);
            snprintf(last_msg, sizeof(last_msg), "%s", err.msg);
            psi_sample_node_error(out, "node %s: %s: %s", name, reason, last_msg);
            free(path);
            continue;
        }
        char perrbuf[256];
        const cJSON *nn = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sum, "node"),
                                                          "nodeName");
        if (req->utilization)
            psi_kubelet_parse_utilization(sum, req->nodes[i].cpus, &out->nodes[i].utilization);
        if (psi_kubelet_parse_summary(sum, req->resources, req->full, req->window_s,
                                      out->nodes[i].value, perrbuf, sizeof(perrbuf)) < 0) {
            snprintf(last_reason, sizeof(last_reason), "%s", PSI_REASON_MALFORMED);
            snprintf(last_msg, sizeof(last_msg), "GET %s: %s", path, perrbuf);
            psi_sample_node_error(out, "node %s: %s", name, last_msg);
        } else if (cJSON_IsString(nn) && strcmp(nn->valuestring, name) != 0) {
            for (int r = 0; r < PSI_NRESOURCES; r++)
                out->nodes[i].value[r].known = 0;
            out->nodes[i].utilization.known = 0;
            snprintf(last_reason, sizeof(last_reason), "%s", PSI_REASON_MALFORMED);
            snprintf(last_msg, sizeof(last_msg), "GET %s: summary is of node %s", path,
                     nn->valuestring);
            psi_sample_node_error(out, "node %s: %s", name, last_msg);
        } else {
            read_ok++;
        }
        cJSON_Delete(sum);
        free(path);
    }
    if (req->n_nodes > 0 && read_ok == 0)
        return psi_status_fail(&out->status, last_reason, "no node's summary could be read; last: %s",
                               last_msg);
    return 0;
}

struct psi_source *psi_kubelet_source_new(struct kube_client *client, struct psi_status *st)
{
    psi_status_ok(st);
    return psi_source_new("Kubelet", kubelet_sample, NULL, client, st);
}
