/* psi_authz under clients with made-up tokens (issue: token reviews ran inline in the
 * metrics server's thread, so two clients sending random tokens slowed legitimate scrapes
 * to 5-15 s).
 *
 * A metrics server as the operator's (/metrics behind psi_authz, the handler parked while
 * its review waits) runs in this process with a reviewer in place of the API server's
 * reviews: it answers the scraper's token 200 at once and any other token 401 after
 * SLOW_REVIEW_MS, as a loaded API server would, and counts how many reviews run at once.
 * The scraper's token is reviewed once; then HOSTILE threads send GET /metrics with a new
 * random token each, as fast as they are answered, while the scraper scrapes SCRAPES
 * times. Checked: every scrape answered 200 (the cached answer is never held up behind the
 * queue); every hostile request answered 401, 429 or 503, none 2xx; never two reviews at
 * once; the queue and the cache stay within their bounds (the scraper's answer still
 * cached after the attack). The scrapes' times are printed for the record, not asserted.
 * A request whose review never ends gets 503 when the server's wait runs out. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "serve/authz.h"
#include "httpd/serve.h"

#define SCRAPER_TOKEN "scraper-token"
#define SLOW_REVIEW_MS 300
#define HOSTILE 16
#define SCRAPES 40

struct bed {
    struct psi_serve *server;
    struct psi_authz *authz;
    atomic_int in_review, most_at_once, reviews;
    atomic_int stop;
    atomic_int hostile_total, hostile_refused, hostile_ok;
};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The API server's reviews, as seen from the operator: fast for a known token, slow for
 * made-up ones. */
static int review(void *ud, const char *token, const char *verb, const char *path, char *why, size_t whylen)
{
    struct bed *b = ud;
    (void)verb, (void)path, (void)why, (void)whylen;
    int now = atomic_fetch_add(&b->in_review, 1) + 1;
    int most = atomic_load(&b->most_at_once);
    while (now > most && !atomic_compare_exchange_weak(&b->most_at_once, &most, now))
        ;
    atomic_fetch_add(&b->reviews, 1);
    int allowed = strcmp(token, SCRAPER_TOKEN) == 0;
    if (!allowed)
        sleep_ms(SLOW_REVIEW_MS);
    atomic_fetch_sub(&b->in_review, 1);
    return allowed ? 200 : 401;
}

static void resume(void *ud, unsigned long long ticket)
{
    struct bed *b = ud;
    psi_serve_resume(b->server, ticket);
}

/* The operator's /metrics handler, with a fixed body. */
static void on_metrics(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    struct bed *b = ud;
    char why[256];
    int status = psi_authz_check(b->authz, req->bearer, "get", req->path, req->ticket, why, sizeof(why));
    if (status == PSI_AUTHZ_LATER) {
        rep->status = PSI_SERVE_LATER;
        return;
    }
    psi_serve_reply_text(rep, status, NULL, status == 200 ? "metric 1\n" : why);
}

/* A handler that never gets an answer. */
static void on_never(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)req, (void)ud;
    rep->status = PSI_SERVE_LATER;
}

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
    (void)p, (void)ud;
    return s * n;
}

/* GET path with token on a fresh connection: the status, or 0 when none came within 20 s. */
static long get(int port, const char *path, const char *token)
{
    char url[96], auth[160];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    CURL *e = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, auth);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    long code = 0;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(e);
    return code;
}

struct hostile_arg {
    struct bed *b;
    int port;
    unsigned seed;
};

