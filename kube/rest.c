#include "kube/rest.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "base/num.h"
#include "kube/ratelimit.h"
#include "kube/transport.h"

/* The largest reply read: a page of 500 objects (lists page at 500) of the largest kind the
 * operator lists, Nodes, ~30 KB each on OpenShift (50 images in status): 15 MB; twice that.
 * Parsed, a reply costs about 4 times its size more (a 21 MB list of Nodes: 90 MB of cJSON),
 * which at the cap still fits the Deployment's 512Mi limit beside the operator's own
 * 65 MiB at 5,000 nodes. */
#define MAX_REPLY (32L * 1024 * 1024)

struct kube_client {
    struct kube_config *cfg; /* borrowed */
    CURL *easy;
    CURLM *multi; /* made by kube_client_multi */
    struct kube_ratelimit rl;
    long timeout_ms;
    char errbuf[CURL_ERROR_SIZE];
    kube_rest_observer_fn observer;
    void *observer_ud;
    struct kube_transport transport; /* where requests go: curl_send, or a test's */
};

static int curl_send(void *ud, const struct kube_transport_request *req, long *status, struct kube_rest_reply *reply,
                     struct kube_err *err);

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

struct kube_client *kube_client_new(struct kube_config *cfg, struct kube_err *err)
{
    kube_err_clear(err);
    struct kube_client *c = calloc(1, sizeof(*c));
    if (!c) {
        kube_err_set(err, 0, "Config", "out of memory");
        return NULL;
    }
    c->cfg = cfg;
    c->easy = curl_easy_init();
    if (!c->easy) {
        free(c);
        kube_err_set(err, 0, "Transport", "curl_easy_init failed");
        return NULL;
    }
    c->timeout_ms = 30000;
    c->transport = (struct kube_transport){curl_send, c};
    kube_ratelimit_init(&c->rl, 5.0, 10, base_mono_ms());
    return c;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    curl_easy_cleanup(c->easy);
    if (c->multi)
        curl_multi_cleanup(c->multi);
    free(c);
}

void kube_client_set_transport(struct kube_client *c, const struct kube_transport *t)
{
    c->transport = t ? *t : (struct kube_transport){curl_send, c};
}

struct kube_client *kube_client_new_sibling(struct kube_client *c, struct kube_err *err)
{
    struct kube_client *s = kube_client_new(c->cfg, err);
    if (s && c->transport.send != curl_send)
        s->transport = c->transport;
    return s;
}

void kube_client_set_observer(struct kube_client *c, kube_rest_observer_fn fn, void *ud)
{
    c->observer = fn;
    c->observer_ud = ud;
}

CURLM *kube_client_multi(struct kube_client *c)
{
    if (!c->multi && (c->multi = curl_multi_init()) != NULL) {
        curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
        curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 4L);
    }
    return c->multi;
}

void kube_client_observe(struct kube_client *c, const char *method, long status)
{
    if (c->observer)
        c->observer(method, status, c->observer_ud);
}

struct kube_config *kube_client_config(struct kube_client *c)
{
    return c->cfg;
}

int64_t kube_client_reserve_write(struct kube_client *c)
{
    return kube_ratelimit_reserve(&c->rl, base_mono_ms());
}

void kube_client_set_rate_limit(struct kube_client *c, double qps, int burst)
{
    kube_ratelimit_init(&c->rl, qps, burst, base_mono_ms());
}

double kube_client_write_qps(const struct kube_client *c)
{
    return c->rl.qps;
}

void kube_client_set_timeout(struct kube_client *c, long timeout_ms)
{
    c->timeout_ms = timeout_ms;
}

/* ---- URLs ---- */

char *kube_url_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = malloc(n * 3 + 1), *o = out;
    if (!out)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~') {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = 0;
    return out;
}

