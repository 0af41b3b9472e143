/* movehistory: the compact record of the moves within the history window (see movehistory.h). */
#include "api/movehistory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "base/grow.h"

/* The latest time a status may carry (the end of the year 9999). */
#define MAX_TIME 253402300799LL

/* ---- lookup ---- */

static size_t find_workload(const struct api_move_history *mh, const char *key, bool *found)
{
    size_t lo = 0, hi = mh->nworkloads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(mh->workloads[mid].key, key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static size_t find_pair(const struct api_move_history *mh, const char *key, bool *found)
{
    size_t lo = 0, hi = mh->npairs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(mh->pairs[mid].key, key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static char *pair_key(const char *source, const char *destination)
{
    size_t a = strlen(source), b = strlen(destination);
    char *k = malloc(a + b + 2);
    if (!k)
        return NULL;
    memcpy(k, source, a);
    k[a] = '>';
    memcpy(k + a + 1, destination, b + 1);
    return k;
}

const struct api_move_workload *api_move_history_workload(const struct api_move_history *mh, const char *key)
{
    bool found;
    size_t i = find_workload(mh, key, &found);
    return found ? &mh->workloads[i] : NULL;
}

int64_t api_move_history_left_at(const struct api_move_history *mh, const char *key, const char *node)
{
    const struct api_move_workload *w = api_move_history_workload(mh, key);
    for (size_t i = 0; w && i < w->nleft; i++)
        if (strcmp(w->left[i].node, node) == 0)
            return w->left[i].at;
    return 0;
}

int64_t api_move_history_sent_at(const struct api_move_history *mh, const char *source, const char *destination)
{
    char *k = pair_key(source, destination);
    if (!k)
        return 0;
    bool found;
    size_t i = find_pair(mh, k, &found);
    free(k);
    return found ? mh->pairs[i].at : 0;
}

size_t api_move_history_moves_since(const struct api_move_history *mh, const char *key, int64_t since)
{
    size_t n = 0;
    for (size_t i = 0; i < mh->nworkloads; i++) {
        const struct api_move_workload *w = &mh->workloads[i];
        if (key && strcmp(w->key, key) != 0)
            continue;
        for (size_t k = 0; k < w->nmoved; k++)
            n += w->moved[k] >= since;
    }
    return n;
}

bool api_move_history_empty(const struct api_move_history *mh)
{
    return mh->nworkloads == 0 && mh->npairs == 0;
}

/* ---- record ---- */

/* Workload key's entry, made when new; NULL on no memory. */
static struct api_move_workload *workload_for(struct api_move_history *mh, const char *key)
{
    bool found;
    size_t i = find_workload(mh, key, &found);
    if (found)
        return &mh->workloads[i];
    char *k = strdup(key);
    if (!k || BASE_GROW(mh->workloads, mh->nworkloads + 1, mh->workloads_cap) < 0) {
        free(k);
        return NULL;
    }
    struct api_move_workload *v = mh->workloads;
    memmove(&v[i + 1], &v[i], (mh->nworkloads - i) * sizeof(*v));
    memset(&v[i], 0, sizeof(*v));
    v[i].key = k;
    mh->nworkloads++;
    return &v[i];
}

/* Insert time at into w's moved times (ascending), dropping the oldest when full. */
static void add_moved(struct api_move_workload *w, int64_t at)
{
    if (w->nmoved == API_MOVE_HISTORY_MAX_TIMES) {
        if (at < w->moved[0])
            return;
        memmove(&w->moved[0], &w->moved[1], (API_MOVE_HISTORY_MAX_TIMES - 1) * sizeof(w->moved[0]));
        w->nmoved--;
    }
    size_t pos = w->nmoved;
    while (pos > 0 && w->moved[pos - 1] > at) {
        w->moved[pos] = w->moved[pos - 1];
        pos--;
    }
    w->moved[pos] = at;
    w->nmoved++;
}

/* w left node at at: the node's latest time; a new node beyond the bound replaces the oldest. */
static int add_left(struct api_move_workload *w, const char *node, int64_t at)
{
    for (size_t i = 0; i < w->nleft; i++) {
        if (strcmp(w->left[i].node, node) == 0) {
            if (at > w->left[i].at)
                w->left[i].at = at;
            return 0;
        }
    }
    size_t slot = w->nleft;
    if (w->nleft == API_MOVE_HISTORY_MAX_LEFT) {
        slot = 0;
        for (size_t i = 1; i < w->nleft; i++)
            if (w->left[i].at < w->left[slot].at)
                slot = i;
        if (w->left[slot].at > at)
            return 0;
    }
    char *n = strdup(node);
    if (!n)
        return -1;
    if (slot < w->nleft)
        free(w->left[slot].node);
    else
        w->nleft++;
    w->left[slot] = (struct api_move_left){n, at};
    return 0;
}

int api_move_history_sent(struct api_move_history *mh, const char *source, const char *destination, int64_t at)
{
    char *k = pair_key(source, destination);
    if (!k)
        return -1;
    bool found;
    size_t i = find_pair(mh, k, &found);
    if (found) {
        free(k);
        if (at > mh->pairs[i].at)
            mh->pairs[i].at = at;
        return 0;
    }
    if (BASE_GROW(mh->pairs, mh->npairs + 1, mh->pairs_cap) < 0) {
        free(k);
        return -1;
    }
    memmove(&mh->pairs[i + 1], &mh->pairs[i], (mh->npairs - i) * sizeof(*mh->pairs));
    mh->pairs[i] = (struct api_move_pair){k, at};
    mh->npairs++;
    return 0;
}

int api_move_history_record(struct api_move_history *mh, const char *key, const char *source, const char *destination,
                            int64_t at)
{
    struct api_move_workload *w = workload_for(mh, key);
    if (!w)
        return -1;
    add_moved(w, at);
    if (source && add_left(w, source, at) < 0)
        return -1;
    if (source && destination && strcmp(source, destination) != 0)
        return api_move_history_sent(mh, source, destination, at);
    return 0;
}

int api_move_history_mark_unhelpful(struct api_move_history *mh, const char *key, int64_t at)
{
    struct api_move_workload *w = workload_for(mh, key);
    if (!w)
        return -1;
    if (at > w->unhelpful)
        w->unhelpful = at;
    return 0;
}

/* ---- prune and bound ---- */

/* Whether w keeps anything from before on. */
static bool workload_keeps(const struct api_move_workload *w, int64_t before)
{
    if (w->unhelpful && w->unhelpful >= before)
        return true;
    for (size_t k = 0; k < w->nmoved; k++)
        if (w->moved[k] >= before)
            return true;
    for (size_t k = 0; k < w->nleft; k++)
        if (w->left[k].at >= before)
            return true;
    return false;
}

void api_move_history_prune(struct api_move_history *mh, int64_t before)
{
    size_t keep = 0;
    for (size_t i = 0; i < mh->nworkloads; i++) {
        struct api_move_workload *w = &mh->workloads[i];
        if (!workload_keeps(w, before)) {
            free(w->key);
            for (size_t k = 0; k < w->nleft; k++)
                free(w->left[k].node);
            continue;
        }
        size_t m = 0;
        for (size_t k = 0; k < w->nmoved; k++)
            if (w->moved[k] >= before)
                w->moved[m++] = w->moved[k];
        w->nmoved = m;
        m = 0;
        for (size_t k = 0; k < w->nleft; k++) {
            if (w->left[k].at >= before)
                w->left[m++] = w->left[k];
            else
                free(w->left[k].node);
        }
        w->nleft = m;
        if (w->unhelpful < before)
            w->unhelpful = 0;
        mh->workloads[keep++] = *w;
    }
    mh->nworkloads = keep;
    keep = 0;
    for (size_t i = 0; i < mh->npairs; i++) {
        if (mh->pairs[i].at >= before)
            mh->pairs[keep++] = mh->pairs[i];
        else
            free(mh->pairs[i].key);
    }
    mh->npairs = keep;
}

/* Bytes of s as a JSON string, quotes included (cJSON's escaping). */
static size_t str_bytes(const char *s)
{
    size_t n = 2;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '\b' || *p == '\f' || *p == '\n' || *p == '\r' || *p == '\t')
            n += 2;
        else if (*p < 32)
            n += 6;
        else
            n += 1;
    }
    return n;
}

static size_t int_bytes(int64_t v)
{
    char b[32];
    return (size_t)snprintf(b, sizeof(b), "%lld", (long long)v);
}

/* Bytes of the JSON of mh without the facts older than before. */
static size_t bytes_from(const struct api_move_history *mh, int64_t before)
{
    size_t n = 2, nw = 0, np = 0; /* {} */
    for (size_t i = 0; i < mh->nworkloads; i++) {
        const struct api_move_workload *w = &mh->workloads[i];
        if (!workload_keeps(w, before))
            continue;
        n += nw++ ? 1 : 0;                                     /* , */
        n += strlen("{\"workload\":") + str_bytes(w->key) + 1; /* ... } */
        size_t k = 0;
        for (size_t j = 0; j < w->nmoved; j++)
            if (w->moved[j] >= before)
                n += (k++ ? 1 : 0) + int_bytes(w->moved[j]);
        if (k)
            n += strlen(",\"moved\":[]");
        k = 0;
        for (size_t j = 0; j < w->nleft; j++)
            if (w->left[j].at >= before)
                n += (k++ ? 1 : 0) + str_bytes(w->left[j].node) + 1 + int_bytes(w->left[j].at);
        if (k)
            n += strlen(",\"left\":{}");
        if (w->unhelpful && w->unhelpful >= before)
            n += strlen(",\"unhelpful\":") + int_bytes(w->unhelpful);
    }
    if (nw)
        n += strlen("\"workloads\":[]");
    for (size_t i = 0; i < mh->npairs; i++)
        if (mh->pairs[i].at >= before)
            n += (np++ ? 1 : 0) + str_bytes(mh->pairs[i].key) + 1 + int_bytes(mh->pairs[i].at);
    if (np)
        n += (nw ? 1 : 0) + strlen("\"sent\":{}");
    return n;
}

size_t api_move_history_bytes(const struct api_move_history *mh)
{
    return bytes_from(mh, INT64_MIN);
}

static int cmp_time(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t api_move_history_bound(struct api_move_history *mh, size_t max_bytes)
{
    if (api_move_history_bytes(mh) <= max_bytes)
        return 0;
    size_t n = mh->npairs;
    for (size_t i = 0; i < mh->nworkloads; i++)
        n += mh->workloads[i].nmoved + mh->workloads[i].nleft + 1;
    int64_t *t = malloc(n * sizeof(*t));
    int64_t cut = INT64_MAX; /* no memory: forget everything rather than exceed the bound */
    if (t) {
        size_t k = 0;
        for (size_t i = 0; i < mh->npairs; i++)
            t[k++] = mh->pairs[i].at;
        for (size_t i = 0; i < mh->nworkloads; i++) {
            const struct api_move_workload *w = &mh->workloads[i];
            for (size_t j = 0; j < w->nmoved; j++)
                t[k++] = w->moved[j];
            for (size_t j = 0; j < w->nleft; j++)
                t[k++] = w->left[j].at;
            t[k++] = w->unhelpful;
        }
        qsort(t, k, sizeof(*t), cmp_time);
        /* the smallest cut-off, one past a fact's time, under which the rest fits */
        size_t lo = 0, hi = k;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (bytes_from(mh, t[mid] + 1) <= max_bytes)
                hi = mid;
            else
                lo = mid + 1;
        }
        cut = lo < k ? t[lo] + 1 : INT64_MAX;
        free(t);
    }
    api_move_history_prune(mh, cut);
    return cut;
}

/* ---- encode ---- */

static bool add_number(cJSON *o, const char *key, int64_t v)
{
    return cJSON_AddNumberToObject(o, key, (double)v) != NULL;
}

static bool encode_workload(cJSON *arr, const struct api_move_workload *w)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return false;
    }
    bool ok = cJSON_AddStringToObject(o, "workload", w->key) != NULL;
    if (ok && w->nmoved) {
        cJSON *m = cJSON_AddArrayToObject(o, "moved");
        ok = m != NULL;
        for (size_t i = 0; ok && i < w->nmoved; i++) {
            cJSON *t = cJSON_CreateNumber((double)w->moved[i]);
            ok = t && cJSON_AddItemToArray(m, t);
            if (!ok)
                cJSON_Delete(t);
        }
    }
    if (ok && w->nleft) {
        cJSON *l = cJSON_AddObjectToObject(o, "left");
        ok = l != NULL;
        for (size_t i = 0; ok && i < w->nleft; i++)
            ok = add_number(l, w->left[i].node, w->left[i].at);
    }
    if (ok && w->unhelpful)
        ok = add_number(o, "unhelpful", w->unhelpful);
    return ok;
}

