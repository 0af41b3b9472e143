#include "kube/informer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct inf_entry {
    char *key;
    char *rv;
    char *uid;              /* may be NULL */
    void *value;            /* the projection */
    unsigned gen;           /* list generation that last saw it */
    struct inf_entry *next; /* bucket chain */
};

struct kube_informer {
    struct inf_entry **buckets;
    size_t nbuckets;
    size_t count;
    unsigned gen; /* bumped by each list_begin */
    bool synced;
    char *rv;

    char *path, *label_selector, *field_selector;
    enum kube_watch_list_mode list_mode;
    int watch_timeout_s;
    bool watch_no_bookmarks;
    kube_informer_project_fn project;
    void (*free_value)(void *);
    void *project_ud;
    struct kube_informer_handlers h;
    void *ud;

    struct kube_watch *watch;
    struct kube_informer_stats stats;
};

__attribute__((format(printf, 3, 4))) static void inf_log(struct kube_informer *inf, enum kube_watch_level level,
                                                          const char *fmt, ...)
{
    if (!inf->h.log)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    inf->h.log(level, msg, inf->ud);
}

/* ---- the hash table ---- */

static uint64_t inf_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static struct inf_entry **inf_slot(const struct kube_informer *inf, const char *key)
{
    if (!inf->nbuckets)
        return NULL;
    struct inf_entry **pp = &inf->buckets[inf_hash(key) & (inf->nbuckets - 1)];
    while (*pp && strcmp((*pp)->key, key) != 0)
        pp = &(*pp)->next;
    return pp;
}

static struct inf_entry *inf_find(const struct kube_informer *inf, const char *key)
{
    struct inf_entry **pp = inf_slot(inf, key);
    return pp ? *pp : NULL;
}

static int inf_grow(struct kube_informer *inf)
{
    if (inf->nbuckets && inf->count < inf->nbuckets)
        return 0;
    size_t n = inf->nbuckets ? inf->nbuckets * 2 : 64;
    struct inf_entry **nb = calloc(n, sizeof(*nb));
    if (!nb)
        return inf->nbuckets ? 0 : -1; /* a full table still works, only slower */
    for (size_t i = 0; i < inf->nbuckets; i++) {
        struct inf_entry *e = inf->buckets[i];
        while (e) {
            struct inf_entry *next = e->next;
            size_t b = inf_hash(e->key) & (n - 1);
            e->next = nb[b];
            nb[b] = e;
            e = next;
        }
    }
    free(inf->buckets);
    inf->buckets = nb;
    inf->nbuckets = n;
    return 0;
}

static void inf_free_value(struct kube_informer *inf, void *value)
{
    if (value)
        inf->free_value(value);
}

static void inf_entry_free(struct kube_informer *inf, struct inf_entry *e)
{
    inf_free_value(inf, e->value);
    free(e->key);
    free(e->rv);
    free(e->uid);
    free(e);
}

/* ---- projection ---- */

static void inf_default_free(void *value)
{
    cJSON_Delete(value);
}

/* What is kept of *objp: its projection, or without one the object itself (*objp becomes
 * NULL: taken) less metadata.managedFields (present on LIST items, see informer.h). */
static void *inf_value(struct kube_informer *inf, cJSON **objp)
{
    if (inf->project)
        return inf->project(*objp, inf->project_ud);
    cJSON *obj = *objp;
    *objp = NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
    return obj;
}

/* ---- object identity ---- */

static const char *meta_str(const cJSON *obj, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), field);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* "ns/name" or "name" into buf; returns buf, or NULL without a name. */
static char *inf_key(const cJSON *obj, char *buf, size_t size)
{
    const char *name = meta_str(obj, "name");
    const char *ns = meta_str(obj, "namespace");
    if (!name)
        return NULL;
    if (ns)
        snprintf(buf, size, "%s/%s", ns, name);
    else
        snprintf(buf, size, "%s", name);
    return buf;
}

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static void inf_set_rv(struct kube_informer *inf, const char *rv)
{
    if (!rv || !*rv || str_eq(inf->rv, rv))
        return;
    char *c = strdup(rv);
    if (c) {
        free(inf->rv);
        inf->rv = c;
    }
}

