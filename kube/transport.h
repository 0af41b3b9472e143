/* kube_transport: where a blocking REST request of kube_client leaves the process.
 *
 * kube_rest_request builds a request (method, URL, content type, body) and hands it to the
 * client's transport, which answers with the HTTP status and the reply body; everything
 * around it (the write limiter, the observer, decoding a metav1.Status, parsing the reply)
 * stays in rest.c and runs the same whatever the transport. The default transport is
 * libcurl (the client's easy handle, TLS and credentials from kube_config_prepare). A unit
 * test sets its own to answer from replies recorded from a real API server
 * (tests/record/record_replies.py), with no network at all.
 *
 * What the seam does not cover: the watch streams (kube_watch, on the loop's multi handle)
 * and kube_multiget / kube_multirequest (the client's multi handle) send through libcurl
 * directly. */
#ifndef PSI_KUBE_TRANSPORT_H
#define PSI_KUBE_TRANSPORT_H

#include <stddef.h>

#include "base/err.h"

struct kube_client;
struct kube_rest_reply;

/* One request; every pointer is borrowed for the call. */
struct kube_transport_request {
    const char *method;       /* "GET", "POST", "PUT", "PATCH", "DELETE" */
    const char *url;          /* the server's base URL and the API path with its query */
    const char *path;         /* the API path with its query, as given to kube_rest_request */
    const char *content_type; /* the body's Content-Type, or NULL */
    const char *body;         /* the body text, or NULL */
    long timeout_ms;          /* the whole request's timeout (0: none) */
};

/* What send returns besides 0 (a reply came). */
#define KUBE_TRANSPORT_NO_REPLY (-1) /* sent, and no reply came (the observer hears status 0) */
#define KUBE_TRANSPORT_NOT_SENT (-2) /* the request could not be made (credentials, setup) */

/* A transport. send answers req: 0 with *status the HTTP status and the body appended to
 * reply (through kube_rest_reply_write, so its cap holds: too_big set past it), or
 * KUBE_TRANSPORT_NO_REPLY / KUBE_TRANSPORT_NOT_SENT with err (status 0, reason
 * "Transport" or the config's). ud is the transport's own. */
struct kube_transport {
    int (*send)(void *ud, const struct kube_transport_request *req, long *status, struct kube_rest_reply *reply,
                struct kube_err *err);
    void *ud;
};

/* Send c's blocking requests through t (copied; NULL: libcurl again). */
void kube_client_set_transport(struct kube_client *c, const struct kube_transport *t);

/* A new client over c's config (borrowed, as kube_client_new), with the defaults' timeout and
 * write limiter, sending through c's transport when one was set, else through a libcurl
 * handle of its own. NULL with err on failure. */
struct kube_client *kube_client_new_sibling(struct kube_client *c, struct kube_err *err);

#endif
