#include "psi/prom.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/nameindex.h"
#include "base/util.h"
#include "kube/proxy.h"
#include "kube/rest.h"
#include "psi/promreply.h"

/* 5,000 nodes (the supported size) answer the pressure query with about 6 MB (4 series a
 * node, ~300 bytes each with OpenShift's node-exporter labels) and the usage query with
 * about 8 MB (10 pods a node, ~120 bytes a series): twice the larger, rounded up. Read
 * without a JSON tree (promreply.h), a buffered reply at the cap costs about twice its size;
 * the pressure query's, read as a stream, a step of it. */
#define MAX_REPLY (32L * 1024 * 1024)
/* A reply buffer larger than this is freed after its query (a usage query's reply at 1,000
 * nodes is some hundreds of KB), so that memory between queries does not grow with the
 * cluster. */
#define REPLY_KEEP ((size_t)64 << 10)

struct sample_read;
static void sample_read_free(struct sample_read *r);

struct psi_prom {
    char *base;     /* without trailing slash */
    char *endpoint; /* base + /api/v1/query */
    struct psi_promauth *auth;
    long connect_timeout_ms, timeout_ms;
    int https;
    CURL *easy;
    struct curl_slist *headers;
    char *url; /* of the request in flight */
    struct kube_rest_reply reply;
    struct psi_promreply_stream *stream; /* a pressure query's reply is read as it arrives, or NULL */
    size_t received;                     /* bytes of its reply so far */
    struct sample_read *sample;          /* the pressure read of psi_prom_sample_start, or NULL */
    char errbuf[CURL_ERROR_SIZE];
};

/* ---- small helpers ---- */

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

/* A short, printable excerpt of a reply body for messages. */
static void excerpt(const char *body, size_t len, char *out, size_t outlen)
{
    size_t j = 0;
    for (size_t i = 0; i < len && j + 4 < outlen; i++) {
        unsigned char c = (unsigned char)body[i];
        out[j++] = (c == '\n' || c == '\r' || c == '\t') ? ' ' : (isprint(c) ? (char)c : '?');
    }
    if (j + 4 >= outlen && len > j) {
        out[j++] = '.';
        out[j++] = '.';
        out[j++] = '.';
    }
    while (j > 0 && out[j - 1] == ' ')
        j--;
    out[j] = '\0';
}

/* ---- vector ---- */

void psi_prom_vector_free(struct psi_prom_vector *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++)
        free(v->series[i].labels); /* with the label strings: one allocation */
    free(v->series);
    free(v->warning);
    memset(v, 0, sizeof(*v));
}

const char *psi_prom_label_get(const struct psi_prom_series *s, const char *name)
{
    for (size_t i = 0; i < s->n_labels; i++)
        if (strcmp(s->labels[i].name, name) == 0)
            return s->labels[i].value;
    return NULL;
}

/* psi_prom_parse_reply; with stream not NULL, of the reply it read (body and len are then
 * what it kept, for messages), its series handed to its sink instead of kept in out. */
static int read_reply(const char *body, size_t len, long http_status, const char *url,
                      struct psi_promreply_stream *stream, struct psi_prom_vector *out, struct kube_err *st)
{
    memset(out, 0, sizeof(*out));
    kube_err_clear(st);
    if (!body)
        len = 0;
    char ex[200];
    excerpt(body ? body : "", len, ex, sizeof(ex));
    if (http_status == 401)
        return psi_fail(st, PSI_REASON_UNAUTHORIZED, "%s answered 401 Unauthorized (check the bearer token): %s", url,
                        ex);
    if (http_status == 403)
        return psi_fail(st, PSI_REASON_FORBIDDEN, "%s answered 403 Forbidden (the token lacks permission): %s", url,
                        ex);

