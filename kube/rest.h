/* kube_rest: blocking REST verbs against the API server (libcurl easy, one handle reused).
 *
 * Paths are API paths without the server ("/api/v1/nodes",
 * "/apis/coordination.k8s.io/v1/namespaces/x/leases/y"); build them with kube_path so
 * names are escaped. The status subresource is the path with "/status" appended
 * (kube_path's subresource argument). Replies are parsed cJSON the caller frees with
 * cJSON_Delete. Errors: an API error is decoded from metav1.Status into err (status =
 * HTTP code, reason = Status.reason, e.g. "NotFound", "Conflict", "TooManyRequests",
 * msg = Status.message); a reply that is not JSON gives reason "Decode" naming the URL;
 * a connection failure gives status 0, reason "Transport", and so does a reply larger than
 * 32 MiB (twice a page of 500 large Nodes: see rest.c).
 * Writes (create/update/patch/delete/evict) wait in a client-side token bucket (QPS/burst,
 * default 5/10 like client-go). A client is not thread-safe. */
#ifndef PSI_KUBE_REST_H
#define PSI_KUBE_REST_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/config.h"
#include "base/err.h"

struct kube_client;

/* Patch flavours (the Content-Type of the PATCH). */
enum kube_patch_type {
    KUBE_PATCH_MERGE,     /* application/merge-patch+json */
    KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
    KUBE_PATCH_JSON,      /* application/json-patch+json (body is an array of operations) */
    KUBE_PATCH_APPLY,     /* application/apply-patch+yaml (server-side apply; JSON is YAML) */
};

/* Options of list; every field may be 0/NULL. */
struct kube_list_opts {
    const char *label_selector;   /* labelSelector */
    const char *field_selector;   /* fieldSelector */
    long limit;                   /* page size (limit=); 0: no paging */
    const char *resource_version; /* resourceVersion (e.g. "0" to read from the watch cache) */
};

/* Options of writes; every field may be 0/NULL. */
struct kube_write_opts {
    const char *field_manager; /* fieldManager (required by KUBE_PATCH_APPLY: default "psi-rebalancer") */
    int force;                 /* force=true (apply only) */
    int dry_run;               /* dryRun=All */
    int discard_reply;         /* the caller reads nothing of the stored object: success gives an
                                  empty object, the reply is not parsed (a large object's reply
                                  costs as much memory again as the object) */
};

/* New client over cfg (borrowed: it must outlive the client); NULL with err on failure. */
struct kube_client *kube_client_new(struct kube_config *cfg, struct kube_err *err);

/* Free a client (NULL is fine). */
void kube_client_free(struct kube_client *c);

/* Called after every request with its method and HTTP status (0: no reply, a transport
 * failure); for metrics. */
typedef void (*kube_rest_observer_fn)(const char *method, long status, void *ud);

/* Set (or clear with NULL) the request observer. */
void kube_client_set_observer(struct kube_client *c, kube_rest_observer_fn fn, void *ud);

/* The config the client was made with. */
struct kube_config *kube_client_config(struct kube_client *c);

/* The client's multi handle, made on first use and freed with the client, for concurrent
 * requests (kube_multiget); NULL when out of memory. */
CURLM *kube_client_multi(struct kube_client *c);

/* Take a token of the write budget (kube_client_set_rate_limit) for a write made outside
 * kube_rest_request; returns how many ms to wait before sending it (0: now). */
int64_t kube_client_reserve_write(struct kube_client *c);

/* Tell the observer about a request made outside kube_rest_request (method, HTTP status, 0
 * for a transport failure). */
void kube_client_observe(struct kube_client *c, const char *method, long status);

/* Set the write limiter: qps tokens per second, burst bucket size (qps <= 0: unlimited). */
void kube_client_set_rate_limit(struct kube_client *c, double qps, int burst);

/* The write limiter's tokens per second (<= 0: unlimited). */
double kube_client_write_qps(const struct kube_client *c);

/* Set the per-request timeout in milliseconds (default 30000; 0: none). */
void kube_client_set_timeout(struct kube_client *c, long timeout_ms);

/* GET path. Returns the object (caller frees) or NULL with err. */
cJSON *kube_rest_get(struct kube_client *c, const char *path, struct kube_err *err);

/* LIST path with opts (may be NULL), following `continue` until the last page. Returns the
 * list object (caller frees): kind, apiVersion, metadata.resourceVersion of the list,
 * and "items" holding the items of all pages (metadata.continue removed). When a continue
 * token expired (410) it pages once more from the start (client-go's pager lists in one
 * piece instead, a reply that may pass the reply cap on a large cluster). A continue token
 * that repeats, or more than KUBE_REST_LIST_MAX_PAGES pages, is an error ("Decode"). */
cJSON *kube_rest_list(struct kube_client *c, const char *path, const struct kube_list_opts *opts, struct kube_err *err);

/* Most pages kube_rest_list reads for one list (500 items each by default: 5 million
 * items), so that a server handing out continue tokens for ever ends in an error. */
#define KUBE_REST_LIST_MAX_PAGES 10000