/* ---- emitting ---- */

static void emit_add(struct kube_informer *inf, const struct inf_entry *e)
{
    inf->stats.adds++;
    if (inf->h.on_add)
        inf->h.on_add(e->key, e->value, inf->ud);
}

static void emit_delete(struct kube_informer *inf, const char *key, const void *value, bool unknown)
{
    inf->stats.deletes++;
    if (unknown)
        inf->stats.relist_deletes++;
    if (inf->h.on_delete)
        inf->h.on_delete(key, value, unknown, inf->ud);
}

/* Insert or update from an object (a list item or an ADDED/MODIFIED event); *objp may be
 * taken (inf_value), what is left is the caller's. */
static void inf_upsert(struct kube_informer *inf, cJSON **objp, bool from_list)
{
    const cJSON *obj = *objp;
    char key[512];
    if (!inf_key(obj, key, sizeof(key))) {
        inf_log(inf, KUBE_WATCH_WARN, "informer ignoring an object without metadata.name path=%s", inf->path);
        return;
    }
    const char *rv = meta_str(obj, "resourceVersion");
    const char *uid = meta_str(obj, "uid");
    if (!rv) {
        inf_log(inf, KUBE_WATCH_WARN, "informer ignoring an object without metadata.resourceVersion path=%s key=%s",
                inf->path, key);
        return;
    }
    struct inf_entry *e = inf_find(inf, key);
    if (e && str_eq(e->rv, rv)) {
        e->gen = inf->gen; /* unchanged (a relist) or a duplicate event */
        if (!from_list)
            inf->stats.duplicates++;
        return;
    }
    char *nrv = strdup(rv);
    char *nuid = uid ? strdup(uid) : NULL;
    if (!nrv || (uid && !nuid))
        goto oom;
    void *value = inf_value(inf, objp);
    if (e && e->uid && nuid && strcmp(e->uid, nuid) != 0) {
        /* Replaced by a new object of the same name: the old one is gone. */
        struct inf_entry **pp = inf_slot(inf, key);
        *pp = e->next;
        inf->count--;
        emit_delete(inf, e->key, e->value, true);
        inf_entry_free(inf, e);
        e = NULL;
    }
    if (!e) {
        if (inf_grow(inf) < 0) {
            inf_free_value(inf, value);
            goto oom;
        }
        e = calloc(1, sizeof(*e));
        char *nkey = strdup(key);
        if (!e || !nkey) {
            free(e);
            free(nkey);
            inf_free_value(inf, value);
            goto oom;
        }
        e->key = nkey;
        e->rv = nrv;
        e->uid = nuid;
        e->value = value;
        e->gen = inf->gen;
        struct inf_entry **pp = inf_slot(inf, key);
        e->next = *pp; /* *pp is NULL: the end of the chain */
        *pp = e;
        inf->count++;
        emit_add(inf, e);
        return;
    }
    void *old = e->value;
    free(e->rv);
    free(e->uid);
    e->rv = nrv;
    e->uid = nuid;
    e->value = value;
    e->gen = inf->gen;
    inf->stats.updates++;
    if (inf->h.on_update)
        inf->h.on_update(e->key, old, e->value, inf->ud);
    inf_free_value(inf, old);
    return;
oom:
    free(nrv);
    free(nuid);
    inf_log(inf, KUBE_WATCH_ERROR, "informer out of memory path=%s key=%s", inf->path, key);
}