cJSON *api_move_history_encode(const struct api_move_history *mh)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    if (ok && mh->nworkloads) {
        cJSON *arr = cJSON_AddArrayToObject(o, "workloads");
        ok = arr != NULL;
        for (size_t i = 0; ok && i < mh->nworkloads; i++)
            ok = encode_workload(arr, &mh->workloads[i]);
    }
    if (ok && mh->npairs) {
        cJSON *s = cJSON_AddObjectToObject(o, "sent");
        ok = s != NULL;
        for (size_t i = 0; ok && i < mh->npairs; i++)
            ok = add_number(s, mh->pairs[i].key, mh->pairs[i].at);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- decode ---- */

/* A time: an integral number in (0, MAX_TIME]. */
static int decode_time(const cJSON *v, const char *path, int64_t *out, struct api_errors *errs)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble))
        return api_errors_add(errs, path, "must be an integer (Unix seconds)");
    if (v->valuedouble <= 0 || v->valuedouble > (double)MAX_TIME)
        return api_errors_add(errs, path, "must be a time between 1970 and 9999 in Unix seconds, not %.0f",
                              v->valuedouble);
    *out = (int64_t)v->valuedouble;
    return 0;
}

/* A name: a non-empty string of at most max bytes. */
static int check_name(const char *s, const char *path, size_t max, struct api_errors *errs)
{
    if (!s)
        return api_errors_add(errs, path, "must be named");
    size_t n = strnlen(s, max + 1);
    if (n == 0)
        return api_errors_add(errs, path, "must not be empty");
    if (n > max)
        return api_errors_add(errs, path, "must be at most %zu bytes", max);
    return 0;
}

