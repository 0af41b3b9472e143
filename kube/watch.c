#include "kube/watch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/jx.h"
#include "base/util.h"
#include "kube/backoff.h"
#include "kube/config.h"
#include "kube/framing.h"
#include "kube/jsonstrip.h"
#include "kube/linequeue.h"
#include "base/num.h"

#define WATCH_TIMEOUT_MIN_S 300 /* server-side timeoutSeconds, drawn from [min, max] */
#define WATCH_TIMEOUT_MAX_S 600
#define WATCH_CLIENT_GRACE_S 60 /* client-side limit: timeoutSeconds plus this */
#define WATCH_CONNECT_TIMEOUT_MS 10000
#define WATCH_ERRBODY_MAX 65536 /* bytes of an error reply kept for its Status */
#define WATCH_SHORT_STREAM_MS 1000
#define WATCH_RETRY_AFTER_MAX_S 60
#define WATCH_DEFAULT_PAGE 500
/* A streaming list whose data stops this long before its initial-events-end bookmark is
 * taken for a server that ignores sendInitialEvents (one older than 1.27 sends the state
 * as ADDED events and no such bookmark, and never says so). */
#define WATCH_INITIAL_END_STALL_MS 30000

enum watch_state {
    W_IDLE,        /* not started, or stopped */
    W_WAIT,        /* a connect timer is pending */
    W_STREAM_LIST, /* a streaming list is open, before its initial-events-end bookmark */
    W_WATCHING,    /* a watch stream is open */
};

struct kube_watch {
    struct kube_loop *loop;
    struct kube_client *client;
    char *path, *label_selector, *field_selector;
    enum kube_watch_list_mode mode;
    long page_size;
    int timeout_s;
    struct kube_watch_handler h;
    void *ud;

    enum watch_state state;
    bool need_relist;
    bool streaming_refused;
    char *rv;

    CURL *easy;
    bool in_loop;
    struct curl_slist *headers;
    char *url;
    char errbuf[CURL_ERROR_SIZE];
    struct kube_framing *framing;

    /* the current stream */
    long status;
    bool status_known;
    char *errbody;
    size_t errlen;
    long retry_after_s;
    bool stream_failed; /* framing or queueing failed in the write callback */
    struct kube_err stream_err;
    bool list_begun; /* list_begin delivered for the current streaming list */
    uint64_t stream_events;
    uint64_t stream_started_ms;
    uint64_t last_data_ms;     /* when the stream last delivered bytes */
    unsigned stream_timeout_s; /* the timeoutSeconds it was opened with */

    /* event lines read in the write callback, parsed and delivered one by one from the loop */
    struct kube_linequeue queue;
    uint64_t dispatch_timer, connect_timer, stall_timer;
    bool bookmarks; /* ask for bookmarks (allowWatchBookmarks) */

    struct kube_backoff backoff;         /* reconnects after failures */
    struct kube_backoff expired_backoff; /* relists after 410: the server is fine, so these
                                          * start low whatever the failures before */
    uint64_t rng;
    struct kube_watch_stats stats;
};

static void watch_connect_cb(struct kube_loop *loop, void *ud);

static uint64_t watch_rand(struct kube_watch *w)
{
    /* xorshift64* */
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return w->rng * 2685821657736338717ULL;
}

static double watch_rand01(struct kube_watch *w)
{
    return (double)(watch_rand(w) >> 11) / (double)(1ULL << 53);
}

__attribute__((format(printf, 3, 4))) static void watch_log(struct kube_watch *w, enum kube_watch_level level,
                                                            const char *fmt, ...)
{
    if (!w->h.log)
        return;
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    w->h.log(level, msg, w->ud);
}

static void watch_set_rv(struct kube_watch *w, const char *rv)
{
    if (!rv || !*rv || (w->rv && strcmp(w->rv, rv) == 0))
        return;
    char *copy = strdup(rv);
    if (!copy)
        return; /* keep the older version: resuming from it is still correct */
    free(w->rv);
    w->rv = copy;
}

