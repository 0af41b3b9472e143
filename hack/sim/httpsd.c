/* httpsd: a small HTTPS/1.1 server (see httpsd.h). */
#include "hack/sim/httpsd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#define HTTPSD_MAX_HEADER 16384
#define HTTPSD_MAX_BODY (1u << 20)
#define HTTPSD_IDLE_SECONDS 120

struct conn {
    struct httpsd *srv;
    int fd;
    pthread_t thread;
    bool done; /* the thread has finished; join and free */
    struct conn *next;
};

struct httpsd {
    int listen_fd;
    int port;
    SSL_CTX *ctx;
    httpsd_fn fn;
    void *ud;
    pthread_t accept_thread;
    int wake[2];        /* a pipe that ends the accept loop */
    pthread_mutex_t mu; /* guards conns and stopping */
    struct conn *conns;
    bool stopping;
};

static void set_err(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_get_error();
    char ossl[200] = "";
    if (e)
        ERR_error_string_n(e, ossl, sizeof(ossl));
    ERR_clear_error();
    snprintf(err, errlen, "%s%s%s", what, *ossl ? ": " : "", ossl);
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 500: return "Internal Server Error";
    default: return "Status";
    }
}

static int write_all(SSL *ssl, const char *buf, size_t len)
{
    while (len > 0) {
        int n = SSL_write(ssl, buf, len > (1u << 30) ? (1 << 30) : (int)len);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_reply(SSL *ssl, int status, const char *ctype, const char *body, size_t len, bool close_after)
{
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: %s\r\n\r\n", status,
                     reason_phrase(status), ctype, len, close_after ? "close" : "keep-alive");
    if (write_all(ssl, head, (size_t)n) < 0)
        return -1;
    return len ? write_all(ssl, body, len) : 0;
}

/* Find header name (case-insensitive) in the header block; copies its value into out. */
static bool header_value(const char *headers, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    const char *p = headers;
    while ((p = strstr(p, "\r\n")) != NULL) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            const char *e = strstr(v, "\r\n");
            size_t len = e ? (size_t)(e - v) : strlen(v);
            while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
                len--;
            if (len >= outlen)
                len = outlen - 1;
            memcpy(out, v, len);
            out[len] = '\0';
            return true;
        }
    }
    return false;
}