static int decode_workload(const cJSON *j, const char *path, struct api_move_history *mh, struct api_errors *errs,
                           struct api_errors *warns)
{
    static const char *const known[] = {"workload", "moved", "left", "unhelpful", NULL};
    char p[API_JSON_PATH_MAX], ip[API_JSON_PATH_MAX];
    if (!cJSON_IsObject(j))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(j, path, known, warns);
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(j, "workload");
    if (!cJSON_IsString(key))
        return api_errors_add(errs, api_json_path(p, path, "workload"), "must be a string (the workload's key)");
    if (check_name(key->valuestring, api_json_path(p, path, "workload"), API_MOVE_HISTORY_MAX_KEY, errs) < 0)
        return -1;
    if (api_move_history_workload(mh, key->valuestring))
        return api_errors_add(errs, p, "%s is listed twice", key->valuestring);
    const cJSON *moved = NULL, *left = NULL;
    if (api_json_array(j, path, "moved", &moved, errs) < 0 || api_json_object(j, path, "left", &left, errs) < 0)
        return -1;
    if (moved && cJSON_GetArraySize(moved) > API_MOVE_HISTORY_MAX_TIMES)
        return api_errors_add(errs, api_json_path(p, path, "moved"), "must have at most %d items",
                              API_MOVE_HISTORY_MAX_TIMES);
    if (left && cJSON_GetArraySize(left) > API_MOVE_HISTORY_MAX_LEFT)
        return api_errors_add(errs, api_json_path(p, path, "left"), "must have at most %d properties",
                              API_MOVE_HISTORY_MAX_LEFT);
    struct api_move_workload *w = workload_for(mh, key->valuestring);
    if (!w)
        return api_errors_add(errs, path, "out of memory");
    const cJSON *it;
    int i = 0;
    api_json_path(p, path, "moved");
    cJSON_ArrayForEach (it, moved) {
        int64_t t = 0;
        if (decode_time(it, api_json_index(ip, p, i++), &t, errs) < 0)
            return -1;
        add_moved(w, t);
    }
    api_json_path(p, path, "left");
    cJSON_ArrayForEach (it, left) {
        int64_t t = 0;
        if (check_name(it->string, api_json_path(ip, p, it->string ? it->string : ""), API_MOVE_HISTORY_MAX_NODE,
                       errs) < 0 ||
            decode_time(it, ip, &t, errs) < 0)
            return -1;
        if (api_move_history_left_at(mh, key->valuestring, it->string))
            return api_errors_add(errs, ip, "is listed twice");
        if (add_left(w, it->string, t) < 0)
            return api_errors_add(errs, ip, "out of memory");
    }
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "unhelpful");
    if (u && !cJSON_IsNull(u) && decode_time(u, api_json_path(p, path, "unhelpful"), &w->unhelpful, errs) < 0)
        return -1;
    return 0;
}

