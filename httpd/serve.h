/* psi_serve: the project's HTTP server: the operator's endpoints (/healthz, /readyz,
 * /metrics) and the simulator's (its webhook, kubelets and exporters). HTTP/1.1 over plain TCP
 * or TLS (psi_tls), served by a thread of its own with poll(2).
 *
 * A server listens on its bind address, or nowhere (an address of NULL): then it serves only
 * the connections handed to it with psi_serve_adopt, each with a TLS context and a value of
 * its own that its handlers see (the simulator's kubelets: one server for every node, each
 * node's connection arriving through a CONNECT tunnel and speaking TLS with that node's
 * certificate).
 *
 * Threading (decided here): the server runs in a dedicated thread, not in the operator's
 * loop. kube_loop (libcurl multi + timers) has no hook to add foreign file descriptors,
 * and a separate thread keeps probes answering even while the loop is inside a blocking
 * REST call. The price is that handlers run in the server thread: every handler is called
 * with the server's mutex held, and the operator publishes what handlers read (readiness
 * flags, a snapshot) under the same mutex with psi_serve_lock/psi_serve_unlock, holding
 * it only briefly. psi_metrics has its own mutex, so a /metrics handler can render the
 * registry while the loop updates it.
 *
 * Routes are registered before psi_serve_start: an exact path ("/healthz") or a prefix
 * (a path whose last two characters are a slash and a star: every path below it), for
 * one method. A GET route also answers HEAD (without the body). Only PUT, POST and PATCH
 * routes take a request body, passed to the handler whole.
 *
 * Hostile clients (decided here): a request is judged on its head alone, before any of
 * its body is read: an unknown path gets 404, a known path with another method 405, a
 * body sent to a route that takes none or one above the body limit 413, a chunked body
 * 411; each of those closes the connection once the status line is out, reading and
 * dropping what the client still sends for a moment so that it sees the answer. A head
 * that does not fit the head limit gets 414 (the request line alone) or 431, a malformed
 * one 400. The head must arrive within the head timeout (a TLS handshake included), a
 * body within the body timeout, a reply be taken within the write timeout, and a
 * kept-alive connection send its next request within the idle timeout; otherwise it is
 * closed (408 when a request had begun). The write timeout runs from the last time the
 * client took bytes of a reply, not from the reply: a client that pipelines requests and
 * never reads gains no time by them. A connection answers at most max_pipelined requests
 * in a row that it had already received when the one before them was answered; the last
 * of them goes out with "Connection: close".
 *
 * A handler that cannot answer at once (it waits for another thread, e.g. a token review)
 * sets reply->status to PSI_SERVE_LATER: the request is parked (nothing more is read from
 * its connection) until some thread calls psi_serve_resume with the request's ticket, and
 * the server then runs the handler again for the same request (same ticket), in its own
 * thread as before. A request still parked after later_timeout_ms gets 503 and the
 * connection is closed; a parked connection counts as stalled since its last read, so
 * it can be evicted like any other.
 *
 * Probes cannot be starved (decided here: a reserved share rather than a listener of
 * their own): at most max_connections are open, and one more always gets a slot, by
 * closing the open connection, in any state (a reply being written included), that has
 * gone longest without progress (bytes read from it or taken by it). So every slot held
 * by a stalled client is in reserve for a new one, and a probe, which sends its request
 * at once and reads its answer, is served before max_connections newer clients come. A
 * listener of its own would not help: the kubelet probes from the node's address, which
 * any pod can reach as well, and the Deployment and Service would need a second port.
 * Request bodies and handlers' replies held at once
 * count against one memory budget: a body that does not fit is refused with 503, and
 * while the budget is spent no handler runs (503). Memory is thus bounded by about
 * max_connections * (max_head + a TLS connection's buffers) + the budget; an idle
 * kept-alive connection holds no head buffer. Out of file descriptors, the server closes
 * the connection that has waited longest, or pauses accepting for 100 ms. */
#ifndef PSI_HTTPD_SERVE_H
#define PSI_HTTPD_SERVE_H

#include <stddef.h>

/* A request as a handler sees it (all borrowed for the call). */
struct psi_serve_request {
    const char *method; /* "GET", "HEAD", "PUT", "POST", "DELETE", "PATCH" */
    const char *path;   /* URL-decoded path, without the query */
    const char *query;  /* the query after '?', still percent-encoded; "" when none */
    const char *bearer; /* the token of an "Authorization: Bearer" header; "" when none */
    const char *body;   /* NUL-terminated; "" when none */
    size_t body_len;
    unsigned long long ticket; /* this request's number (never 0, unique in the server):
                                * what psi_serve_resume takes; the same when the handler
                                * runs again for the request */
    void *conn_ud;             /* what psi_serve_adopt gave the connection; NULL for one the
                                * server accepted */
};

