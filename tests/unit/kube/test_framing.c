/* Unit tests for kube_framing: whole lines out of arbitrarily chunked input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/framing.h"

/* The lines a framer delivered, concatenated with '\n' after each, for comparison. */
struct sink {
    char *buf;
    size_t len, cap;
    size_t lines;
    size_t stop_after; /* return 1 from the callback on this line (0: never) */
};

static int sink_line(const char *line, size_t len, void *ud)
{
    struct sink *s = ud;
    assert_int_equal(line[len], '\0');
    assert_null(memchr(line, '\n', len));
    if (s->len + len + 1 > s->cap) {
        s->cap = (s->len + len + 1) * 2;
        s->buf = realloc(s->buf, s->cap);
        assert_non_null(s->buf);
    }
    memcpy(s->buf + s->len, line, len);
    s->len += len;
    s->buf[s->len++] = '\n';
    s->lines++;
    if (s->stop_after && s->lines == s->stop_after)
        return 7;
    return 0;
}

static void sink_free(struct sink *s)
{
    free(s->buf);
    memset(s, 0, sizeof(*s));
}

/* xorshift64*: deterministic, seeded. */
static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* Feed input in random chunks (sizes 0..maxchunk) and return what came out. */
static void feed_random(const char *in, size_t n, size_t maxchunk, struct sink *out)
{
    struct kube_framing *f = kube_framing_new(0);
    assert_non_null(f);
    struct kube_err err = {0};
    size_t off = 0;
    while (off < n) {
        size_t c = (size_t)(rng() % (maxchunk + 1));
        if (c > n - off)
            c = n - off;
        assert_int_equal(kube_framing_feed(f, in + off, c, sink_line, out, &err), 0);
        off += c;
    }
    assert_int_equal(kube_framing_pending(f), 0);
    kube_framing_free(f);
}

/* A stream of watch-like events with multibyte UTF-8 (2, 3 and 4 byte sequences). */
static char *make_stream(size_t events, size_t *len)
{
    static const char *texts[] = {"plain",
                                  "gr\xc3\xbc\xc3\x9f"
                                  "e",
                                  "\xe6\x97\xa5\xe6\x9c\xac", "emoji \xf0\x9f\x98\x80\xf0\x9f\x9a\x80",
                                  "\xc3\xa9t\xc3\xa9"};
    size_t cap = events * 160 + 1, off = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    for (size_t i = 0; i < events; i++)
        off += (size_t)snprintf(s + off, cap - off,
                                "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"n%zu\","
                                "\"annotations\":{\"t\":\"%s\"}}}}\n",
                                i, texts[i % 5]);
    *len = off;
    return s;
}

static void test_random_splits(void **state)
{
    (void)state;
    size_t n;
    char *in = make_stream(200, &n);
    rng_state = 0x9e3779b97f4a7c15ULL;
    for (int iter = 0; iter < 2000; iter++) {
        struct sink out = {0};
        size_t maxchunk = iter % 3 == 0 ? 3 : iter % 3 == 1 ? 64 : 4096;
        feed_random(in, n, maxchunk, &out);
        assert_int_equal(out.lines, 200);
        assert_int_equal(out.len, n);
        assert_memory_equal(out.buf, in, n);
        sink_free(&out);
    }
    free(in);
}

/* Every split point of a line holding multibyte sequences, one byte then the rest, and
 * byte by byte. */
static void test_utf8_split_points(void **state)
{
    (void)state;
    const char line[] = "{\"a\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}\n";
    size_t n = sizeof(line) - 1;
    for (size_t cut = 0; cut <= n; cut++) {
        struct kube_framing *f = kube_framing_new(0);
        struct sink out = {0};
        struct kube_err err = {0};
        assert_int_equal(kube_framing_feed(f, line, cut, sink_line, &out, &err), 0);
        assert_int_equal(kube_framing_feed(f, line + cut, n - cut, sink_line, &out, &err), 0);
        assert_int_equal(out.lines, 1);
        assert_memory_equal(out.buf, line, n);
        sink_free(&out);
        kube_framing_free(f);
    }
    struct kube_framing *f = kube_framing_new(0);
    struct sink out = {0};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(kube_framing_feed(f, line + i, 1, sink_line, &out, NULL), 0);
    assert_int_equal(out.lines, 1);
    assert_memory_equal(out.buf, line, n);
    sink_free(&out);
    kube_framing_free(f);
}

/* A 1 MiB object and a 3 MiB one between small ones, in random chunks. */
static void test_large_objects(void **state)
{
    (void)state;
    size_t sizes[] = {(size_t)1 << 20, 3 * ((size_t)1 << 20)};
    for (size_t k = 0; k < 2; k++) {
        size_t big = sizes[k];
        size_t n = big + 64;
        char *in = malloc(n);
        size_t off = (size_t)sprintf(in, "{\"small\":1}\n{\"big\":\"");
        while (off < big - 3) {
            in[off] = (char)('a' + off % 26);
            off++;
        }
        off += (size_t)sprintf(in + off, "\"}\n{\"small\":2}\n");
        rng_state = 42 + k;
        for (int iter = 0; iter < 20; iter++) {
            struct sink out = {0};
            feed_random(in, off, 70000, &out);
            assert_int_equal(out.lines, 3);
            assert_memory_equal(out.buf, in, off);
            sink_free(&out);
        }
        free(in);
    }
}

