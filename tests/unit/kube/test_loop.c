/* Unit tests for kube_loop: timers, stop (also from a signal handler), and transfers
 * (local file:// transfers through the multi handle: no network, no HTTP). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/loop.h"

static char trace[256];
static size_t ntrace;

static void mark(char c)
{
    if (ntrace + 1 < sizeof(trace))
        trace[ntrace++] = c;
    trace[ntrace] = '\0';
}

static void tick_a(struct kube_loop *l, void *ud)
{
    (void)l;
    (void)ud;
    mark('a');
}
static void tick_b(struct kube_loop *l, void *ud)
{
    (void)l;
    (void)ud;
    mark('b');
}
static void tick_stop(struct kube_loop *l, void *ud)
{
    (void)ud;
    mark('S');
    kube_loop_stop(l);
}

static struct kube_loop *new_loop(void)
{
    ntrace = 0;
    trace[0] = '\0';
    struct kube_err err = {0};
    struct kube_loop *l = kube_loop_new(&err);
    assert_non_null(l);
    return l;
}

static void test_timers_order_and_period(void **state)
{
    (void)state;
    struct kube_loop *l = new_loop();
    uint64_t t0 = kube_loop_now_ms();
    /* due times far apart: a loaded machine may pause the test between two kube_loop_timer
     * calls for tens of milliseconds (a 25 ms margin once made it "baS") */
    assert_true(kube_loop_timer(l, 400, 0, tick_b, NULL) != 0);
    assert_true(kube_loop_timer(l, 5, 0, tick_a, NULL) != 0);
    assert_true(kube_loop_timer(l, 800, 0, tick_stop, NULL) != 0);
    assert_int_equal(kube_loop_run(l, NULL), 0);
    assert_string_equal(trace, "abS");
    assert_true(kube_loop_now_ms() - t0 >= 800);
    kube_loop_free(l);

    /* A periodic timer fires until cancelled. */
    l = new_loop();
    uint64_t id = kube_loop_timer(l, 0, 10, tick_a, NULL);
    assert_true(id != 0);
    kube_loop_timer(l, 55, 0, tick_stop, NULL);
    assert_int_equal(kube_loop_run(l, NULL), 0);
    size_t fired = strspn(trace, "a");
    assert_true(fired >= 3);
    assert_int_equal(trace[fired], 'S');
    kube_loop_cancel(l, id);
    ntrace = 0;
    trace[0] = '\0';
    kube_loop_timer(l, 40, 0, tick_stop, NULL);
    assert_int_equal(kube_loop_run(l, NULL), 0);
    assert_string_equal(trace, "S");
    kube_loop_free(l);
}

static uint64_t to_cancel;
static void tick_cancel_other(struct kube_loop *l, void *ud)
{
    (void)ud;
    mark('c');
    kube_loop_cancel(l, to_cancel);
}

/* A timer added from a timer fires on a later turn; one cancelled by a timer never does. */
static void tick_add(struct kube_loop *l, void *ud)
{
    (void)ud;
    mark('+');
    kube_loop_timer(l, 0, 0, tick_b, NULL);
}

static void test_timers_from_callbacks(void **state)
{
    (void)state;
    struct kube_loop *l = new_loop();
    kube_loop_timer(l, 0, 0, tick_cancel_other, NULL);
    to_cancel = kube_loop_timer(l, 20, 0, tick_a, NULL);
    kube_loop_timer(l, 10, 0, tick_add, NULL);
    kube_loop_timer(l, 60, 0, tick_stop, NULL);
    assert_int_equal(kube_loop_run(l, NULL), 0);
    assert_string_equal(trace, "c+bS");
    kube_loop_cancel(l, 0); /* no-ops */
    kube_loop_cancel(l, 12345);
    kube_loop_free(l);
}

static void test_stop_before_run(void **state)
{
    (void)state;
    struct kube_loop *l = new_loop();
    kube_loop_stop(l);
    assert_int_equal(kube_loop_run(l, NULL), 0); /* returns at once */
    /* The stop was consumed: the next run waits for its own. */
    kube_loop_timer(l, 20, 0, tick_stop, NULL);
    assert_int_equal(kube_loop_run(l, NULL), 0);
    assert_string_equal(trace, "S");
    kube_loop_free(l);
}