const char *kube_watch_rv(const struct kube_watch *w)
{
    return w->rv ? w->rv : "";
}

struct kube_watch_stats kube_watch_stats(const struct kube_watch *w)
{
    struct kube_watch_stats s = w->stats;
    s.streaming_refused = w->streaming_refused;
    return s;
}

int kube_watch_type_parse(const char *s, enum kube_watch_type *out)
{
    static const struct {
        const char *name;
        enum kube_watch_type type;
    } names[] = {
        {"ADDED", KUBE_WATCH_ADDED},
        {"MODIFIED", KUBE_WATCH_MODIFIED},
        {"DELETED", KUBE_WATCH_DELETED},
        {"BOOKMARK", KUBE_WATCH_BOOKMARK},
    };
    for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].type;
            return 0;
        }
    return -1;
}

const char *kube_watch_type_name(enum kube_watch_type type)
{
    switch (type) {
    case KUBE_WATCH_ADDED: return "ADDED";
    case KUBE_WATCH_MODIFIED: return "MODIFIED";
    case KUBE_WATCH_DELETED: return "DELETED";
    case KUBE_WATCH_BOOKMARK: return "BOOKMARK";
    }
    return "UNKNOWN";
}

static const char *obj_rv(const cJSON *obj)
{
    return jx_str(obj, "metadata.resourceVersion");
}

int kube_watch_event_decode(const cJSON *ev, struct kube_watch_event *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(ev)) {
        snprintf(why, whylen, "an event is not a JSON object");
        return -1;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    out->object = cJSON_GetObjectItemCaseSensitive(ev, "object");
    if (!cJSON_IsString(type)) {
        snprintf(why, whylen, "an event has no \"type\" string");
        return -1;
    }
    if (strcmp(type->valuestring, "ERROR") == 0) {
        out->error = true;
        out->code = (long)kube_num_int_or(cJSON_GetObjectItemCaseSensitive(out->object, "code"), 100, 599, 0);
        out->reason = jx_at_str(out->object, "reason");
        out->message = jx_at_str(out->object, "message");
        return 0;
    }
    if (kube_watch_type_parse(type->valuestring, &out->type) < 0) {
        snprintf(why, whylen, "an event has the unknown type \"%.40s\"", type->valuestring);
        return -1;
    }
    if (!cJSON_IsObject(out->object)) {
        snprintf(why, whylen, "a %s event has no object", kube_watch_type_name(out->type));
        return -1;
    }
    return 0;
}

/* ---- scheduling ---- */

/* Drop the open stream, if any (from loop context only). */
static void watch_abort_stream(struct kube_watch *w)
{
    if (w->in_loop) {
        kube_loop_remove(w->loop, w->easy);
        w->in_loop = false;
    }
    if (w->dispatch_timer) {
        kube_loop_cancel(w->loop, w->dispatch_timer);
        w->dispatch_timer = 0;
    }
    if (w->stall_timer) {
        kube_loop_cancel(w->loop, w->stall_timer);
        w->stall_timer = 0;
    }
    kube_linequeue_clear(&w->queue);
}

static void watch_schedule(struct kube_watch *w, uint64_t delay_ms)
{
    if (w->connect_timer)
        kube_loop_cancel(w->loop, w->connect_timer);
    w->state = W_WAIT;
    w->connect_timer = kube_loop_timer(w->loop, delay_ms, 0, watch_connect_cb, w);
    if (!w->connect_timer) {
        watch_log(w, KUBE_WATCH_ERROR, "watch cannot schedule a reconnect path=%s reason=OutOfMemory", w->path);
        w->state = W_IDLE;
    }
}

/* Schedule the retry after the backoff (or Retry-After, if longer); failure: count it
 * (else it is a relist after a 410, on its own backoff). */
