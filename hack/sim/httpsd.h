/* httpsd: a small HTTPS/1.1 server for the admission webhook (OpenSSL, POSIX threads).
 *
 * One thread accepts; each connection gets a thread of its own that reads requests one
 * after another (keep-alive), so the API server's concurrent webhook calls are served in
 * parallel. Requests need a Content-Length (the API server sends one); bodies are capped
 * at 1 MiB; chunked bodies get 411. ALPN is not offered, so clients speak HTTP/1.1. The
 * handler runs in a connection thread: it must be thread-safe (the webhook serialises its
 * own work with a mutex). */
#ifndef PSI_SIM_HTTPSD_H
#define PSI_SIM_HTTPSD_H

#include <stddef.h>

#include <openssl/ssl.h>

/* A handler's answer: status (default 200), content type (default application/json) and
 * a malloc'ed body of len bytes that the server frees (NULL for none). */
struct httpsd_reply {
    int status;
    char content_type[64];
    char *body;
    size_t len;
};

/* A request handler: method, path (without the query) and the body (NUL-terminated). */
typedef void (*httpsd_fn)(const char *method, const char *path, const char *body, size_t len,
                          struct httpsd_reply *reply, void *ud);

struct httpsd;

/* Where and how to serve (all borrowed). */
struct httpsd_opts {
    const char *host;               /* an IP address */
    int port;                       /* 0: the kernel picks */
    const char *cert_pem, *key_pem; /* the certificate chain and its key */
    httpsd_fn fn;
    void *ud; /* fn's */
};

/* Listen as o says and start serving with o->fn. NULL with why in err. Stop with
 * httpsd_free. */
struct httpsd *httpsd_start(const struct httpsd_opts *o, char *err, size_t errlen);

/* The port listened on. */
int httpsd_port(const struct httpsd *s);

/* Stop accepting, close every connection, join the threads, free (NULL is fine). */
void httpsd_free(struct httpsd *s);

/* A TLS server context with the PEM certificate chain and key (TLS 1.2 at least), for
 * httpsd_serve_fd; NULL with why in err. Free with SSL_CTX_free. */
SSL_CTX *httpsd_ctx_new(const char *cert_pem, const char *key_pem, char *err, size_t errlen);

/* Serve requests with fn over TLS (ctx) on the connected socket fd, in the calling thread,
 * until the peer closes, fails or idles 120 s; the caller closes fd. For a connection
 * accepted elsewhere (e.g. one tunnelled through an HTTP CONNECT). */
void httpsd_serve_fd(SSL_CTX *ctx, int fd, httpsd_fn fn, void *ud);

#endif