static void sb_add_escaped(struct strbuf *b, const char *s)
{
    char *e = kube_url_escape(s);
    if (!e)
        b->failed = true;
    strbuf_add(b, e);
    free(e);
}

char *kube_path(const char *group_version, const char *ns, const char *resource, const char *name,
                const char *subresource)
{
    struct strbuf b = STRBUF_INIT;
    strbuf_add(&b, strchr(group_version, '/') ? "/apis/" : "/api/");
    strbuf_add(&b, group_version);
    if (ns && *ns) {
        strbuf_add(&b, "/namespaces/");
        sb_add_escaped(&b, ns);
    }
    if (resource) {
        strbuf_add(&b, "/");
        strbuf_add(&b, resource);
    }
    if (name) {
        strbuf_add(&b, "/");
        sb_add_escaped(&b, name);
    }
    if (subresource) {
        strbuf_add(&b, "/");
        strbuf_add(&b, subresource);
    }
    return strbuf_take(&b);
}

char *kube_path_query(const char *path, const char *const *pairs)
{
    struct strbuf b = STRBUF_INIT;
    strbuf_add(&b, path);
    int first = strchr(path, '?') == NULL;
    for (; pairs && pairs[0]; pairs += 2) {
        if (!pairs[1])
            continue;
        strbuf_add(&b, first ? "?" : "&");
        first = 0;
        sb_add_escaped(&b, pairs[0]);
        strbuf_add(&b, "=");
        sb_add_escaped(&b, pairs[1]);
    }
    return strbuf_take(&b);
}

/* ---- errors ---- */

static const char *reason_for(long status)
{
    switch (status) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "Unknown";
    }
}

/* Up to 80 printable characters of a body, for messages. */
static void snippet(const char *body, size_t len, char *out, size_t outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < len && i < 80 && o + 5 < outlen; i++) {
        unsigned char ch = (unsigned char)body[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
            out[o++] = (char)ch;
        else
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", ch);
    }
    out[o] = 0;
    if (len > 80 && o + 4 < outlen)
        memcpy(out + o, "...", 4);
}

int kube_rest_decode_status(const char *body, size_t len, long status, const char *method, const char *url,
                            struct kube_err *err)
{
    cJSON *j = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
    if (!j || !cJSON_IsObject(j) || !cJSON_IsString(kind) || strcmp(kind->valuestring, "Status")) {
        cJSON_Delete(j);
        if (!body || !len)
            return kube_err_set(err, status, reason_for(status), "%s %s: HTTP %ld (%s) with an empty body", method, url,
                                status, reason_for(status));
        char snip[512];
        snippet(body, len, snip, sizeof(snip));
        return kube_err_set(err, status, "Decode", "%s %s: HTTP %ld (%s): reply is not a metav1.Status: \"%s\"", method,
                            url, status, reason_for(status), snip);
    }
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(j, "reason");
    const cJSON *message = cJSON_GetObjectItemCaseSensitive(j, "message");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(j, "code");
    long st = status;
    int64_t sc;
    if ((!st || st < 400) && kube_num_int(code, 100, 599, &sc) == 0)
        st = (long)sc;
    const char *r = cJSON_IsString(reason) && reason->valuestring[0] ? reason->valuestring : reason_for(st);
    const char *m = cJSON_IsString(message) && message->valuestring[0] ? message->valuestring : r;
    kube_err_set(err, st, r, "%s %s: %s", method, url, m);
    cJSON_Delete(j);
    return -1;
}

/* ---- requests ---- */

size_t kube_rest_reply_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct kube_rest_reply *r = ud;
    size_t n = size * nmemb;
    if (r->len + n + 1 > r->max) {
        r->too_big = 1;
        return 0;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096; /* most replies are one object of a few KB */
        while (cap < r->len + n + 1)
            cap *= 2;
        char *nd = realloc(r->data, cap);
        if (!nd)
            return 0;
        r->data = nd;
        r->cap = cap;
    }
    memcpy(r->data + r->len, ptr, n);
    r->len += n;
    r->data[r->len] = 0;
    return n;
}

