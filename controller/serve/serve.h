/* psi_serve: the operator's own HTTP endpoints (/healthz, /readyz, /metrics), served with
 * libwebsockets.
 *
 * Threading (decided here): the server runs lws in a dedicated thread of its own, not in
 * the operator's loop. kube_loop (libcurl multi + timers) has no hook to add foreign file
 * descriptors, and servicing lws from a timer would add polling latency and wake-ups; a
 * separate thread keeps probes answering even while the loop is inside a blocking REST
 * call. The price is that handlers run in the server thread: every handler is called
 * with the server's mutex held, and the operator publishes what handlers read (readiness
 * flags, a snapshot) under the same mutex with psi_serve_lock/psi_serve_unlock, holding
 * it only briefly. psi_metrics has its own mutex, so a /metrics handler can render the
 * registry while the loop updates it.
 *
 * Routes are registered before psi_serve_start: an exact path ("/healthz") or a prefix
 * (a path whose last two characters are a slash and a star: every path below it), for
 * one method. A GET route also answers HEAD (without
 * the body). Unknown path: 404; a known path with another method: 405. Request bodies
 * (PUT/POST) up to 1 MiB are passed to the handler whole. Replies carry Content-Length
 * and keep the connection alive. */
#ifndef PSI_SERVE_SERVE_H
#define PSI_SERVE_SERVE_H

#include <stddef.h>

/* A request as a handler sees it (all borrowed for the call). */
struct psi_serve_request {
    const char *method; /* "GET", "HEAD", "PUT", "POST", "DELETE", "PATCH" */
    const char *path;   /* URL-decoded path, without the query */
    const char *query;  /* the query after '?' as libwebsockets hands it: its arguments
                         * already URL-decoded, joined by '&'; "" when none */
    const char *body;   /* NUL-terminated; "" when none */
    size_t body_len;
};

/* A handler's answer: status (default 200), content_type (default text/plain), and body:
 * a malloc'ed buffer of len bytes that the server frees (NULL for none). */
struct psi_serve_reply {
    int status;
    char content_type[96];
    char *body;
    size_t len;
};

/* A route handler; runs in the server thread with the server mutex held. */
typedef void (*psi_serve_fn)(const struct psi_serve_request *req, struct psi_serve_reply *reply,
                             void *ud);

struct psi_serve;

/* Parse a bind address: "127.0.0.1:8081", ":8080" (every interface), "[::1]:9000",
 * "localhost:8080" (as 127.0.0.1). host gets the address ("" for every interface), port
 * 0..65535 (0: the kernel picks one). Returns 0, or -1 with a message in err. */
int psi_serve_parse_bind(const char *addr, char *host, size_t hostlen, int *port, char *err,
                         size_t errlen);

/* A server for bind address addr, not yet listening. NULL with a message in err on a bad
 * address or no memory. Free with psi_serve_free. */
struct psi_serve *psi_serve_new(const char *addr, char *err, size_t errlen);

/* Route method+path (exact, or a prefix when it ends in slash-star) to fn. Before start only.
 * Returns 0 or -1 (bad arguments, started already, no memory). */
int psi_serve_route(struct psi_serve *s, const char *method, const char *path, psi_serve_fn fn,
                    void *ud);

/* Bind and start the server thread. Returns 0, or -1 with a message in err (e.g. the
 * address is in use). */
int psi_serve_start(struct psi_serve *s, char *err, size_t errlen);

/* The port listened on (after start; useful with port 0), or -1. */
int psi_serve_port(const struct psi_serve *s);

/* Take / release the mutex handlers run under. */
void psi_serve_lock(struct psi_serve *s);
void psi_serve_unlock(struct psi_serve *s);

/* Stop the thread (in-flight replies are dropped), close the socket, free (NULL is fine). */
void psi_serve_free(struct psi_serve *s);

/* Set reply to status, content type and a copy of text. Returns 0 or -1 when out of memory
 * (reply then is a 500 without body). */
int psi_serve_reply_text(struct psi_serve_reply *reply, int status, const char *content_type,
                         const char *text);

/* The value of key in a query string ("a=1&b=x%20y"), URL-decoded into buf. Returns 0, or
 * -1 when absent or too long. */
int psi_serve_query_get(const char *query, const char *key, char *buf, size_t len);

#endif
