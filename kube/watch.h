/* kube_watch: one resilient watch on a collection (a client-go reflector in small).
 *
 * It first obtains the complete state, then follows changes:
 *  - initial list: a streaming list (watch with sendInitialEvents=true and
 *    resourceVersionMatch=NotOlderThan; the state arrives as ADDED events closed by a
 *    BOOKMARK annotated k8s.io/initial-events-end) where the server supports it, else a
 *    paginated LIST (kube_rest_list) and a WATCH from the list's resourceVersion. A
 *    server that refuses the streaming list (4xx, or an ERROR event before the first
 *    item) or ignores it (no initial-events-end bookmark: the data stalls 30 s before it,
 *    or the stream ends without it) is remembered and listed the classic way from then on;
 *  - watch: ?watch=1&allowWatchBookmarks=true&resourceVersion=<last>&timeoutSeconds=<random
 *    300..600>, plus the label and field selectors; every event's object moves the
 *    resourceVersion the next stream resumes from (bookmarks too);
 *  - an ERROR event or HTTP reply with code 410 (reason Gone or Expired: the version was
 *    compacted away) starts a relist;
 *  - a normal end of stream (the server's timeout) reconnects at once from the last
 *    resourceVersion; connection errors, 429, 5xx and other failures reconnect after a
 *    jittered exponential backoff (kube_backoff; Retry-After is honoured), from the last
 *    resourceVersion (or with a relist when the failure interrupted a list).
 * It runs in a kube_loop; its handler is called from the loop, never from inside libcurl,
 * and may make blocking REST calls. The stream itself is an easy handle of the loop's
 * multi (HTTP/2 multiplexed with other watches where possible); the LIST uses the
 * kube_client's own handle. */
#ifndef PSI_KUBE_WATCH_H
#define PSI_KUBE_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "kube/loop.h"
#include "kube/rest.h"

/* The annotation of the bookmark that closes a streaming initial list. */
#define KUBE_WATCH_INITIAL_EVENTS_END "k8s.io/initial-events-end"

enum kube_watch_type {
    KUBE_WATCH_ADDED,
    KUBE_WATCH_MODIFIED,
    KUBE_WATCH_DELETED,
    KUBE_WATCH_BOOKMARK,
};

/* How the complete state is obtained. */
enum kube_watch_list_mode {
    KUBE_WATCH_LIST_AUTO,   /* streaming list, falling back to LIST when refused */
    KUBE_WATCH_LIST_STREAM, /* streaming list only (a refusal is retried with backoff) */
    KUBE_WATCH_LIST_PAGED,  /* LIST (paginated) then WATCH */
};

enum kube_watch_level { KUBE_WATCH_DEBUG, KUBE_WATCH_INFO, KUBE_WATCH_WARN, KUBE_WATCH_ERROR };

/* What the watch reports. Every member may be NULL. The obj given to list_item and event is
 * the handler's: detached from the event or list it came in (so it can be kept as it is,
 * without a copy), to keep or cJSON_Delete. An event's text has had its
 * metadata.managedFields removed before parsing (kube_jsonstrip); a LIST item's has not. */
struct kube_watch_handler {
    /* A (re)list starts: the items until list_end are the complete state. A list may be
     * interrupted and started again: list_begin then comes again without list_end. */
    void (*list_begin)(void *ud);
    void (*list_item)(cJSON *obj, void *ud);
    /* The list is complete, consistent at resourceVersion rv. */
    void (*list_end)(const char *rv, void *ud);
    /* A change after the list (ADDED, MODIFIED, DELETED) or a BOOKMARK (obj carries only
     * kind, apiVersion and metadata.resourceVersion). */
    void (*event)(enum kube_watch_type type, cJSON *obj, void *ud);
    /* A log line, "msg key=value ..." (e.g. "watch relisting path=/api/v1/nodes reason=Expired"). */
    void (*log)(enum kube_watch_level level, const char *msg, void *ud);
};

struct kube_watch_opts {
    const char *path;           /* collection path, e.g. "/api/v1/nodes" (required) */
    const char *label_selector; /* may be NULL */
    const char *field_selector; /* may be NULL */
    enum kube_watch_list_mode list_mode;
    long page_size;      /* LIST limit= (0: 500) */
    int timeout_seconds; /* server-side timeoutSeconds (0: random 300..600) */
    bool no_bookmarks;   /* leave out allowWatchBookmarks (a server then sends no
                          * bookmark, as one that ignores sendInitialEvents does:
                          * tests use it to reach the fallback to LIST) */
};

/* Counters, for logs, metrics and tests. */
struct kube_watch_stats {
    uint64_t lists;          /* complete lists (paged or streamed) delivered */
    uint64_t streamed_lists; /* of which streaming lists */
    uint64_t streams;        /* watch streams opened (200 received) */
    uint64_t events;         /* ADDED/MODIFIED/DELETED delivered after a list */
    uint64_t bookmarks;
    uint64_t expired;       /* 410 Gone/Expired seen (each leads to a relist) */
    uint64_t failures;      /* transport errors and error replies (each backs off) */
    bool streaming_refused; /* the server refused a streaming list; LIST is used */
};

struct kube_watch;

/* A new, idle watch over client's API server. loop and client are borrowed and must
 * outlive the watch; opts' strings are copied; ud is passed to the handler. NULL with err
 * on failure. Free with kube_watch_free. */
struct kube_watch *kube_watch_new(struct kube_loop *loop, struct kube_client *client,
                                  const struct kube_watch_opts *opts, const struct kube_watch_handler *handler,
                                  void *ud, struct kube_err *err);

/* Start: the list happens at the loop's next turn. Returns 0 or -1 with err. */
int kube_watch_start(struct kube_watch *w, struct kube_err *err);

/* Stop: end the stream and cancel pending work (the handler is not called again until a
 * new kube_watch_start, which relists). Not from inside this watch's own handler. */
void kube_watch_stop(struct kube_watch *w);

/* Stop and free (NULL is fine). Not from inside this watch's own handler. */
void kube_watch_free(struct kube_watch *w);

/* The resourceVersion the next stream resumes from ("" before the first list); owned by w. */
const char *kube_watch_rv(const struct kube_watch *w);

/* The counters so far. */
struct kube_watch_stats kube_watch_stats(const struct kube_watch *w);

/* Parse a watch event's "type" ("ADDED", ...); returns 0, or -1 for ERROR and unknown types. */
int kube_watch_type_parse(const char *s, enum kube_watch_type *out);

/* The name of a type ("ADDED", ...). */
const char *kube_watch_type_name(enum kube_watch_type type);

/* One watch event as the watch acts on it; pointers borrow from the decoded JSON. */
struct kube_watch_event {
    bool error;                /* an ERROR event: code, reason and message of its Status */
    enum kube_watch_type type; /* the type of any other event */
    const cJSON *object;       /* the event's object (a JSON object unless error) */
    long code;                 /* ERROR: the Status code, an HTTP status; 0 when absent or not one */
    const char *reason;        /* ERROR: Status reason, or NULL */
    const char *message;       /* ERROR: Status message, or NULL */
};

/* Decode one watch event (pure). Returns 0 with out filled, or -1 when the event is no
 * JSON object, has no known "type" or (other than ERROR) no object, with why (whylen
 * bytes) naming what is wrong. */
int kube_watch_event_decode(const cJSON *ev, struct kube_watch_event *out, char *why, size_t whylen);

#endif
