/* What libwebsockets does where psi_serve must answer a hostile head with a status line, the
 * reason httpd/ keeps its own server (issue #29 names libwebsockets for the HTTP stack, "where
 * libwebsockets cannot meet a bound, show that with a test and keep the smallest code that
 * does").
 *
 * The same four requests go to libwebsockets as Debian 12 ships it (4.1.6, with OpenSSL; its
 * header buffer set to psi_serve's 8 KiB head limit, its timeouts to 1 s) and to psi_serve
 * with the same limits:
 *   - GET /healthz: both answer 200 (the libwebsockets server works);
 *   - a 200,000-byte request target: psi_serve answers 414; libwebsockets drops the
 *     connection without a status line (lib/roles/http/server/server.c: lws_parse fails when
 *     the header buffer is full, "Ran out of header data space", and the connection is closed);
 *   - a 9,000-byte header field: psi_serve 431; libwebsockets drops it the same way;
 *   - a head that stops half way: psi_serve answers 408 at its head timeout; libwebsockets
 *     closes at its own timeout without a status line.
 * A hostile-client test (test_serve_hostile) asserts every 414; so the head has to be read by
 * code that can answer, which sits between TLS and the parser: that is psi_serve's reading of
 * the head and everything under it (its sockets and TLS), kept. Should a later libwebsockets
 * answer these, this test fails and says so. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libwebsockets.h>

#include "httpd/serve.h"

#define HEAD_LIMIT 8192

/* ---- the two servers ---- */

static int on_lws_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    if (reason == LWS_CALLBACK_HTTP) {
        static const char body[] = "ok\n";
        unsigned char buf[LWS_PRE + 512], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf);
        if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, "text/plain", sizeof(body) - 1, &p, end) ||
            lws_finalize_write_http_header(wsi, start, &p, end))
            return 1;
        memcpy(p, body, sizeof(body) - 1);
        if (lws_write(wsi, p, sizeof(body) - 1, LWS_WRITE_HTTP_FINAL) != (int)sizeof(body) - 1)
            return 1;
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols lws_http[] = {
    {"http", on_lws_http, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

struct lws_server {
    struct lws_context *ctx;
    pthread_t thread;
    atomic_int stop;
};

static void *lws_loop(void *arg)
{
    struct lws_server *l = arg;
    while (!atomic_load(&l->stop))
        lws_service(l->ctx, 0);
    return NULL;
}

/* A libwebsockets server on 127.0.0.1 with psi_serve's head limit and 1 s timeouts; its port. */
static int lws_start(struct lws_server *l)
{
    lws_set_log_level(0, NULL);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof(info));
    info.port = 0;
    info.iface = "127.0.0.1";
    info.protocols = lws_http;
    info.max_http_header_data = HEAD_LIMIT;
    info.max_http_header_pool = 16;
    info.timeout_secs = 1;
    info.timeout_secs_ah_idle = 1;
    info.keepalive_timeout = 1;
    l->ctx = lws_create_context(&info);
    assert_non_null(l->ctx);
    atomic_store(&l->stop, 0);
    assert_int_equal(pthread_create(&l->thread, NULL, lws_loop, l), 0);
    return lws_get_vhost_listen_port(lws_get_vhost_by_name(l->ctx, "default"));
}

static void lws_stop(struct lws_server *l)
{
    atomic_store(&l->stop, 1);
    lws_cancel_service(l->ctx);
    pthread_join(l->thread, NULL);
    lws_context_destroy(l->ctx);
}

static void on_ok(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)req, (void)ud;
    psi_serve_reply_text(rep, 200, NULL, "ok\n");
}

static struct psi_serve *psi_start(int *port)
{
    char err[256];
    struct psi_serve *s = psi_serve_new("127.0.0.1:0", err, sizeof(err));
    const struct psi_serve_limits lim = {.max_head = HEAD_LIMIT, .head_timeout_ms = 1000};
    assert_non_null(s);
    assert_int_equal(psi_serve_set_limits(s, &lim), 0);
    assert_int_equal(psi_serve_route(s, "GET", "/healthz", on_ok, NULL), 0);
    assert_int_equal(psi_serve_start(s, err, sizeof(err)), 0);
    *port = psi_serve_port(s);
    return s;
}

/* ---- the requests ---- */

enum probe { HEALTHZ, HUGE_TARGET, HUGE_FIELD, STALLED_HEAD, PROBES };

/* What probe p sends; *len its length. */
static char *request(enum probe p, size_t *len)
{
    char *r = NULL;
    switch (p) {
    case HEALTHZ: r = strdup("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); break;
    case HUGE_TARGET:
        r = malloc(200000 + 64);
        memcpy(r, "GET /", 5);
        memset(r + 5, 'u', 200000);
        strcpy(r + 200005, " HTTP/1.1\r\nHost: x\r\n\r\n");
        break;
    case HUGE_FIELD:
        r = malloc(9000 + 128);
        strcpy(r, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ");
        memset(r + strlen(r), 'h', 9000);
        strcpy(r + 9000 + 39, "\r\n\r\n");
        break;
    case STALLED_HEAD: r = strdup("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a"); break;
    case PROBES: break;
    }
    assert_non_null(r);
    *len = strlen(r);
    return r;
}

/* Send probe p to 127.0.0.1:port and read until the server closes or 5 s pass; the status
 * code of the answer, 0 when the connection closed (or went quiet) without a status line. */
static int status_of(int port, enum probe p)
{
    size_t len;
    char *req = request(p, &len);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    for (size_t sent = 0; sent < len;) { /* a server that closes half way stops the sending */
        ssize_t w = send(fd, req + sent, len - sent, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        sent += (size_t)w;
    }
    char buf[64] = "";
    size_t got = 0;
    for (ssize_t r; got < sizeof(buf) - 1 && (r = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0;)
        got += (size_t)r;
    buf[got] = '\0';
    close(fd);
    free(req);
    int code = 0;
    return sscanf(buf, "HTTP/1.1 %d", &code) == 1 ? code : 0;
}

static void test_lws_drops_what_psi_serve_answers(void **state)
{
    (void)state;
    static const int psi_serve_answers[PROBES] = {200, 414, 431, 408};
    static const char *const names[PROBES] = {"GET /healthz", "a 200,000-byte target", "a 9,000-byte field",
                                              "a head that stops"};
    struct lws_server l;
    int lws_port = lws_start(&l), psi_port;
    struct psi_serve *s = psi_start(&psi_port);
    for (int p = 0; p < PROBES; p++) {
        int ours = status_of(psi_port, (enum probe)p), theirs = status_of(lws_port, (enum probe)p);
        print_message("%-22s psi_serve %d, libwebsockets %d%s\n", names[p], ours, theirs,
                      theirs ? "" : " (closed without a status line)");
        assert_int_equal(ours, psi_serve_answers[p]);
        if (p == HEALTHZ)
            assert_int_equal(theirs, 200);
        else
            assert_int_equal(theirs, 0);
    }
    psi_serve_free(s);
    lws_stop(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lws_drops_what_psi_serve_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
