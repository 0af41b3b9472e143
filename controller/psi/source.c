#include "psi/source.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int psi_fail(struct kube_err *st, const char *reason, const char *fmt, ...)
{
    if (!st)
        return -1;
    st->status = 0;
    snprintf(st->reason, sizeof(st->reason), "%s", reason);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
    va_end(ap);
    /* Messages carry parts of replies into status: printable ASCII only. */
    for (char *c = st->msg; *c; c++)
        if (*c < 0x20 || *c == 0x7f || (unsigned char)*c >= 0x80)
            *c = '?';
    return -1;
}

int psi_sample_init(struct psi_sample *out, const struct psi_request *req)
{
    memset(out, 0, sizeof(*out));
    kube_err_clear(&out->status);
    if (req->n_nodes == 0)
        return 0;
    out->nodes = calloc(req->n_nodes, sizeof(*out->nodes));
    if (!out->nodes)
        return psi_fail(&out->status, PSI_REASON_CONFIG, "out of memory for %zu nodes", req->n_nodes);
    out->n_nodes = req->n_nodes;
    for (size_t i = 0; i < req->n_nodes; i++) {
        out->nodes[i].name = strdup(req->nodes[i].name ? req->nodes[i].name : "");
        if (!out->nodes[i].name)
            return psi_fail(&out->status, PSI_REASON_CONFIG, "out of memory");
    }
    return 0;
}

void psi_sample_free(struct psi_sample *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_nodes; i++)
        free(s->nodes[i].name);
    free(s->nodes);
    s->nodes = NULL;
    s->n_nodes = 0;
}

static void node_error(struct psi_sample *s, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void node_error(struct psi_sample *s, const char *fmt, va_list ap)
{
    if (s->n_node_errors++ == 0)
        vsnprintf(s->node_error, sizeof(s->node_error), fmt, ap);
}

void psi_sample_node_error(struct psi_sample *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    node_error(s, fmt, ap);
    va_end(ap);
}

void psi_sample_node_unread(struct psi_sample *s, size_t i, const char *reason, const char *fmt, ...)
{
    if (i < s->n_nodes)
        s->nodes[i].unread = reason;
    va_list ap;
    va_start(ap, fmt);
    node_error(s, fmt, ap);
    va_end(ap);
}

char *psi_sample_unread_text(const struct psi_sample *s, char *buf, size_t len)
{
    if (!len)
        return buf;
    buf[0] = '\0';
    size_t n = 0, used = 0;
    for (size_t i = 0; i < s->n_nodes; i++)
        n += s->nodes[i].unread != NULL;
    if (!n)
        return buf;
    int w = snprintf(buf, len, "%zu unread:", n);
    used = w > 0 && (size_t)w < len ? (size_t)w : len - 1;
    size_t listed = 0;
    for (size_t i = 0; i < s->n_nodes && listed < n; i++) {
        if (!s->nodes[i].unread)
            continue;
        char item[400];
        snprintf(item, sizeof(item), "%s %s (%s)", listed ? "," : "", s->nodes[i].name, s->nodes[i].unread);
        if (used + strlen(item) + 6 > len) {
            snprintf(buf + used, len - used, ", ...");
            break;
        }
        snprintf(buf + used, len - used, "%s", item);
        used += strlen(item);
        listed++;
    }
    return buf;
}

int psi_source_sample(struct psi_source *src, const struct psi_request *req, struct psi_sample *out)
{
    if (psi_sample_init(out, req) < 0)
        return -1;
    return src->sample(src, req, out);
}

struct psi_source *psi_source_new(const char *name,
                                  int (*sample)(struct psi_source *, const struct psi_request *, struct psi_sample *),
                                  void (*free_impl)(struct psi_source *), void *impl, struct kube_err *st)
{
    struct psi_source *src = calloc(1, sizeof(*src));
    if (!src) {
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
        return NULL;
    }
    src->name = name;
    src->sample = sample;
    src->free = free_impl;
    src->impl = impl;
    return src;
}

void psi_source_free(struct psi_source *src)
{
    if (!src)
        return;
    if (src->free)
        src->free(src);
    free(src);
}

int psi_percent_check(double v, double *out)
{
    if (isnan(v) || isinf(v) || v < -1e-6)
        return -1;
    if (v < 0)
        v = 0;
    if (v > 100)
        v = 100;
    *out = v;
    return 0;
}

int psi_errbuf_fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
