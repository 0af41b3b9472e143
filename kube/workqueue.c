/* workqueue: coalescing, delayed, one-at-a-time-per-key work queue (see workqueue.h). */
#include "kube/workqueue.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/grow.h"

struct entry {
    char *key;
    bool pending;
    bool processing;
    int64_t due;  /* when pending */
    uint64_t seq; /* order in which it became pending */
};

struct workqueue {
    workqueue_clock_fn clock;
    void *ud;
    struct entry *v;
    size_t n, cap;
    uint64_t seq;
};

static int64_t monotonic_ms(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct workqueue *workqueue_new(workqueue_clock_fn clock, void *ud)
{
    struct workqueue *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->clock = clock ? clock : monotonic_ms;
    q->ud = ud;
    return q;
}

void workqueue_free(struct workqueue *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->n; i++)
        free(q->v[i].key);
    free(q->v);
    free(q);
}

static struct entry *find(const struct workqueue *q, const char *key)
{
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->v[i].key, key) == 0)
            return &q->v[i];
    return NULL;
}

/* Drop entry e when it is neither pending nor in process. */
static void maybe_drop(struct workqueue *q, struct entry *e)
{
    if (e->pending || e->processing)
        return;
    free(e->key);
    size_t i = (size_t)(e - q->v);
    memmove(&q->v[i], &q->v[i + 1], (q->n - i - 1) * sizeof(*e));
    q->n--;
}

int workqueue_add_after(struct workqueue *q, const char *key, int64_t delay_ms)
{
    int64_t due = q->clock(q->ud) + (delay_ms > 0 ? delay_ms : 0);
    struct entry *e = find(q, key);
    if (!e) {
        if (BASE_GROW(q->v, q->n + 1, q->cap) < 0)
            return -1;
        char *k = strdup(key);
        if (!k)
            return -1;
        e = &q->v[q->n++];
        memset(e, 0, sizeof(*e));
        e->key = k;
    }
    if (!e->pending) {
        e->pending = true;
        e->due = due;
        e->seq = q->seq++;
    } else if (due < e->due) {
        e->due = due;
    }
    return 0;
}

int workqueue_add(struct workqueue *q, const char *key)
{
    return workqueue_add_after(q, key, 0);
}

/* The pending key not in process due soonest (ties: lowest seq), or NULL. */
static struct entry *next_entry(const struct workqueue *q)
{
    struct entry *best = NULL;
    for (size_t i = 0; i < q->n; i++) {
        struct entry *e = &q->v[i];
        if (!e->pending || e->processing)
            continue;
        if (!best || e->due < best->due || (e->due == best->due && e->seq < best->seq))
            best = e;
    }
    return best;
}

const char *workqueue_get(struct workqueue *q)
{
    struct entry *e = next_entry(q);
    if (!e || e->due > q->clock(q->ud))
        return NULL;
    e->pending = false;
    e->processing = true;
    return e->key;
}

void workqueue_done(struct workqueue *q, const char *key)
{
    struct entry *e = find(q, key);
    if (!e)
        return;
    e->processing = false;
    maybe_drop(q, e);
}

void workqueue_forget(struct workqueue *q, const char *key)
{
    struct entry *e = find(q, key);
    if (!e)
        return;
    e->pending = false;
    maybe_drop(q, e);
}

int64_t workqueue_next_delay(const struct workqueue *q)
{
    const struct entry *e = next_entry(q);
    if (!e)
        return -1;
    int64_t d = e->due - q->clock(q->ud);
    return d > 0 ? d : 0;
}

size_t workqueue_pending(const struct workqueue *q)
{
    size_t n = 0;
    for (size_t i = 0; i < q->n; i++)
        n += q->v[i].pending;
    return n;
}

bool workqueue_processing(const struct workqueue *q, const char *key)
{
    const struct entry *e = find(q, key);
    return e && e->processing;
}
