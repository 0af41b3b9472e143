/* kube_multiget: many GETs (or other requests) at once against the API server (libcurl multi).
 *
 * The transfers run on the client's multi handle (kube_client_multi), which keeps its
 * connection from one call to the next; HTTP/2 is asked for and the transfers wait for
 * the connection to say whether it multiplexes (CURLOPT_PIPEWAIT), so against the API
 * server every request is a stream of one TLS connection. At most max_in_flight run at
 * once; each has its own timeout, so one slow reply costs its own request, not the
 * others. Replies are parsed and errors decoded as kube_rest_request does (metav1.Status,
 * "Decode", "Transport"); a timeout is reason "Timeout" with status 0. Every reply passes
 * through the client's observer. A request other than a GET is a write: it waits for a token
 * of the client's write budget before it starts, so writes go at the budget's pace, up to
 * max_in_flight at once; with min_in_flight, fewer: as many as keep that pace at the time the
 * writes take (kube_ratelimit_in_flight), at least min_in_flight. Not thread-safe (the client
 * is not). */
#ifndef PSI_KUBE_MULTIGET_H
#define PSI_KUBE_MULTIGET_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/err.h"

struct kube_client;

/* Defaults of struct kube_multiget_opts. */
#define KUBE_MULTIGET_IN_FLIGHT 64
#define KUBE_MULTIGET_TIMEOUT_MS 30000L
#define KUBE_MULTIGET_MAX_REPLY (16L * 1024 * 1024)

/* Options; a 0 field takes its default. */
struct kube_multiget_opts {
    size_t max_in_flight; /* requests running at once */
    long timeout_ms;      /* per request, from its start */
    long max_reply;       /* bytes of one reply; a larger one fails that request */
    size_t min_in_flight; /* 0: max_in_flight always; else the fewest at once, more as writes' time asks */
};

/* Called once per path as its request ends: index i into paths, obj the parsed reply
 * (borrowed for the call) or NULL with err saying why. */
typedef void (*kube_multiget_fn)(size_t i, const cJSON *obj, const struct kube_err *err, void *ud);

/* GET paths[0..n) (API paths, as kube_rest_get takes), calling fn for each. Returns 0 once
 * every request has ended (failed ones included), or -1 with err when the transfers could
 * not run at all (out of memory, a libcurl multi failure); fn may have been called for some. */
int kube_multiget(struct kube_client *c, const char *const *paths, size_t n, const struct kube_multiget_opts *opts,
                  kube_multiget_fn fn, void *ud, struct kube_err *err);

/* One request of kube_multirequest: method ("GET", "PATCH", ...), API path, and the body's
 * Content-Type and text (both NULL: no body). All borrowed for the call. */
struct kube_multi_req {
    const char *method;
    const char *path;
    const char *content_type;
    const char *body;
};

/* As kube_multiget, for reqs[0..n); fn's i indexes reqs. */
int kube_multirequest(struct kube_client *c, const struct kube_multi_req *reqs, size_t n,
                      const struct kube_multiget_opts *opts, kube_multiget_fn fn, void *ud, struct kube_err *err);

#endif