/* Remove on a DELETED event; *objp may be taken as inf_upsert's. */
static void inf_remove(struct kube_informer *inf, cJSON **objp)
{
    char key[512];
    if (!inf_key(*objp, key, sizeof(key)))
        return;
    struct inf_entry **pp = inf_slot(inf, key);
    struct inf_entry *e = pp ? *pp : NULL;
    if (!e) {
        inf->stats.duplicates++; /* deleted already (or never seen: nothing to tell) */
        return;
    }
    *pp = e->next;
    inf->count--;
    void *final = inf_value(inf, objp);
    emit_delete(inf, e->key, final ? final : e->value, false);
    inf_free_value(inf, final);
    inf_entry_free(inf, e);
}

/* ---- the entry points the watch drives ---- */

void kube_informer_list_begin(struct kube_informer *inf)
{
    inf->gen++;
}

void kube_informer_list_item(struct kube_informer *inf, cJSON *obj)
{
    inf_upsert(inf, &obj, true);
    cJSON_Delete(obj);
}

void kube_informer_list_end(struct kube_informer *inf, const char *rv)
{
    /* What the list did not contain was deleted while we were not watching. */
    size_t removed = 0;
    for (size_t i = 0; i < inf->nbuckets; i++) {
        struct inf_entry **pp = &inf->buckets[i];
        while (*pp) {
            struct inf_entry *e = *pp;
            if (e->gen == inf->gen) {
                pp = &e->next;
                continue;
            }
            *pp = e->next;
            inf->count--;
            removed++;
            emit_delete(inf, e->key, e->value, true);
            inf_entry_free(inf, e);
        }
    }
    inf_set_rv(inf, rv);
    inf->stats.lists++;
    inf->synced = true;
    inf_log(inf, KUBE_WATCH_INFO, "informer synced path=%s rv=%s objects=%zu relist_deletes=%zu", inf->path,
            rv ? rv : "", inf->count, removed);
    if (inf->h.on_synced)
        inf->h.on_synced(inf->ud);
}

void kube_informer_event(struct kube_informer *inf, enum kube_watch_type type, cJSON *obj)
{
    /* First: obj may be taken, and then freed by a delete, below. */
    inf_set_rv(inf, meta_str(obj, "resourceVersion"));
    switch (type) {
    case KUBE_WATCH_ADDED:
    case KUBE_WATCH_MODIFIED: inf_upsert(inf, &obj, false); break;
    case KUBE_WATCH_DELETED: inf_remove(inf, &obj); break;
    case KUBE_WATCH_BOOKMARK: break;
    }
    cJSON_Delete(obj);
}

/* ---- watch adapters ---- */

static void on_list_begin(void *ud)
{
    kube_informer_list_begin(ud);
}

static void on_list_item(cJSON *obj, void *ud)
{
    kube_informer_list_item(ud, obj);
}

static void on_list_end(const char *rv, void *ud)
{
    kube_informer_list_end(ud, rv);
}

static void on_event(enum kube_watch_type type, cJSON *obj, void *ud)
{
    kube_informer_event(ud, type, obj);
}

static void on_log(enum kube_watch_level level, const char *msg, void *ud)
{
    struct kube_informer *inf = ud;
    if (inf->h.log)
        inf->h.log(level, msg, inf->ud);
}

/* ---- life cycle and lookups ---- */

struct kube_informer *kube_informer_new(const struct kube_informer_opts *opts, struct kube_err *err)
{
    if (!opts || !opts->path || opts->path[0] != '/') {
        kube_err_set(err, 0, "Invalid", "informer: a collection path starting with / is required");
        return NULL;
    }
    struct kube_informer *inf = calloc(1, sizeof(*inf));
    if (!inf)
        goto oom;
    inf->path = strdup(opts->path);
    inf->label_selector = opts->label_selector ? strdup(opts->label_selector) : NULL;
    inf->field_selector = opts->field_selector ? strdup(opts->field_selector) : NULL;
    if (!inf->path || (opts->label_selector && !inf->label_selector) || (opts->field_selector && !inf->field_selector))
        goto oom;
    inf->list_mode = opts->list_mode;
    inf->watch_timeout_s = opts->watch_timeout_seconds;
    inf->watch_no_bookmarks = opts->watch_no_bookmarks;
    inf->project = opts->project;
    inf->free_value = opts->free_value ? opts->free_value : opts->project ? free : inf_default_free;
    inf->project_ud = opts->project_ud;
    inf->h = opts->handlers;
    inf->ud = opts->ud;
    if (inf_grow(inf) < 0)
        goto oom;
    return inf;
oom:
    kube_informer_free(inf);
    kube_err_set(err, 0, "Internal", "informer %s: out of memory", opts->path);
    return NULL;
}