static struct kube_loop *sig_loop;
static void on_sigusr1(int sig)
{
    (void)sig;
    kube_loop_stop(sig_loop);
}
static void tick_raise(struct kube_loop *l, void *ud)
{
    (void)l;
    (void)ud;
    mark('r');
    raise(SIGUSR1);
}

/* kube_loop_stop from a signal handler wakes a loop that would otherwise wait long. */
static void test_stop_from_signal(void **state)
{
    (void)state;
    sig_loop = new_loop();
    struct sigaction sa = {.sa_handler = on_sigusr1};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    kube_loop_timer(sig_loop, 10, 0, tick_raise, NULL);
    kube_loop_timer(sig_loop, 30000, 0, tick_a, NULL); /* must not be waited for */
    uint64_t t0 = kube_loop_now_ms();
    assert_int_equal(kube_loop_run(sig_loop, NULL), 0);
    assert_string_equal(trace, "r");
    assert_true(kube_loop_now_ms() - t0 < 30000);
    signal(SIGUSR1, SIG_DFL);
    kube_loop_free(sig_loop);
}

static void tick_rerun(struct kube_loop *l, void *ud)
{
    (void)ud;
    struct kube_err err = {0};
    assert_int_equal(kube_loop_run(l, &err), -1);
    assert_non_null(strstr(err.msg, "inside the loop"));
    mark('x');
    kube_loop_stop(l);
}

static void test_run_is_not_reentrant(void **state)
{
    (void)state;
    struct kube_loop *l = new_loop();
    kube_loop_timer(l, 0, 0, tick_rerun, NULL);
    assert_int_equal(kube_loop_run(l, NULL), 0);
    assert_string_equal(trace, "x");
    kube_loop_free(l);
}

/* ---- transfers ---- */

struct xfer {
    CURL *easy;
    size_t bytes;
    int done;
    CURLcode result;
};
static int xfers_done;

static size_t xfer_write(char *p, size_t s, size_t n, void *ud)
{
    (void)p;
    ((struct xfer *)ud)->bytes += s * n;
    return s * n;
}

static void xfer_done(struct kube_loop *l, CURL *easy, CURLcode rc, void *ud)
{
    struct xfer *x = ud;
    assert_ptr_equal(easy, x->easy);
    x->done++;
    x->result = rc;
    if (++xfers_done == 3)
        kube_loop_stop(l);
}

static CURL *file_easy(const char *path, struct xfer *x)
{
    char url[4200];
    snprintf(url, sizeof(url), "file://%s", path);
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, xfer_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    x->easy = e;
    return e;
}

static void test_transfers(void **state)
{
    (void)state;
    char path[] = "/tmp/psi-loop-test.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static char buf[200000];
    memset(buf, 'x', sizeof(buf));
    assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
    close(fd);

    struct kube_loop *l = new_loop();
    struct kube_err err = {0};
    struct xfer a = {0}, b = {0}, c = {0}, gone = {0};
    xfers_done = 0;
    assert_int_equal(kube_loop_add(l, file_easy(path, &a), xfer_done, &a, &err), 0);
    assert_int_equal(kube_loop_add(l, file_easy(path, &b), xfer_done, &b, &err), 0);
    assert_int_equal(kube_loop_add(l, file_easy("/nonexistent/psi", &c), xfer_done, &c, &err), 0);
    assert_int_equal(kube_loop_add(l, file_easy(path, &gone), xfer_done, &gone, &err), 0);
    assert_int_equal(kube_loop_add(l, a.easy, xfer_done, &a, &err), -1); /* twice */
    assert_non_null(strstr(err.msg, "added twice"));
    assert_int_equal(kube_loop_transfers(l), 4);
    kube_loop_remove(l, gone.easy); /* removed before it ran: no done callback */
    kube_loop_remove(l, gone.easy); /* no-op */
    assert_int_equal(kube_loop_transfers(l), 3);
    kube_loop_timer(l, 10000, 0, tick_stop, NULL); /* a safety net, not expected to fire */
    assert_int_equal(kube_loop_run(l, NULL), 0);
    assert_string_equal(trace, "");
    assert_int_equal(a.done, 1);
    assert_int_equal(a.result, CURLE_OK);
    assert_int_equal(a.bytes, sizeof(buf));
    assert_int_equal(b.done, 1);
    assert_int_equal(b.bytes, sizeof(buf));
    assert_int_equal(c.done, 1);
    assert_int_equal(c.result, CURLE_FILE_COULDNT_READ_FILE);
    assert_int_equal(gone.done, 0);
    assert_int_equal(kube_loop_transfers(l), 0);

    /* A handle may be added again after its done callback (what a reconnect does). */
    a.bytes = 0;
    xfers_done = 2;
    assert_int_equal(kube_loop_add(l, a.easy, xfer_done, &a, &err), 0);
    assert_int_equal(kube_loop_run(l, NULL), 0);
    assert_int_equal(a.done, 2);
    assert_int_equal(a.bytes, sizeof(buf));

    /* Freeing a loop with a transfer still in it leaves the handle to its owner. */
    assert_int_equal(kube_loop_add(l, b.easy, xfer_done, &b, &err), 0);
    kube_loop_free(l);
    curl_easy_cleanup(a.easy);
    curl_easy_cleanup(b.easy);
    curl_easy_cleanup(c.easy);
    curl_easy_cleanup(gone.easy);
    unlink(path);
}