    struct psi_promreply r;
    char why[256] = "";
    int rc = !len     ? -1
             : stream ? psi_promreply_stream_end(stream, &r, why, sizeof(why))
                      : psi_promreply_read(body, len, &r, why, sizeof(why));
    if (rc == 0 && r.status && strcmp(r.status, "error") == 0) {
        /* the server's words go into status: short (and printable, psi_fail) */
        psi_fail(st, PSI_REASON_QUERY, "%s refused the query (HTTP %ld, %.32s): %.300s", url, http_status,
                 r.error_type ? r.error_type : "no errorType", r.error ? r.error : "no error message");
        psi_promreply_free(&r);
        return -1;
    }
    if (http_status < 200 || http_status > 299) {
        if (rc == 0)
            psi_promreply_free(&r);
        if (http_status == 404)
            return psi_fail(st, PSI_REASON_NOT_FOUND,
                            "%s answered 404 Not Found (is the URL a Prometheus or Thanos querier?): %s", url, ex);
        if (http_status == 502 || http_status == 503 || http_status == 504)
            return psi_fail(st, PSI_REASON_UNREACHABLE, "%s answered HTTP %ld: %s", url, http_status, ex);
        return psi_fail(st, PSI_REASON_BAD_STATUS, "%s answered HTTP %ld: %s", url, http_status, ex);
    }
    if (rc == -2)
        return psi_fail(st, PSI_REASON_MALFORMED, "reply of %s is refused: %s", url, why);
    if (rc < 0)
        return psi_fail(st, PSI_REASON_MALFORMED, "reply of %s is not JSON: %s%s%s%s", url, len ? ex : "(empty body)",
                        len ? " (" : "", why, len ? ")" : "");
    if (!r.status || strcmp(r.status, "success") != 0)
        psi_fail(st, PSI_REASON_MALFORMED,
                 "reply of %s has no \"status\": \"success\" (not a Prometheus API reply?): %s", url, ex);
    else if (!r.has_data || !r.result_type)
        psi_fail(st, PSI_REASON_MALFORMED, "reply of %s has no data.resultType", url);
    else if (strcmp(r.result_type, "vector") != 0)
        psi_fail(st, PSI_REASON_QUERY, "query to %s gave a result of type %s, not an instant vector", url,
                 r.result_type);
    else if (!r.has_result)
        psi_fail(st, PSI_REASON_MALFORMED, "reply of %s: data.result is not an array", url);
    else if (r.result_problem[0])
        psi_fail(st, PSI_REASON_MALFORMED, "reply of %s: %s", url, r.result_problem);
    if (!kube_err_failed(st)) {
        *out = r.vector;
        out->warning = r.warning;
        r.vector = (struct psi_prom_vector){0};
        r.warning = NULL;
    }
    psi_promreply_free(&r);
    return kube_err_failed(st) ? -1 : 0;
}

int psi_prom_parse_reply(const char *body, size_t len, long http_status, const char *url, struct psi_prom_vector *out,
                         struct kube_err *st)
{
    return read_reply(body, len, http_status, url, NULL, out, st);
}

/* ---- client ---- */

struct psi_prom *psi_prom_new(const struct psi_prom_config *cfg, struct kube_err *st)
{
    kube_err_clear(st);
    const char *url = cfg ? cfg->url : NULL;
    if (!url || !*url) {
        psi_fail(st, PSI_REASON_CONFIG, "no Prometheus URL given");
        return NULL;
    }
    int https = strncmp(url, "https://", 8) == 0;
    if (!https && strncmp(url, "http://", 7) != 0) {
        psi_fail(st, PSI_REASON_CONFIG, "Prometheus URL \"%s\" does not start with http:// or https://", url);
        return NULL;
    }
    if (strchr(url, '?') || strchr(url, '#')) {
        psi_fail(st, PSI_REASON_CONFIG, "Prometheus URL \"%s\" must not carry a query or fragment", url);
        return NULL;
    }
    struct psi_prom *p = calloc(1, sizeof(*p));
    if (!p)
        goto oom;
    p->https = https;
    p->base = strdup(url);
    if (!p->base)
        goto oom;
    size_t bl = strlen(p->base);
    while (bl > 0 && p->base[bl - 1] == '/')
        p->base[--bl] = '\0';
    p->endpoint = str_printf("%s/api/v1/query", p->base);
    if (!p->endpoint)
        goto oom;
    struct psi_promauth_config ac = {
        .token_fn = cfg->token_fn,
        .token_file = cfg->token_file,
        .own_token_file = cfg->own_token_file,
        .own_token = cfg->own_token,
        .ca_file = cfg->ca_file,
        .service_ca_file = cfg->service_ca_file,
        .plain_http_token = cfg->plain_http_token,
        .file_roots = cfg->file_roots,
    };
    p->auth = psi_promauth_new(&ac, st);
    if (!p->auth) {
        psi_prom_free(p);
        return NULL;
    }
    p->connect_timeout_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 5000;
    p->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 15000;
    p->easy = curl_easy_init();
    if (!p->easy) {
        psi_prom_free(p);
        psi_fail(st, PSI_REASON_CONFIG, "curl_easy_init failed");
        return NULL;
    }
    return p;
oom:
    psi_prom_free(p);
    psi_fail(st, PSI_REASON_CONFIG, "out of memory");
    return NULL;
}

