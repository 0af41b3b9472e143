#include "kube/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/grow.h"

/* ---- pure aggregation ---- */

struct kube_event_agg {
    int64_t window_ms;
    int64_t interval_ms;
    size_t max;
    struct kube_event_series **v;
    size_t n, cap;
};

struct kube_event_agg *kube_event_agg_new(int64_t window_ms, int64_t patch_interval_ms, size_t max_series)
{
    struct kube_event_agg *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->window_ms = window_ms > 0 ? window_ms : KUBE_EVENTS_DEFAULT_WINDOW_MS;
    a->interval_ms =
        patch_interval_ms > 0 ? patch_interval_ms : (patch_interval_ms < 0 ? 0 : KUBE_EVENTS_DEFAULT_PATCH_INTERVAL_MS);
    a->max = max_series ? max_series : KUBE_EVENTS_DEFAULT_MAX_SERIES;
    return a;
}

static void series_free(struct kube_event_series *s)
{
    if (!s)
        return;
    free(s->key);
    free(s->event_ns);
    free(s->event_name);
    free(s);
}

static void remove_at(struct kube_event_agg *a, size_t i)
{
    series_free(a->v[i]);
    a->v[i] = a->v[--a->n];
}

void kube_event_agg_free(struct kube_event_agg *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        series_free(a->v[i]);
    free(a->v);
    free(a);
}

size_t kube_event_agg_size(const struct kube_event_agg *a)
{
    return a->n;
}

/* s, or "" for NULL. */
static const char *or_empty(const char *s)
{
    return s ? s : "";
}

char *kube_event_key(const struct kube_event_ref *regarding, const struct kube_event_occurrence *what)
{
    char *k;
    /* \x1f (unit separator) cannot appear in names; notes could hold it, harmlessly */
    if (asprintf(&k, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", or_empty(regarding->kind), or_empty(regarding->ns),
                 or_empty(regarding->name), or_empty(regarding->uid), or_empty(what->type), or_empty(what->reason),
                 or_empty(what->action), or_empty(what->note)) < 0)
        return NULL;
    return k;
}

/* Reset s to a fresh series starting at now_ms. */
static void restart(struct kube_event_series *s, int64_t now_ms)
{
    free(s->event_ns);
    free(s->event_name);
    s->event_ns = s->event_name = NULL;
    s->count = 1;
    s->sent_count = 0;
    s->first_ms = s->last_ms = now_ms;
    s->last_sent_ms = 0;
}

enum kube_event_action kube_event_agg_observe(struct kube_event_agg *a, const char *key, int64_t now_ms,
                                              struct kube_event_series **series)
{
    *series = NULL;
    for (size_t i = 0; i < a->n; i++) {
        struct kube_event_series *s = a->v[i];
        if (strcmp(s->key, key))
            continue;
        *series = s;
        if (!s->event_name || now_ms - s->last_ms > a->window_ms) {
            restart(s, now_ms);
            return KUBE_EVENT_CREATE;
        }
        s->count++;
        if (now_ms > s->last_ms)
            s->last_ms = now_ms;
        if (now_ms - s->last_sent_ms >= a->interval_ms)
            return KUBE_EVENT_PATCH;
        return KUBE_EVENT_DEFER;
    }
    if (a->n >= a->max) {
        /* full: forget the series quiet the longest, preferring one with nothing pending */
        size_t victim = 0;
        for (size_t i = 1; i < a->n; i++) {
            const struct kube_event_series *s = a->v[i], *vs = a->v[victim];
            int sp = s->count > s->sent_count, vp = vs->count > vs->sent_count;
            if (sp < vp || (sp == vp && s->last_ms < vs->last_ms))
                victim = i;
        }
        remove_at(a, victim);
    }
    if (BASE_GROW(a->v, a->n + 1, a->cap) < 0)
        return KUBE_EVENT_CREATE;
    struct kube_event_series *s = calloc(1, sizeof(*s));
    if (!s || !(s->key = strdup(key))) {
        free(s);
        return KUBE_EVENT_CREATE;
    }
    restart(s, now_ms);
    a->v[a->n++] = s;
    *series = s;
    return KUBE_EVENT_CREATE;
}

int kube_event_agg_created(struct kube_event_series *s, const char *ns, const char *name, int64_t now_ms)
{
    free(s->event_ns);
    free(s->event_name);
    s->event_ns = strdup(ns);
    s->event_name = strdup(name);
    s->sent_count = 1;
    s->last_sent_ms = now_ms;
    if (!s->event_ns || !s->event_name) {
        free(s->event_ns);
        free(s->event_name);
        s->event_ns = s->event_name = NULL;
        return -1;
    }
    return 0;
}

void kube_event_agg_drop(struct kube_event_agg *a, struct kube_event_series *s)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i] == s) {
            remove_at(a, i);
            return;
        }
}

