#include "httpd/serve.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "base/grow.h"
#include "httpd/http.h"
#include "httpd/tls.h"

#define CHUNK 16384
/* After an answer that closes the connection: how long the server goes on reading (and
 * dropping) what the client still sends, so that the client reads the answer rather than
 * a reset. */
#define LINGER_MS 2000
/* How long a 408 may take to go out before the connection is dropped. */
#define LAST_WORD_MS 1000
/* Connections accepted per turn of the loop, so that serving the open ones goes on. */
#define ACCEPTS_PER_TURN 32

struct route {
    char method[8];
    char *path; /* without the trailing '*' for a prefix */
    int prefix;
    psi_serve_fn fn;
    void *ud;
};

/* ST_PARKED: the handler answered PSI_SERVE_LATER; nothing is read or written until
 * psi_serve_resume names the request's ticket. */
enum state { ST_HANDSHAKE, ST_HEAD, ST_BODY, ST_PARKED, ST_WRITE, ST_LINGER };

/* One client connection. */
struct conn {
    int fd;
    SSL *ssl;
    enum state st;
    short want;       /* what poll waits for: POLLIN or POLLOUT */
    int64_t deadline; /* monotonic ms */
    int64_t progress; /* when bytes last came in or were taken by the client (eviction
                       * order); 0 once closing */
    size_t pipelined; /* requests in a row that were already read when the one before
                       * them was answered */
    char *in;         /* max_head + 1 bytes: a head, then what follows it; NULL while idle */
    size_t in_len, scanned, consumed;
    struct psi_http_head head;
    const struct route *route;
    char *body;
    size_t body_len, body_want, reserved;
    int keep_alive;
    int interim;   /* out holds a 100 Continue to send before reading the body */
    char out[768]; /* status line and header fields, or a whole small answer */
    size_t out_len;
    void *ud;    /* psi_serve_adopt's conn_ud, or NULL */
    char *reply; /* the handler's body, or NULL */
    size_t reply_len, charged;
    size_t sent;               /* bytes of out, then of reply, written */
    unsigned long long ticket; /* the request's, once dispatched; 0 between requests */
};

/* A connection psi_serve_adopt hands over, for the server thread to take. */
struct adopted {
    int fd;
    struct psi_tls *tls;
    void *ud;
};

struct psi_serve {
    char addr[128]; /* "" when it listens nowhere */
    char host[64];
    int port;
    int listen_port;
    int lfd;
    int wake[2];
    struct route *routes;
    size_t n_routes, routes_cap;
    struct psi_serve_limits lim;
    struct psi_tls *tls;
    pthread_mutex_t mu;
    pthread_t thread;
    int started;
    atomic_int stop;
    struct conn **conns; /* max_connections slots, NULL when free */
    size_t n_conns;
    struct pollfd *pfds;
    size_t used;                 /* bytes of the budget held by bodies and replies */
    unsigned long long tickets;  /* the last ticket given */
    pthread_mutex_t inbox_mu;    /* guards what other threads hand over: resumed and adopted */
    unsigned long long *resumed; /* tickets to run again, taken by the server thread */
    size_t n_resumed, resumed_cap;
    struct adopted *adopted; /* connections to serve, taken by the server thread */
    size_t n_adopted, adopted_cap;
    int64_t accept_paused_until; /* out of file descriptors: not accepting until then */
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

int psi_serve_parse_bind(const char *addr, char *host, size_t hostlen, int *port, char *err, size_t errlen)
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
            return set_err(err, errlen, "bind address \"%s\": put an IPv6 address in brackets", addr);
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
            return set_err(err, errlen, "bind address \"%s\": host must be an IP address (or localhost)", addr);
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)p;
    return 0;
}