/* Whether kube_rest_list may ask for the page after `pages` pages with continue token next
 * when the page before gave prev (NULL on the first page): 0, or -1 with why (whylen
 * bytes) when next repeats prev (a server that would page for ever) or pages reached
 * KUBE_REST_LIST_MAX_PAGES. Pure. */
int kube_rest_list_check_continue(const char *prev, const char *next, long pages, char *why, size_t whylen);

/* The list's metadata.resourceVersion, or NULL; points into list. */
const char *kube_rest_list_rv(const cJSON *list);

/* POST body to path (a collection). Returns the created object (caller frees) or NULL. */
cJSON *kube_rest_create(struct kube_client *c, const char *path, const cJSON *body, const struct kube_write_opts *opts,
                        struct kube_err *err);

/* PUT body to path (carry metadata.resourceVersion for optimistic concurrency: 409 Conflict
 * when stale). Returns the stored object (caller frees) or NULL. */
cJSON *kube_rest_update(struct kube_client *c, const char *path, const cJSON *body, const struct kube_write_opts *opts,
                        struct kube_err *err);

/* PATCH path with body of the given type. Returns the patched object (caller frees) or NULL. */
cJSON *kube_rest_patch(struct kube_client *c, const char *path, enum kube_patch_type type, const cJSON *body,
                       const struct kube_write_opts *opts, struct kube_err *err);

/* DELETE path with optional DeleteOptions body (may be NULL). Returns the reply (the object
 * or a Status; caller frees) or NULL. */
cJSON *kube_rest_delete(struct kube_client *c, const char *path, const cJSON *delete_options,
                        const struct kube_write_opts *opts, struct kube_err *err);

/* The policy/v1 Eviction of pod ns/pod that kube_rest_evict sends (caller frees; NULL on no
 * memory): requested_by, may be NULL, is its metadata.annotations["requested-by"]; dry_run
 * adds deleteOptions.dryRun [All]. */
cJSON *kube_eviction_body(const char *ns, const char *pod, int dry_run, const char *requested_by);

/* Evict pod ns/pod through policy/v1 Eviction (dry_run: dryRun=All, in the request and in its
 * deleteOptions; requested_by, may be NULL: the Eviction's "requested-by" annotation, who asks,
 * as the descheduler says it). Returns 0 when the API accepted it; -1 with err otherwise: a
 * PodDisruptionBudget refusal or KubeVirt's live-migration answer is status 429 (reason
 * "TooManyRequests", message from the server), no answer status 0. */
int kube_rest_evict(struct kube_client *c, const char *ns, const char *pod, int dry_run, const char *requested_by,
                    struct kube_err *err);

/* kube_rest_request flags. */
#define KUBE_REQUEST_WRITE 1u         /* pass through the write limiter */
#define KUBE_REQUEST_DISCARD_REPLY 2u /* a 2xx reply gives an empty object, unparsed */

/* Any request: method, path (with query), content type and body text (both may be NULL).
 * Returns the parsed reply (caller frees; a 2xx reply with an empty body gives an empty
 * object) or NULL with err. flags: KUBE_REQUEST_*. */
cJSON *kube_rest_request(struct kube_client *c, const char *method, const char *path, const char *content_type,
                         const char *body, unsigned flags, struct kube_err *err);

/* Decode an error reply into err: body (may be NULL/not JSON) a metav1.Status, status the
 * HTTP code, url names the request. Always returns -1. */
int kube_rest_decode_status(const char *body, size_t len, long status, const char *method, const char *url,
                            struct kube_err *err);

/* A reply body gathered by kube_rest_reply_write: zero-initialise it and set max (bytes, the
 * NUL included); data holds len bytes and a NUL and is the caller's to free; too_big is set
 * when the body would pass max. */
struct kube_rest_reply {
    char *data;
    size_t len, cap;
    size_t max;
    int too_big;
};

/* libcurl write callback (CURLOPT_WRITEFUNCTION) appending to the struct kube_rest_reply
 * given as CURLOPT_WRITEDATA; stops the transfer (returns 0) past max or out of memory. */
size_t kube_rest_reply_write(char *ptr, size_t size, size_t nmemb, void *ud);

/* Percent-encode s for a path segment or query value (everything but unreserved
 * A-Z a-z 0-9 - . _ ~ is escaped). Returns a string the caller frees, NULL on ENOMEM. */
char *kube_url_escape(const char *s);

/* Build an API path: group_version "v1" gives /api/v1, "apps/v1" gives /apis/apps/v1;
 * then /namespaces/<ns> when ns is non-NULL and non-empty; then /<resource>, /<name>,
 * /<subresource> when each is non-NULL. ns, name are escaped. Caller frees; NULL on ENOMEM. */
char *kube_path(const char *group_version, const char *ns, const char *resource, const char *name,
                const char *subresource);

/* Append query parameters to path: pairs is a NULL-terminated list of key, value; a pair
 * with a NULL value is skipped. Values are escaped. Caller frees; NULL on ENOMEM. */
char *kube_path_query(const char *path, const char *const *pairs);

#endif