/* Serve requests on one TLS connection until it closes or fails. */
static void serve_conn(SSL *ssl, httpsd_fn fn, void *ud)
{
    char *buf = malloc(HTTPSD_MAX_HEADER + 1);
    size_t have = 0;
    if (!buf)
        return;
    for (;;) {
        /* read until the end of the header block */
        char *end = NULL;
        while (!(end = (have >= 4 ? memmem(buf, have, "\r\n\r\n", 4) : NULL))) {
            if (have >= HTTPSD_MAX_HEADER) {
                send_reply(ssl, 400, "text/plain", "headers too large\n", 18, true);
                goto out;
            }
            int n = SSL_read(ssl, buf + have, (int)(HTTPSD_MAX_HEADER - have));
            if (n <= 0)
                goto out;
            have += (size_t)n;
        }
        size_t head_len = (size_t)(end - buf) + 4;
        char saved = buf[head_len - 2];
        buf[head_len - 2] = '\0'; /* headers end with "\r\n" now NUL-terminated */
        char method[16] = "", target[1024] = "", version[16] = "";
        if (sscanf(buf, "%15s %1023s %15s", method, target, version) != 3 || strncmp(version, "HTTP/1.", 7) != 0) {
            send_reply(ssl, 400, "text/plain", "bad request line\n", 17, true);
            goto out;
        }
        char value[64];
        bool close_after = strcmp(version, "HTTP/1.0") == 0;
        if (header_value(buf, "Connection", value, sizeof(value)))
            close_after = strcasecmp(value, "close") == 0 || (close_after && strcasecmp(value, "keep-alive") != 0);
        if (header_value(buf, "Transfer-Encoding", value, sizeof(value))) {
            send_reply(ssl, 411, "text/plain", "a Content-Length is required\n", 29, true);
            goto out;
        }
        size_t body_len = 0;
        if (header_value(buf, "Content-Length", value, sizeof(value))) {
            char *e;
            unsigned long long v = strtoull(value, &e, 10);
            if (*e || e == value) {
                send_reply(ssl, 400, "text/plain", "bad Content-Length\n", 19, true);
                goto out;
            }
            if (v > HTTPSD_MAX_BODY) {
                send_reply(ssl, 413, "text/plain", "body too large\n", 15, true);
                goto out;
            }
            body_len = (size_t)v;
        }
        buf[head_len - 2] = saved;
        char *body = malloc(body_len + 1);
        if (!body)
            goto out;
        size_t extra = have - head_len; /* body bytes read with the headers */
        size_t take = extra < body_len ? extra : body_len;
        memcpy(body, buf + head_len, take);
        size_t got = take;
        while (got < body_len) {
            int n = SSL_read(ssl, body + got, (int)(body_len - got > (1u << 30) ? (1u << 30) : body_len - got));
            if (n <= 0) {
                free(body);
                goto out;
            }
            got += (size_t)n;
        }
        body[body_len] = '\0';
        /* keep what follows this request (pipelining) */
        memmove(buf, buf + head_len + take, have - head_len - take);
        have -= head_len + take;

        char *q = strchr(target, '?');
        if (q)
            *q = '\0';
        struct httpsd_reply reply = {.status = 200};
        snprintf(reply.content_type, sizeof(reply.content_type), "application/json");
        fn(method, target, body, body_len, &reply, ud);
        free(body);
        int rc = send_reply(ssl, reply.status ? reply.status : 200, reply.content_type, reply.body ? reply.body : "",
                            reply.body ? reply.len : 0, close_after);
        free(reply.body);
        if (rc < 0 || close_after)
            goto out;
    }
out:
    free(buf);
}

