#include "kube/lease.h"
#include "kube/transport.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "base/num.h"

/* ---- pure decision ---- */

int kube_lease_timing_check(struct kube_lease_timing *t, struct kube_err *err)
{
    if (!t->lease_duration_ms)
        t->lease_duration_ms = KUBE_LEASE_DEFAULT_DURATION_MS;
    if (!t->renew_deadline_ms)
        t->renew_deadline_ms = KUBE_LEASE_DEFAULT_RENEW_DEADLINE_MS;
    if (!t->retry_period_ms)
        t->retry_period_ms = KUBE_LEASE_DEFAULT_RETRY_PERIOD_MS;
    if (t->lease_duration_ms < 1000 || t->lease_duration_ms % 1000)
        return kube_err_set(err, 0, "Config", "lease duration %lld ms: must be a whole number of seconds, at least 1 s",
                            (long long)t->lease_duration_ms);
    if (t->retry_period_ms <= 0 || t->renew_deadline_ms <= t->retry_period_ms ||
        t->lease_duration_ms <= t->renew_deadline_ms)
        return kube_err_set(err, 0, "Config",
                            "lease timing: need lease duration (%lld ms) > renew deadline (%lld ms) > retry period "
                            "(%lld ms) > 0",
                            (long long)t->lease_duration_ms, (long long)t->renew_deadline_ms,
                            (long long)t->retry_period_ms);
    return 0;
}

int64_t kube_lease_expiry_ms(const struct kube_lease_memory *mem)
{
    return mem->observed_at_ms + mem->observed_duration_s * 1000;
}

enum kube_lease_action kube_lease_decide(struct kube_lease_memory *mem, const struct kube_lease_record *rec,
                                         const char *identity, const struct kube_lease_timing *t, int64_t now_ms)
{
    int deadline_passed = mem->leader && now_ms - mem->last_renew_ms > t->renew_deadline_ms;
    if (!rec) {
        /* could not read the Lease: a leader keeps leading until its renew deadline */
        if (deadline_passed) {
            mem->leader = 0;
            return KUBE_LEASE_ACT_STEP_DOWN;
        }
        return KUBE_LEASE_ACT_WAIT;
    }
    if (!rec->exists) {
        mem->observed_rv[0] = 0;
        mem->observed_at_ms = now_ms;
        mem->observed_duration_s = 0;
        if (deadline_passed) {
            mem->leader = 0;
            return KUBE_LEASE_ACT_STEP_DOWN;
        }
        return KUBE_LEASE_ACT_CREATE;
    }
    if (strcmp(rec->resource_version, mem->observed_rv) != 0) {
        /* the record changed: the lease is valid for its duration from now, on our clock */
        snprintf(mem->observed_rv, sizeof(mem->observed_rv), "%s", rec->resource_version);
        mem->observed_at_ms = now_ms;
        mem->observed_duration_s = rec->duration_s;
    }
    if (!strcmp(rec->holder, identity)) {
        if (deadline_passed) {
            mem->leader = 0;
            return KUBE_LEASE_ACT_STEP_DOWN;
        }
        return KUBE_LEASE_ACT_RENEW;
    }
    if (mem->leader) {
        /* someone else holds (or released) what we thought was ours */
        mem->leader = 0;
        return KUBE_LEASE_ACT_STEP_DOWN;
    }
    if (rec->holder[0] && now_ms < kube_lease_expiry_ms(mem))
        return KUBE_LEASE_ACT_WAIT;
    return KUBE_LEASE_ACT_ACQUIRE;
}

/* ---- edge ---- */

struct kube_lease {
    struct kube_client *client; /* own */
    char *ns, *name, *identity, *path, *collection;
    struct kube_lease_timing t;
    struct kube_lease_memory mem;
    cJSON *obj; /* the Lease last read (for updates) */
    char holder[256];
    int64_t next_ms;
    int started;
    unsigned int seed;
};

/* metav1.MicroTime of the wall clock now. */
static void micro_now(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06ldZ", base, ts.tv_nsec / 1000);
}