void kube_event_agg_sent(struct kube_event_series *s, int sent_count, int64_t now_ms)
{
    if (sent_count > s->sent_count)
        s->sent_count = sent_count;
    s->last_sent_ms = now_ms;
}

struct kube_event_series *kube_event_agg_due(struct kube_event_agg *a, int64_t now_ms, int force, int64_t *next_due_ms)
{
    int64_t next = INT64_MAX;
    struct kube_event_series *found = NULL;
    for (size_t i = 0; i < a->n;) {
        struct kube_event_series *s = a->v[i];
        int pending = s->event_name && s->count > s->sent_count;
        if (!pending) {
            if (now_ms - s->last_ms > a->window_ms) {
                remove_at(a, i); /* the series is over */
                continue;
            }
        } else if (!found) {
            int64_t due = s->last_sent_ms + a->interval_ms;
            if (force || due <= now_ms)
                found = s;
            else if (due < next)
                next = due;
        }
        i++;
    }
    if (found)
        next = now_ms;
    if (next_due_ms)
        *next_due_ms = next;
    return found;
}

/* ---- recorder ---- */

struct kube_events {
    struct kube_client *c;
    char *controller, *instance;
    struct kube_event_agg *agg;
    unsigned int seq;
};

struct kube_events *kube_events_new(struct kube_client *c, const char *controller, const char *instance,
                                    struct kube_err *err)
{
    kube_err_clear(err);
    if (!controller || !*controller || !instance || !*instance || strlen(controller) > 128 || strlen(instance) > 128) {
        kube_err_set(err, 0, "Config",
                     "event recorder: reportingController and reportingInstance must be 1..128 bytes");
        return NULL;
    }
    struct kube_events *ev = calloc(1, sizeof(*ev));
    if (!ev || !(ev->controller = strdup(controller)) || !(ev->instance = strdup(instance)) ||
        !(ev->agg = kube_event_agg_new(0, 0, 0))) {
        kube_events_free(ev);
        kube_err_set(err, 0, "Config", "out of memory");
        return NULL;
    }
    ev->c = c;
    return ev;
}

void kube_events_free(struct kube_events *ev)
{
    if (!ev)
        return;
    free(ev->controller);
    free(ev->instance);
    kube_event_agg_free(ev->agg);
    free(ev);
}

void kube_events_set_aggregation(struct kube_events *ev, int64_t window_ms, int64_t patch_interval_ms)
{
    struct kube_event_agg *a = kube_event_agg_new(window_ms, patch_interval_ms, 0);
    if (!a)
        return;
    kube_event_agg_free(ev->agg);
    ev->agg = a;
}

/* metav1.MicroTime of a wall-clock time in ms. */
static void micro_time(int64_t ms, char *buf, size_t len)
{
    time_t sec = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06ldZ", base, (long)(ms % 1000) * 1000);
}

/* Copy note, cut to at most max bytes on a UTF-8 character boundary. Caller frees. */
static char *cut_note(const char *note, size_t max)
{
    size_t n = strlen(note);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)note[n] & 0xC0) == 0x80)
            n--; /* note[n] continues a character: cut before it starts */
    }
    return strndup(note, n);
}

static int create_event(struct kube_events *ev, struct kube_event_series *s, const struct kube_event_ref *r,
                        const struct kube_event_occurrence *what, int64_t now_ms, struct kube_err *err)
{
    const char *ns = r->ns && *r->ns ? r->ns : "default"; /* cluster-scoped objects: events in default */
    char name[256], when[48];
    snprintf(name, sizeof(name), "%.200s.%llx%02x", r->name, (unsigned long long)now_ms * 1000ULL, ev->seq++ & 0xff);
    micro_time(now_ms, when, sizeof(when));
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", "events.k8s.io/v1");
    cJSON_AddStringToObject(o, "kind", "Event");
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", ns);
    cJSON_AddStringToObject(o, "eventTime", when);
    cJSON_AddStringToObject(o, "reportingController", ev->controller);
    cJSON_AddStringToObject(o, "reportingInstance", ev->instance);
    cJSON_AddStringToObject(o, "type", what->type);
    cJSON_AddStringToObject(o, "reason", what->reason);
    cJSON_AddStringToObject(o, "action", what->action);
    if (what->note && *what->note) {
        char *n = cut_note(what->note, 1024);
        if (n)
            cJSON_AddStringToObject(o, "note", n);
        free(n);
    }
    cJSON *reg = cJSON_AddObjectToObject(o, "regarding");
    if (r->api_version)
        cJSON_AddStringToObject(reg, "apiVersion", r->api_version);
    cJSON_AddStringToObject(reg, "kind", r->kind);
    if (r->ns && *r->ns)
        cJSON_AddStringToObject(reg, "namespace", r->ns);
    cJSON_AddStringToObject(reg, "name", r->name);
    if (r->uid && *r->uid)
        cJSON_AddStringToObject(reg, "uid", r->uid);
    char *path = kube_path("events.k8s.io/v1", ns, "events", NULL, NULL);
    cJSON *stored = path ? kube_rest_create(ev->c, path, o, NULL, err) : NULL;
    if (!path)
        kube_err_set(err, 0, "Encode", "out of memory");
    free(path);
    cJSON_Delete(o);
    if (!stored) {
        kube_err_wrap(err, "recording event %s on %s %s/%s", what->reason, r->kind, ns, r->name);
        if (s)
            kube_event_agg_drop(ev->agg, s);
        return -1;
    }
    cJSON_Delete(stored);
    if (s && kube_event_agg_created(s, ns, name, now_ms))
        kube_event_agg_drop(ev->agg, s);
    return 0;
}