static void watch_backoff(struct kube_watch *w, bool failure)
{
    if (failure)
        w->stats.failures++;
    uint64_t delay =
        kube_backoff_next(failure ? &w->backoff : &w->expired_backoff, kube_loop_now_ms(), watch_rand01(w));
    if (w->retry_after_s > 0) {
        long ra = w->retry_after_s > WATCH_RETRY_AFTER_MAX_S ? WATCH_RETRY_AFTER_MAX_S : w->retry_after_s;
        if ((uint64_t)ra * 1000u > delay)
            delay = (uint64_t)ra * 1000u;
    }
    watch_log(w, KUBE_WATCH_INFO, "watch retrying path=%s delay_ms=%llu relist=%s", w->path, (unsigned long long)delay,
              w->need_relist ? "true" : "false");
    watch_schedule(w, delay);
}

/* The resource version is gone (410): the state must be listed again. via: "event" (an
 * ERROR event in the stream) or "reply" (the HTTP status of the watch request). */
static void watch_expired(struct kube_watch *w, const char *via, const char *reason, const char *message)
{
    w->stats.expired++;
    w->need_relist = true;
    watch_log(w, KUBE_WATCH_INFO, "watch relisting path=%s status=410 reason=%s via=%s rv=%s msg=\"%s\"", w->path,
              reason && *reason ? reason : "Gone", via, kube_watch_rv(w), message ? message : "");
    /* Through a backoff of its own, so a server that keeps answering 410 is not hammered;
     * the first relist follows within a second. */
    watch_backoff(w, false);
}

/* A status that means "this server does not do streaming lists" rather than a failure. */
static bool watch_is_refusal(long status)
{
    return status == 400 || status == 405 || status == 406 || status == 415 || status == 422 || status == 501;
}

static void watch_streaming_refused(struct kube_watch *w, long status, const char *msg)
{
    w->streaming_refused = true;
    w->need_relist = true;
    watch_log(w, KUBE_WATCH_WARN, "watch streaming list refused, using LIST path=%s status=%ld msg=\"%s\"", w->path,
              status, msg ? msg : "");
    watch_schedule(w, 0);
}

/* ---- delivering events ---- */

static void watch_list_begin(struct kube_watch *w)
{
    if (w->h.list_begin)
        w->h.list_begin(w->ud);
}

/* Hand obj over to the handler's list_item (or free it). */
static void watch_give_item(struct kube_watch *w, cJSON *obj)
{
    if (w->h.list_item)
        w->h.list_item(obj, w->ud);
    else
        cJSON_Delete(obj);
}

/* An event of a streaming list (obj is the watch's: given on or freed). */
static void watch_stream_list_event(struct kube_watch *w, enum kube_watch_type type, cJSON *obj)
{
    if (type == KUBE_WATCH_BOOKMARK) {
        const char *end = jx_annotation(obj, KUBE_WATCH_INITIAL_EVENTS_END);
        if (!end || strcmp(end, "true") != 0) {
            cJSON_Delete(obj); /* progress only: the list is not complete yet */
            return;
        }
        if (!w->list_begun) {
            w->list_begun = true;
            watch_list_begin(w);
        }
        watch_set_rv(w, obj_rv(obj));
        cJSON_Delete(obj);
        w->need_relist = false;
        w->state = W_WATCHING;
        w->stats.lists++;
        w->stats.streamed_lists++;
        watch_log(w, KUBE_WATCH_INFO, "watch listed path=%s mode=stream rv=%s", w->path, kube_watch_rv(w));
        if (w->h.list_end)
            w->h.list_end(kube_watch_rv(w), w->ud);
        return;
    }
    if (type == KUBE_WATCH_DELETED) {
        cJSON_Delete(obj);
        watch_log(w, KUBE_WATCH_WARN, "watch ignoring a DELETED event in an initial list path=%s", w->path);
        return;
    }
    if (!w->list_begun) {
        w->list_begun = true;
        watch_list_begin(w);
    }
    watch_give_item(w, obj);
}

