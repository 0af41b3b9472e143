/* kube_multiget: concurrent requests on the client's multi handle (see multiget.h). */
#include "kube/multiget.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/util.h"
#include "kube/ratelimit.h"
#include "kube/rest.h"

/* Bytes of libcurl's receive buffer for each transfer (its smallest allowed is 1 KiB). */
#define RECEIVE_BUFFER 4096L

/* Weight of the latest write in the running mean of the writes' time. */
#define WRITE_TIME_WEIGHT 0.2

/* One request in flight. */
struct xfer {
    CURL *easy;
    struct curl_slist *headers;
    struct kube_rest_reply reply;
    char *url;
    const char *method;
    size_t idx;
    int64_t started_ms; /* base_mono_ms */
    char errbuf[CURL_ERROR_SIZE];
};

static void xfer_clear(CURLM *m, struct xfer *x)
{
    if (x->easy) {
        curl_multi_remove_handle(m, x->easy);
        curl_easy_cleanup(x->easy);
    }
    curl_slist_free_all(x->headers);
    free(x->reply.data);
    free(x->url);
    memset(x, 0, sizeof(*x));
}

/* The method and body of q on x's handle (after kube_config_prepare). */
static CURLcode xfer_body(struct xfer *x, const struct kube_multi_req *q)
{
    CURLcode rc = CURLE_OK;
    if (strcmp(q->method, "GET") != 0)
        rc = curl_easy_setopt(x->easy, CURLOPT_CUSTOMREQUEST, q->method);
    if (rc == CURLE_OK && q->content_type) {
        char h[128];
        snprintf(h, sizeof(h), "Content-Type: %s", q->content_type);
        struct curl_slist *nh = curl_slist_append(x->headers, h);
        if (!nh)
            return CURLE_OUT_OF_MEMORY;
        x->headers = nh;
    }
    if (rc == CURLE_OK && q->body)
        rc = curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, q->body);
    if (rc == CURLE_OK && q->body)
        rc = curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(q->body));
    return rc;
}

/* Set up x for q and add it to m. Returns 0, or -1 with err (x cleared). */
static int xfer_start(struct kube_client *c, CURLM *m, struct xfer *x, const struct kube_multi_req *q,
                      const struct kube_multiget_opts *o, struct kube_err *err)
{
    struct kube_config *cfg = kube_client_config(c);
    x->reply.max = (size_t)o->max_reply;
    x->method = q->method;
    x->started_ms = base_mono_ms();
    if (!(x->easy = curl_easy_init()) || asprintf(&x->url, "%s%s", kube_config_server(cfg), q->path) < 0) {
        x->url = NULL;
        xfer_clear(m, x);
        return kube_err_set(err, 0, "Transport", "%s %s: out of memory", q->method, q->path);
    }
    if (kube_config_prepare(cfg, x->easy, &x->headers, err) < 0) {
        kube_err_wrap(err, "%s %s", q->method, x->url);
        xfer_clear(m, x);
        return -1;
    }
    CURLcode rc = xfer_body(x, q);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_URL, x->url);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->headers);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_ACCEPT_ENCODING, "");
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_PIPEWAIT, 1L);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_CONNECTTIMEOUT_MS, o->timeout_ms < 10000 ? o->timeout_ms : 10000L);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, kube_rest_reply_write);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, &x->reply);
    /* libcurl allocates its receive buffer (16 KiB by default) per transfer; with a reply
     * handed over in smaller pieces, many transfers in flight cost 12 KiB less each */
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_BUFFERSIZE, RECEIVE_BUFFER);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
    if (rc != CURLE_OK) {
        kube_err_set(err, 0, "Transport", "%s %s: setting up the request: %s", q->method, x->url,
                     curl_easy_strerror(rc));
        xfer_clear(m, x);
        return -1;
    }
    CURLMcode mrc = curl_multi_add_handle(m, x->easy);
    if (mrc != CURLM_OK) {
        kube_err_set(err, 0, "Transport", "%s %s: %s", q->method, x->url, curl_multi_strerror(mrc));
        curl_easy_cleanup(x->easy);
        x->easy = NULL;
        xfer_clear(m, x);
        return -1;
    }
    return 0;
}

