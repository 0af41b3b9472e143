/* Unit tests for psi_serve: bind address parsing, and the server itself on a
 * loopback port picked by the kernel (routes, HEAD, 404/405, request bodies, large
 * replies, kept-alive connections, the handler lock, answers from the head alone),
 * connections that close before or in the middle of a request, and many concurrent
 * connections. Hostile crowds are in test_serve_hostile.c. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "httpd/metrics.h"
#include "httpd/serve.h"

static void test_parse_bind(void **state)
{
    (void)state;
    char host[64], err[256];
    int port = -1;
    assert_int_equal(psi_serve_parse_bind("127.0.0.1:8081", host, sizeof(host), &port, err, sizeof(err)), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8081);
    assert_int_equal(psi_serve_parse_bind(":8080", host, sizeof(host), &port, err, sizeof(err)), 0);
    assert_string_equal(host, "");
    assert_int_equal(port, 8080);
    assert_int_equal(psi_serve_parse_bind("[::1]:9000", host, sizeof(host), &port, err, sizeof(err)), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 9000);
    assert_int_equal(psi_serve_parse_bind("localhost:0", host, sizeof(host), &port, err, sizeof(err)), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 0);
    const char *bad[] = {"", "8080", "127.0.0.1:", ":65536", ":80x", "::1:80", "[::1]80", "example.com:80", ":-1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (psi_serve_parse_bind(bad[i], host, sizeof(host), &port, err, sizeof(err)) != -1 || !err[0])
            fail_msg("bind address \"%s\" was accepted", bad[i]);
    }
}

/* ---- live server ---- */

struct app {
    int ready;
    struct psi_metrics *metrics;
    char last_body[256];
    char last_query[256];
    char last_path[256];
};

static void on_readyz(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)req;
    struct app *a = ud;
    psi_serve_reply_text(rep, a->ready ? 200 : 503, NULL, a->ready ? "ok\n" : "caches not synced\n");
}

static void on_metrics(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)req;
    struct app *a = ud;
    rep->body = psi_metrics_render(a->metrics, &rep->len);
    snprintf(rep->content_type, sizeof(rep->content_type), "%s", PSI_METRICS_CONTENT_TYPE);
}

static void on_put(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    struct app *a = ud;
    snprintf(a->last_body, sizeof(a->last_body), "%s", req->body);
    snprintf(a->last_query, sizeof(a->last_query), "%s", req->query);
    snprintf(a->last_path, sizeof(a->last_path), "%s", req->path);
    char out[512];
    snprintf(out, sizeof(out), "%s %s %zu\n", req->method, req->path, req->body_len);
    psi_serve_reply_text(rep, 201, "text/x-test", out);
}

static void on_big(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)req;
    (void)ud;
    size_t n = 300000;
    rep->body = malloc(n);
    for (size_t i = 0; i < n; i++)
        rep->body[i] = (char)('a' + i % 26);
    rep->len = n;
}

struct resp {
    long code;
    char *body;
    size_t len;
    char ctype[128];
};

static size_t on_data(char *p, size_t s, size_t n, void *ud)
{
    struct resp *r = ud;
    char *b = realloc(r->body, r->len + s * n + 1);
    if (!b)
        return 0;
    r->body = b;
    memcpy(r->body + r->len, p, s * n);
    r->len += s * n;
    r->body[r->len] = '\0';
    return s * n;
}

static void request(CURL *e, const char *method, const char *url, const char *body, struct resp *r)
{
    memset(r, 0, sizeof(*r));
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
    curl_easy_setopt(e, CURLOPT_NOBODY, 0L);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
    CURLcode rc = curl_easy_perform(e);
    if (rc != CURLE_OK)
        fail_msg("%s %s: %s", method, url, curl_easy_strerror(rc));
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->code);
    char *ct = NULL;
    curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct);
    snprintf(r->ctype, sizeof(r->ctype), "%s", ct ? ct : "");
    if (!r->body)
        r->body = calloc(1, 1);
}