/* A handler's status meaning "no answer yet; run me again after psi_serve_resume". */
#define PSI_SERVE_LATER 1

/* A handler's answer: status (default 200), content_type (default text/plain), and body:
 * a malloc'ed buffer of len bytes that the server frees (NULL for none). A 401 goes out
 * with "WWW-Authenticate: Bearer" (the only scheme the project's endpoints take). */
struct psi_serve_reply {
    int status;
    char content_type[96];
    char *body;
    size_t len;
};

/* A route handler; runs in the server thread with the server mutex held. */
typedef void (*psi_serve_fn)(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud);

struct psi_serve;

/* Parse a bind address: "127.0.0.1:8081", ":8080" (every interface), "[::1]:9000",
 * "localhost:8080" (as 127.0.0.1). host gets the address ("" for every interface), port
 * 0..65535 (0: the kernel picks one). Returns 0, or -1 with a message in err. */
int psi_serve_parse_bind(const char *addr, char *host, size_t hostlen, int *port, char *err, size_t errlen);

/* Limits of a server; psi_serve_new sets the defaults given with each field. */
struct psi_serve_limits {
    size_t max_connections; /* 256 */
    size_t max_head;        /* request line and header fields, bytes: 8192 */
    size_t max_body;        /* one request body, bytes: 1 MiB */
    size_t budget;          /* bodies and replies held at once, bytes: 8 MiB */
    int head_timeout_ms;    /* 10000 */
    int body_timeout_ms;    /* 30000 */
    int write_timeout_ms;   /* 30000 */
    int idle_timeout_ms;    /* 60000 */
    size_t max_pipelined;   /* requests in a row already received when the one before was
                             * answered: 16 */
    int later_timeout_ms;   /* how long a request may stay parked (PSI_SERVE_LATER): 10000 */
};

/* A server for bind address addr (NULL: it listens nowhere and serves what psi_serve_adopt
 * hands it), not yet listening. NULL with a message in err on a bad address or no memory.
 * Free with psi_serve_free. */
struct psi_serve *psi_serve_new(const char *addr, char *err, size_t errlen);

/* Replace the limits (before start; a zero field keeps its current value). Returns 0 or -1. */
int psi_serve_set_limits(struct psi_serve *s, const struct psi_serve_limits *limits);

struct psi_tls;

/* Serve HTTPS with tls (borrowed: it must outlive the server; before start). Returns 0 or -1. */
int psi_serve_set_tls(struct psi_serve *s, struct psi_tls *tls);

/* Route method+path (exact, or a prefix when it ends in slash-star) to fn. Before start only.
 * Returns 0 or -1 (bad arguments, started already, no memory). */
int psi_serve_route(struct psi_serve *s, const char *method, const char *path, psi_serve_fn fn, void *ud);

/* Bind and start the server thread. Returns 0, or -1 with a message in err (e.g. the
 * address is in use). */
int psi_serve_start(struct psi_serve *s, char *err, size_t errlen);

/* Serve the connected socket fd as if accepted, over tls (borrowed: it must outlive the
 * server; NULL: the server's own, or plain TCP without one), its handlers seeing conn_ud as
 * req->conn_ud. From any thread once started; fd is the server's from then on (closed on
 * failure too). Returns 0, or -1 (not started, no memory). */
int psi_serve_adopt(struct psi_serve *s, int fd, struct psi_tls *tls, void *conn_ud);

/* The port listened on (after start; useful with port 0), or -1 (none). */
int psi_serve_port(const struct psi_serve *s);

/* Take / release the mutex handlers run under. */
void psi_serve_lock(struct psi_serve *s);
void psi_serve_unlock(struct psi_serve *s);

/* Have the handler of the parked request with this ticket run again, soon, in the server
 * thread. From any thread, without the server mutex held; a ticket no longer parked (its
 * request answered, timed out or its connection closed) is ignored. Returns 0, or -1 when
 * out of memory (the request then times out). */
int psi_serve_resume(struct psi_serve *s, unsigned long long ticket);

/* Stop the thread (in-flight replies are dropped), close every socket, free (NULL is fine). */
void psi_serve_free(struct psi_serve *s);

/* Set reply to status, content type and a copy of text. Returns 0 or -1 when out of memory
 * (reply then is a 500 without body). */
int psi_serve_reply_text(struct psi_serve_reply *reply, int status, const char *content_type, const char *text);

#endif