#define SETOPT(opt, val)                                                                                            \
    do {                                                                                                            \
        CURLcode rc_ = curl_easy_setopt(c->easy, opt, val);                                                         \
        if (rc_ != CURLE_OK) {                                                                                      \
            kube_err_set(err, 0, "Transport", "%s %s: setting %s: %s", method, url, #opt, curl_easy_strerror(rc_)); \
            goto out;                                                                                               \
        }                                                                                                           \
    } while (0)

/* The libcurl transport (kube_transport.send; ud is the client): the client's easy handle,
 * reset and set up for req. */
static int curl_send(void *ud, const struct kube_transport_request *req, long *status, struct kube_rest_reply *reply,
                     struct kube_err *err)
{
    struct kube_client *c = ud;
    const char *method = req->method, *url = req->url;
    struct curl_slist *headers = NULL;
    int rc = KUBE_TRANSPORT_NOT_SENT;
    curl_easy_reset(c->easy);
    if (kube_config_prepare(c->cfg, c->easy, &headers, err)) {
        kube_err_wrap(err, "%s %s", method, url);
        goto out;
    }
    if (req->content_type) {
        char h[128];
        snprintf(h, sizeof(h), "Content-Type: %s", req->content_type);
        struct curl_slist *nh = curl_slist_append(headers, h);
        if (!nh) {
            kube_err_set(err, 0, "Transport", "out of memory");
            goto out;
        }
        headers = nh;
    }
    c->errbuf[0] = 0;
    SETOPT(CURLOPT_URL, url);
    SETOPT(CURLOPT_HTTPHEADER, headers);
    SETOPT(CURLOPT_NOSIGNAL, 1L);
    SETOPT(CURLOPT_ERRORBUFFER, c->errbuf);
    SETOPT(CURLOPT_ACCEPT_ENCODING, "");
    SETOPT(CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    SETOPT(CURLOPT_TIMEOUT_MS, req->timeout_ms);
    SETOPT(CURLOPT_WRITEFUNCTION, kube_rest_reply_write);
    SETOPT(CURLOPT_WRITEDATA, reply);
    if (!strcmp(method, "POST")) {
        SETOPT(CURLOPT_POST, 1L);
    } else if (strcmp(method, "GET")) {
        SETOPT(CURLOPT_CUSTOMREQUEST, method);
    }
    if (req->body) {
        SETOPT(CURLOPT_POSTFIELDS, req->body);
        SETOPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req->body));
    } else if (!strcmp(method, "POST")) {
        SETOPT(CURLOPT_POSTFIELDS, "");
    }
    CURLcode cc = curl_easy_perform(c->easy);
    if (cc != CURLE_OK) {
        rc = KUBE_TRANSPORT_NO_REPLY;
        if (reply->too_big)
            kube_err_set(err, 0, "Transport", "%s %s: reply larger than %zu bytes", method, url, reply->max);
        else
            kube_err_set(err, 0, "Transport", "%s %s%s%s%s: %s%s%s", method, url, c->cfg->connect_to ? " (server " : "",
                         c->cfg->connect_to ? c->cfg->server : "",
                         c->cfg->connect_to ? " under its tls-server-name)" : "", curl_easy_strerror(cc),
                         c->errbuf[0] ? ": " : "", c->errbuf);
        goto out;
    }
    *status = 0;
    curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, status);
    rc = 0;
out:
    curl_slist_free_all(headers);
    return rc;
}

