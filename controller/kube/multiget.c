/* kube_multiget: concurrent GETs on the client's multi handle (see multiget.h). */
#include "kube/multiget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "kube/rest.h"

/* One request in flight. */
struct xfer {
    CURL *easy;
    struct curl_slist *headers;
    struct kube_rest_reply reply;
    char *url;
    size_t idx;
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

/* Set up x for path and add it to m. Returns 0, or -1 with err (x cleared). */
static int xfer_start(struct kube_client *c, CURLM *m, struct xfer *x, const char *path,
                      const struct kube_multiget_opts *o, struct kube_err *err)
{
    struct kube_config *cfg = kube_client_config(c);
    x->reply.max = (size_t)o->max_reply;
    if (!(x->easy = curl_easy_init()) || asprintf(&x->url, "%s%s", kube_config_server(cfg), path) < 0) {
        x->url = NULL;
        xfer_clear(m, x);
        return kube_err_set(err, 0, "Transport", "GET %s: out of memory", path);
    }
    if (kube_config_prepare(cfg, x->easy, &x->headers, err) < 0) {
        kube_err_wrap(err, "GET %s", x->url);
        xfer_clear(m, x);
        return -1;
    }
    CURLcode rc = CURLE_OK;
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
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
    if (rc != CURLE_OK) {
        kube_err_set(err, 0, "Transport", "GET %s: setting up the request: %s", x->url, curl_easy_strerror(rc));
        xfer_clear(m, x);
        return -1;
    }
    CURLMcode mrc = curl_multi_add_handle(m, x->easy);
    if (mrc != CURLM_OK) {
        kube_err_set(err, 0, "Transport", "GET %s: %s", x->url, curl_multi_strerror(mrc));
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
        kube_client_observe(c, "GET", 0);
        if (x->reply.too_big)
            kube_err_set(&err, 0, "Transport", "GET %s: reply larger than %ld bytes", x->url, o->max_reply);
        else if (result == CURLE_OPERATION_TIMEDOUT)
            kube_err_set(&err, 0, "Timeout", "GET %s: no reply within %ld ms", x->url, o->timeout_ms);
        else
            kube_err_set(&err, 0, "Transport", "GET %s: %s%s%s", x->url, curl_easy_strerror(result),
                         x->errbuf[0] ? ": " : "", x->errbuf);
    } else {
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
        kube_client_observe(c, "GET", status);
        if (status < 200 || status > 299) {
            kube_rest_decode_status(x->reply.data, x->reply.len, status, "GET", x->url, &err);
        } else if (!(obj = x->reply.len ? cJSON_ParseWithLength(x->reply.data, x->reply.len) : cJSON_CreateObject())) {
            kube_err_set(&err, status, "Decode", "GET %s: HTTP %ld reply of %zu bytes is not JSON", x->url, status,
                         x->reply.len);
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
    const char *const *paths;
    size_t n;
    struct kube_multiget_opts o;
    kube_multiget_fn fn;
    void *ud;
};

/* Start requests until max_in_flight run or none is left; a request that cannot start is
 * reported to fn at once. */
static void fill(struct run *r)
{
    for (size_t s = 0; s < r->o.max_in_flight && r->next < r->n;) {
        if (r->slots[s].easy) {
            s++;
            continue;
        }
        struct kube_err err;
        size_t i = r->next++;
        r->slots[s].idx = i;
        if (xfer_start(r->c, r->m, &r->slots[s], r->paths[i], &r->o, &err) < 0) {
            r->fn(i, NULL, &err, r->ud); /* the slot stays free for the next path */
        } else {
            r->running++;
            s++;
        }
    }
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
        xfer_finish(r->c, x, result, &r->o, r->fn, r->ud);
        xfer_clear(r->m, x);
        r->running--;
    }
}

int kube_multiget(struct kube_client *c, const char *const *paths, size_t n, const struct kube_multiget_opts *opts,
                  kube_multiget_fn fn, void *ud, struct kube_err *err)
{
    kube_err_clear(err);
    struct run r = {.c = c, .paths = paths, .n = n, .fn = fn, .ud = ud};
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
    r.m = kube_client_multi(c);
    r.slots = r.m ? calloc(r.o.max_in_flight, sizeof(*r.slots)) : NULL;
    if (!r.slots)
        return kube_err_set(err, 0, "Transport", "out of memory for %zu concurrent requests", r.o.max_in_flight);
    int rc = 0;
    fill(&r);
    while (r.running > 0) {
        /* run what can run, take what finished, start more; wait only while some still run */
        int still = 0;
        CURLMcode mrc = curl_multi_perform(r.m, &still);
        if (mrc == CURLM_OK) {
            reap(&r);
            fill(&r);
            if (r.running > 0)
                mrc = curl_multi_poll(r.m, NULL, 0, 1000, NULL);
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