struct psi_serve *psi_serve_new(const char *addr, char *err, size_t errlen)
{
    char host[64] = "";
    int port = -1;
    if (addr && psi_serve_parse_bind(addr, host, sizeof(host), &port, err, errlen) < 0)
        return NULL;
    struct psi_serve *s = calloc(1, sizeof(*s));
    if (!s) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(s->addr, sizeof(s->addr), "%s", addr ? addr : "");
    snprintf(s->host, sizeof(s->host), "%s", host);
    s->port = port;
    s->listen_port = -1;
    s->lfd = s->wake[0] = s->wake[1] = -1;
    s->lim = (struct psi_serve_limits){.max_connections = 256,
                                       .max_head = 8192,
                                       .max_body = 1024 * 1024,
                                       .budget = 8 * 1024 * 1024,
                                       .head_timeout_ms = 10000,
                                       .body_timeout_ms = 30000,
                                       .write_timeout_ms = 30000,
                                       .idle_timeout_ms = 60000,
                                       .max_pipelined = 16,
                                       .later_timeout_ms = 10000};
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->inbox_mu, NULL);
    return s;
}

int psi_serve_set_limits(struct psi_serve *s, const struct psi_serve_limits *l)
{
    if (!s || s->started || !l)
        return -1;
    if (l->max_connections)
        s->lim.max_connections = l->max_connections;
    if (l->max_head >= 64)
        s->lim.max_head = l->max_head;
    if (l->max_body)
        s->lim.max_body = l->max_body;
    if (l->budget)
        s->lim.budget = l->budget;
    if (l->head_timeout_ms > 0)
        s->lim.head_timeout_ms = l->head_timeout_ms;
    if (l->body_timeout_ms > 0)
        s->lim.body_timeout_ms = l->body_timeout_ms;
    if (l->write_timeout_ms > 0)
        s->lim.write_timeout_ms = l->write_timeout_ms;
    if (l->idle_timeout_ms > 0)
        s->lim.idle_timeout_ms = l->idle_timeout_ms;
    if (l->max_pipelined)
        s->lim.max_pipelined = l->max_pipelined;
    if (l->later_timeout_ms > 0)
        s->lim.later_timeout_ms = l->later_timeout_ms;
    return 0;
}

int psi_serve_set_tls(struct psi_serve *s, struct psi_tls *tls)
{
    if (!s || s->started || !tls)
        return -1;
    s->tls = tls;
    return 0;
}