/* A finished transfer: its reply parsed or its error, handed to fn. */
static void xfer_finish(struct kube_client *c, struct xfer *x, CURLcode result, const struct kube_multiget_opts *o,
                        kube_multiget_fn fn, void *ud)
{
    struct kube_err err;
    kube_err_clear(&err);
    cJSON *obj = NULL;
    long status = 0;
    if (result != CURLE_OK) {
        kube_client_observe(c, x->method, 0);
        if (x->reply.too_big)
            kube_err_set(&err, 0, "Transport", "%s %s: reply larger than %ld bytes", x->method, x->url, o->max_reply);
        else if (result == CURLE_OPERATION_TIMEDOUT)
            kube_err_set(&err, 0, "Timeout", "%s %s: no reply within %ld ms", x->method, x->url, o->timeout_ms);
        else
            kube_err_set(&err, 0, "Transport", "%s %s: %s%s%s", x->method, x->url, curl_easy_strerror(result),
                         x->errbuf[0] ? ": " : "", x->errbuf);
    } else {
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
        kube_client_observe(c, x->method, status);
        if (status < 200 || status > 299) {
            kube_rest_decode_status(x->reply.data, x->reply.len, status, x->method, x->url, &err);
        } else if (!(obj = x->reply.len ? cJSON_ParseWithLength(x->reply.data, x->reply.len) : cJSON_CreateObject())) {
            kube_err_set(&err, status, "Decode", "%s %s: HTTP %ld reply of %zu bytes is not JSON", x->method, x->url,
                         status, x->reply.len);
        }
    }
    fn(x->idx, obj, obj ? NULL : &err, ud);
    cJSON_Delete(obj);
}

/* One call of kube_multiget. */
struct run {
    struct kube_client *c;
    CURLM *m;
    struct xfer *slots; /* o.max_in_flight of them; a free one has no easy handle */
    size_t running, next;
    size_t limit;    /* requests to run at once now (o.max_in_flight, or as the writes' pace needs) */
    double write_ms; /* running mean of the time of the writes answered, or 0 */
    const struct kube_multi_req *reqs;
    size_t n;
    bool reserved;  /* reqs[next], a write, holds a token of the write budget */
    int64_t due_ms; /* when it may start (base_mono_ms) */
    struct kube_multiget_opts o;
    kube_multiget_fn fn;
    void *ud;
};

/* Whether reqs[next] may start now: a GET, or a write whose token of the write budget is due. */
static bool may_start(struct run *r)
{
    if (strcmp(r->reqs[r->next].method, "GET") == 0)
        return true;
    if (!r->reserved) {
        r->due_ms = base_mono_ms() + kube_client_reserve_write(r->c);
        r->reserved = true;
    }
    if (base_mono_ms() < r->due_ms)
        return false;
    r->reserved = false;
    return true;
}

/* Start requests until limit run, none is left or a write must wait for its token; a
 * request that cannot start is reported to fn at once. */
static void fill(struct run *r)
{
    for (size_t s = 0; s < r->o.max_in_flight && r->running < r->limit && r->next < r->n;) {
        if (r->slots[s].easy) {
            s++;
            continue;
        }
        if (!may_start(r))
            break;
        struct kube_err err;
        size_t i = r->next++;
        r->slots[s].idx = i;
        if (xfer_start(r->c, r->m, &r->slots[s], &r->reqs[i], &r->o, &err) < 0) {
            r->fn(i, NULL, &err, r->ud); /* the slot stays free for the next path */
        } else {
            r->running++;
            s++;
        }
    }
}

/* A write answered after ms: with min_in_flight, the requests to run at once follow the
 * writes' time. */