struct kube_lease *kube_lease_new(struct kube_client *c, const char *ns, const char *name, const char *identity,
                                  const struct kube_lease_timing *timing, struct kube_err *err)
{
    kube_err_clear(err);
    if (!ns || !*ns || !name || !*name || !identity || !*identity) {
        kube_err_set(err, 0, "Config", "lease: namespace, name and identity must be non-empty");
        return NULL;
    }
    if (strlen(identity) >= sizeof(((struct kube_lease_record *)0)->holder)) {
        kube_err_set(err, 0, "Config", "lease: identity longer than 255 bytes");
        return NULL;
    }
    struct kube_lease_timing t = timing ? *timing : (struct kube_lease_timing){0};
    if (kube_lease_timing_check(&t, err))
        return NULL;
    struct kube_lease *l = calloc(1, sizeof(*l));
    if (!l) {
        kube_err_set(err, 0, "Config", "out of memory");
        return NULL;
    }
    l->t = t;
    l->ns = strdup(ns);
    l->name = strdup(name);
    l->identity = strdup(identity);
    l->path = kube_path("coordination.k8s.io/v1", ns, "leases", name, NULL);
    l->collection = kube_path("coordination.k8s.io/v1", ns, "leases", NULL, NULL);
    l->client = kube_client_new_sibling(c, err);
    if (!l->ns || !l->name || !l->identity || !l->path || !l->collection || !l->client) {
        if (l->client)
            kube_err_set(err, 0, "Config", "out of memory");
        kube_lease_free(l);
        return NULL;
    }
    kube_client_set_rate_limit(l->client, 0, 0); /* a few writes per retry period: not limited */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    l->seed = (unsigned int)(ts.tv_nsec ^ ts.tv_sec);
    return l;
}

void kube_lease_free(struct kube_lease *l)
{
    if (!l)
        return;
    kube_client_free(l->client);
    cJSON_Delete(l->obj);
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l->path);
    free(l->collection);
    free(l);
}

const char *kube_lease_holder(const struct kube_lease *l)
{
    return l->holder;
}

void kube_lease_record_read(const cJSON *obj, struct kube_lease_record *rec)
{
    memset(rec, 0, sizeof(*rec));
    rec->exists = 1;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(spec, "holderIdentity");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    if (cJSON_IsString(h))
        snprintf(rec->holder, sizeof(rec->holder), "%s", h->valuestring);
    rec->duration_s = kube_num_int_or(d, 0, INT32_MAX, 0); /* an int32 in the Lease API */
    if (cJSON_IsString(rv))
        snprintf(rec->resource_version, sizeof(rec->resource_version), "%s", rv->valuestring);
}

/* Set spec fields for holding (holder non-empty) or releasing (holder ""). */
static void set_spec(cJSON *obj, const char *holder, int64_t duration_s, int new_acquire, int transitions_inc)
{
    char now[48];
    micro_now(now, sizeof(now));
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    if (!cJSON_IsObject(spec)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
        spec = cJSON_AddObjectToObject(obj, "spec");
    }
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
    double transitions = cJSON_IsNumber(tr) ? tr->valuedouble : 0;
#define SET(key, item)                                      \
    do {                                                    \
        cJSON_DeleteItemFromObjectCaseSensitive(spec, key); \
        cJSON_AddItemToObject(spec, key, item);             \
    } while (0)
    SET("holderIdentity", cJSON_CreateString(holder));
    SET("leaseDurationSeconds", cJSON_CreateNumber((double)duration_s));
    SET("renewTime", cJSON_CreateString(now));
    if (new_acquire || !cJSON_GetObjectItemCaseSensitive(spec, "acquireTime"))
        SET("acquireTime", cJSON_CreateString(now));
    SET("leaseTransitions", cJSON_CreateNumber(transitions + (transitions_inc ? 1 : 0)));
#undef SET
}

static cJSON *new_lease_object(const struct kube_lease *l)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject(o, "kind", "Lease");
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(md, "name", l->name);
    cJSON_AddStringToObject(md, "namespace", l->ns);
    cJSON_AddObjectToObject(o, "spec");
    return o;
}

/* Record a successful write: we lead, the stored object is our new observation. */
static void took(struct kube_lease *l, cJSON *stored, int64_t at_ms)
{
    struct kube_lease_record rec;
    kube_lease_record_read(stored, &rec);
    cJSON_Delete(l->obj);
    l->obj = stored;
    l->mem.leader = 1;
    l->mem.last_renew_ms = at_ms;
    snprintf(l->mem.observed_rv, sizeof(l->mem.observed_rv), "%s", rec.resource_version);
    l->mem.observed_at_ms = at_ms;
    l->mem.observed_duration_s = rec.duration_s;
    snprintf(l->holder, sizeof(l->holder), "%s", rec.holder);
}

/* Bound a blocking call: a leader must be back before its renew deadline. */
static void set_call_timeout(struct kube_lease *l, int64_t now_ms)
{
    int64_t timeout = l->t.renew_deadline_ms;
    if (l->mem.leader) {
        timeout = l->mem.last_renew_ms + l->t.renew_deadline_ms - now_ms;
        if (timeout < 500)
            timeout = 500;
    }
    kube_client_set_timeout(l->client, (long)timeout);
}