int psi_serve_route(struct psi_serve *s, const char *method, const char *path, psi_serve_fn fn, void *ud)
{
    if (!s || s->started || !method || strlen(method) >= sizeof(((struct route *)0)->method) || !path ||
        path[0] != '/' || !fn)
        return -1;
    if (BASE_GROW(s->routes, s->n_routes + 1, s->routes_cap) < 0)
        return -1;
    struct route *r = &s->routes[s->n_routes];
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

int psi_serve_reply_text(struct psi_serve_reply *reply, int status, const char *content_type, const char *text)
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

/* ---- connections ---- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void release(struct psi_serve *s, size_t *held)
{
    s->used -= *held;
    *held = 0;
}

static void drop_reply(struct psi_serve *s, struct conn *c)
{
    free(c->reply);
    c->reply = NULL;
    c->reply_len = 0;
    release(s, &c->charged);
}

static void drop_body(struct psi_serve *s, struct conn *c)
{
    free(c->body);
    c->body = NULL;
    c->body_len = c->body_want = 0;
    release(s, &c->reserved);
}

static void conn_close(struct psi_serve *s, size_t i)
{
    struct conn *c = s->conns[i];
    if (!c)
        return;
    drop_body(s, c);
    drop_reply(s, c);
    if (c->ssl)
        SSL_free(c->ssl);
    close(c->fd);
    free(c->in);
    free(c);
    s->conns[i] = NULL;
}

/* Read up to len bytes: > 0 read, 0 end of stream, -1 would block (c->want set), -2 error. */
static ssize_t io_read(struct conn *c, char *buf, size_t len)
{
    if (!c->ssl) {
        ssize_t n = recv(c->fd, buf, len, 0);
        if (n > 0)
            c->progress = now_ms();
        if (n >= 0)
            return n;
        c->want = POLLIN;
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
    }
    ERR_clear_error();
    int n = SSL_read(c->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
    if (n > 0) {
        c->progress = now_ms();
        return n;
    }
    switch (SSL_get_error(c->ssl, n)) {
    case SSL_ERROR_WANT_READ: c->want = POLLIN; return -1;
    case SSL_ERROR_WANT_WRITE: c->want = POLLOUT; return -1;
    case SSL_ERROR_ZERO_RETURN: return 0;
    default: return -2;
    }
}

/* Write up to len bytes: > 0 written, -1 would block (c->want set), -2 error. */
static ssize_t io_write(struct conn *c, const char *buf, size_t len)
{
    if (!c->ssl) {
        ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
        if (n > 0)
            return n;
        c->want = POLLOUT;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -1 : -2;
    }
    ERR_clear_error();
    int n = SSL_write(c->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
    if (n > 0)
        return n;
    switch (SSL_get_error(c->ssl, n)) {
    case SSL_ERROR_WANT_READ: c->want = POLLIN; return -1;
    case SSL_ERROR_WANT_WRITE: c->want = POLLOUT; return -1;
    default: return -2;
    }
}

/* Wait for the next request on c (timeout ms from now). */
static void await_request(struct conn *c, int timeout_ms)
{
    int64_t now = now_ms();
    c->st = ST_HEAD;
    c->want = POLLIN;
    c->deadline = now + timeout_ms;
    c->scanned = 0;
    c->route = NULL;
}

static const struct route *find_route(struct psi_serve *s, const char *method, const char *path, int *path_known)
{
    *path_known = 0;
    for (size_t i = 0; i < s->n_routes; i++) {
        const struct route *r = &s->routes[i];
        int match = r->prefix ? strncmp(path, r->path, strlen(r->path)) == 0 : strcmp(path, r->path) == 0;
        if (!match)
            continue;
        *path_known = 1;
        if (strcmp(r->method, method) == 0 || (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0))
            return r;
    }
    return NULL;
}

static int takes_body(const struct route *r)
{
    return strcmp(r->method, "PUT") == 0 || strcmp(r->method, "POST") == 0 || strcmp(r->method, "PATCH") == 0;
}

/* Whether the connection may carry another request after this one: the client asked for
 * it, and it has not pipelined max_pipelined requests in a row. */
static int may_keep(const struct psi_serve *s, const struct conn *c)
{
    return c->head.keep_alive && c->pipelined + 1 < s->lim.max_pipelined;
}

/* The write deadline: the write timeout from the last time the connection made progress,
 * not from the reply (a client that pipelines requests and never reads gains no time). */
static int64_t write_deadline(const struct psi_serve *s, const struct conn *c)
{
    return c->progress + s->lim.write_timeout_ms;
}

/* Queue the status line and header fields of a reply of len bytes. */
static void put_head(struct conn *c, int status, const char *content_type, size_t len, const char *extra)
{
    int n = snprintf(c->out, sizeof(c->out),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n%s%s\r\n",
                     status, psi_http_reason(status), content_type, len, extra ? extra : "",
                     c->keep_alive ? "" : "Connection: close\r\n");
    c->out_len = n > 0 && (size_t)n < sizeof(c->out) ? (size_t)n : 0;
    c->sent = 0;
    c->st = ST_WRITE;
    c->want = POLLOUT;
}

/* Answer with a short text of the server's own; keep: the connection may carry another
 * request (when the client wants that too). */
static void answer_small(struct psi_serve *s, struct conn *c, int status, const char *text, int keep, const char *extra)
{
    drop_body(s, c);
    c->keep_alive = keep && may_keep(s, c);
    put_head(c, status, "text/plain; charset=utf-8", strlen(text), extra);
    size_t tl = strlen(text);
    if (c->out_len && c->out_len + tl <= sizeof(c->out)) {
        memcpy(c->out + c->out_len, text, tl);
        c->out_len += tl;
    }
    if (c->head.method && strcmp(c->head.method, "HEAD") == 0 && c->out_len >= tl)
        c->out_len -= tl;
    c->deadline = write_deadline(s, c);
}

/* A Content-Type from a handler, unless it could break the header. */
static const char *safe_type(const char *t)
{
    if (!t[0])
        return "text/plain; charset=utf-8";
    for (const char *p = t; *p; p++)
        if ((unsigned char)*p < ' ' || *p == 0x7f)
            return "application/octet-stream";
    return t;
}

/* Run the route's handler and queue its reply. */
static void dispatch(struct psi_serve *s, struct conn *c)
{
    if (s->used >= s->lim.budget) {
        answer_small(s, c, 503, "server busy, try again\n", 1, "Retry-After: 1\r\n");
        return;
    }
    if (!c->ticket)
        c->ticket = ++s->tickets;
    struct psi_serve_request req = {
        .method = c->head.method,
        .path = c->head.path,
        .query = c->head.query,
        .body = c->body ? c->body : "",
        .body_len = c->body_len,
        .bearer = c->head.bearer,
        .ticket = c->ticket,
        .conn_ud = c->ud,
    };
    struct psi_serve_reply rep;
    memset(&rep, 0, sizeof(rep));
    rep.status = 200;
    pthread_mutex_lock(&s->mu);
    c->route->fn(&req, &rep, c->route->ud);
    pthread_mutex_unlock(&s->mu);
    if (rep.status == PSI_SERVE_LATER) {
        free(rep.body);
        if (c->st != ST_PARKED) { /* parked the first time: the wait is bounded from now */
            c->st = ST_PARKED;
            c->want = 0;
            c->deadline = now_ms() + s->lim.later_timeout_ms;
        }
        return;
    }
    c->ticket = 0;
    drop_body(s, c);
    if (rep.status < 200 || rep.status > 599)
        rep.status = 500;
    if (!rep.body)
        rep.len = 0;
    c->keep_alive = may_keep(s, c);
    put_head(c, rep.status, safe_type(rep.content_type), rep.len,
             rep.status == 401 ? "WWW-Authenticate: Bearer\r\n" : NULL);
    if (strcmp(c->head.method, "HEAD") == 0 || rep.len == 0) {
        free(rep.body);
    } else {
        c->reply = rep.body;
        c->reply_len = rep.len;
        c->charged = rep.len;
        s->used += rep.len;
    }
    c->deadline = write_deadline(s, c);
}

/* Decide on a request from its head alone; the body, if it is to be read, follows. */
static void on_head(struct psi_serve *s, struct conn *c, size_t end)
{
    c->consumed = end;
    int rc = psi_http_parse_head(c->in, end, &c->head);
    if (rc) {
        answer_small(s, c, rc, "malformed request\n", 0, NULL);
        return;
    }
    int declares_body = c->head.chunked || c->head.content_length > 0;
    int known;
    c->ticket = 0;
    c->route = find_route(s, c->head.method, c->head.path, &known);
    if (!c->route) {
        answer_small(s, c, known ? 405 : 404, known ? "method not allowed\n" : "not found\n", !declares_body, NULL);
    } else if (!takes_body(c->route)) {
        if (declares_body)
            answer_small(s, c, 413, "this path takes no request body\n", 0, NULL);
        else
            dispatch(s, c);
    } else if (c->head.chunked) {
        answer_small(s, c, 411, "a Content-Length is required\n", 0, NULL);
    } else if (c->head.content_length > (long long)s->lim.max_body) {
        answer_small(s, c, 413, "request body too large\n", 0, NULL);
    } else if (s->used + (size_t)(c->head.content_length + 1) > s->lim.budget) {
        answer_small(s, c, 503, "server busy, try again\n", 0, "Retry-After: 1\r\n");
    } else {
        size_t want = c->head.content_length > 0 ? (size_t)c->head.content_length : 0;
        c->body = malloc(want + 1);
        if (!c->body) {
            answer_small(s, c, 503, "out of memory\n", 0, NULL);
            return;
        }
        c->reserved = want + 1;
        s->used += c->reserved;
        c->body_want = want;
        size_t have = c->in_len - end < want ? c->in_len - end : want;
        memcpy(c->body, c->in + end, have);
        c->body_len = have;
        c->body[have] = '\0';
        c->consumed += have;
        if (have == want) {
            dispatch(s, c);
            return;
        }
        c->st = ST_BODY;
        c->want = POLLIN;
        c->deadline = now_ms() + s->lim.body_timeout_ms;
        if (c->head.expect_continue) {
            static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            memcpy(c->out, cont, sizeof(cont) - 1);
            c->out_len = sizeof(cont) - 1;
            c->sent = 0;
            c->interim = 1;
        }
    }
}

/* Write what is queued: 1 all written, 0 would block, -1 error. Bytes the client takes
 * are progress: in a reply they restart the write timeout. */
static int flush_out(struct psi_serve *s, struct conn *c)
{
    while (c->sent < c->out_len + c->reply_len) {
        const char *p;
        size_t n;
        if (c->sent < c->out_len) {
            p = c->out + c->sent;
            n = c->out_len - c->sent;
        } else {
            p = c->reply + (c->sent - c->out_len);
            n = c->reply_len - (c->sent - c->out_len);
            if (n > CHUNK)
                n = CHUNK;
        }
        ssize_t w = io_write(c, p, n);
        if (w == -1)
            return 0;
        if (w < 0)
            return -1;
        c->sent += (size_t)w;
        c->progress = now_ms();
        if (c->st == ST_WRITE)
            c->deadline = write_deadline(s, c);
    }
    return 1;
}

/* Each step: 1 progress (step again), 0 waiting for the socket, -1 close the connection. */
static int step_handshake(struct psi_serve *s, struct conn *c)
{
    ERR_clear_error();
    int n = SSL_accept(c->ssl);
    if (n == 1) {
        c->st = ST_HEAD;
        c->want = POLLIN;
        return 1;
    }
    (void)s;
    switch (SSL_get_error(c->ssl, n)) {
    case SSL_ERROR_WANT_READ: c->want = POLLIN; return 0;
    case SSL_ERROR_WANT_WRITE: c->want = POLLOUT; return 0;
    default: return -1;
    }
}

static int step_head(struct psi_serve *s, struct conn *c)
{
    size_t end = psi_http_head_end(c->in, c->in_len, c->scanned);
    if (end) {
        on_head(s, c, end);
        return 1;
    }
    c->scanned = c->in_len;
    if (c->in_len >= s->lim.max_head) {
        int status = psi_http_overflow_status(c->in, c->in_len);
        answer_small(s, c, status, status == 414 ? "request target too long\n" : "request header too large\n", 0, NULL);
        return 1;
    }
    if (!c->in && !(c->in = malloc(s->lim.max_head + 1)))
        return -1;
    int fresh = c->in_len == 0;
    ssize_t n = io_read(c, c->in + c->in_len, s->lim.max_head - c->in_len);
    if (n == -1)
        return 0;
    if (n <= 0)
        return -1;
    if (fresh) /* a kept-alive connection begins a request: the head timeout starts */
        c->deadline = now_ms() + s->lim.head_timeout_ms;
    c->in_len += (size_t)n;
    return 1;
}

static int step_body(struct psi_serve *s, struct conn *c)
{
    if (c->interim) {
        int r = flush_out(s, c);
        if (r <= 0)
            return r;
        c->interim = 0;
        c->out_len = c->sent = 0;
    }
    ssize_t n = io_read(c, c->body + c->body_len, c->body_want - c->body_len);
    if (n == -1)
        return 0;
    if (n <= 0)
        return -1;
    c->body_len += (size_t)n;
    c->body[c->body_len] = '\0';
    if (c->body_len == c->body_want)
        dispatch(s, c);
    return 1;
}

/* Begin closing after an answer: no more writes, read and drop until the client closes. */
static void linger(struct conn *c)
{
    if (c->ssl)
        SSL_shutdown(c->ssl);
    shutdown(c->fd, SHUT_WR);
    c->st = ST_LINGER;
    c->want = POLLIN;
    c->progress = 0;
    c->deadline = now_ms() + LINGER_MS;
}

static int step_write(struct psi_serve *s, struct conn *c)
{
    int r = flush_out(s, c);
    if (r <= 0)
        return r;
    drop_reply(s, c);
    c->out_len = c->sent = 0;
    if (!c->keep_alive) {
        linger(c);
        return 1;
    }
    /* Keep what followed the request (a pipelined one) and wait for the next. */
    memmove(c->in, c->in + c->consumed, c->in_len - c->consumed);
    c->in_len -= c->consumed;
    c->consumed = 0;
    if (!c->in_len) { /* an idle connection holds no head buffer */
        free(c->in);
        c->in = NULL;
    }
    memset(&c->head, 0, sizeof(c->head));
    await_request(c, s->lim.idle_timeout_ms);
    c->pipelined = c->in_len ? c->pipelined + 1 : 0;
    if (c->in_len)
        c->deadline = now_ms() + s->lim.head_timeout_ms;
    return 1;
}

static int step_linger(struct conn *c)
{
    char buf[4096];
    ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
    if (n > 0)
        return 1;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
}

/* Serve connection i as far as it goes without waiting. */
static void pump(struct psi_serve *s, size_t i)
{
    struct conn *c = s->conns[i];
    for (int r = 1; r > 0;) {
        switch (c->st) {
        case ST_HANDSHAKE: r = step_handshake(s, c); break;
        case ST_HEAD: r = step_head(s, c); break;
        case ST_BODY: r = step_body(s, c); break;
        case ST_PARKED: r = 0; break;
        case ST_WRITE: r = step_write(s, c); break;
        case ST_LINGER: r = step_linger(c); break;
        }
        if (r < 0)
            conn_close(s, i);
    }
}

/* Connections past their deadline: a request under way gets 408, the rest are closed. */
static void expire(struct psi_serve *s, int64_t now)
{
    for (size_t i = 0; i < s->n_conns; i++) {
        struct conn *c = s->conns[i];
        if (!c || now < c->deadline)
            continue;
        if (c->st == ST_PARKED) {
            c->ticket = 0;
            answer_small(s, c, 503, "no answer in time, try again\n", 0, "Retry-After: 1\r\n");
            c->deadline = now + LAST_WORD_MS;
            pump(s, i);
        } else if ((c->st == ST_HEAD && c->in_len > 0) || c->st == ST_BODY) {
            answer_small(s, c, 408, "request timed out\n", 0, NULL);
            c->deadline = now + LAST_WORD_MS;
            pump(s, i);
        } else {
            conn_close(s, i);
        }
    }
}

/* The open connection, in any state, that has gone longest without progress (a closing
 * one first), or -1 when none is open. */
static long most_stalled(struct psi_serve *s)
{
    long best = -1;
    for (size_t i = 0; i < s->n_conns; i++) {
        struct conn *c = s->conns[i];
        if (c && (best < 0 || c->progress < s->conns[best]->progress))
            best = (long)i;
    }
    return best;
}

/* Serve fd over tls (NULL: plain), handlers seeing ud. */
static void add_conn(struct psi_serve *s, int fd, struct psi_tls *tls, void *ud)
{
    if (s->n_conns == s->lim.max_connections) {
        long victim = most_stalled(s);
        if (victim < 0) {
            close(fd);
            return;
        }
        conn_close(s, (size_t)victim);
        s->conns[victim] = s->conns[--s->n_conns];
        s->conns[s->n_conns] = NULL;
    }
    struct conn *c = calloc(1, sizeof(*c));
    SSL *ssl = tls && c ? SSL_new(psi_tls_context(tls)) : NULL;
    if (!c || (tls && (!ssl || SSL_set_fd(ssl, fd) != 1))) {
        SSL_free(ssl);
        free(c);
        close(fd);
        return;
    }
    c->fd = fd;
    c->ssl = ssl;
    c->ud = ud;
    c->progress = now_ms();
    await_request(c, s->lim.head_timeout_ms);
    c->st = ssl ? ST_HANDSHAKE : ST_HEAD;
    s->conns[s->n_conns++] = c;
}

/* Out of file descriptors: make room by closing the connection that has stalled longest,
 * or else stop accepting for a moment (the listening socket would wake poll at once). */
static void out_of_fds(struct psi_serve *s)
{
    long victim = most_stalled(s);
    if (victim >= 0) {
        conn_close(s, (size_t)victim);
        s->conns[victim] = s->conns[--s->n_conns];
        s->conns[s->n_conns] = NULL;
    } else {
        s->accept_paused_until = now_ms() + 100;
    }
}

static void accept_new(struct psi_serve *s)
{
    for (int k = 0; k < ACCEPTS_PER_TURN; k++) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE)
                out_of_fds(s);
            return;
        }
        add_conn(s, fd, s->tls, NULL);
    }
}