static void test_live_server(void **state)
{
    (void)state;
    struct app a = {0};
    a.metrics = psi_metrics_new();
    struct psi_metric *g = psi_metrics_gauge(a.metrics, "psi_ready", "Ready.", NULL);
    char err[256];
    struct psi_serve *s = psi_serve_new("127.0.0.1:0", err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(psi_serve_port(s), -1);
    assert_int_equal(psi_serve_route(s, "GET", "/readyz", on_readyz, &a), 0);
    assert_int_equal(psi_serve_route(s, "GET", "/metrics", on_metrics, &a), 0);
    assert_int_equal(psi_serve_route(s, "PUT", "/things/*", on_put, &a), 0);
    assert_int_equal(psi_serve_route(s, "POST", "/things/*", on_put, &a), 0);
    assert_int_equal(psi_serve_route(s, "GET", "/big", on_big, &a), 0);
    assert_int_equal(psi_serve_route(s, "GET", "relative", on_big, &a), -1);
    assert_int_equal(psi_serve_start(s, err, sizeof(err)), 0);
    assert_int_equal(psi_serve_route(s, "GET", "/late", on_big, &a), -1); /* after start */
    int port = psi_serve_port(s);
    assert_true(port > 0);

    /* A second server on the same port fails with a message naming the address. */
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    struct psi_serve *s2 = psi_serve_new(addr, err, sizeof(err));
    assert_non_null(s2);
    assert_int_equal(psi_serve_start(s2, err, sizeof(err)), -1);
    assert_non_null(strstr(err, addr));
    psi_serve_free(s2);

    CURL *e = curl_easy_init();
    char url[256];
    struct resp r;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/readyz", port);
    request(e, "GET", url, NULL, &r);
    assert_int_equal(r.code, 503);
    assert_string_equal(r.body, "caches not synced\n");
    free(r.body);
    psi_serve_lock(s);
    a.ready = 1;
    psi_serve_unlock(s);
    psi_metric_set(g, NULL, 1);
    request(e, "GET", url, NULL, &r); /* same handle: the connection is kept alive */
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "ok\n");
    free(r.body);
    long conns = -1;
    curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &conns);
    assert_int_equal(conns, 0); /* reused */

    request(e, "HEAD", url, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.len, 0);
    free(r.body);

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
    request(e, "GET", url, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.ctype, PSI_METRICS_CONTENT_TYPE);
    assert_string_equal(r.body, "# HELP psi_ready Ready.\n# TYPE psi_ready gauge\npsi_ready 1\n");
    free(r.body);

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/nothing", port);
    request(e, "GET", url, NULL, &r);
    assert_int_equal(r.code, 404);
    free(r.body);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
    request(e, "DELETE", url, NULL, &r);
    assert_int_equal(r.code, 405);
    free(r.body);

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/things/worker-0/cpu?x=1&y=2", port);
    request(e, "PUT", url, "42.5", &r);
    assert_int_equal(r.code, 201);
    assert_string_equal(r.ctype, "text/x-test");
    assert_string_equal(r.body, "PUT /things/worker-0/cpu 4\n");
    free(r.body);
    psi_serve_lock(s);
    assert_string_equal(a.last_body, "42.5");
    assert_string_equal(a.last_path, "/things/worker-0/cpu");
    assert_string_equal(a.last_query, "x=1&y=2");
    psi_serve_unlock(s);
    /* An empty PUT gets the handler too, with an empty body. */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/things/a", port);
    request(e, "POST", url, "", &r);
    assert_int_equal(r.code, 201);
    assert_string_equal(r.body, "POST /things/a 0\n");
    free(r.body);
    /* A body above 1 MiB is refused. */
    char *huge = malloc(1100000);
    memset(huge, 'x', 1099999);
    huge[1099999] = '\0';
    request(e, "PUT", url, huge, &r);
    assert_int_equal(r.code, 413);
    free(r.body);
    free(huge);

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/big", port);
    request(e, "GET", url, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.len, 300000);
    assert_int_equal(r.body[299999], 'a' + 299999 % 26);
    free(r.body);

    curl_easy_cleanup(e);
    psi_serve_free(s);
    psi_metrics_free(a.metrics);
}

/* ---- connections that end early, and many at once ---- */

/* A TCP connection to 127.0.0.1:port; fails the test when refused. */
static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        fail_msg("connecting to 127.0.0.1:%d failed: the server is gone", port);
    return fd;
}

