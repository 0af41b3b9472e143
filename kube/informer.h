/* kube_informer: a local cache of one resource kept current by a kube_watch.
 *
 * The cache is keyed by "namespace/name" ("name" for cluster-scoped objects) and holds,
 * per object, its resourceVersion, uid and what the projection callback made of it (the
 * few fields the operator reads). Without a projection it keeps the object itself, as the
 * watch gave it (no copy), less metadata.managedFields: a watch event's text has them
 * removed before it is parsed (kube_jsonstrip), a LIST item still has them and they are
 * deleted from it here, so that every object kept is alike whichever way it came.
 * Handlers are told of every change exactly once:
 *  - a watch event updates the cache; an ADDED/MODIFIED whose resourceVersion equals the
 *    cached one is a duplicate and is dropped; a DELETED of an unknown key is dropped;
 *  - a (re)list is diffed against the cache: as its items arrive, new keys are adds, keys
 *    whose resourceVersion changed are updates (same uid) or a delete and an add (the
 *    object was replaced while we were away), unchanged keys emit nothing; when it
 *    completes, keys it did not contain are deletes (final_state_unknown: the last state
 *    seen is passed). A list interrupted and started again diffs the same way, so what
 *    the partial one delivered is not delivered twice;
 *  - bookmarks only move the resourceVersion.
 * "Synced" becomes true when the first list is complete, and stays true.
 * The cache logic (the kube_informer_list_* and kube_informer_event entry points) is pure
 * and can be driven without a server. Not thread-safe: use it from the loop's thread.
 * Handlers must not call kube_informer_free; lookups are fine. */
#ifndef PSI_KUBE_INFORMER_H
#define PSI_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "kube/loop.h"
#include "kube/rest.h"
#include "kube/watch.h"

/* Reduce an API object to what is kept; the result is owned by the informer (freed with
 * the free_value callback). NULL is allowed and stored as NULL (the key is still tracked).
 * obj is borrowed: the informer frees it after the call. */
typedef void *(*kube_informer_project_fn)(const cJSON *obj, void *ud);

/* The handlers; every member may be NULL. Values are the projections, borrowed for the call. */
struct kube_informer_handlers {
    void (*on_add)(const char *key, const void *obj, void *ud);
    void (*on_update)(const char *key, const void *old_obj, const void *new_obj, void *ud);
    /* obj is the final state from a DELETED event, or with final_state_unknown the last
     * state cached (the delete was found by a relist). */
    void (*on_delete)(const char *key, const void *obj, bool final_state_unknown, void *ud);
    /* A (re)list is complete and its deltas delivered. */
    void (*on_synced)(void *ud);
    /* Log lines of the informer and its watch. */
    void (*log)(enum kube_watch_level level, const char *msg, void *ud);
};

struct kube_informer_opts {
    const char *path;           /* collection, e.g. "/api/v1/nodes" (required) */
    const char *label_selector; /* may be NULL */
    const char *field_selector; /* may be NULL */
    enum kube_watch_list_mode list_mode;
    int watch_timeout_seconds;        /* 0: the watch's random 300..600 s */
    bool watch_no_bookmarks;          /* see kube_watch_opts.no_bookmarks */
    kube_informer_project_fn project; /* NULL: keep the object itself without managedFields */
    void (*free_value)(void *value);  /* frees what project returns (NULL: free()) */
    void *project_ud;
    struct kube_informer_handlers handlers;
    void *ud; /* passed to the handlers */
};

/* Counters of what the handlers were told. */
struct kube_informer_stats {
    uint64_t adds, updates, deletes;
    uint64_t relist_deletes; /* of the deletes, those found by a relist */
    uint64_t duplicates;     /* events dropped as already known */
    uint64_t lists;          /* lists completed */
};

struct kube_informer;

/* A new, empty informer (opts' strings are copied). NULL with err on failure; free with
 * kube_informer_free. */
struct kube_informer *kube_informer_new(const struct kube_informer_opts *opts, struct kube_err *err);

/* Free the informer, its watch and cached values (NULL is fine). */
void kube_informer_free(struct kube_informer *inf);

/* Start watching through loop and client (both borrowed; they must outlive the informer).
 * Returns 0 or -1 with err. */
int kube_informer_start(struct kube_informer *inf, struct kube_loop *loop, struct kube_client *client,
                        struct kube_err *err);

/* Whether the first list has completed. */
bool kube_informer_synced(const struct kube_informer *inf);

/* The cached value of ns/name (ns NULL or "" for cluster-scoped), or NULL (absent, or a
 * NULL projection: see kube_informer_has). Borrowed until the next change. */
const void *kube_informer_get(const struct kube_informer *inf, const char *ns, const char *name);

/* The cached value of key ("ns/name" or "name"), or NULL; borrowed until the next change. */
const void *kube_informer_get_key(const struct kube_informer *inf, const char *key);

/* Whether key ("ns/name" or "name") is cached. */
bool kube_informer_has(const struct kube_informer *inf, const char *key);

/* The cached resourceVersion of key, or NULL. */
const char *kube_informer_rv_of(const struct kube_informer *inf, const char *key);

/* Number of cached objects. */
size_t kube_informer_len(const struct kube_informer *inf);

/* Call fn for every cached object (unspecified order) until it returns non-zero (which is
 * then returned; 0 otherwise). fn must not change the informer. */
int kube_informer_foreach(const struct kube_informer *inf,
                          int (*fn)(const char *key, const char *rv, const void *obj, void *ud), void *ud);

/* The last resourceVersion seen (list, event or bookmark), "" before any. */
const char *kube_informer_rv(const struct kube_informer *inf);

/* The counters so far. */
struct kube_informer_stats kube_informer_stats(const struct kube_informer *inf);

/* The watch's counters (zero before start). */
struct kube_watch_stats kube_informer_watch_stats(const struct kube_informer *inf);

/* ---- the cache logic, as the watch drives it (and tests do) ---- */

/* A (re)list starts: the items that follow until list_end are the complete state. */
void kube_informer_list_begin(struct kube_informer *inf);

/* One object of the list in progress; takes obj (kept as the value without a projection,
 * else freed). */
void kube_informer_list_item(struct kube_informer *inf, cJSON *obj);

/* The list is complete at rv: delete what it did not contain, mark synced. */
void kube_informer_list_end(struct kube_informer *inf, const char *rv);

/* A watch event; takes obj as kube_informer_list_item does. The informer's resourceVersion
 * moves to the object's before the handlers are called. */
void kube_informer_event(struct kube_informer *inf, enum kube_watch_type type, cJSON *obj);

#endif
