#include "serve.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#define MAX_BODY (1024 * 1024)
#define CHUNK 16384

struct route {
    char method[8];
    char *path; /* without the trailing '*' for a prefix */
    int prefix;
    psi_serve_fn fn;
    void *ud;
};

struct psi_serve {
    char addr[128];
    char host[64];
    int port;
    int listen_port;
    struct route *routes;
    size_t n_routes;
    pthread_mutex_t mu;
    struct lws_context *ctx;
    pthread_t thread;
    int started;
    volatile int stop;
};

/* Per connection (reset at each request of a kept-alive connection). */
struct pss {
    char method[8];
    char *path;
    char *query;
    char *body;
    size_t body_len, body_cap;
    int body_too_big;
    int head_only;
    int responded; /* the reply of this request is on its way or done */
    struct psi_serve_reply reply;
    size_t sent;
};

static int set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int psi_serve_parse_bind(const char *addr, char *host, size_t hostlen, int *port, char *err,
                         size_t errlen)
{
    if (!addr || !*addr)
        return set_err(err, errlen, "empty bind address");
    const char *colon;
    const char *h = addr;
    size_t hl;
    if (addr[0] == '[') {
        const char *rb = strchr(addr, ']');
        if (!rb || rb[1] != ':')
            return set_err(err, errlen, "bind address \"%s\": expected [ipv6]:port", addr);
        h = addr + 1;
        hl = (size_t)(rb - h);
        colon = rb + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon)
            return set_err(err, errlen, "bind address \"%s\": expected host:port or :port", addr);
        if (memchr(addr, ':', (size_t)(colon - addr)))
            return set_err(err, errlen, "bind address \"%s\": put an IPv6 address in brackets",
                           addr);
        hl = (size_t)(colon - addr);
    }
    const char *ps = colon + 1;
    if (!*ps)
        return set_err(err, errlen, "bind address \"%s\": no port", addr);
    long p = 0;
    for (const char *c = ps; *c; c++) {
        if (!isdigit((unsigned char)*c) || p > 65535)
            return set_err(err, errlen, "bind address \"%s\": port \"%s\" is not 0..65535", addr, ps);
        p = p * 10 + (*c - '0');
    }
    if (p > 65535)
        return set_err(err, errlen, "bind address \"%s\": port \"%s\" is not 0..65535", addr, ps);
    if (hl == 9 && strncmp(h, "localhost", 9) == 0) {
        h = "127.0.0.1";
        hl = 9;
    }
    if (hl >= hostlen)
        return set_err(err, errlen, "bind address \"%s\": host too long", addr);
    for (size_t i = 0; i < hl; i++)
        if (!(isxdigit((unsigned char)h[i]) || h[i] == '.' || h[i] == ':'))
            return set_err(err, errlen,
                           "bind address \"%s\": host must be an IP address (or localhost)", addr);
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)p;
    return 0;
}