void httpsd_serve_fd(SSL_CTX *ctx, int fd, httpsd_fn fn, void *ud)
{
    struct timeval tv = {HTTPSD_IDLE_SECONDS, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    SSL *ssl = SSL_new(ctx);
    if (ssl && SSL_set_fd(ssl, fd) == 1 && SSL_accept(ssl) == 1) {
        serve_conn(ssl, fn, ud);
        SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    ERR_clear_error();
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    struct httpsd *s = c->srv;
    httpsd_serve_fd(s->ctx, c->fd, s->fn, s->ud);
    pthread_mutex_lock(&s->mu);
    shutdown(c->fd, SHUT_RDWR);
    c->done = true;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Join and free finished connections (mu held). */
static void reap(struct httpsd *s)
{
    struct conn **pp = &s->conns;
    while (*pp) {
        struct conn *c = *pp;
        if (c->done) {
            pthread_join(c->thread, NULL);
            close(c->fd);
            *pp = c->next;
            free(c);
        } else {
            pp = &c->next;
        }
    }
}

static void *accept_main(void *arg)
{
    struct httpsd *s = arg;
    for (;;) {
        struct pollfd p[2] = {{s->listen_fd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
        if (poll(p, 2, 5000) < 0 && errno != EINTR)
            break;
        pthread_mutex_lock(&s->mu);
        reap(s);
        bool stop = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (stop || (p[1].revents & POLLIN))
            break;
        if (!(p[0].revents & POLLIN))
            continue;
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        struct conn *c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            continue;
        }
        c->srv = s;
        c->fd = fd;
        pthread_mutex_lock(&s->mu);
        if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
            pthread_mutex_unlock(&s->mu);
            close(fd);
            free(c);
            continue;
        }
        c->next = s->conns;
        s->conns = c;
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

SSL_CTX *httpsd_ctx_new(const char *cert_pem, const char *key_pem, char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        set_err(err, errlen, "creating the TLS context failed");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    BIO *b = BIO_new_mem_buf(cert_pem, -1);
    X509 *cert = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    bool ok = cert && SSL_CTX_use_certificate(ctx, cert) == 1;
    X509_free(cert);
    /* the rest of the chain, if any */
    X509 *extra;
    while (ok && b && (extra = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
        if (SSL_CTX_add_extra_chain_cert(ctx, extra) != 1) {
            X509_free(extra);
            ok = false;
        }
    }
    ERR_clear_error(); /* the end of the PEM stream */
    BIO_free(b);
    if (!ok) {
        set_err(err, errlen, "loading the serving certificate failed");
        SSL_CTX_free(ctx);
        return NULL;
    }
    b = BIO_new_mem_buf(key_pem, -1);
    EVP_PKEY *key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    ok = key && SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
    EVP_PKEY_free(key);
    if (!ok) {
        set_err(err, errlen, "loading the serving key failed");
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

struct httpsd *httpsd_start(const struct httpsd_opts *o, char *err, size_t errlen)
{
    const char *host = o->host;
    int port = o->port;
    struct httpsd *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->listen_fd = -1;
    s->wake[0] = s->wake[1] = -1;
    s->fn = o->fn;
    s->ud = o->ud;
    pthread_mutex_init(&s->mu, NULL);
    if (!(s->ctx = httpsd_ctx_new(o->cert_pem, o->key_pem, err, errlen)))
        goto fail;
    struct sockaddr_in6 a6 = {0};
    struct sockaddr_in a4 = {0};
    struct sockaddr *sa;
    socklen_t salen;
    if (inet_pton(AF_INET, host, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)port);
        sa = (struct sockaddr *)&a4;
        salen = sizeof(a4);
    } else if (inet_pton(AF_INET6, host, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)port);
        sa = (struct sockaddr *)&a6;
        salen = sizeof(a6);
    } else {
        snprintf(err, errlen, "\"%s\" is not an IP address to listen on", host);
        goto fail;
    }
    s->listen_fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (s->listen_fd < 0 || setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(s->listen_fd, sa, salen) < 0 || listen(s->listen_fd, 64) < 0) {
        snprintf(err, errlen, "listening on %s:%d failed: %s", host, port, strerror(errno));
        goto fail;
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    getsockname(s->listen_fd, (struct sockaddr *)&bound, &blen);
    s->port = ntohs(bound.ss_family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port
                                               : ((struct sockaddr_in6 *)&bound)->sin6_port);
    if (pipe2(s->wake, O_CLOEXEC) < 0 || pthread_create(&s->accept_thread, NULL, accept_main, s) != 0) {
        snprintf(err, errlen, "starting the server thread failed: %s", strerror(errno));
        goto fail;
    }
    return s;
fail:
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    SSL_CTX_free(s->ctx);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return NULL;
}

int httpsd_port(const struct httpsd *s)
{
    return s->port;
}

void httpsd_free(struct httpsd *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_mutex_unlock(&s->mu);
    ssize_t w = write(s->wake[1], "x", 1);
    (void)w;
    pthread_join(s->accept_thread, NULL);
    close(s->listen_fd);
    /* unblock every connection thread, then join them all */
    pthread_mutex_lock(&s->mu);
    for (struct conn *c = s->conns; c; c = c->next)
        shutdown(c->fd, SHUT_RDWR);
    pthread_mutex_unlock(&s->mu);
    for (;;) {
        pthread_mutex_lock(&s->mu);
        struct conn *c = s->conns;
        if (c)
            s->conns = c->next;
        pthread_mutex_unlock(&s->mu);
        if (!c)
            break;
        pthread_join(c->thread, NULL);
        close(c->fd);
        free(c);
    }
    close(s->wake[0]);
    close(s->wake[1]);
    SSL_CTX_free(s->ctx);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