/* Drop the closed slots, keeping the open connections in order. */
static void compact(struct psi_serve *s)
{
    size_t j = 0;
    for (size_t i = 0; i < s->n_conns; i++)
        if (s->conns[i])
            s->conns[j++] = s->conns[i];
    for (size_t i = j; i < s->n_conns; i++)
        s->conns[i] = NULL;
    s->n_conns = j;
}

/* Wake the server thread (a full pipe already wakes it). */
static void wake(struct psi_serve *s)
{
    if (s->wake[1] >= 0) {
        ssize_t w = write(s->wake[1], "w", 1);
        (void)w;
    }
}

int psi_serve_resume(struct psi_serve *s, unsigned long long ticket)
{
    pthread_mutex_lock(&s->inbox_mu);
    int rc = BASE_GROW(s->resumed, s->n_resumed + 1, s->resumed_cap);
    if (rc == 0)
        s->resumed[s->n_resumed++] = ticket;
    pthread_mutex_unlock(&s->inbox_mu);
    if (rc == 0)
        wake(s);
    return rc == 0 ? 0 : -1;
}

int psi_serve_adopt(struct psi_serve *s, int fd, struct psi_tls *tls, void *conn_ud)
{
    int flags = fcntl(fd, F_GETFL);
    int rc = flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 ? 0 : -1;
    pthread_mutex_lock(&s->inbox_mu);
    if (rc == 0 && s->started && !atomic_load(&s->stop))
        rc = BASE_GROW(s->adopted, s->n_adopted + 1, s->adopted_cap);
    else
        rc = -1;
    if (rc == 0)
        s->adopted[s->n_adopted++] = (struct adopted){fd, tls ? tls : s->tls, conn_ud};
    pthread_mutex_unlock(&s->inbox_mu);
    if (rc < 0) {
        close(fd);
        return -1;
    }
    wake(s);
    return 0;
}