void psi_prom_free(struct psi_prom *p)
{
    if (!p)
        return;
    if (p->easy)
        curl_easy_cleanup(p->easy);
    sample_read_free(p->sample);
    curl_slist_free_all(p->headers);
    free(p->reply.data);
    psi_promauth_free(p->auth);
    free(p->url);
    free(p->base);
    free(p->endpoint);
    free(p);
}

const char *psi_prom_endpoint(const struct psi_prom *p)
{
    return p->endpoint;
}

/* libcurl's write callback of a reply read as it arrives (p->stream), within MAX_REPLY. */
static size_t stream_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct psi_prom *p = ud;
    size_t n = size * nmemb;
    if (n > (size_t)MAX_REPLY - p->received) {
        p->reply.too_big = 1;
        return 0;
    }
    p->received += n;
    return psi_promreply_stream_feed(p->stream, data, n) == 0 ? n : 0;
}

/* psi_prom_query_start, the reply going to stream when it is not NULL. */
static CURL *query_start(struct psi_prom *p, const char *promql, struct psi_promreply_stream *stream,
                         struct kube_err *st)
{
    kube_err_clear(st);
    const char *token = NULL;
    if (psi_promauth_prepare(p->auth, p->https, &token, st) < 0)
        return NULL;
    char *q = curl_easy_escape(p->easy, promql, 0);
    if (!q) {
        psi_fail(st, PSI_REASON_CONFIG, "out of memory escaping the query");
        return NULL;
    }
    free(p->url);
    p->url = str_printf("%s?query=%s", p->endpoint, q);
    curl_free(q);
    if (!p->url) {
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
        return NULL;
    }
    curl_slist_free_all(p->headers);
    p->headers = curl_slist_append(NULL, "Accept: application/json");
    if (token) {
        char *h = str_printf("Authorization: Bearer %s", token);
        struct curl_slist *l = h ? curl_slist_append(p->headers, h) : NULL;
        if (h) {
            memset(h, 0, strlen(h));
            free(h);
        }
        if (!l) {
            psi_fail(st, PSI_REASON_CONFIG, "out of memory");
            return NULL;
        }
        p->headers = l;
    }
    p->reply.len = 0;
    p->reply.max = (size_t)MAX_REPLY;
    p->reply.too_big = 0;
    p->stream = stream;
    p->received = 0;
    p->errbuf[0] = '\0';

    CURL *e = p->easy;
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, p->url);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, p->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, stream ? stream_write : kube_rest_reply_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, stream ? (void *)p : (void *)&p->reply);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, p->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, p->connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, p->timeout_ms);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""); /* gzip where offered */
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    /* TLS: verification is always on; there is no switch to turn it off. */
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (p->https)
        psi_promauth_apply(p->auth, e);
    /* an in-cluster host, or one NO_PROXY names (CIDR entries too), is reached directly;
     * otherwise the environment's proxy applies */
    struct kube_err perr = {0};
    if (kube_proxy_apply(e, p->url, &perr) < 0) {
        psi_fail(st, PSI_REASON_CONFIG, "%s", perr.msg);
        return NULL;
    }
    return e;
}

CURL *psi_prom_query_start(struct psi_prom *p, const char *promql, struct kube_err *st)
{
    return query_start(p, promql, NULL, st);
}