/* An ERROR event: the stream is dropped and what comes next decided. */
static void watch_error_event(struct kube_watch *w, const struct kube_watch_event *e)
{
    long c = e->code;
    watch_abort_stream(w);
    if (c == 410) {
        watch_expired(w, "event", e->reason, e->message);
    } else if (w->state == W_STREAM_LIST && !w->list_begun && w->mode == KUBE_WATCH_LIST_AUTO && watch_is_refusal(c)) {
        watch_streaming_refused(w, c, e->message);
    } else {
        watch_log(w, KUBE_WATCH_WARN, "watch error event path=%s code=%ld reason=%s msg=\"%s\"", w->path, c,
                  e->reason ? e->reason : "", e->message ? e->message : "");
        watch_backoff(w, true);
    }
}

/* Handle one decoded event, whose object is detached and given to the handler; returns 1
 * when the stream was dropped (stop delivering). */
static int watch_handle(struct kube_watch *w, cJSON *ev)
{
    struct kube_watch_event e;
    char why[128];
    if (kube_watch_event_decode(ev, &e, why, sizeof(why)) < 0) {
        watch_log(w, KUBE_WATCH_WARN, "watch ignoring an event path=%s reason=Malformed msg=\"%s\"", w->path, why);
        return 0;
    }
    if (e.error) {
        watch_error_event(w, &e);
        return 1;
    }
    /* The same member decode found (the first "object"): the handler may keep it as it is. */
    cJSON *obj = cJSON_DetachItemFromObjectCaseSensitive(ev, "object");
    w->stream_events++;
    if (w->state == W_STREAM_LIST) {
        watch_stream_list_event(w, e.type, obj);
        return 0;
    }
    if (e.type == KUBE_WATCH_BOOKMARK)
        w->stats.bookmarks++;
    else
        w->stats.events++;
    watch_set_rv(w, obj_rv(obj));
    if (w->h.event)
        w->h.event(e.type, obj, w->ud);
    else
        cJSON_Delete(obj);
    return 0;
}

/* An event was lost (undecodable, over the line bound, no memory): the stream cannot be
 * trusted any more; drop it and list again after the backoff. */
static void watch_stream_lost(struct kube_watch *w)
{
    watch_abort_stream(w);
    w->need_relist = true;
    watch_log(w, KUBE_WATCH_WARN, "watch stream dropped path=%s reason=%s msg=\"%s\"", w->path, w->stream_err.reason,
              w->stream_err.msg);
    watch_backoff(w, true);
}

/* Deliver the queued events, parsing one line at a time; returns 1 when the stream was
 * dropped (an ERROR event, or a line that is no JSON object). */
static int watch_dispatch(struct kube_watch *w)
{
    if (w->dispatch_timer) {
        kube_loop_cancel(w->loop, w->dispatch_timer);
        w->dispatch_timer = 0;
    }
    const char *line;
    size_t len;
    while ((line = kube_linequeue_next(&w->queue, &len)) != NULL) {
        cJSON *ev = cJSON_ParseWithLength(line, len);
        if (!cJSON_IsObject(ev)) {
            cJSON_Delete(ev);
            kube_err_set(&w->stream_err, 0, "Decode", "watch %s: an event is not a JSON object: %.120s", w->path, line);
            watch_stream_lost(w);
            return 1;
        }
        int stop = watch_handle(w, ev);
        cJSON_Delete(ev);
        if (stop) {
            kube_linequeue_clear(&w->queue);
            return 1;
        }
    }
    return 0;
}

static void watch_dispatch_cb(struct kube_loop *loop, void *ud)
{
    (void)loop;
    struct kube_watch *w = ud;
    w->dispatch_timer = 0;
    (void)watch_dispatch(w);
}

/* ---- libcurl callbacks (no user code here: frame and queue only) ---- */