/* Serve the connections psi_serve_adopt handed over. */
static void take_adopted(struct psi_serve *s)
{
    pthread_mutex_lock(&s->inbox_mu);
    struct adopted *a = s->adopted;
    size_t n = s->n_adopted;
    s->adopted = NULL;
    s->n_adopted = s->adopted_cap = 0;
    pthread_mutex_unlock(&s->inbox_mu);
    for (size_t k = 0; k < n; k++)
        add_conn(s, a[k].fd, a[k].tls, a[k].ud);
    free(a);
}

/* Run again the handlers of the parked requests psi_serve_resume named. */
static void run_resumed(struct psi_serve *s)
{
    pthread_mutex_lock(&s->inbox_mu);
    unsigned long long *t = s->resumed;
    size_t n = s->n_resumed;
    s->resumed = NULL;
    s->n_resumed = s->resumed_cap = 0;
    pthread_mutex_unlock(&s->inbox_mu);
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < s->n_conns; i++) {
            struct conn *c = s->conns[i];
            if (c && c->st == ST_PARKED && c->ticket == t[k]) {
                dispatch(s, c);
                pump(s, i);
                break;
            }
        }
    free(t);
    compact(s);
}

/* One turn: wait for the sockets (or the nearest deadline), serve, accept, expire. */
static void turn(struct psi_serve *s)
{
    size_t n = s->n_conns;
    int64_t now = now_ms(), next = now + 1000;
    s->pfds[0] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
    s->pfds[1] = (struct pollfd){.fd = now < s->accept_paused_until ? -1 : s->lfd, .events = POLLIN};
    for (size_t i = 0; i < n; i++) {
        s->pfds[i + 2] = (struct pollfd){.fd = s->conns[i]->fd, .events = s->conns[i]->want};
        if (s->conns[i]->deadline < next)
            next = s->conns[i]->deadline;
    }
    int timeout = next > now ? (int)(next - now) : 0;
    if (poll(s->pfds, n + 2, timeout) < 0 && errno != EINTR)
        return;
    if (s->pfds[0].revents) {
        char b[64];
        while (read(s->wake[0], b, sizeof(b)) > 0)
            ;
    }
    for (size_t i = 0; i < n; i++) {
        struct conn *c = s->conns[i];
        if (c && c->st == ST_PARKED && (s->pfds[i + 2].revents & (POLLERR | POLLHUP | POLLNVAL)))
            conn_close(s, i); /* the client is gone: nobody waits for the answer */
        else if (c && s->pfds[i + 2].revents)
            pump(s, i);
    }
    compact(s);
    run_resumed(s);
    take_adopted(s);
    if (s->pfds[1].revents)
        accept_new(s);
    expire(s, now_ms());
    compact(s);
}