static void *hostile(void *arg)
{
    struct hostile_arg *h = arg;
    while (!atomic_load(&h->b->stop)) {
        char token[48];
        snprintf(token, sizeof(token), "made-up-%u-%d", h->seed, rand_r(&h->seed));
        long code = get(h->port, "/metrics", token);
        atomic_fetch_add(&h->b->hostile_total, 1);
        if (code == 401 || code == 429 || code == 503)
            atomic_fetch_add(&h->b->hostile_refused, 1);
        else if (code >= 200 && code < 300)
            atomic_fetch_add(&h->b->hostile_ok, 1);
    }
    return NULL;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void test_cached_scrapes_beside_made_up_tokens(void **state)
{
    (void)state;
    static struct bed b;
    char err[256];
    b.server = psi_serve_new("127.0.0.1:0", err, sizeof(err));
    assert_non_null(b.server);
    b.authz = psi_authz_new_with(review, &b, NULL, resume, &b, err, sizeof(err));
    assert_non_null(b.authz);
    assert_int_equal(psi_serve_route(b.server, "GET", "/metrics", on_metrics, &b), 0);
    assert_int_equal(psi_serve_start(b.server, err, sizeof(err)), 0);
    int port = psi_serve_port(b.server);

    /* the scraper's token is reviewed once (the request waits for it, parked) */
    assert_int_equal(get(port, "/metrics", SCRAPER_TOKEN), 200);
    assert_int_equal(atomic_load(&b.reviews), 1);

    pthread_t th[HOSTILE];
    struct hostile_arg ha[HOSTILE];
    for (int i = 0; i < HOSTILE; i++) {
        ha[i] = (struct hostile_arg){.b = &b, .port = port, .seed = 1000u + (unsigned)i};
        assert_int_equal(pthread_create(&th[i], NULL, hostile, &ha[i]), 0);
    }
    while (atomic_load(&b.hostile_total) < 2 * HOSTILE) /* the attack is under way */
        sleep_ms(10);
    long took[SCRAPES];
    int answered = 0;
    for (int i = 0; i < SCRAPES; i++) {
        int64_t t0 = mono_ms();
        answered += get(port, "/metrics", SCRAPER_TOKEN) == 200;
        took[i] = (long)(mono_ms() - t0);
        sleep_ms(20);
    }
    atomic_store(&b.stop, 1);
    for (int i = 0; i < HOSTILE; i++)
        pthread_join(th[i], NULL);

    struct psi_authz_stats st = psi_authz_stats(b.authz);
    qsort(took, SCRAPES, sizeof(took[0]), cmp_long);
    printf("scrapes answered 200: %d/%d (median %ld ms, max %ld ms); hostile requests: %d, refused %d; "
           "reviews %d (%llu queued, %llu rate limited, %llu queue full), most at once %d\n",
           answered, SCRAPES, took[SCRAPES / 2], took[SCRAPES - 1], atomic_load(&b.hostile_total),
           atomic_load(&b.hostile_refused), atomic_load(&b.reviews), (unsigned long long)st.queued,
           (unsigned long long)st.rate_limited, (unsigned long long)st.queue_full, atomic_load(&b.most_at_once));
    assert_int_equal(answered, SCRAPES);
    assert_int_equal(atomic_load(&b.hostile_ok), 0);
    assert_int_equal(atomic_load(&b.hostile_refused), atomic_load(&b.hostile_total));
    assert_true(atomic_load(&b.hostile_total) > HOSTILE);
    assert_int_equal(atomic_load(&b.most_at_once), 1);
    assert_true(st.cache_hits >= (uint64_t)SCRAPES);
    /* the scraper's answer is still cached: no review for it after the attack */
    int before = atomic_load(&b.reviews);
    assert_int_equal(get(port, "/metrics", SCRAPER_TOKEN), 200);
    assert_int_equal(atomic_load(&b.reviews), before);

    psi_authz_stop(b.authz);
    psi_serve_free(b.server);
    psi_authz_free(b.authz);
}

/* A parked request whose answer never comes gets 503 when the server's wait runs out, and
 * the server goes on answering meanwhile. */
static void test_parked_request_times_out(void **state)
{
    (void)state;
    char err[256];
    struct psi_serve *s = psi_serve_new("127.0.0.1:0", err, sizeof(err));
    struct psi_serve_limits lim = {.later_timeout_ms = 300};
    assert_int_equal(psi_serve_set_limits(s, &lim), 0);
    assert_int_equal(psi_serve_route(s, "GET", "/never", on_never, NULL), 0);
    assert_int_equal(psi_serve_start(s, err, sizeof(err)), 0);
    assert_int_equal(get(psi_serve_port(s), "/never", "x"), 503);
    assert_int_equal(psi_serve_resume(s, 12345), 0); /* a ticket nobody holds: ignored */
    assert_int_equal(get(psi_serve_port(s), "/never", "x"), 503);
    psi_serve_free(s);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_scrapes_beside_made_up_tokens),
        cmocka_unit_test(test_parked_request_times_out),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