enum kube_lease_state kube_lease_tick(struct kube_lease *l, int64_t now_ms, int64_t *next_tick_ms, struct kube_err *err)
{
    kube_err_clear(err);
    if (l->started && now_ms < l->next_ms) {
        if (next_tick_ms)
            *next_tick_ms = l->next_ms;
        return l->mem.leader ? KUBE_LEASE_LEADER : KUBE_LEASE_FOLLOWER;
    }
    l->started = 1;
    int64_t entry_mono = base_mono_ms();
    /* the caller's clock plus the real time our blocking calls took */
#define NOW() (now_ms + (base_mono_ms() - entry_mono))
    int was_leader = l->mem.leader;
    struct kube_err e;
    set_call_timeout(l, now_ms);
    cJSON *got = kube_rest_get(l->client, l->path, &e);
    struct kube_lease_record rec, *recp = &rec;
    if (got) {
        kube_lease_record_read(got, &rec);
        cJSON_Delete(l->obj);
        l->obj = got;
        snprintf(l->holder, sizeof(l->holder), "%s", rec.holder);
    } else if (e.status == 404) {
        memset(&rec, 0, sizeof(rec));
        l->holder[0] = 0;
    } else {
        recp = NULL;
        if (err)
            *err = e;
    }
    int64_t t0 = NOW();
    enum kube_lease_action act = kube_lease_decide(&l->mem, recp, l->identity, &l->t, t0);
    switch (act) {
    case KUBE_LEASE_ACT_CREATE: {
        cJSON *o = new_lease_object(l);
        set_spec(o, l->identity, l->t.lease_duration_ms / 1000, 1, 0);
        set_call_timeout(l, t0);
        cJSON *stored = kube_rest_create(l->client, l->collection, o, NULL, &e);
        cJSON_Delete(o);
        if (stored)
            took(l, stored, t0);
        else if (err)
            *err = e;
        break;
    }
    case KUBE_LEASE_ACT_RENEW:
    case KUBE_LEASE_ACT_ACQUIRE: {
        int acquire = act == KUBE_LEASE_ACT_ACQUIRE || !l->mem.leader;
        set_spec(l->obj, l->identity, l->t.lease_duration_ms / 1000, acquire, act == KUBE_LEASE_ACT_ACQUIRE);
        set_call_timeout(l, t0);
        cJSON *stored = kube_rest_update(l->client, l->path, l->obj, NULL, &e);
        if (stored) {
            took(l, stored, t0);
        } else {
            /* 409: another candidate wrote first; we learn who at the next read */
            if (err)
                *err = e;
        }
        break;
    }
    case KUBE_LEASE_ACT_WAIT:
    case KUBE_LEASE_ACT_STEP_DOWN: break;
    }
    /* a leader whose renewals failed past the deadline steps down now, not a tick later */
    if (l->mem.leader && NOW() - l->mem.last_renew_ms > l->t.renew_deadline_ms)
        l->mem.leader = 0;
#undef NOW
    int64_t period = l->t.retry_period_ms;
    if (!l->mem.leader)
        period += (int64_t)(rand_r(&l->seed) % (unsigned)(period / 5 + 1)); /* jitter followers */
    l->next_ms = now_ms + period;
    if (next_tick_ms)
        *next_tick_ms = l->next_ms;
    if (l->mem.leader)
        return KUBE_LEASE_LEADER;
    return was_leader ? KUBE_LEASE_LOST : KUBE_LEASE_FOLLOWER;
}

int kube_lease_release(struct kube_lease *l, struct kube_err *err)
{
    kube_err_clear(err);
    if (!l->mem.leader)
        return 0;
    kube_client_set_timeout(l->client, (long)l->t.renew_deadline_ms);
    for (int attempt = 0; attempt < 3; attempt++) {
        cJSON *got = kube_rest_get(l->client, l->path, err);
        if (!got) {
            if (err && err->status == 404) {
                l->mem.leader = 0;
                kube_err_clear(err);
                return 0;
            }
            return -1;
        }
        struct kube_lease_record rec;
        kube_lease_record_read(got, &rec);
        if (strcmp(rec.holder, l->identity)) {
            /* not ours any more: nothing to release */
            cJSON_Delete(got);
            l->mem.leader = 0;
            return 0;
        }
        set_spec(got, "", 1, 1, 0);
        cJSON *stored = kube_rest_update(l->client, l->path, got, NULL, err);
        cJSON_Delete(got);
        if (stored) {
            cJSON_Delete(stored);
            l->mem.leader = 0;
            l->holder[0] = 0;
            return 0;
        }
        if (!err || err->status != 409)
            return -1;
    }
    return -1;
}