static int watch_line(const char *line, size_t len, void *ud)
{
    struct kube_watch *w = ud;
    /* managedFields would be queued and parsed only to be thrown away (jsonstrip.h) */
    if (kube_linequeue_push(&w->queue, line, len, kube_jsonstrip_managed_fields) < 0) {
        kube_err_set(&w->stream_err, 0, "Decode", "watch %s: out of memory queueing an event", w->path);
        return -1;
    }
    if (!w->dispatch_timer)
        w->dispatch_timer = kube_loop_timer(w->loop, 0, 0, watch_dispatch_cb, w);
    return 0;
}

static void watch_note_status(struct kube_watch *w)
{
    if (w->status_known)
        return;
    w->status_known = true;
    curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &w->status);
    if (w->status == 200) {
        w->stats.streams++;
        kube_backoff_up(&w->backoff, kube_loop_now_ms());
    }
}

static size_t watch_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct kube_watch *w = ud;
    size_t n = size * nmemb;
    w->last_data_ms = kube_loop_now_ms();
    watch_note_status(w);
    if (w->status != 200) {
        size_t room = WATCH_ERRBODY_MAX - w->errlen;
        size_t take = n < room ? n : room;
        if (take > 0) {
            char *nb = realloc(w->errbody, w->errlen + take + 1);
            if (nb) {
                memcpy(nb + w->errlen, data, take);
                w->errlen += take;
                nb[w->errlen] = '\0';
                w->errbody = nb;
            }
        }
        return n;
    }
    if (w->stream_failed)
        return 0;
    int rc = kube_framing_feed(w->framing, data, n, watch_line, w, &w->stream_err);
    if (rc != 0) {
        w->stream_failed = true;
        return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
    }
    return n;
}

static size_t watch_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct kube_watch *w = ud;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    if (n > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
        char buf[32];
        size_t len = n - (sizeof(name) - 1);
        if (len >= sizeof(buf))
            len = sizeof(buf) - 1;
        memcpy(buf, data + sizeof(name) - 1, len);
        buf[len] = '\0';
        char *end;
        long s = strtol(buf, &end, 10);
        if (end != buf && s > 0)
            w->retry_after_s = s; /* an HTTP date instead of seconds is ignored */
    }
    return n;
}

/* ---- connecting ---- */

/* While a streaming list is open: no data for WATCH_INITIAL_END_STALL_MS and still no
 * initial-events-end bookmark means the server ignored sendInitialEvents. */
static void watch_stall_cb(struct kube_loop *loop, void *ud)
{
    (void)loop;
    struct kube_watch *w = ud;
    w->stall_timer = 0;
    if (w->state != W_STREAM_LIST || !w->in_loop)
        return;
    uint64_t now = kube_loop_now_ms();
    uint64_t idle = now - (w->last_data_ms > w->stream_started_ms ? w->last_data_ms : w->stream_started_ms);
    if (idle < WATCH_INITIAL_END_STALL_MS) {
        w->stall_timer = kube_loop_timer(w->loop, WATCH_INITIAL_END_STALL_MS - idle, 0, watch_stall_cb, w);
        return;
    }
    /* What arrived is delivered first: a bookmark among it ends the list. */
    if (watch_dispatch(w) || w->state != W_STREAM_LIST || !w->in_loop)
        return;
    watch_abort_stream(w);
    if (w->mode == KUBE_WATCH_LIST_AUTO) {
        watch_streaming_refused(w, 0, "no initial-events-end bookmark: sendInitialEvents was ignored");
    } else {
        watch_log(w, KUBE_WATCH_WARN, "watch streaming list stalled path=%s idle_ms=%llu", w->path,
                  (unsigned long long)idle);
        watch_backoff(w, true);
    }
}