void kube_informer_free(struct kube_informer *inf)
{
    if (!inf)
        return;
    kube_watch_free(inf->watch);
    for (size_t i = 0; i < inf->nbuckets; i++) {
        struct inf_entry *e = inf->buckets[i];
        while (e) {
            struct inf_entry *next = e->next;
            inf_entry_free(inf, e);
            e = next;
        }
    }
    free(inf->buckets);
    free(inf->rv);
    free(inf->path);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf);
}

int kube_informer_start(struct kube_informer *inf, struct kube_loop *loop, struct kube_client *client,
                        struct kube_err *err)
{
    if (!inf->watch) {
        struct kube_watch_opts wo = {
            .path = inf->path,
            .label_selector = inf->label_selector,
            .field_selector = inf->field_selector,
            .list_mode = inf->list_mode,
            .timeout_seconds = inf->watch_timeout_s,
            .no_bookmarks = inf->watch_no_bookmarks,
        };
        struct kube_watch_handler wh = {
            .list_begin = on_list_begin,
            .list_item = on_list_item,
            .list_end = on_list_end,
            .event = on_event,
            .log = on_log,
        };
        inf->watch = kube_watch_new(loop, client, &wo, &wh, inf, err);
        if (!inf->watch)
            return kube_err_wrap(err, "informer %s", inf->path);
    }
    return kube_watch_start(inf->watch, err);
}

bool kube_informer_synced(const struct kube_informer *inf)
{
    return inf->synced;
}

const void *kube_informer_get(const struct kube_informer *inf, const char *ns, const char *name)
{
    char key[512];
    if (!name)
        return NULL;
    if (ns && *ns)
        snprintf(key, sizeof(key), "%s/%s", ns, name);
    else
        snprintf(key, sizeof(key), "%s", name);
    const struct inf_entry *e = inf_find(inf, key);
    return e ? e->value : NULL;
}

const void *kube_informer_get_key(const struct kube_informer *inf, const char *key)
{
    const struct inf_entry *e = inf_find(inf, key);
    return e ? e->value : NULL;
}

bool kube_informer_has(const struct kube_informer *inf, const char *key)
{
    return inf_find(inf, key) != NULL;
}

const char *kube_informer_rv_of(const struct kube_informer *inf, const char *key)
{
    const struct inf_entry *e = inf_find(inf, key);
    return e ? e->rv : NULL;
}

size_t kube_informer_len(const struct kube_informer *inf)
{
    return inf->count;
}

int kube_informer_foreach(const struct kube_informer *inf,
                          int (*fn)(const char *key, const char *rv, const void *obj, void *ud), void *ud)
{
    for (size_t i = 0; i < inf->nbuckets; i++)
        for (const struct inf_entry *e = inf->buckets[i]; e; e = e->next) {
            int rc = fn(e->key, e->rv, e->value, ud);
            if (rc)
                return rc;
        }
    return 0;
}

const char *kube_informer_rv(const struct kube_informer *inf)
{
    return inf->rv ? inf->rv : "";
}

struct kube_informer_stats kube_informer_stats(const struct kube_informer *inf)
{
    return inf->stats;
}

struct kube_watch_stats kube_informer_watch_stats(const struct kube_informer *inf)
{
    struct kube_watch_stats s = {0};
    return inf->watch ? kube_watch_stats(inf->watch) : s;
}