static void raw_send(int fd, const char *text)
{
    size_t n = strlen(text);
    /* MSG_NOSIGNAL: a server that already hung up must not kill the test with SIGPIPE */
    assert_int_equal(send(fd, text, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* GET url on a fresh connection and return the status (0 when the request failed). */
static long get_status(const char *url)
{
    CURL *e = curl_easy_init();
    struct resp r;
    memset(&r, 0, sizeof(r));
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
    long code = 0;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    free(r.body);
    curl_easy_cleanup(e);
    return code;
}

static struct psi_serve *start_test_server(struct app *a, int *port)
{
    char err[256];
    struct psi_serve *s = psi_serve_new("127.0.0.1:0", err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(psi_serve_route(s, "GET", "/readyz", on_readyz, a), 0);
    assert_int_equal(psi_serve_route(s, "PUT", "/things/*", on_put, a), 0);
    assert_int_equal(psi_serve_route(s, "GET", "/big", on_big, a), 0);
    if (psi_serve_start(s, err, sizeof(err)) != 0)
        fail_msg("starting the server: %s", err);
    *port = psi_serve_port(s);
    assert_true(*port > 0);
    a->ready = 1;
    return s;
}

/* Regression (of the libwebsockets server before this one, which died with SIGSEGV): a
 * connection that ends before its first request reached a handler (a bare TCP connect, as
 * a port check or a client giving up on a busy server does). Each way of ending early is
 * followed by requests that must still be answered, and the server is freed with such a
 * connection open. */
static void test_connection_closed_before_request(void **state)
{
    (void)state;
    struct app a = {0};
    int port;
    struct psi_serve *s = start_test_server(&a, &port);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/readyz", port);

    /* connect and close, nothing sent */
    for (int i = 0; i < 20; i++)
        close(raw_connect(port));
    assert_int_equal(get_status(url), 200);
    /* half a request line, then close */
    int fd = raw_connect(port);
    raw_send(fd, "GET /rea");
    close(fd);
    assert_int_equal(get_status(url), 200);
    /* the headers but not their end, then close */
    fd = raw_connect(port);
    raw_send(fd, "GET /readyz HTTP/1.1\r\nHost: x\r\n");
    close(fd);
    assert_int_equal(get_status(url), 200);
    /* a PUT whose body never comes in full, then close */
    fd = raw_connect(port);
    raw_send(fd, "PUT /things/a HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n12");
    close(fd);
    assert_int_equal(get_status(url), 200);
    /* a large reply the client does not read, then close */
    fd = raw_connect(port);
    raw_send(fd, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    close(fd);
    assert_int_equal(get_status(url), 200);
    /* a connection that sends nothing, still open while the server is freed */
    int idle = raw_connect(port);
    assert_int_equal(get_status(url), 200);
    psi_serve_free(s);
    close(idle);
}

/* Raw clients beside the curl load: connections that close at once, or send a whole
 * request and close without reading the answer. */
struct raw_load {
    int port;
    int rounds;
    int errors; /* connects or sends that failed (cmocka asserts only in the main thread) */
};

static void *raw_load_thread(void *arg)
{
    struct raw_load *rl = arg;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)rl->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    static const char *const sends[] = {
        NULL,
        "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n",
        "PUT /things/r HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n42",
    };
    for (int r = 0; r < rl->rounds; r++) {
        int fds[50];
        for (int i = 0; i < 50; i++) {
            fds[i] = socket(AF_INET, SOCK_STREAM, 0);
            if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) != 0) {
                rl->errors++;
                continue;
            }
            const char *t = sends[i % 3];
            if (t && send(fds[i], t, strlen(t), MSG_NOSIGNAL) != (ssize_t)strlen(t))
                rl->errors++;
        }
        for (int i = 0; i < 50; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    }
    return NULL;
}

/* Many concurrent connections: PUTs and GETs over kept-alive connections from a curl
 * multi handle, while another thread opens and drops connections. Every curl request must
 * be answered; under the bug above the server died part-way. */
static void test_many_concurrent_connections(void **state)
{
    (void)state;
    struct app a = {0};
    int port;
    struct psi_serve *s = start_test_server(&a, &port);
    struct raw_load rl = {.port = port, .rounds = 20};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, raw_load_thread, &rl), 0);

    enum { HANDLES = 150, PER_HANDLE = 8 };
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)HANDLES);
    CURL *h[HANDLES];
    struct resp r[HANDLES];
    char urls[HANDLES][128];
    int done[HANDLES], ok = 0, failed = 0;
    for (int i = 0; i < HANDLES; i++) {
        memset(&r[i], 0, sizeof(r[i]));
        done[i] = 0;
        h[i] = curl_easy_init();
        if (i % 2)
            snprintf(urls[i], sizeof(urls[i]), "http://127.0.0.1:%d/things/worker-%d/cpu", port, i);
        else
            snprintf(urls[i], sizeof(urls[i]), "http://127.0.0.1:%d/%s", port, i % 4 ? "readyz" : "big");
        curl_easy_setopt(h[i], CURLOPT_URL, urls[i]);
        if (i % 2) {
            curl_easy_setopt(h[i], CURLOPT_POSTFIELDS, "60");
            curl_easy_setopt(h[i], CURLOPT_CUSTOMREQUEST, "PUT");
        }
        curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &r[i]);
        curl_easy_setopt(h[i], CURLOPT_TIMEOUT, 15L);
        curl_easy_setopt(h[i], CURLOPT_PRIVATE, (void *)(intptr_t)i);
        curl_multi_add_handle(m, h[i]);
    }
    int running = 1;
    while (running) {
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            void *p = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &p);
            int i = (int)(intptr_t)p;
            long code = 0;
            curl_easy_getinfo(h[i], CURLINFO_RESPONSE_CODE, &code);
            int want = i % 2 ? 201 : 200;
            size_t want_len = i % 2 ? 0 : (i % 4 ? 3 : 300000);
            if (msg->data.result == CURLE_OK && code == want && (!want_len || r[i].len == want_len))
                ok++;
            else if (failed++ < 5)
                fprintf(stderr, "%s: %s, status %ld, %zu bytes\n", urls[i], curl_easy_strerror(msg->data.result), code,
                        r[i].len);
            free(r[i].body);
            memset(&r[i], 0, sizeof(r[i]));
            /* again on the same (kept-alive) connection, PER_HANDLE times in all */
            if (++done[i] < PER_HANDLE) {
                curl_multi_remove_handle(m, h[i]);
                curl_multi_add_handle(m, h[i]);
                running = 1;
            }
        }
        if (running)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    pthread_join(th, NULL);
    assert_int_equal(rl.errors, 0);
    assert_int_equal(failed, 0);
    assert_int_equal(ok, HANDLES * PER_HANDLE);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/readyz", port);
    assert_int_equal(get_status(url), 200);
    for (int i = 0; i < HANDLES; i++) {
        curl_multi_remove_handle(m, h[i]);
        curl_easy_cleanup(h[i]);
    }
    curl_multi_cleanup(m);
    psi_serve_free(s);
}