static void watch_done(struct kube_loop *loop, CURL *easy, CURLcode result, void *ud)
{
    (void)loop;
    (void)easy;
    struct kube_watch *w = ud;
    w->in_loop = false;
    if (w->stall_timer) {
        kube_loop_cancel(w->loop, w->stall_timer);
        w->stall_timer = 0;
    }
    if (watch_dispatch(w)) /* what arrived before the end */
        return;            /* an ERROR event already decided what comes next */
    watch_note_status(w);
    bool streaming = w->state == W_STREAM_LIST;
    if (result != CURLE_OK) {
        if (w->stream_failed) {
            watch_stream_lost(w);
            return;
        }
        watch_log(w, KUBE_WATCH_WARN, "watch stream failed path=%s reason=Transport msg=\"%s%s%s\"", w->path,
                  curl_easy_strerror(result), w->errbuf[0] ? ": " : "", w->errbuf);
        watch_backoff(w, true);
        return;
    }
    if (w->status == 200) {
        uint64_t lasted = kube_loop_now_ms() - w->stream_started_ms;
        bool by_timeout = lasted + 1000 >= (uint64_t)w->stream_timeout_s * 1000u;
        if (streaming && w->mode == KUBE_WATCH_LIST_AUTO && (by_timeout || lasted >= WATCH_INITIAL_END_STALL_MS)) {
            /* The server's timeout came before the initial-events-end bookmark: it does
             * not do streaming lists (a server that does sends it right after the state). */
            watch_streaming_refused(w, w->status, "the stream ended without the initial-events-end bookmark");
        } else if (streaming) {
            watch_log(w, KUBE_WATCH_WARN, "watch stream ended before the initial list was complete path=%s", w->path);
            watch_backoff(w, true);
        } else if (w->stream_events == 0 && lasted < WATCH_SHORT_STREAM_MS) {
            watch_log(w, KUBE_WATCH_WARN, "watch stream ended at once path=%s", w->path);
            watch_backoff(w, true);
        } else {
            watch_log(w, KUBE_WATCH_DEBUG, "watch stream ended path=%s rv=%s", w->path, kube_watch_rv(w));
            watch_schedule(w, 0);
        }
        return;
    }
    struct kube_err e = {0};
    kube_rest_decode_status(w->errbody, w->errlen, w->status, "GET", w->url, &e);
    if (w->status == 410) {
        watch_expired(w, "reply", e.reason, e.msg);
    } else if (streaming && w->mode == KUBE_WATCH_LIST_AUTO && watch_is_refusal(w->status)) {
        watch_streaming_refused(w, w->status, e.msg);
    } else {
        watch_log(w, KUBE_WATCH_WARN, "watch request failed path=%s status=%ld reason=%s msg=\"%s\"", w->path,
                  w->status, e.reason, e.msg);
        watch_backoff(w, true);
    }
}

/* LIST and deliver; returns 0, or -1 after logging. */
static int watch_list(struct kube_watch *w)
{
    struct kube_list_opts lo = {
        .label_selector = w->label_selector,
        .field_selector = w->field_selector,
        .limit = w->page_size,
    };
    struct kube_err e = {0};
    cJSON *list = kube_rest_list(w->client, w->path, &lo, &e);
    if (!list) {
        watch_log(w, KUBE_WATCH_WARN, "watch list failed path=%s status=%ld reason=%s msg=\"%s\"", w->path, e.status,
                  e.reason, e.msg);
        return -1;
    }
    const char *rv = kube_rest_list_rv(list);
    if (!rv || !*rv) {
        watch_log(w, KUBE_WATCH_WARN, "watch list failed path=%s reason=Decode msg=\"no resourceVersion\"", w->path);
        cJSON_Delete(list);
        return -1;
    }
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    int n = cJSON_GetArraySize(items);
    watch_list_begin(w);
    /* Each item is detached and given away, so the list's tree shrinks as it is delivered. */
    cJSON *item;
    while ((item = cJSON_DetachItemFromArray(items, 0)) != NULL)
        watch_give_item(w, item);
    watch_set_rv(w, rv);
    cJSON_Delete(list);
    w->need_relist = false;
    w->stats.lists++;
    watch_log(w, KUBE_WATCH_INFO, "watch listed path=%s mode=list rv=%s items=%d", w->path, kube_watch_rv(w), n);
    if (w->h.list_end)
        w->h.list_end(kube_watch_rv(w), w->ud);
    return 0;
}