static void test_empty_lines_and_crlf(void **state)
{
    (void)state;
    const char in[] = "\n\n{\"a\":1}\r\n\r\n  \n{\"b\":2}\n\t\r\n{\"c\":\"x\\r\"}\r\n";
    struct kube_framing *f = kube_framing_new(0);
    struct sink out = {0};
    assert_int_equal(kube_framing_feed(f, in, sizeof(in) - 1, sink_line, &out, NULL), 0);
    assert_int_equal(out.lines, 3);
    const char want[] = "{\"a\":1}\n{\"b\":2}\n{\"c\":\"x\\r\"}\n";
    assert_int_equal(out.len, sizeof(want) - 1);
    assert_memory_equal(out.buf, want, out.len);
    sink_free(&out);
    /* CR and LF in different chunks. */
    assert_int_equal(kube_framing_feed(f, "{\"d\":4}\r", 8, sink_line, &out, NULL), 0);
    assert_int_equal(out.lines, 0);
    assert_int_equal(kube_framing_feed(f, "\n", 1, sink_line, &out, NULL), 0);
    assert_int_equal(out.lines, 1);
    assert_memory_equal(out.buf, "{\"d\":4}\n", 8);
    sink_free(&out);
    kube_framing_free(f);
}

static void test_partial_line_held(void **state)
{
    (void)state;
    struct kube_framing *f = kube_framing_new(0);
    struct sink out = {0};
    assert_int_equal(kube_framing_feed(f, "{\"a\":1}\n{\"b\"", 13, sink_line, &out, NULL), 0);
    assert_int_equal(out.lines, 1);
    assert_int_equal(kube_framing_pending(f), 5);
    kube_framing_reset(f);
    assert_int_equal(kube_framing_pending(f), 0);
    assert_int_equal(kube_framing_feed(f, "{\"c\":3}\n", 8, sink_line, &out, NULL), 0);
    assert_int_equal(out.lines, 2);
    assert_memory_equal(out.buf, "{\"a\":1}\n{\"c\":3}\n", 16);
    sink_free(&out);
    kube_framing_free(f);
}

static void test_line_limit(void **state)
{
    (void)state;
    struct kube_err err = {0};
    struct sink out = {0};
    /* Exactly at the bound is fine, with or without CR. */
    struct kube_framing *f = kube_framing_new(8);
    assert_int_equal(kube_framing_feed(f, "12345678\n1234", 13, sink_line, &out, &err), 0);
    assert_int_equal(kube_framing_feed(f, "5678\r\n", 6, sink_line, &out, &err), 0);
    assert_int_equal(out.lines, 2);
    /* One byte over, found at the newline. */
    assert_int_equal(kube_framing_feed(f, "123456789\n", 10, sink_line, &out, &err), -1);
    assert_string_equal(err.reason, "Decode");
    assert_non_null(strstr(err.msg, "exceeds the 8 byte limit"));
    assert_int_equal(out.lines, 2);
    /* A failed framer refuses more input until reset. */
    kube_err_clear(&err);
    assert_int_equal(kube_framing_feed(f, "1\n", 2, sink_line, &out, &err), -1);
    assert_non_null(strstr(err.msg, "already failed"));
    kube_framing_reset(f);
    assert_int_equal(kube_framing_feed(f, "1\n", 2, sink_line, &out, &err), 0);
    assert_int_equal(out.lines, 3);
    /* Over the bound before any newline arrives: found without buffering the rest. */
    assert_int_equal(kube_framing_feed(f, "1234", 4, sink_line, &out, &err), 0);
    assert_int_equal(kube_framing_feed(f, "567890", 6, sink_line, &out, &err), -1);
    sink_free(&out);
    kube_framing_free(f);

    /* The default bound is 16 MiB. */
    f = kube_framing_new(0);
    size_t n = KUBE_FRAMING_DEFAULT_MAX + 2;
    char *big = malloc(n);
    memset(big, 'x', n);
    assert_int_equal(kube_framing_feed(f, big, n, sink_line, &out, &err), -1);
    assert_non_null(strstr(err.msg, "16777216 byte limit"));
    free(big);
    kube_framing_free(f);
}

static void test_callback_stop(void **state)
{
    (void)state;
    struct kube_framing *f = kube_framing_new(0);
    struct sink out = {.stop_after = 2};
    assert_int_equal(kube_framing_feed(f, "a\nb\nc\n", 6, sink_line, &out, NULL), 7);
    assert_int_equal(out.lines, 2);
    sink_free(&out);
    kube_framing_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_splits),     cmocka_unit_test(test_utf8_split_points),
        cmocka_unit_test(test_large_objects),     cmocka_unit_test(test_empty_lines_and_crlf),
        cmocka_unit_test(test_partial_line_held), cmocka_unit_test(test_line_limit),
        cmocka_unit_test(test_callback_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