cJSON *kube_rest_request(struct kube_client *c, const char *method, const char *path, const char *content_type,
                         const char *body, unsigned flags, struct kube_err *err)
{
    kube_err_clear(err);
    cJSON *result = NULL;
    struct kube_rest_reply r = {.max = (size_t)MAX_REPLY};
    char *url = NULL;
    if (asprintf(&url, "%s%s", kube_config_server(c->cfg), path) < 0) {
        kube_err_set(err, 0, "Transport", "out of memory");
        return NULL;
    }
    if (flags & KUBE_REQUEST_WRITE) {
        int64_t wait = kube_ratelimit_reserve(&c->rl, base_mono_ms());
        if (wait > 0)
            sleep_ms(wait);
    }
    const struct kube_transport_request req = {method, url, path, content_type, body, c->timeout_ms};
    long status = 0;
    int sent = c->transport.send(c->transport.ud, &req, &status, &r, err);
    if (sent == KUBE_TRANSPORT_NO_REPLY && c->observer)
        c->observer(method, 0, c->observer_ud);
    if (sent != 0)
        goto out;
    if (c->observer)
        c->observer(method, status, c->observer_ud);
    if (status < 200 || status > 299) {
        kube_rest_decode_status(r.data, r.len, status, method, url, err);
        goto out;
    }
    if (!r.len || (flags & KUBE_REQUEST_DISCARD_REPLY)) {
        result = cJSON_CreateObject();
        goto out;
    }
    result = cJSON_ParseWithLength(r.data, r.len);
    if (!result) {
        char snip[512];
        snippet(r.data, r.len, snip, sizeof(snip));
        kube_err_set(err, status, "Decode", "%s %s: HTTP %ld reply of %zu bytes is not JSON: \"%s\"", method, url,
                     status, r.len, snip);
    }
out:
    free(r.data);
    free(url);
    return result;
}

static char *body_text(const cJSON *body, struct kube_err *err)
{
    char *s = body ? cJSON_PrintUnformatted(body) : NULL;
    if (!s)
        kube_err_set(err, 0, "Encode", "cannot encode the request body");
    return s;
}

/* path + write options as query parameters; caller frees. */
static char *write_path(const char *path, const struct kube_write_opts *o, int apply)
{
    const char *fm = o && o->field_manager ? o->field_manager : (apply ? "psi-rebalancer" : NULL);
    const char *pairs[] = {
        "fieldManager", fm, "force", apply && o && o->force ? "true" : NULL, "dryRun", o && o->dry_run ? "All" : NULL,
        NULL,
    };
    return kube_path_query(path, pairs);
}

cJSON *kube_rest_get(struct kube_client *c, const char *path, struct kube_err *err)
{
    return kube_rest_request(c, "GET", path, NULL, NULL, 0, err);
}

/* How a write verb is sent: HTTP method, body content type (NULL: none), server-side apply. */
struct write_verb {
    const char *method;
    const char *ctype;
    int apply;
};

/* Send body (may be NULL) to path with verb v and the write options opts (may be NULL). */
static cJSON *write_verb(struct kube_client *c, const struct write_verb *v, const char *path, const cJSON *body,
                         const struct kube_write_opts *opts, struct kube_err *err)
{
    kube_err_clear(err);
    char *text = NULL;
    if (body && !(text = body_text(body, err)))
        return NULL;
    char *p = write_path(path, opts, v->apply);
    cJSON *res = NULL;
    if (!p)
        kube_err_set(err, 0, "Encode", "out of memory");
    else
        res =
            kube_rest_request(c, v->method, p, v->ctype, text,
                              KUBE_REQUEST_WRITE | (opts && opts->discard_reply ? KUBE_REQUEST_DISCARD_REPLY : 0), err);
    free(p);
    free(text);
    return res;
}

cJSON *kube_rest_create(struct kube_client *c, const char *path, const cJSON *body, const struct kube_write_opts *opts,
                        struct kube_err *err)
{
    const struct write_verb v = {"POST", "application/json", 0};
    return write_verb(c, &v, path, body, opts, err);
}

cJSON *kube_rest_update(struct kube_client *c, const char *path, const cJSON *body, const struct kube_write_opts *opts,
                        struct kube_err *err)
{
    const struct write_verb v = {"PUT", "application/json", 0};
    return write_verb(c, &v, path, body, opts, err);
}