/* Send raw text on a fresh connection and return the first line of the answer. */
static void raw_status(int port, const char *text, size_t len, char *line, size_t linelen)
{
    int fd = raw_connect(port);
    size_t off = 0;
    while (off < len) {
        ssize_t n = send(fd, text + off, len - off, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\r")] = '\0';
    snprintf(line, linelen, "%s", buf);
    close(fd);
}

/* Requests judged on their head: a body where no route takes one, a chunked body, an
 * oversized header or target, a malformed head. */
static void test_answers_from_head(void **state)
{
    (void)state;
    struct app a = {0};
    int port;
    struct psi_serve *s = start_test_server(&a, &port);
    char line[256];
    static const char get_body[] = "GET /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\nxx";
    raw_status(port, get_body, sizeof(get_body) - 1, line, sizeof(line));
    assert_string_equal(line, "HTTP/1.1 413 Content Too Large");
    static const char unknown_body[] = "POST /nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n";
    raw_status(port, unknown_body, sizeof(unknown_body) - 1, line, sizeof(line));
    assert_string_equal(line, "HTTP/1.1 404 Not Found");
    static const char chunked[] = "PUT /things/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    raw_status(port, chunked, sizeof(chunked) - 1, line, sizeof(line));
    assert_string_equal(line, "HTTP/1.1 411 Length Required");
    static const char smuggle[] = "PUT /things/a HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n";
    raw_status(port, smuggle, sizeof(smuggle) - 1, line, sizeof(line));
    assert_string_equal(line, "HTTP/1.1 400 Bad Request");
    char *big = malloc(20000);
    memset(big, 'a', 20000);
    memcpy(big, "GET /readyz HTTP/1.1\r\nX-Big: ", 30);
    raw_status(port, big, 20000, line, sizeof(line));
    assert_string_equal(line, "HTTP/1.1 431 Request Header Fields Too Large");
    memcpy(big, "GET /", 5);
    memset(big + 5, 'a', 40);
    raw_status(port, big, 20000, line, sizeof(line));
    assert_string_equal(line, "HTTP/1.1 414 URI Too Long");
    free(big);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/readyz", port);
    assert_int_equal(get_status(url), 200);
    psi_serve_free(s);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_bind),
        cmocka_unit_test(test_live_server),
        cmocka_unit_test(test_connection_closed_before_request),
        cmocka_unit_test(test_many_concurrent_connections),
        cmocka_unit_test(test_answers_from_head),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
