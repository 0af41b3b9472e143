/* Unit tests for psi_http: finding the end of a request head, the status for a head that
 * does not fit, and parsing heads, good and hostile (smuggling attempts, bad escapes,
 * folded lines, other HTTP versions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "httpd/http.h"

static void test_head_end(void **state)
{
    (void)state;
    const char *h = "GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY";
    size_t n = strlen(h);
    assert_int_equal(psi_http_head_end(h, n, 0), n - 4);
    assert_int_equal(psi_http_head_end(h, 10, 0), 0);
    /* resumed from where a previous search stopped, across the boundary */
    assert_int_equal(psi_http_head_end(h, n, n - 6), n - 4);
    assert_int_equal(psi_http_head_end("\r\n\r", 3, 0), 0);
}

static void test_overflow_status(void **state)
{
    (void)state;
    char buf[64];
    memset(buf, 'a', sizeof(buf));
    memcpy(buf, "GET /", 5);
    assert_int_equal(psi_http_overflow_status(buf, sizeof(buf)), 414);
    memcpy(buf, "GET / HTTP/1.1\r\nX-Big: ", 23);
    assert_int_equal(psi_http_overflow_status(buf, sizeof(buf)), 431);
}

/* Parse text (copied, as the parser writes into its buffer) into h; returns the status. */
static int parse(const char *text, struct psi_http_head *h, char *buf, size_t len)
{
    snprintf(buf, len, "%s", text);
    size_t end = psi_http_head_end(buf, strlen(buf), 0);
    assert_true(end > 0);
    return psi_http_parse_head(buf, end, h);
}

static void test_parse_good(void **state)
{
    (void)state;
    char buf[1024];
    struct psi_http_head h;
    assert_int_equal(parse("GET /metrics/node/worker%2D1?a=%41&b HTTP/1.1\r\nHost: x\r\n"
                           "authorization:  Bearer abc.def \r\nConnection: Upgrade, close\r\n\r\n",
                           &h, buf, sizeof(buf)),
                     0);
    assert_string_equal(h.method, "GET");
    assert_string_equal(h.path, "/metrics/node/worker-1");
    assert_string_equal(h.query, "a=%41&b");
    assert_string_equal(h.bearer, "abc.def");
    assert_int_equal(h.minor, 1);
    assert_int_equal(h.content_length, -1);
    assert_int_equal(h.keep_alive, 0);

    assert_int_equal(
        parse("PUT /p HTTP/1.1\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n", &h, buf, sizeof(buf)), 0);
    assert_int_equal(h.content_length, 12);
    assert_int_equal(h.expect_continue, 1);
    assert_int_equal(h.keep_alive, 1);
    assert_string_equal(h.bearer, "");

    /* HTTP/1.0 keeps the connection only when asked; the same length twice is fine */
    assert_int_equal(parse("POST / HTTP/1.0\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\n", &h, buf, sizeof(buf)),
                     0);
    assert_int_equal(h.keep_alive, 0);
    assert_int_equal(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &h, buf, sizeof(buf)), 0);
    assert_int_equal(h.keep_alive, 1);
    assert_int_equal(parse("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", &h, buf, sizeof(buf)), 0);
    assert_int_equal(h.chunked, 1);
    /* another authorization scheme is no bearer token */
    assert_int_equal(parse("GET / HTTP/1.1\r\nAuthorization: Basic eDp5\r\n\r\n", &h, buf, sizeof(buf)), 0);
    assert_string_equal(h.bearer, "");
}

static void test_parse_bad(void **state)
{
    (void)state;
    static const struct {
        const char *head;
        int status;
    } cases[] = {
        {"GET / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400},           /* two lengths */
        {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400}, /* both */
        {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
        {"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},          /* space before the colon */
        {"GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n", 400}, /* obsolete folding */
        {"GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n", 400},    /* bare CR */
        {"GET / HTTP/1.1\r\nX-A: a\nb: c\r\n\r\n", 400}, /* bare LF */
        {"GET /a%zz HTTP/1.1\r\n\r\n", 400},
        {"GET /a%00b HTTP/1.1\r\n\r\n", 400},
        {"GET /a% HTTP/1.1\r\n\r\n", 400},
        {"GET http://x/ HTTP/1.1\r\n\r\n", 400},
        {"GET / HTTP/2.0\r\n\r\n", 505},
        {"GET / HTTP/1.2\r\n\r\n", 505},
        {"GET / FTP/1.1\r\n\r\n", 400},
        {"GET /\r\n\r\n", 400},
        {" GET / HTTP/1.1\r\n\r\n", 400},
        {"G(T / HTTP/1.1\r\n\r\n", 400},
        {"GET /a b HTTP/1.1\r\n\r\n", 400},
    };
    char buf[512];
    struct psi_http_head h;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = parse(cases[i].head, &h, buf, sizeof(buf));
        if (rc != cases[i].status)
            fail_msg("case %zu (%s): status %d, want %d", i, cases[i].head, rc, cases[i].status);
    }
    char nul[] = "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n";
    assert_int_equal(psi_http_parse_head(nul, sizeof(nul) - 1, &h), 400);
}

static void test_reason(void **state)
{
    (void)state;
    assert_string_equal(psi_http_reason(414), "URI Too Long");
    assert_string_equal(psi_http_reason(431), "Request Header Fields Too Large");
    assert_string_equal(psi_http_reason(299), "Unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_end),  cmocka_unit_test(test_overflow_status), cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad), cmocka_unit_test(test_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