static int decode_pair(const cJSON *it, const char *path, struct api_move_history *mh, struct api_errors *errs)
{
    char p[API_JSON_PATH_MAX];
    api_json_path(p, path, it->string ? it->string : "");
    const char *gt = it->string ? strchr(it->string, '>') : NULL;
    if (!gt || gt == it->string || !gt[1])
        return api_errors_add(errs, p, "must be a key of the form source>destination");
    size_t a = (size_t)(gt - it->string);
    if (a > API_MOVE_HISTORY_MAX_NODE || strlen(gt + 1) > API_MOVE_HISTORY_MAX_NODE)
        return api_errors_add(errs, p, "node names must be at most %d bytes", API_MOVE_HISTORY_MAX_NODE);
    int64_t t = 0;
    if (decode_time(it, p, &t, errs) < 0)
        return -1;
    bool found;
    find_pair(mh, it->string, &found);
    if (found)
        return api_errors_add(errs, p, "is listed twice");
    char src[API_MOVE_HISTORY_MAX_NODE + 1];
    memcpy(src, it->string, a);
    src[a] = 0;
    if (api_move_history_sent(mh, src, gt + 1, t) < 0)
        return api_errors_add(errs, p, "out of memory");
    return 0;
}

int api_move_history_decode(const cJSON *json, const char *path, struct api_move_history *mh, struct api_errors *errs,
                            struct api_errors *warns)
{
    static const char *const known[] = {"workloads", "sent", NULL};
    char p[API_JSON_PATH_MAX], ip[API_JSON_PATH_MAX];
    api_move_history_release(mh);
    if (!json || cJSON_IsNull(json))
        return 0;
    if (!cJSON_IsObject(json))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(json, path, known, warns);
    const cJSON *ws = NULL, *sent = NULL;
    if (api_json_array(json, path, "workloads", &ws, errs) < 0 || api_json_object(json, path, "sent", &sent, errs) < 0)
        return -1;
    if (ws && cJSON_GetArraySize(ws) > API_MOVE_HISTORY_MAX_WORKLOADS)
        return api_errors_add(errs, api_json_path(p, path, "workloads"), "must have at most %d items",
                              API_MOVE_HISTORY_MAX_WORKLOADS);
    if (sent && cJSON_GetArraySize(sent) > API_MOVE_HISTORY_MAX_PAIRS)
        return api_errors_add(errs, api_json_path(p, path, "sent"), "must have at most %d properties",
                              API_MOVE_HISTORY_MAX_PAIRS);
    int rc = 0, i = 0;
    const cJSON *it;
    api_json_path(p, path, "workloads");
    cJSON_ArrayForEach (it, ws) {
        rc = decode_workload(it, api_json_index(ip, p, i++), mh, errs, warns);
        if (rc < 0)
            break;
    }
    api_json_path(p, path, "sent");
    const cJSON *pairs = rc < 0 ? NULL : sent;
    cJSON_ArrayForEach (it, pairs) {
        rc = decode_pair(it, p, mh, errs);
        if (rc < 0)
            break;
    }
    if (rc < 0) {
        api_move_history_release(mh);
        return -1;
    }
    if (api_move_history_bytes(mh) > API_MOVE_HISTORY_MAX_BYTES) {
        api_errors_add(warns, path, "over %d bytes: its oldest facts are dropped", API_MOVE_HISTORY_MAX_BYTES);
        api_move_history_bound(mh, API_MOVE_HISTORY_MAX_BYTES);
    }
    return 0;
}