struct psi_serve *psi_serve_new(const char *addr, char *err, size_t errlen)
{
    char host[64];
    int port;
    if (psi_serve_parse_bind(addr, host, sizeof(host), &port, err, errlen) < 0)
        return NULL;
    struct psi_serve *s = calloc(1, sizeof(*s));
    if (!s) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(s->addr, sizeof(s->addr), "%s", addr);
    snprintf(s->host, sizeof(s->host), "%s", host);
    s->port = port;
    s->listen_port = -1;
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

int psi_serve_route(struct psi_serve *s, const char *method, const char *path, psi_serve_fn fn,
                    void *ud)
{
    if (!s || s->started || !method || strlen(method) >= sizeof(((struct route *)0)->method) ||
        !path || path[0] != '/' || !fn)
        return -1;
    struct route *r = realloc(s->routes, (s->n_routes + 1) * sizeof(*r));
    if (!r)
        return -1;
    s->routes = r;
    r = &s->routes[s->n_routes];
    memset(r, 0, sizeof(*r));
    snprintf(r->method, sizeof(r->method), "%s", method);
    size_t pl = strlen(path);
    r->prefix = pl >= 2 && path[pl - 1] == '*' && path[pl - 2] == '/';
    r->path = strndup(path, r->prefix ? pl - 1 : pl);
    if (!r->path)
        return -1;
    r->fn = fn;
    r->ud = ud;
    s->n_routes++;
    return 0;
}

int psi_serve_reply_text(struct psi_serve_reply *reply, int status, const char *content_type,
                         const char *text)
{
    free(reply->body);
    reply->body = NULL;
    reply->len = 0;
    snprintf(reply->content_type, sizeof(reply->content_type), "%s",
             content_type ? content_type : "text/plain; charset=utf-8");
    size_t n = text ? strlen(text) : 0;
    if (n) {
        reply->body = malloc(n);
        if (!reply->body) {
            reply->status = 500;
            return -1;
        }
        memcpy(reply->body, text, n);
        reply->len = n;
    }
    reply->status = status;
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int psi_serve_query_get(const char *query, const char *key, char *buf, size_t len)
{
    if (!query || !key || !buf || len == 0)
        return -1;
    size_t kl = strlen(key);
    const char *p = query;
    while (*p) {
        const char *amp = strchr(p, '&');
        size_t fl = amp ? (size_t)(amp - p) : strlen(p);
        if (fl > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t j = 0;
            for (size_t i = kl + 1; i < fl; i++) {
                int c = (unsigned char)p[i];
                if (c == '%' && i + 2 < fl && hexval(p[i + 1]) >= 0 && hexval(p[i + 2]) >= 0) {
                    c = hexval(p[i + 1]) * 16 + hexval(p[i + 2]);
                    i += 2;
                } else if (c == '+') {
                    c = ' ';
                }
                if (j + 1 >= len)
                    return -1;
                buf[j++] = (char)c;
            }
            buf[j] = '\0';
            return 0;
        }
        if (fl == kl && strncmp(p, key, kl) == 0) {
            buf[0] = '\0';
            return 0;
        }
        p += fl;
        if (*p == '&')
            p++;
    }
    return -1;
}

/* ---- lws glue ---- */

static void pss_reset(struct pss *pss)
{
    free(pss->path);
    free(pss->query);
    free(pss->body);
    free(pss->reply.body);
    memset(pss, 0, sizeof(*pss));
}

/* The reply went out: drop its body and the request's (the flags stay until the next
 * request on this connection). */
static void reply_done(struct pss *pss)
{
    free(pss->reply.body);
    pss->reply.body = NULL;
    pss->reply.len = 0;
    pss->sent = 0;
    free(pss->body);
    pss->body = NULL;
    pss->body_len = pss->body_cap = 0;
}

static const struct route *find_route(struct psi_serve *s, const char *method, const char *path,
                                      int *path_known)
{
    *path_known = 0;
    for (size_t i = 0; i < s->n_routes; i++) {
        const struct route *r = &s->routes[i];
        int match = r->prefix ? strncmp(path, r->path, strlen(r->path)) == 0
                              : strcmp(path, r->path) == 0;
        if (!match)
            continue;
        *path_known = 1;
        if (strcmp(r->method, method) == 0 ||
            (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0))
            return r;
    }
    return NULL;
}

/* Run the handler and send the status line and headers; the body follows on writable. */
static int respond(struct lws *wsi, struct psi_serve *s, struct pss *pss)
{
    if (pss->responded)
        return 0; /* e.g. a body completion after a Content-Length: 0 request was answered */
    pss->responded = 1;
    struct psi_serve_reply *rep = &pss->reply;
    memset(rep, 0, sizeof(*rep));
    rep->status = 200;
    if (pss->body_too_big) {
        psi_serve_reply_text(rep, 413, NULL, "request body too large\n");
    } else {
        int known;
        const struct route *r = find_route(s, pss->method, pss->path, &known);
        if (!r) {
            psi_serve_reply_text(rep, known ? 405 : 404, NULL,
                                 known ? "method not allowed\n" : "not found\n");
        } else {
            struct psi_serve_request req = {
                .method = pss->method,
                .path = pss->path,
                .query = pss->query ? pss->query : "",
                .body = pss->body ? pss->body : "",
                .body_len = pss->body_len,
            };
            pthread_mutex_lock(&s->mu);
            r->fn(&req, rep, r->ud);
            pthread_mutex_unlock(&s->mu);
            if (rep->status < 100 || rep->status > 599)
                rep->status = 500;
            if (!rep->content_type[0])
                snprintf(rep->content_type, sizeof(rep->content_type), "text/plain; charset=utf-8");
            if (!rep->body)
                rep->len = 0;
        }
    }
    unsigned char hbuf[LWS_PRE + 1024];
    unsigned char *start = &hbuf[LWS_PRE], *p = start, *end = &hbuf[sizeof(hbuf) - 1];
    if (lws_add_http_common_headers(wsi, (unsigned int)rep->status, rep->content_type,
                                    (lws_filepos_t)rep->len, &p, end))
        return -1;
    if (lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                    (const unsigned char *)"no-store", 8, &p, end))
        return -1;
    if (lws_finalize_write_http_header(wsi, start, &p, end))
        return -1;
    if (pss->head_only || rep->len == 0) {
        reply_done(pss);
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    }
    lws_callback_on_writable(wsi);
    return 0;
}

static int write_body(struct lws *wsi, struct pss *pss)
{
    unsigned char buf[LWS_PRE + CHUNK];
    size_t left = pss->reply.len - pss->sent;
    size_t n = left > CHUNK ? CHUNK : left;
    memcpy(&buf[LWS_PRE], pss->reply.body + pss->sent, n);
    int final = n == left;
    if (lws_write(wsi, &buf[LWS_PRE], n, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n)
        return -1;
    pss->sent += n;
    if (!final) {
        lws_callback_on_writable(wsi);
        return 0;
    }
    reply_done(pss);
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static const char *method_name(int m)
{
    switch (m) {
    case LWSHUMETH_GET: return "GET";
    case LWSHUMETH_POST: return "POST";
    case LWSHUMETH_OPTIONS: return "OPTIONS";
    case LWSHUMETH_PUT: return "PUT";
    case LWSHUMETH_PATCH: return "PATCH";
    case LWSHUMETH_DELETE: return "DELETE";
    case LWSHUMETH_HEAD: return "HEAD";
    default: return NULL;
    }
}

static char *query_of(struct lws *wsi)
{
    char frag[1024];
    size_t len = 0, cap = 0;
    char *q = NULL;
    for (int i = 0;; i++) {
        int n = lws_hdr_copy_fragment(wsi, frag, sizeof(frag), WSI_TOKEN_HTTP_URI_ARGS, i);
        if (n <= 0)
            break;
        size_t need = len + (size_t)n + 2;
        if (need > cap) {
            cap = need * 2;
            char *nq = realloc(q, cap);
            if (!nq) {
                free(q);
                return NULL;
            }
            q = nq;
        }
        if (len)
            q[len++] = '&';
        memcpy(q + len, frag, (size_t)n);
        len += (size_t)n;
        q[len] = '\0';
    }
    return q;
}

/* libwebsockets allocates the per-connection struct pss only when a connection's first
 * request is dispatched to this protocol. A connection that closes (or times out) before
 * that, e.g. a TCP connect without a request, a client that gives up while its request
 * still waits for a header table under load, or a health checker's bare connect, still
 * gets LWS_CALLBACK_CLOSED_HTTP (and may get LWS_CALLBACK_HTTP_DROP_PROTOCOL) with user
 * NULL. Every reason that touches pss therefore checks it. */
static int on_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len)
{
    struct pss *pss = user;
    struct psi_serve *s = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
        if (pss)
            pss_reset(pss);
        return 0;
    case LWS_CALLBACK_HTTP:
    case LWS_CALLBACK_HTTP_BODY:
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
    case LWS_CALLBACK_HTTP_WRITEABLE:
        if (!pss)
            return -1; /* not expected: no state to serve a request with; hang up */
        break;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
    switch (reason) {
    case LWS_CALLBACK_HTTP: {
        pss_reset(pss);
        char *uri = NULL;
        int ulen = 0;
        const char *m = method_name(lws_http_get_uri_and_method(wsi, &uri, &ulen));
        if (!m) {
            lws_return_http_status(wsi, 405, NULL);
            return -1;
        }
        snprintf(pss->method, sizeof(pss->method), "%s", m);
        pss->head_only = strcmp(m, "HEAD") == 0;
        pss->path = strdup(in ? (const char *)in : "/");
        pss->query = query_of(wsi);
        if (!pss->path)
            return -1;
        int clen = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH);
        if (clen > 0) {
            char cl[32];
            lws_hdr_copy(wsi, cl, sizeof(cl), WSI_TOKEN_HTTP_CONTENT_LENGTH);
            if (strtoll(cl, NULL, 10) > 0)
                return 0; /* the body follows: LWS_CALLBACK_HTTP_BODY */
        }
        return respond(wsi, s, pss);
    }
    case LWS_CALLBACK_HTTP_BODY:
        if (pss->responded)
            return 0;
        if (pss->body_too_big || pss->body_len + len > MAX_BODY) {
            pss->body_too_big = 1;
            return 0;
        }
        if (pss->body_len + len + 1 > pss->body_cap) {
            size_t cap = pss->body_cap ? pss->body_cap : 1024;
            while (cap < pss->body_len + len + 1)
                cap *= 2;
            char *b = realloc(pss->body, cap);
            if (!b)
                return -1;
            pss->body = b;
            pss->body_cap = cap;
        }
        memcpy(pss->body + pss->body_len, in, len);
        pss->body_len += len;
        pss->body[pss->body_len] = '\0';
        return 0;
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        return respond(wsi, s, pss);
    case LWS_CALLBACK_HTTP_WRITEABLE:
        if (!pss->reply.body || pss->sent >= pss->reply.len)
            return 0;
        return write_body(wsi, pss);
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[] = {
    {"http", on_http, sizeof(struct pss), 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void lws_log(int level, const char *line)
{
    (void)level;
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' '))
        n--;
    fprintf(stderr, "level=error msg=\"libwebsockets: %.*s\"\n", (int)n, line);
}

static void *serve_thread(void *arg)
{
    struct psi_serve *s = arg;
    while (!s->stop) {
        if (lws_service(s->ctx, 0) < 0)
            break;
    }
    return NULL;
}

int psi_serve_start(struct psi_serve *s, char *err, size_t errlen)
{
    if (s->started)
        return set_err(err, errlen, "server on %s already started", s->addr);
    lws_set_log_level(LLL_ERR, lws_log);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof(info));
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
    if (s->host[0] && !strchr(s->host, ':'))
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    info.user = s;
    info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
    s->ctx = lws_create_context(&info);
    if (!s->ctx)
        return set_err(err, errlen, "serving %s: creating the libwebsockets context failed",
                       s->addr);
    info.port = s->port;
    info.iface = s->host[0] ? s->host : NULL;
    info.protocols = protocols;
    info.vhost_name = "psi";
    struct lws_vhost *vh = lws_create_vhost(s->ctx, &info);
    if (!vh) {
        lws_context_destroy(s->ctx);
        s->ctx = NULL;
        return set_err(err, errlen,
                       "serving %s: cannot listen (address in use, or not an address of this host)",
                       s->addr);
    }
    s->listen_port = lws_get_vhost_listen_port(vh);
    s->stop = 0;
    if (pthread_create(&s->thread, NULL, serve_thread, s) != 0) {
        lws_context_destroy(s->ctx);
        s->ctx = NULL;
        s->listen_port = -1;
        return set_err(err, errlen, "serving %s: cannot start the server thread", s->addr);
    }
    s->started = 1;
    return 0;
}

int psi_serve_port(const struct psi_serve *s)
{
    return s ? s->listen_port : -1;
}

void psi_serve_lock(struct psi_serve *s)
{
    pthread_mutex_lock(&s->mu);
}

void psi_serve_unlock(struct psi_serve *s)
{
    pthread_mutex_unlock(&s->mu);
}

void psi_serve_free(struct psi_serve *s)
{
    if (!s)
        return;
    if (s->started) {
        s->stop = 1;
        lws_cancel_service(s->ctx);
        pthread_join(s->thread, NULL);
    }
    if (s->ctx)
        lws_context_destroy(s->ctx);
    for (size_t i = 0; i < s->n_routes; i++)
        free(s->routes[i].path);
    free(s->routes);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