/* Say in a 401/403 message whose token was refused and, for a 403, the role it needs. */
static void auth_hint(struct psi_prom *p, long code, struct kube_err *st)
{
    size_t n = strlen(st->msg);
    if (code == 401)
        snprintf(st->msg + n, sizeof(st->msg) - n, "; sent: %s", psi_promauth_identity(p->auth));
    else
        snprintf(st->msg + n, sizeof(st->msg) - n,
                 "; sent: %s. Bind its identity the ClusterRole cluster-monitoring-view (OpenShift; "
                 "elsewhere a role that may get prometheuses/api)",
                 psi_promauth_identity(p->auth));
}

static int transport_fail(struct psi_prom *p, CURLcode rc, struct kube_err *st)
{
    const char *why = p->errbuf[0] ? p->errbuf : curl_easy_strerror(rc);
    switch (rc) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_SHUTDOWN_FAILED:
        return psi_fail(st, PSI_REASON_TLS, "TLS with %s failed: %s (verified against %s)", p->endpoint, why,
                        psi_promauth_trust(p->auth));
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return psi_fail(st, PSI_REASON_CONFIG, "request to %s cannot be made: %s", p->endpoint, why);
    case CURLE_WRITE_ERROR:
        if (p->reply.too_big)
            return psi_fail(st, PSI_REASON_MALFORMED, "reply of %s is larger than %ld bytes", p->endpoint, MAX_REPLY);
        return psi_fail(st, PSI_REASON_UNREACHABLE, "reading the reply of %s failed: %s", p->endpoint, why);
    case CURLE_OPERATION_TIMEDOUT:
        return psi_fail(st, PSI_REASON_UNREACHABLE, "%s did not answer in time: %s", p->endpoint, why);
    default: return psi_fail(st, PSI_REASON_UNREACHABLE, "%s is unreachable: %s", p->endpoint, why);
    }
}

/* After a query: a reply buffer grown past REPLY_KEEP is given back instead of being held
 * until the next query. */
static void reply_trim(struct psi_prom *p)
{
    if (p->reply.cap > REPLY_KEEP) {
        free(p->reply.data);
        p->reply.data = NULL;
        p->reply.cap = p->reply.len = 0;
    }
}

/* The HTTP status of the transfer p ran, or -1 with st failed (and the buffer trimmed) when
 * the transfer failed. */