__extension__ typedef __int128 i128;

/* The staleness rule over generated times, against a reference in signed 128-bit
 * arithmetic: stale exactly when now - beat > bound, never for a beat after now. */
static void test_stalled_rule(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15u;
    const uint64_t edges[] = {0, 1, 499, 500, 501, 60000, UINT64_MAX / 2, UINT64_MAX - 1, UINT64_MAX};
    size_t ne = sizeof(edges) / sizeof(edges[0]);
    int stale = 0, fresh = 0;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t beat = i % 4 == 0 ? edges[x % ne] : x >> (x & 31);
        uint64_t bound = i % 3 == 0 ? edges[(x >> 8) % ne] : (x >> 20) % 120000;
        int64_t delta = (int64_t)((x >> 3) % 240001) - 120000;
        uint64_t now = i % 5 == 0 ? edges[(x >> 16) % ne] : beat + (uint64_t)delta;
        bool want = (i128)now - (i128)beat > (i128)bound;
        bool got = kube_loop_stalled(now, beat, bound);
        assert_int_equal(got, want);
        got ? stale++ : fresh++;
    }
    assert_true(stale > 1000 && fresh > 1000); /* both outcomes were exercised */
}

static uint64_t beat_seen;
static void tick_stuck(struct kube_loop *l, void *ud)
{
    (void)ud;
    beat_seen = kube_loop_last_beat_ms(l);
    usleep(300 * 1000); /* a callback that blocks */
    *(bool *)ud = kube_loop_stalled(kube_loop_now_ms(), kube_loop_last_beat_ms(l), 200);
    kube_loop_stop(l);
}

/* The loop stamps the heartbeat before it runs callbacks; a callback that blocks leaves it
 * stale; an explicit beat makes it fresh again. */
static void test_heartbeat_stuck_loop(void **state)
{
    (void)state;
    struct kube_loop *l = new_loop();
    bool stuck = false;
    uint64_t before = kube_loop_now_ms();
    kube_loop_timer(l, 50, 0, tick_stuck, &stuck);
    struct kube_err err;
    assert_int_equal(kube_loop_run(l, &err), 0);
    assert_true(beat_seen >= before);
    assert_true(stuck);
    assert_true(kube_loop_stalled(kube_loop_now_ms(), kube_loop_last_beat_ms(l), 200));
    kube_loop_beat(l);
    assert_false(kube_loop_stalled(kube_loop_now_ms(), kube_loop_last_beat_ms(l), 200));
    kube_loop_free(l);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timers_order_and_period),
        cmocka_unit_test(test_timers_from_callbacks),
        cmocka_unit_test(test_stop_before_run),
        cmocka_unit_test(test_stop_from_signal),
        cmocka_unit_test(test_run_is_not_reentrant),
        cmocka_unit_test(test_transfers),
        cmocka_unit_test(test_stalled_rule),
        cmocka_unit_test(test_heartbeat_stuck_loop),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