cJSON *kube_rest_patch(struct kube_client *c, const char *path, enum kube_patch_type type, const cJSON *body,
                       const struct kube_write_opts *opts, struct kube_err *err)
{
    static const char *const ctypes[] = {
        [KUBE_PATCH_MERGE] = "application/merge-patch+json",
        [KUBE_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
        [KUBE_PATCH_JSON] = "application/json-patch+json",
        [KUBE_PATCH_APPLY] = "application/apply-patch+yaml",
    };
    if ((unsigned)type > KUBE_PATCH_APPLY)
        return kube_err_set(err, 0, "Encode", "PATCH %s: unknown patch type %d", path, (int)type), NULL;
    if (!body)
        return kube_err_set(err, 0, "Encode", "PATCH %s: no patch body", path), NULL;
    const struct write_verb v = {"PATCH", ctypes[type], type == KUBE_PATCH_APPLY};
    return write_verb(c, &v, path, body, opts, err);
}

cJSON *kube_rest_delete(struct kube_client *c, const char *path, const cJSON *delete_options,
                        const struct kube_write_opts *opts, struct kube_err *err)
{
    const struct write_verb v = {"DELETE", delete_options ? "application/json" : NULL, 0};
    return write_verb(c, &v, path, delete_options, opts, err);
}

cJSON *kube_eviction_body(const char *ns, const char *pod, int dry_run, const char *requested_by)
{
    cJSON *ev = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(ev, "metadata");
    bool ok = md && cJSON_AddStringToObject(ev, "apiVersion", "policy/v1") &&
              cJSON_AddStringToObject(ev, "kind", "Eviction") && cJSON_AddStringToObject(md, "name", pod) &&
              cJSON_AddStringToObject(md, "namespace", ns);
    if (ok && requested_by)
        ok = cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), "requested-by", requested_by);
    if (ok && dry_run)
        ok = cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(ev, "deleteOptions"), "dryRun"),
                                  cJSON_CreateString("All"));
    if (!ok) {
        cJSON_Delete(ev);
        return NULL;
    }
    return ev;
}

int kube_rest_evict(struct kube_client *c, const char *ns, const char *pod, int dry_run, const char *requested_by,
                    struct kube_err *err)
{
    kube_err_clear(err);
    char *path = kube_path("v1", ns, "pods", pod, "eviction");
    cJSON *ev = kube_eviction_body(ns, pod, dry_run, requested_by);
    cJSON *res = NULL;
    struct kube_write_opts o = {.dry_run = dry_run};
    if (!path || !ev)
        kube_err_set(err, 0, "Encode", "evicting pod %s/%s: out of memory", ns, pod);
    else
        res = kube_rest_create(c, path, ev, &o, err);
    cJSON_Delete(ev);
    free(path);
    if (!res)
        return -1;
    cJSON_Delete(res);
    return 0;
}

const char *kube_rest_list_rv(const cJSON *list)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(list, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    return cJSON_IsString(rv) ? rv->valuestring : NULL;
}

static const char *list_continue(const cJSON *list)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(list, "metadata");
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(md, "continue");
    return cJSON_IsString(ct) && ct->valuestring[0] ? ct->valuestring : NULL;
}