static long transfer_status(struct psi_prom *p, CURLcode rc, struct kube_err *st)
{
    if (rc != CURLE_OK) {
        transport_fail(p, rc, st);
        reply_trim(p);
        return -1;
    }
    long code = 0;
    curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

/* After the reply of a transfer with HTTP status code was read (failed: -1): the hint of a
 * 401 or 403, the buffer trimmed. Returns failed. */
static int reply_done(struct psi_prom *p, long code, int failed, struct kube_err *st)
{
    if (failed && (code == 401 || code == 403))
        auth_hint(p, code, st);
    reply_trim(p);
    return failed;
}

int psi_prom_query_finish(struct psi_prom *p, CURLcode rc, struct psi_prom_vector *out, struct kube_err *st)
{
    memset(out, 0, sizeof(*out));
    kube_err_clear(st);
    long code = transfer_status(p, rc, st);
    if (code < 0)
        return -1;
    return reply_done(p, code, psi_prom_parse_reply(p->reply.data, p->reply.len, code, p->endpoint, out, st), st);
}

/* ---- PSI ---- */

static const char *const counter_kind[2] = {"waiting", "stalled"};

/* The label value that tags the utilisation part of the query. */
#define UTILIZATION_TAG "utilization"

char *psi_prom_psi_query(const struct psi_request *req)
{
    unsigned resources = req->resources ? req->resources : PSI_RES_ALL;
    long window_s = req->window_s < 1 ? 1 : req->window_s;
    char *q = strdup("");
    for (int r = 0; r < PSI_NRESOURCES && q; r++) {
        if (!(resources & PSI_RES_BIT(r)))
            continue;
        const char *name = psi_resource_name((enum psi_resource)r);
        const char *k = counter_kind[req->full & PSI_RES_BIT(r) ? 1 : 0];
        char *n =
            str_printf("%s%slabel_replace(max by (node, instance) (rate(node_pressure_%s_%s_seconds_total[%lds])), "
                       "\"psi_resource\", \"%s\", \"\", \"\")",
                       q, *q ? " or " : "", name, k, window_s, name);
        free(q);
        q = n;
    }
    if (q && req->utilization) {
        char *n =
            str_printf("%s or label_replace(1 - avg by (node, instance) "
                       "(rate(node_cpu_seconds_total{mode=\"idle\"}[%lds])), \"psi_resource\", \"%s\", \"\", \"\")",
                       q, window_s, UTILIZATION_TAG);
        free(q);
        q = n;
    }
    return q;
}

/* Host part of an instance label: "[::1]:9100" -> "::1", "10.0.0.1:9100" -> "10.0.0.1",
 * "worker-0" -> "worker-0". Writes into buf. */
static const char *instance_host(const char *inst, char *buf, size_t len)
{
    size_t n = strlen(inst);
    if (inst[0] == '[') {
        const char *rb = strchr(inst, ']');
        if (rb) {
            size_t hl = (size_t)(rb - inst - 1);
            if (hl >= len)
                hl = len - 1;
            memcpy(buf, inst + 1, hl);
            buf[hl] = '\0';
            return buf;
        }
    }
    const char *colon = strchr(inst, ':');
    if (colon && strchr(colon + 1, ':'))
        colon = NULL; /* a bare IPv6 address: no port */
    if (colon) {
        int digits = colon[1] != '\0';
        for (const char *c = colon + 1; *c; c++)
            if (!isdigit((unsigned char)*c))
                digits = 0;
        if (digits)
            n = (size_t)(colon - inst);
    }
    if (n >= len)
        n = len - 1;
    memcpy(buf, inst, n);
    buf[n] = '\0';
    return buf;
}

/* The request's nodes by name and by InternalIP (the first node given wins a key). */
struct node_index {
    struct base_nameindex names, ips;
};

static int index_build(struct node_index *ix, const struct psi_node_desc *nodes, size_t n)
{
    size_t ips = 0;
    for (size_t i = 0; i < n; i++)
        ips += nodes[i].n_ips;
    if (base_nameindex_init(&ix->names, n) < 0)
        return -1;
    if (base_nameindex_init(&ix->ips, ips) < 0) {
        base_nameindex_release(&ix->names);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (nodes[i].name && *nodes[i].name)
            base_nameindex_put(&ix->names, nodes[i].name, i);
        for (size_t j = 0; j < nodes[i].n_ips; j++)
            if (nodes[i].internal_ips[j] && *nodes[i].internal_ips[j])
                base_nameindex_put(&ix->ips, nodes[i].internal_ips[j], i);
    }
    return 0;
}

static void index_free(struct node_index *ix)
{
    base_nameindex_release(&ix->names);
    base_nameindex_release(&ix->ips);
}

static long index_match(const struct node_index *ix, const struct psi_prom_series *s)
{
    long i = base_nameindex_get(&ix->names, psi_prom_label_get(s, "node"));
    if (i >= 0)
        return i;
    const char *inst = psi_prom_label_get(s, "instance");
    if (!inst || !*inst)
        return -1;
    i = base_nameindex_get(&ix->names, inst);
    if (i >= 0)
        return i;
    char host[256];
    instance_host(inst, host, sizeof(host));
    i = base_nameindex_get(&ix->names, host);
    if (i >= 0)
        return i;
    return base_nameindex_get(&ix->ips, host);
}

long psi_prom_match_node(const struct psi_prom_series *s, const struct psi_node_desc *nodes, size_t n)
{
    struct node_index ix;
    if (index_build(&ix, nodes, n) < 0)
        return -1;
    long i = index_match(&ix, s);
    index_free(&ix);
    return i;
}

/* The sample being filled from the series of a reply, one at a time. */
struct filler {
    struct psi_sample *out;
    int utilization;                /* the request's */
    unsigned wanted;                /* PSI_RES_BIT set of the resources asked for */
    struct node_index ix;           /* the request's nodes by name and InternalIP */
    unsigned char *bad;             /* per node: PSI_RES_BIT set of those with an invalid value */
    struct kube_err invalid;        /* the first invalid value of a requested node */
    struct psi_promreply_sink sink; /* fill_series on this filler */
};

/* A utilisation series into its node's sample. An invalid value (NaN, Inf, negative) leaves
 * the node's utilisation Unknown, which holds the node as an unknown pressure does. */
static void fill_utilization(const struct filler *f, const struct psi_prom_series *s)
{
    struct psi_sample *out = f->out;
    long i = index_match(&f->ix, s);
    if (i < 0 || (size_t)i >= out->n_nodes)
        return;
    double pct;
    if (psi_percent_check(s->value * 100.0, &pct) < 0) {
        psi_sample_node_error(out, "CPU utilisation of node %s is %g %%: not a valid rate", out->nodes[i].name,
                              s->value * 100.0);
        return;
    }
    out->nodes[i].utilization.known = 1;
    out->nodes[i].utilization.percent = pct;
}

/* One series into its node's values (a psi_promreply_sink's fn). */
static void fill_series(void *ud, const struct psi_prom_series *s)
{
    struct filler *f = ud;
    const char *tag = psi_prom_label_get(s, "psi_resource");
    if (f->utilization && tag && strcmp(tag, UTILIZATION_TAG) == 0) {
        fill_utilization(f, s);
        return;
    }
    enum psi_resource r;
    if (psi_resource_parse(tag, &r) < 0 || !(f->wanted & PSI_RES_BIT(r)))
        return;
    long i = index_match(&f->ix, s);
    if (i < 0 || (size_t)i >= f->out->n_nodes || (f->bad[i] & PSI_RES_BIT(r)))
        return;
    struct psi_node_sample *ns = &f->out->nodes[i];
    double pct;
    if (psi_percent_check(s->value * 100.0, &pct) < 0) {
        if (!kube_err_failed(&f->invalid)) {
            const char *inst = psi_prom_label_get(s, "instance");
            psi_fail(&f->invalid, PSI_REASON_INVALID,
                     "%s pressure of node %s is %g %% (series instance=\"%s\"): not a valid rate", psi_resource_name(r),
                     ns->name, s->value * 100.0, inst ? inst : "");
        }
        f->bad[i] |= (unsigned char)PSI_RES_BIT(r);
        ns->value[r].known = 0;
        ns->value[r].percent = 0;
        return;
    }
    if (!ns->value[r].known || pct > ns->value[r].percent) {
        ns->value[r].known = 1;
        ns->value[r].percent = pct;
    }
}

/* A filler for out, its series coming through f->sink; -1 with out->status failed when out
 * of memory. Free with filler_free. */
static int filler_init(struct filler *f, const struct psi_request *req, struct psi_sample *out)
{
    *f = (struct filler){
        .out = out, .utilization = req->utilization, .wanted = req->resources ? req->resources : PSI_RES_ALL};
    f->sink = (struct psi_promreply_sink){fill_series, f};
    kube_err_clear(&f->invalid);
    f->bad = calloc(out->n_nodes ? out->n_nodes : 1, 1);
    if (!f->bad || index_build(&f->ix, req->nodes, req->n_nodes) < 0) {
        free(f->bad);
        return psi_fail(&out->status, PSI_REASON_CONFIG, "out of memory");
    }
    return 0;
}

static void filler_free(struct filler *f)
{
    index_free(&f->ix);
    free(f->bad);
}

/* The reply stream s fed to f's sink has ended: out->status as psi_prom_read_sample says. */
static int filler_end(struct filler *f, struct psi_promreply_stream *s, long http_status, const char *url)
{
    struct psi_prom_vector rest; /* the warning only: the series went to the sink */
    int rc = read_reply(s->text.s, s->text.len, http_status, url, s, &rest, &f->out->status);
    psi_prom_vector_free(&rest);
    if (rc == 0 && kube_err_failed(&f->invalid)) {
        f->out->status = f->invalid;
        rc = -1;
    }
    return rc;
}

int psi_prom_read_sample(const char *body, size_t len, long http_status, const char *url, const struct psi_request *req,
                         struct psi_sample *out)
{
    struct filler f;
    if (filler_init(&f, req, out) < 0)
        return -1;
    struct psi_promreply_stream s;
    psi_promreply_stream_init(&s, &f.sink);
    int rc = psi_promreply_stream_feed(&s, body, len) < 0 ? psi_fail(&out->status, PSI_REASON_CONFIG, "out of memory")
                                                          : filler_end(&f, &s, http_status, url);
    psi_promreply_stream_free(&s);
    filler_free(&f);
    return rc;
}

/* ---- the pressure read ---- */

/* A pressure read from its start to its end: the request with its nodes copied (the reply may
 * arrive after the caller's descriptors changed), the sample it fills and how. */
struct sample_read {
    struct psi_request req;
    struct psi_node_desc *nodes; /* req's */
    const char **ips;            /* the nodes' InternalIPs, in strings */
    char *strings;               /* the nodes' names and InternalIPs */
    struct psi_sample *out;      /* the caller's */
    struct filler f;
    struct psi_promreply_stream s;
};

static void sample_read_free(struct sample_read *r)
{
    if (!r)
        return;
    psi_promreply_stream_free(&r->s);
    filler_free(&r->f);
    free(r->nodes);
    free(r->ips);
    free(r->strings);
    free(r);
}

/* r->req with a copy of req's nodes. Returns 0, or -1 on no memory. */
static int copy_request(struct sample_read *r, const struct psi_request *req)
{
    size_t n = req->n_nodes, bytes = 0, nips = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += strlen(base_or_empty(req->nodes[i].name)) + 1;
        for (size_t j = 0; j < req->nodes[i].n_ips; j++)
            bytes += strlen(base_or_empty(req->nodes[i].internal_ips[j])) + 1;
        nips += req->nodes[i].n_ips;
    }
    r->nodes = calloc(n ? n : 1, sizeof(*r->nodes));
    r->ips = calloc(nips ? nips : 1, sizeof(*r->ips));
    r->strings = malloc(bytes ? bytes : 1);
    if (!r->nodes || !r->ips || !r->strings)
        return -1;
    char *w = r->strings;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct psi_node_desc *d = &req->nodes[i];
        r->nodes[i] = (struct psi_node_desc){w, &r->ips[k], d->n_ips, d->cpus};
        w = stpcpy(w, base_or_empty(d->name)) + 1;
        for (size_t j = 0; j < d->n_ips; j++) {
            r->ips[k++] = w;
            w = stpcpy(w, base_or_empty(d->internal_ips[j])) + 1;
        }
    }
    r->req = *req;
    r->req.nodes = r->nodes;
    return 0;
}