static void *serve_thread(void *arg)
{
    struct psi_serve *s = arg;
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE); /* a TLS write to a closed connection fails with EPIPE instead */
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    while (!atomic_load(&s->stop))
        turn(s);
    return NULL;
}

/* A listening socket for s->host:s->port ("" for every address, IPv6 and IPv4). */
static int listen_socket(struct psi_serve *s)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t len;
    int v6 = !s->host[0] || strchr(s->host, ':');
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)s->port);
        if (s->host[0] && inet_pton(AF_INET6, s->host, &a->sin6_addr) != 1)
            return -1;
        len = sizeof(*a);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)s->port);
        if (inet_pton(AF_INET, s->host, &a->sin_addr) != 1)
            return -1;
        len = sizeof(*a);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && !s->host[0]) { /* no IPv6 on this host: every IPv4 address */
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        memset(&ss, 0, sizeof(ss));
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)s->port);
        a->sin_addr.s_addr = htonl(INADDR_ANY);
        len = sizeof(*a);
        v6 = 0;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    }
    if (fd < 0)
        return -1;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (v6 && !s->host[0])
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 128) != 0) {
        close(fd);
        return -1;
    }
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        s->listen_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                        : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

int psi_serve_start(struct psi_serve *s, char *err, size_t errlen)
{
    if (s->started)
        return set_err(err, errlen, "server on %s already started", s->addr);
    s->conns = calloc(s->lim.max_connections, sizeof(*s->conns));
    s->pfds = calloc(s->lim.max_connections + 2, sizeof(*s->pfds));
    if (!s->conns || !s->pfds)
        return set_err(err, errlen, "serving %s: out of memory", s->addr);
    errno = 0;
    s->lfd = s->addr[0] ? listen_socket(s) : -1;
    if (s->addr[0] && s->lfd < 0)
        return set_err(err, errlen, "serving %s: cannot listen (%s)", s->addr,
                       errno ? strerror(errno) : "not an address of this host");
    if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        close(s->lfd);
        s->lfd = -1;
        return set_err(err, errlen, "serving %s: %s", s->addr, strerror(errno));
    }
    atomic_store(&s->stop, 0);
    if (pthread_create(&s->thread, NULL, serve_thread, s) != 0) {
        if (s->lfd >= 0)
            close(s->lfd);
        s->lfd = -1;
        s->listen_port = -1;
        return set_err(err, errlen, "serving %s: cannot start the server thread", s->addr);
    }
    pthread_mutex_lock(&s->inbox_mu);
    s->started = 1;
    pthread_mutex_unlock(&s->inbox_mu);
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
        atomic_store(&s->stop, 1);
        ssize_t w = write(s->wake[1], "x", 1); /* without it the thread still stops within a second */
        (void)w;
        pthread_join(s->thread, NULL);
    }
    for (size_t i = 0; i < s->n_conns; i++)
        conn_close(s, i);
    for (size_t k = 0; k < s->n_adopted; k++)
        close(s->adopted[k].fd);
    if (s->lfd >= 0)
        close(s->lfd);
    for (int i = 0; i < 2; i++)
        if (s->wake[i] >= 0)
            close(s->wake[i]);
    for (size_t i = 0; i < s->n_routes; i++)
        free(s->routes[i].path);
    free(s->routes);
    free(s->conns);
    free(s->pfds);
    free(s->resumed);
    free(s->adopted);
    pthread_mutex_destroy(&s->inbox_mu);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