/* Patch the series of s's Event to its current count. 1: the Event is gone (404). */
static int patch_series(struct kube_events *ev, struct kube_event_series *s, int64_t now_ms, struct kube_err *err)
{
    char when[48];
    micro_time(s->last_ms, when, sizeof(when));
    cJSON *p = cJSON_CreateObject();
    cJSON *series = cJSON_AddObjectToObject(p, "series");
    cJSON_AddNumberToObject(series, "count", s->count);
    cJSON_AddStringToObject(series, "lastObservedTime", when);
    char *path = kube_path("events.k8s.io/v1", s->event_ns, "events", s->event_name, NULL);
    int count = s->count;
    cJSON *stored = path ? kube_rest_patch(ev->c, path, KUBE_PATCH_MERGE, p, NULL, err) : NULL;
    if (!path)
        kube_err_set(err, 0, "Encode", "out of memory");
    free(path);
    cJSON_Delete(p);
    if (!stored) {
        if (err && err->status == 404)
            return 1;
        kube_err_wrap(err, "updating event series %s/%s", s->event_ns, s->event_name);
        return -1;
    }
    cJSON_Delete(stored);
    kube_event_agg_sent(s, count, now_ms);
    return 0;
}

int kube_events_record(struct kube_events *ev, const struct kube_event_ref *regarding,
                       const struct kube_event_occurrence *what, int64_t now_ms, struct kube_err *err)
{
    kube_err_clear(err);
    if (!regarding || !regarding->kind || !regarding->name || !*regarding->kind || !*regarding->name)
        return kube_err_set(err, 0, "Encode", "recording event: regarding kind and name are required");
    const char *type = what ? what->type : NULL;
    if (!type || (strcmp(type, "Normal") && strcmp(type, "Warning")))
        return kube_err_set(err, 0, "Encode", "recording event: type must be Normal or Warning, not %s",
                            type ? type : "(null)");
    const char *reason = what->reason, *action = what->action;
    if (!reason || !*reason || strlen(reason) > 128 || !action || !*action || strlen(action) > 128)
        return kube_err_set(err, 0, "Encode", "recording event: reason and action must be 1..128 bytes");
    char *key = kube_event_key(regarding, what);
    if (!key)
        return kube_err_set(err, 0, "Encode", "out of memory");
    struct kube_event_series *s;
    enum kube_event_action act = kube_event_agg_observe(ev->agg, key, now_ms, &s);
    free(key);
    switch (act) {
    case KUBE_EVENT_CREATE: return create_event(ev, s, regarding, what, now_ms, err);
    case KUBE_EVENT_PATCH: {
        int rc = patch_series(ev, s, now_ms, err);
        if (rc == 1) {
            /* the Event expired or was deleted: start a new series */
            kube_err_clear(err);
            kube_event_agg_drop(ev->agg, s);
            char *k2 = kube_event_key(regarding, what);
            if (!k2)
                return kube_err_set(err, 0, "Encode", "out of memory");
            kube_event_agg_observe(ev->agg, k2, now_ms, &s);
            free(k2);
            return create_event(ev, s, regarding, what, now_ms, err);
        }
        return rc;
    }
    case KUBE_EVENT_DEFER: return 0;
    }
    return 0;
}

int kube_events_flush(struct kube_events *ev, int64_t now_ms, int force, int64_t *next_due_ms, struct kube_err *err)
{
    kube_err_clear(err);
    int rc = 0;
    struct kube_event_series *s;
    /* each patched or dropped series stops being due, and a failure stops the loop */
    while ((s = kube_event_agg_due(ev->agg, now_ms, force, NULL))) {
        int r = patch_series(ev, s, now_ms, err);
        if (r == 1) {
            kube_event_agg_drop(ev->agg, s);
            kube_err_clear(err);
        } else if (r < 0) {
            /* keep it pending, retry after an interval */
            rc = -1;
            if (!force) {
                kube_event_agg_sent(s, s->sent_count, now_ms);
                break;
            }
            kube_event_agg_drop(ev->agg, s); /* no later flush at shutdown */
        }
    }
    kube_event_agg_due(ev->agg, now_ms, 0, next_due_ms);
    return rc;
}