CURL *psi_prom_sample_start(struct psi_prom *p, const struct psi_request *req, struct psi_sample *out)
{
    sample_read_free(p->sample);
    p->sample = NULL;
    p->stream = NULL;
    struct sample_read *r = calloc(1, sizeof(*r));
    char *q = r && copy_request(r, req) == 0 ? psi_prom_psi_query(&r->req) : NULL;
    if (!q) {
        sample_read_free(r);
        psi_fail(&out->status, PSI_REASON_CONFIG, "out of memory");
        return NULL;
    }
    if (filler_init(&r->f, &r->req, out) < 0) {
        r->f = (struct filler){0}; /* what filler_init made it freed */
        free(q);
        sample_read_free(r);
        return NULL;
    }
    r->out = out;
    psi_promreply_stream_init(&r->s, &r->f.sink);
    p->sample = r;
    CURL *e = query_start(p, q, &r->s, &out->status);
    free(q);
    if (!e) {
        p->stream = NULL;
        p->sample = NULL;
        sample_read_free(r);
    }
    return e;
}

int psi_prom_sample_finish(struct psi_prom *p, CURLcode rc)
{
    struct sample_read *r = p->sample;
    if (!r)
        return -1;
    struct psi_sample *out = r->out;
    long code = transfer_status(p, rc, &out->status);
    int failed = code < 0 ? -1 : reply_done(p, code, filler_end(&r->f, &r->s, code, p->endpoint), &out->status);
    p->stream = NULL;
    p->sample = NULL;
    sample_read_free(r);
    return failed;
}