/* ---- copy, compare, release ---- */

int api_move_history_copy(struct api_move_history *dst, const struct api_move_history *src)
{
    memset(dst, 0, sizeof(*dst));
    for (size_t i = 0; i < src->nworkloads; i++) {
        const struct api_move_workload *w = &src->workloads[i];
        struct api_move_workload *d = workload_for(dst, w->key);
        if (!d)
            goto oom;
        memcpy(d->moved, w->moved, sizeof(d->moved));
        d->nmoved = w->nmoved;
        d->unhelpful = w->unhelpful;
        for (size_t k = 0; k < w->nleft; k++) {
            d->left[k] = (struct api_move_left){strdup(w->left[k].node), w->left[k].at};
            if (!d->left[k].node)
                goto oom;
            d->nleft++;
        }
    }
    for (size_t i = 0; i < src->npairs; i++) {
        char *k = strdup(src->pairs[i].key);
        if (!k || BASE_GROW(dst->pairs, dst->npairs + 1, dst->pairs_cap) < 0) {
            free(k);
            goto oom;
        }
        dst->pairs[dst->npairs++] = (struct api_move_pair){k, src->pairs[i].at};
    }
    return 0;
oom:
    api_move_history_release(dst);
    return -1;
}

static bool left_has(const struct api_move_workload *w, const struct api_move_left *l)
{
    for (size_t i = 0; i < w->nleft; i++)
        if (strcmp(w->left[i].node, l->node) == 0)
            return w->left[i].at == l->at;
    return false;
}