static void note_write(struct run *r, int64_t ms)
{
    if (!r->o.min_in_flight)
        return;
    r->write_ms = r->write_ms > 0 ? (1 - WRITE_TIME_WEIGHT) * r->write_ms + WRITE_TIME_WEIGHT * (double)ms : (double)ms;
    r->limit =
        kube_ratelimit_in_flight(kube_client_write_qps(r->c), r->write_ms, r->o.min_in_flight, r->o.max_in_flight);
}

/* Hand every finished transfer to fn and free its slot. */
static void reap(struct run *r)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(r->m, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct xfer *x = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode result = msg->data.result;
        if (result == CURLE_OK && strcmp(x->method, "GET") != 0)
            note_write(r, base_mono_ms() - x->started_ms);
        xfer_finish(r->c, x, result, &r->o, r->fn, r->ud);
        xfer_clear(r->m, x);
        r->running--;
    }
}

/* How long the loop may wait: a second, or until the next write's token is due. */
static long wait_ms(const struct run *r)
{
    if (!r->reserved)
        return 1000;
    int64_t left = r->due_ms - base_mono_ms();
    return left <= 0 ? 0 : left < 1000 ? (long)left : 1000;
}

int kube_multirequest(struct kube_client *c, const struct kube_multi_req *reqs, size_t n,
                      const struct kube_multiget_opts *opts, kube_multiget_fn fn, void *ud, struct kube_err *err)
{
    kube_err_clear(err);
    struct run r = {.c = c, .reqs = reqs, .n = n, .fn = fn, .ud = ud};
    if (opts)
        r.o = *opts;
    if (!r.o.max_in_flight)
        r.o.max_in_flight = KUBE_MULTIGET_IN_FLIGHT;
    if (r.o.timeout_ms <= 0)
        r.o.timeout_ms = KUBE_MULTIGET_TIMEOUT_MS;
    if (r.o.max_reply <= 0)
        r.o.max_reply = KUBE_MULTIGET_MAX_REPLY;
    if (r.o.max_in_flight > n)
        r.o.max_in_flight = n ? n : 1;
    if (r.o.min_in_flight > r.o.max_in_flight)
        r.o.min_in_flight = r.o.max_in_flight;
    r.limit = r.o.min_in_flight ? r.o.min_in_flight : r.o.max_in_flight;
    r.m = kube_client_multi(c);
    r.slots = r.m ? calloc(r.o.max_in_flight, sizeof(*r.slots)) : NULL;
    if (!r.slots)
        return kube_err_set(err, 0, "Transport", "out of memory for %zu concurrent requests", r.o.max_in_flight);
    int rc = 0;
    fill(&r);
    while (r.running > 0 || r.next < r.n) {
        /* run what can run, take what finished, start more; wait while some run or a write
         * waits for its token */
        int still = 0;
        CURLMcode mrc = curl_multi_perform(r.m, &still);
        if (mrc == CURLM_OK) {
            reap(&r);
            fill(&r);
            if (r.running > 0 || r.next < r.n)
                mrc = curl_multi_poll(r.m, NULL, 0, (int)wait_ms(&r), NULL);
        }
        if (mrc != CURLM_OK) {
            rc = kube_err_set(err, 0, "Transport", "concurrent requests: %s", curl_multi_strerror(mrc));
            break;
        }
    }
    for (size_t s = 0; s < r.o.max_in_flight; s++)
        if (r.slots[s].easy)
            xfer_clear(r.m, &r.slots[s]);
    free(r.slots);
    return rc;
}

int kube_multiget(struct kube_client *c, const char *const *paths, size_t n, const struct kube_multiget_opts *opts,
                  kube_multiget_fn fn, void *ud, struct kube_err *err)
{
    struct kube_multi_req *reqs = calloc(n ? n : 1, sizeof(*reqs));
    if (!reqs)
        return kube_err_set(err, 0, "Transport", "out of memory for %zu requests", n);
    for (size_t i = 0; i < n; i++)
        reqs[i] = (struct kube_multi_req){"GET", paths[i], NULL, NULL};
    int rc = kube_multirequest(c, reqs, n, opts, fn, ud, err);
    free(reqs);
    return rc;
}