static int watch_open(struct kube_watch *w, bool streaming, struct kube_err *err)
{
    struct kube_config *cfg = kube_client_config(w->client);
    curl_easy_reset(w->easy);
    curl_slist_free_all(w->headers);
    w->headers = NULL;
    free(w->url);
    w->url = NULL;

    /* Rotated at random so that the watches of many clients do not all end together. */
    unsigned timeout_s =
        w->timeout_s > 0
            ? (unsigned)w->timeout_s
            : WATCH_TIMEOUT_MIN_S + (unsigned)(watch_rand(w) % (WATCH_TIMEOUT_MAX_S - WATCH_TIMEOUT_MIN_S + 1));
    char timeout[16];
    snprintf(timeout, sizeof(timeout), "%u", timeout_s);
    w->stream_timeout_s = timeout_s;
    const char *pairs[] = {
        "watch",
        "1",
        "allowWatchBookmarks",
        w->bookmarks ? "true" : NULL,
        "labelSelector",
        w->label_selector,
        "fieldSelector",
        w->field_selector,
        "timeoutSeconds",
        timeout,
        "sendInitialEvents",
        streaming ? "true" : NULL,
        "resourceVersionMatch",
        streaming ? "NotOlderThan" : NULL,
        "resourceVersion",
        streaming ? NULL : kube_watch_rv(w),
        NULL,
    };
    char *pq = kube_path_query(w->path, pairs);
    const char *server = kube_config_server(cfg);
    if (!pq || asprintf(&w->url, "%s%s", server, pq) < 0) {
        free(pq);
        w->url = NULL;
        return kube_err_set(err, 0, "Internal", "watch %s: out of memory", w->path);
    }
    free(pq);

    if (kube_config_prepare(cfg, w->easy, &w->headers, err) < 0)
        return kube_err_wrap(err, "watch %s", w->path);
    w->errbuf[0] = '\0';
    curl_easy_setopt(w->easy, CURLOPT_URL, w->url);
    curl_easy_setopt(w->easy, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(w->easy, CURLOPT_HTTPHEADER, w->headers);
    curl_easy_setopt(w->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(w->easy, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(w->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(w->easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(w->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)WATCH_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(w->easy, CURLOPT_TIMEOUT_MS, ((long)timeout_s + WATCH_CLIENT_GRACE_S) * 1000L);
    curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, watch_write);
    curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(w->easy, CURLOPT_HEADERFUNCTION, watch_header);
    curl_easy_setopt(w->easy, CURLOPT_HEADERDATA, w);
    curl_easy_setopt(w->easy, CURLOPT_ERRORBUFFER, w->errbuf);

    w->status = 0;
    w->status_known = false;
    w->errlen = 0;
    w->retry_after_s = 0;
    w->stream_failed = false;
    kube_err_clear(&w->stream_err);
    kube_framing_reset(w->framing);
    w->list_begun = false;
    w->stream_events = 0;
    w->stream_started_ms = kube_loop_now_ms();
    w->last_data_ms = 0;
    kube_linequeue_clear(&w->queue);
    if (kube_loop_add(w->loop, w->easy, watch_done, w, err) < 0)
        return kube_err_wrap(err, "watch %s", w->path);
    w->in_loop = true;
    w->state = streaming ? W_STREAM_LIST : W_WATCHING;
    if (streaming)
        w->stall_timer = kube_loop_timer(w->loop, WATCH_INITIAL_END_STALL_MS, 0, watch_stall_cb, w);
    watch_log(w, KUBE_WATCH_DEBUG, "watch stream opening path=%s mode=%s rv=%s timeout=%s", w->path,
              streaming ? "stream-list" : "watch", streaming ? "" : kube_watch_rv(w), timeout);
    return 0;
}

static void watch_connect_cb(struct kube_loop *loop, void *ud)
{
    (void)loop;
    struct kube_watch *w = ud;
    w->connect_timer = 0;
    w->retry_after_s = 0;
    bool stream = w->mode == KUBE_WATCH_LIST_STREAM || (w->mode == KUBE_WATCH_LIST_AUTO && !w->streaming_refused);
    if (w->need_relist && !stream && watch_list(w) < 0) {
        watch_backoff(w, true);
        return;
    }
    struct kube_err e = {0};
    if (watch_open(w, w->need_relist, &e) < 0) {
        watch_log(w, KUBE_WATCH_ERROR, "watch cannot open a stream path=%s reason=%s msg=\"%s\"", w->path, e.reason,
                  e.msg);
        watch_backoff(w, true);
    }
}

/* ---- life cycle ---- */

struct kube_watch *kube_watch_new(struct kube_loop *loop, struct kube_client *client,
                                  const struct kube_watch_opts *opts, const struct kube_watch_handler *handler,
                                  void *ud, struct kube_err *err)
{
    if (!opts || !opts->path || opts->path[0] != '/') {
        kube_err_set(err, 0, "Invalid", "watch: a collection path starting with / is required");
        return NULL;
    }
    struct kube_watch *w = calloc(1, sizeof(*w));
    if (!w)
        goto oom;
    w->loop = loop;
    w->client = client;
    w->mode = opts->list_mode;
    w->page_size = opts->page_size > 0 ? opts->page_size : WATCH_DEFAULT_PAGE;
    w->timeout_s = opts->timeout_seconds > 0 ? opts->timeout_seconds : 0;
    w->bookmarks = !opts->no_bookmarks;
    if (handler)
        w->h = *handler;
    w->ud = ud;
    w->need_relist = true;
    kube_backoff_init(&w->backoff);
    kube_backoff_init(&w->expired_backoff);
    if (getrandom(&w->rng, sizeof(w->rng), GRND_NONBLOCK) != (ssize_t)sizeof(w->rng))
        w->rng = kube_loop_now_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)w;
    w->rng |= 1;
    w->path = strdup(opts->path);
    w->label_selector = base_strdup_or_null(base_nonempty(opts->label_selector));
    w->field_selector = base_strdup_or_null(base_nonempty(opts->field_selector));
    w->framing = kube_framing_new(0);
    w->easy = curl_easy_init();
    if (!w->path || (opts->label_selector && *opts->label_selector && !w->label_selector) ||
        (opts->field_selector && *opts->field_selector && !w->field_selector) || !w->framing || !w->easy)
        goto oom;
    return w;
oom:
    kube_watch_free(w);
    kube_err_set(err, 0, "Internal", "watch %s: out of memory", opts->path);
    return NULL;
}

int kube_watch_start(struct kube_watch *w, struct kube_err *err)
{
    kube_watch_stop(w);
    w->need_relist = true;
    watch_schedule(w, 0);
    if (w->state != W_WAIT)
        return kube_err_set(err, 0, "Internal", "watch %s: cannot schedule the start", w->path);
    return 0;
}

void kube_watch_stop(struct kube_watch *w)
{
    watch_abort_stream(w);
    if (w->connect_timer) {
        kube_loop_cancel(w->loop, w->connect_timer);
        w->connect_timer = 0;
    }
    w->state = W_IDLE;
    w->need_relist = true;
}

void kube_watch_free(struct kube_watch *w)
{
    if (!w)
        return;
    if (w->loop)
        kube_watch_stop(w);
    if (w->easy)
        curl_easy_cleanup(w->easy);
    curl_slist_free_all(w->headers);
    kube_framing_free(w->framing);
    kube_linequeue_free(&w->queue);
    free(w->errbody);
    free(w->url);
    free(w->rv);
    free(w->path);
    free(w->label_selector);
    free(w->field_selector);
    free(w);
}
