/* taintstate: the taint state kept between cycles, and status.taintKeys kept crash-safe (see
 * taintstate.h). */
#include "reconcile/taint/taintstate.h"

#include <stdlib.h>
#include <string.h>

static int record_cmp(const void *a, const void *b)
{
    return strcmp(((const struct taintstate_record *)a)->name, ((const struct taintstate_record *)b)->name);
}

const struct taintstate_record *taintstate_find(const struct taintstate *ts, const char *node)
{
    struct taintstate_record key = {.name = (char *)node};
    return ts->n ? bsearch(&key, ts->v, ts->n, sizeof(key), record_cmp) : NULL;
}

bool taintstate_cache_behind(const struct taintstate_record *rec, const char *cached_rv, int64_t now_ms)
{
    return rec && rec->written_rv[0] && now_ms - rec->written_ms < TAINTSTATE_OWN_WRITE_GRACE_MS && cached_rv &&
           cached_rv[0] && strcmp(cached_rv, rec->written_rv) != 0;
}

void taintstate_free(struct taintstate *ts)
{
    for (size_t i = 0; i < ts->n; i++)
        free(ts->v[i].name);
    free(ts->v);
    ts->v = NULL;
    ts->n = 0;
}

int taintstate_update(struct taintstate *ts, const struct taintfsm_result *res, const char (*written)[32],
                      int64_t now_ms)
{
    struct taintstate_record *v = calloc(res->nnodes ? res->nnodes : 1, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; v && i < res->nnodes; i++, n++) {
        const struct taintfsm_node *fn = &res->nodes[i];
        const struct taintstate_record *old = taintstate_find(ts, fn->name);
        struct taintstate_record *rec = &v[i];
        *rec = (struct taintstate_record){
            strdup(fn->name), fn->state, fn->since_ms, fn->tainted, fn->tainted_since_ms, "", 0};
        if (!rec->name)
            break;
        if (written[fn->input][0]) {
            memcpy(rec->written_rv, written[fn->input], sizeof(rec->written_rv));
            rec->written_ms = now_ms;
        } else if (old) {
            memcpy(rec->written_rv, old->written_rv, sizeof(rec->written_rv));
            rec->written_ms = old->written_ms;
        }
    }
    taintstate_free(ts);
    if (!v || n < res->nnodes) {
        for (size_t i = 0; i < n; i++)
            free(v[i].name);
        free(v);
        return -1;
    }
    ts->v = v;
    ts->n = n;
    if (n)
        qsort(ts->v, ts->n, sizeof(*ts->v), record_cmp);
    return 0;
}

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

bool taintstate_key_record_first(const struct api_status *stored, const char *stored_by_us, const char *key,
                                 size_t adds)
{
    if (adds == 0 || same(stored_by_us, key))
        return false;
    for (size_t i = 0; stored && i < stored->ntaint_keys; i++)
        if (same(stored->taint_keys[i], key))
            return false;
    return true;
}

bool taintstate_key_forget(const char *key, const char *current, int failures)
{
    return !same(key, current) && failures == 0;
}
