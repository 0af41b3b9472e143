/* kube_events: an events.k8s.io/v1 Event recorder that aggregates repeats.
 *
 * The same (regarding object, type, reason, action, note) seen again within the window
 * (default 6 min, as client-go's series) does not create a new Event: the first occurrence
 * creates one, repeats update its `series` (count, lastObservedTime) with a merge patch, at
 * most once per patch interval per Event (default 10 s); repeats in between are counted and
 * sent by kube_events_flush. So a flapping condition costs one create and a bounded trickle
 * of patches, whatever its rate. The bookkeeping (kube_event_agg_*) is pure. */
#ifndef PSI_KUBE_EVENTS_H
#define PSI_KUBE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/rest.h"

#define KUBE_EVENTS_DEFAULT_WINDOW_MS (6 * 60 * 1000)
#define KUBE_EVENTS_DEFAULT_PATCH_INTERVAL_MS 10000
#define KUBE_EVENTS_DEFAULT_MAX_SERIES 4096

/* ---- pure aggregation ---- */

/* One aggregated series: an Event and how often it happened. */
struct kube_event_series {
    char *key;      /* identity of the occurrence (see kube_event_key) */
    char *event_ns; /* the Event object, once created (NULL before) */
    char *event_name;
    int count;            /* occurrences in this series */
    int sent_count;       /* count the API has (1 after create) */
    int64_t first_ms;     /* first occurrence */
    int64_t last_ms;      /* last occurrence */
    int64_t last_sent_ms; /* last create/patch */
};

struct kube_event_agg;

/* What to do with an occurrence. */
enum kube_event_action {
    KUBE_EVENT_CREATE, /* new series: create an Event, then call kube_event_agg_created */
    KUBE_EVENT_PATCH,  /* repeat: patch series {count, lastObservedTime}, then kube_event_agg_sent */
    KUBE_EVENT_DEFER,  /* repeat counted; a later kube_event_agg_due sends it */
};

/* New aggregator (0 arguments take the defaults; a negative patch interval patches every
 * repeat at once). NULL on ENOMEM. Free with kube_event_agg_free. */
struct kube_event_agg *kube_event_agg_new(int64_t window_ms, int64_t patch_interval_ms, size_t max_series);

/* Free an aggregator and its series (NULL is fine). */
void kube_event_agg_free(struct kube_event_agg *a);

struct kube_event_ref;
struct kube_event_occurrence;

/* Build the aggregation key of an occurrence on regarding; caller frees. NULL on ENOMEM. */
char *kube_event_key(const struct kube_event_ref *regarding, const struct kube_event_occurrence *what);

/* Count an occurrence of key at now_ms; *series gets its series (owned by a; valid until the
 * next observe/due/free). Returns what to send. NULL series on ENOMEM (action CREATE). */
enum kube_event_action kube_event_agg_observe(struct kube_event_agg *a, const char *key, int64_t now_ms,
                                              struct kube_event_series **series);

/* The Event of s was created as ns/name at now_ms (0 on success, -1 on ENOMEM). */
int kube_event_agg_created(struct kube_event_series *s, const char *ns, const char *name, int64_t now_ms);

/* Sending s failed: forget it so the next occurrence creates a new Event. */
void kube_event_agg_drop(struct kube_event_agg *a, struct kube_event_series *s);

/* A patch with count sent_count was stored at now_ms. */
void kube_event_agg_sent(struct kube_event_series *s, int sent_count, int64_t now_ms);

/* The next series with unsent repeats whose patch is due at now_ms (force: ignore the
 * interval), or NULL; *next_due_ms (may be NULL) gets when the earliest pending one is due
 * (INT64_MAX if none). Also forgets series quiet for longer than the window. */
struct kube_event_series *kube_event_agg_due(struct kube_event_agg *a, int64_t now_ms, int force, int64_t *next_due_ms);

/* Number of live series. */
size_t kube_event_agg_size(const struct kube_event_agg *a);

/* ---- recorder (edge) ---- */

/* The object an Event is about (regarding). ns NULL/"" for cluster-scoped objects. */
struct kube_event_ref {
    const char *api_version;
    const char *kind;
    const char *ns;
    const char *name;
    const char *uid; /* may be NULL */
};

/* What happened to it: type is "Normal" or "Warning", reason and action 1..128 bytes. */
struct kube_event_occurrence {
    const char *type;
    const char *reason;
    const char *action;
    const char *note; /* may be NULL (truncated to 1 kB) */
};

struct kube_events;

/* New recorder writing through c (borrowed). controller is reportingController (e.g.
 * "rebalance.psi.dev/psi-rebalancer"), instance is reportingInstance (e.g. the pod name).
 * NULL with err on bad arguments. */
struct kube_events *kube_events_new(struct kube_client *c, const char *controller, const char *instance,
                                    struct kube_err *err);

/* Free a recorder (pending repeats are lost: flush first). NULL is fine. */
void kube_events_free(struct kube_events *ev);

/* Change the aggregation window and patch interval (0: defaults, negative interval: patch
 * every repeat at once); forgets current series. */
void kube_events_set_aggregation(struct kube_events *ev, int64_t window_ms, int64_t patch_interval_ms);

/* Record an occurrence on regarding at now_ms (wall clock, ms since the epoch: it is the
 * Event's time). 0 or -1 with err. */
int kube_events_record(struct kube_events *ev, const struct kube_event_ref *regarding,
                       const struct kube_event_occurrence *what, int64_t now_ms, struct kube_err *err);

/* Send due series patches (force: all pending, e.g. at shutdown). *next_due_ms (may be NULL)
 * gets when to flush again (INT64_MAX: nothing pending). 0, or -1 with the last error. */
int kube_events_flush(struct kube_events *ev, int64_t now_ms, int force, int64_t *next_due_ms, struct kube_err *err);

#endif