static cJSON *list_page(struct kube_client *c, const char *path, const struct kube_list_opts *o, long limit,
                        const char *cont, struct kube_err *err)
{
    char lim[32];
    snprintf(lim, sizeof(lim), "%ld", limit);
    const char *pairs[] = {
        "labelSelector",
        o && o->label_selector && *o->label_selector ? o->label_selector : NULL,
        "fieldSelector",
        o && o->field_selector && *o->field_selector ? o->field_selector : NULL,
        "limit",
        limit > 0 ? lim : NULL,
        /* a continue token carries its own snapshot: resourceVersion must not be sent with it */
        "resourceVersion",
        !cont && o && o->resource_version ? o->resource_version : NULL,
        "continue",
        cont,
        NULL,
    };
    char *p = kube_path_query(path, pairs);
    if (!p) {
        kube_err_set(err, 0, "Encode", "out of memory");
        return NULL;
    }
    cJSON *page = kube_rest_get(c, p, err);
    free(p);
    if (page && !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(page, "items"))) {
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
        if (!items || cJSON_IsNull(items)) {
            cJSON_DeleteItemFromObjectCaseSensitive(page, "items");
            cJSON_AddArrayToObject(page, "items"); /* an empty list may come as "items": null */
        } else {
            kube_err_set(err, 200, "Decode", "GET %s%s: reply is not a list (no items array)",
                         kube_config_server(c->cfg), path);
            cJSON_Delete(page);
            return NULL;
        }
    }
    return page;
}

int kube_rest_list_check_continue(const char *prev, const char *next, long pages, char *why, size_t whylen)
{
    if (prev && strcmp(prev, next) == 0) {
        snprintf(why, whylen,
                 "the server answered page %ld with the continue token it was asked with (%.40s): "
                 "paging would not end",
                 pages, next);
        return -1;
    }
    if (pages >= KUBE_REST_LIST_MAX_PAGES) {
        snprintf(why, whylen, "still more after %ld pages: paging would not end", pages);
        return -1;
    }
    return 0;
}

/* The pages after the first of a list into all; 0, or -1 with err (all left to the caller). */
static int list_rest(struct kube_client *c, const char *path, const struct kube_list_opts *opts, long limit, cJSON *all,
                     struct kube_err *err)
{
    cJSON *items = cJSON_GetObjectItemCaseSensitive(all, "items");
    char *prev = NULL;
    int rc = 0;
    for (long pages = 1;; pages++) {
        const char *cont = list_continue(all);
        if (!cont)
            break;
        char why[200];
        if (kube_rest_list_check_continue(prev, cont, pages, why, sizeof(why)) < 0) {
            rc = kube_err_set(err, 200, "Decode", "GET %s%s: %s", kube_config_server(c->cfg), path, why);
            break;
        }
        free(prev);
        prev = strdup(cont);
        cJSON *page = prev ? list_page(c, path, opts, limit, prev, err) : NULL;
        if (!page) {
            if (!prev)
                kube_err_set(err, 0, "Encode", "out of memory");
            rc = -1;
            break;
        }
        cJSON *pitems = cJSON_GetObjectItemCaseSensitive(page, "items");
        while (pitems && pitems->child)
            cJSON_AddItemToArray(items, cJSON_DetachItemViaPointer(pitems, pitems->child));
        /* carry the last page's metadata (same resourceVersion, continue state) */
        cJSON *pmd = cJSON_DetachItemFromObjectCaseSensitive(page, "metadata");
        if (pmd)
            cJSON_ReplaceItemInObjectCaseSensitive(all, "metadata", pmd);
        cJSON_Delete(page);
    }
    free(prev);
    return rc;
}

cJSON *kube_rest_list(struct kube_client *c, const char *path, const struct kube_list_opts *opts, struct kube_err *err)
{
    long limit = opts ? opts->limit : 0;
    cJSON *all = NULL;
    for (int attempt = 0; attempt < 2 && !all; attempt++) {
        all = list_page(c, path, opts, limit, NULL, err);
        if (!all)
            return NULL;
        if (list_rest(c, path, opts, limit, all, err) < 0) {
            cJSON_Delete(all);
            all = NULL;
            /* the snapshot expired between pages (410): page once more from the start */
            if (!err || err->status != 410 || attempt > 0)
                return NULL;
        }
    }
    cJSON *md = cJSON_GetObjectItemCaseSensitive(all, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "continue");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "remainingItemCount");
    return all;
}