bool api_move_history_equal(const struct api_move_history *a, const struct api_move_history *b)
{
    if (a->nworkloads != b->nworkloads || a->npairs != b->npairs)
        return false;
    for (size_t i = 0; i < a->nworkloads; i++) {
        const struct api_move_workload *x = &a->workloads[i], *y = &b->workloads[i];
        if (strcmp(x->key, y->key) != 0 || x->nmoved != y->nmoved || x->nleft != y->nleft ||
            x->unhelpful != y->unhelpful || memcmp(x->moved, y->moved, x->nmoved * sizeof(x->moved[0])) != 0)
            return false;
        for (size_t k = 0; k < x->nleft; k++)
            if (!left_has(y, &x->left[k]))
                return false;
    }
    for (size_t i = 0; i < a->npairs; i++)
        if (strcmp(a->pairs[i].key, b->pairs[i].key) != 0 || a->pairs[i].at != b->pairs[i].at)
            return false;
    return true;
}

void api_move_history_release(struct api_move_history *mh)
{
    for (size_t i = 0; i < mh->nworkloads; i++) {
        free(mh->workloads[i].key);
        for (size_t k = 0; k < mh->workloads[i].nleft; k++)
            free(mh->workloads[i].left[k].node);
    }
    free(mh->workloads);
    for (size_t i = 0; i < mh->npairs; i++)
        free(mh->pairs[i].key);
    free(mh->pairs);
    memset(mh, 0, sizeof(*mh));
}
