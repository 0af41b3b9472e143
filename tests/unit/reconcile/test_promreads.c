/* Unit tests of the Prometheus reads on the event loop: promrun's client (one per owner, made
 * anew only when its settings change), sampling's pressure read and gather's usage queries.
 * A read on the loop must leave the loop running while it waits: the server here answers a
 * request only after the loop's timer has ticked TICKS times since the request came, so a
 * read that blocked the loop would get no answer before its timeout and fail. Without a loop
 * the reads block and have ended when they return. */
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
#include <unistd.h>

#include <cmocka.h>

#include "api/reasons.h"
#include "reconcile/gather.h"
#include "reconcile/sampling.h"

#define TICKS 5
#define TICK_MS 20

static const struct kube_event_ref ref = {"rebalance.psi.dev/v1alpha1", "PsiRebalance", NULL, "test", NULL};

/* A server on 127.0.0.1 that answers `requests` requests, one per connection, each with body
 * once the loop ticked TICKS times after the request arrived. */
struct server {
    int listener;
    char url[64]; /* http://127.0.0.1:<port> */
    int requests;
    const char *body;
    char seen[2][4096]; /* the first two request lines */
    atomic_int ticks;
    pthread_t thread;
};

static void *serve(void *ud)
{
    struct server *s = ud;
    for (int i = 0; i < s->requests; i++) {
        int c = accept(s->listener, NULL, NULL);
        if (c < 0)
            return NULL;
        char buf[8192];
        size_t got = 0;
        while (got < sizeof(buf) - 1) {
            ssize_t n = read(c, buf + got, sizeof(buf) - 1 - got);
            if (n <= 0)
                break;
            got += (size_t)n;
            buf[got] = '\0';
            if (strstr(buf, "\r\n\r\n"))
                break;
        }
        buf[got] = '\0';
        if (i < 2)
            snprintf(s->seen[i], sizeof(s->seen[i]), "%.*s", (int)strcspn(buf, "\r"), buf);
        int until = atomic_load(&s->ticks) + TICKS;
        while (atomic_load(&s->ticks) < until)
            usleep(1000);
        char head[256];
        int hl = snprintf(head, sizeof(head),
                          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                          "Connection: close\r\n\r\n",
                          strlen(s->body));
        if (write(c, head, (size_t)hl) != hl || write(c, s->body, strlen(s->body)) < 0)
            break;
        close(c);
    }
    return NULL;
}

static void server_start(struct server *s, int requests, const char *body)
{
    memset(s, 0, sizeof(*s));
    s->requests = requests;
    s->body = body;
    s->listener = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->listener >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(s->listener, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t al = sizeof(a);
    assert_int_equal(getsockname(s->listener, (struct sockaddr *)&a, &al), 0);
    snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", ntohs(a.sin_port));
    assert_int_equal(listen(s->listener, 4), 0);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
    shutdown(s->listener, SHUT_RDWR);
    close(s->listener);
    pthread_join(s->thread, NULL);
}

/* The loop of a test: a ticking timer, a wake that stops it, a deadline. */
struct run {
    struct kube_loop *loop;
    struct server *server;
    int wakes;
    bool deadline;
};

static void tick(struct kube_loop *loop, void *ud)
{
    (void)loop;
    atomic_fetch_add(&((struct run *)ud)->server->ticks, 1);
}

static void deadline(struct kube_loop *loop, void *ud)
{
    ((struct run *)ud)->deadline = true;
    kube_loop_stop(loop);
}

static void wake(void *ud)
{
    struct run *r = ud;
    r->wakes++;
    kube_loop_stop(r->loop);
}

static void run_until_woken(struct run *r)
{
    uint64_t t = kube_loop_timer(r->loop, TICK_MS, TICK_MS, tick, r);
    uint64_t d = kube_loop_timer(r->loop, 10000, 0, deadline, r);
    struct kube_err err;
    assert_int_equal(kube_loop_run(r->loop, &err), 0);
    kube_loop_cancel(r->loop, t);
    kube_loop_cancel(r->loop, d);
    assert_false(r->deadline);
}

static void test_client_settings(void **state)
{
    (void)state;
    struct promrun r = {0};
    struct psi_prom_config cfg = {.url = "http://127.0.0.1:1"};
    struct kube_err st;
    kube_err_clear(&st);
    struct psi_prom *p = promrun_client(&r, &cfg, &st);
    assert_non_null(p);
    assert_false(kube_err_failed(&st));
    assert_ptr_equal(promrun_client(&r, &cfg, &st), p); /* asked again: the same client */
    assert_false(promrun_busy(&r));
    cfg.url = "http://127.0.0.1:2"; /* other settings: another client */
    assert_non_null(promrun_client(&r, &cfg, &st));
    assert_null(promrun_client(&r, NULL, &st)); /* no settings (no memory to make them) */
    assert_string_equal(st.reason, API_REASON_SOURCE_CONFIG_ERROR);
    promrun_release(&r);
}

/* The defaults with spec.metrics.source Prometheus (free with api_spec_free). */
static void prometheus_spec(struct api_spec *spec)
{
    memset(spec, 0, sizeof(*spec));
    assert_int_equal(api_spec_defaults(spec), 0);
    spec->metrics.source = API_SOURCE_PROMETHEUS;
}

/* One owned node, worker-0, for the sampling tests. */
static struct nodeproj *worker(void)
{
    struct nodeproj *np = calloc(1, sizeof(*np) + sizeof("worker-0"));
    assert_non_null(np);
    strcpy(np->name, "worker-0");
    np->cpus = 4;
    return np;
}

static void test_sample_blocking(void **state)
{
    (void)state;
    struct sampling s;
    sampling_init(&s);
    struct api_spec spec;
    prometheus_spec(&spec);
    struct nodeproj *np = worker();
    struct ownership_node on = {np, np->name, true};
    struct ownership_nodes nodes = {&on, 1, 1};
    struct psi_prom_config cfg = {.url = "http://127.0.0.1:1", .connect_timeout_ms = 200, .timeout_ms = 500};
    struct sampling_in in = {.ref = &ref, .spec = &spec, .nodes = &nodes, .prom = &cfg};
    assert_int_equal(sampling_take(&s, &in), -1); /* nothing started: nothing to take */
    assert_int_equal(s.metrics, -1);
    sampling_start(&s, &in); /* no loop: it blocks, and has ended */
    assert_true(sampling_ready(&s));
    assert_false(sampling_busy(&s));
    assert_int_equal(sampling_take(&s, &in), -1); /* nothing listens there */
    assert_string_equal(s.reason, API_REASON_SOURCE_UNREACHABLE);
    assert_false(sampling_ready(&s));
    in.prom = NULL; /* no settings: the read ends at once, failed, and says why */
    sampling_start(&s, &in);
    assert_int_equal(sampling_take(&s, &in), -1);
    assert_string_equal(s.reason, API_REASON_SOURCE_CONFIG_ERROR);
    api_spec_free(&spec);
    sampling_free(&s);
    free(np);
}

static void test_sample_on_loop(void **state)
{
    (void)state;
    struct server srv;
    server_start(&srv, 1,
                 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"node\":"
                 "\"worker-0\",\"psi_resource\":\"cpu\"},\"value\":[1700000000,\"0.25\"]}]}}");
    struct kube_err err;
    struct run r = {.loop = kube_loop_new(&err), .server = &srv};
    assert_non_null(r.loop);
    struct sampling s;
    sampling_init(&s);
    struct api_spec spec;
    prometheus_spec(&spec);
    struct nodeproj *np = worker();
    struct ownership_node on = {np, np->name, true};
    struct ownership_nodes nodes = {&on, 1, 1};
    struct psi_prom_config cfg = {.url = srv.url, .timeout_ms = 3000};
    struct sampling_in in = {
        .ref = &ref, .spec = &spec, .nodes = &nodes, .prom = &cfg, .loop = r.loop, .wake = wake, .wake_ud = &r};
    sampling_start(&s, &in);
    assert_true(sampling_busy(&s)); /* it runs on the loop */
    assert_false(sampling_ready(&s));
    sampling_start(&s, &in); /* one read at a time */
    free(np);                /* the read keeps its own copy of what it asked for */
    np = NULL;
    run_until_woken(&r);
    assert_int_equal(r.wakes, 1);
    assert_true(sampling_ready(&s));
    assert_int_equal(sampling_take(&s, &in), 0);
    assert_int_equal(s.metrics, 1);
    assert_true(s.have_sample);
    assert_string_equal(s.sample.nodes[0].name, "worker-0");
    assert_true(s.sample.nodes[0].value[PSI_CPU].known);
    assert_true(s.sample.nodes[0].value[PSI_CPU].percent > 24.9 && s.sample.nodes[0].value[PSI_CPU].percent < 25.1);
    assert_true(s.last_seconds >= TICKS * TICK_MS / 1000.0);
    server_stop(&srv); /* joined: what it saw can be read */
    assert_non_null(strstr(srv.seen[0], "node_pressure_cpu_waiting_seconds_total"));
    api_spec_free(&spec);
    sampling_free(&s);
    kube_loop_free(r.loop);
}

/* A read dropped with its owner (a PsiRebalance deleted while it waits) never calls back. */
static void test_sample_dropped(void **state)
{
    (void)state;
    struct server srv;
    server_start(&srv, 1, "{}");
    struct kube_err err;
    struct run r = {.loop = kube_loop_new(&err), .server = &srv};
    struct sampling s;
    sampling_init(&s);
    struct api_spec spec;
    prometheus_spec(&spec);
    struct ownership_nodes nodes = {0};
    struct psi_prom_config cfg = {.url = srv.url, .timeout_ms = 3000};
    struct sampling_in in = {
        .ref = &ref, .spec = &spec, .nodes = &nodes, .prom = &cfg, .loop = r.loop, .wake = wake, .wake_ud = &r};
    sampling_start(&s, &in);
    assert_true(sampling_busy(&s));
    assert_int_equal(kube_loop_transfers(r.loop), 1);
    sampling_free(&s);
    assert_int_equal(kube_loop_transfers(r.loop), 0);
    assert_int_equal(r.wakes, 0);
    server_stop(&srv);
    api_spec_free(&spec);
    kube_loop_free(r.loop);
}

static void test_usage_on_loop(void **state)
{
    (void)state;
    struct server srv;
    server_start(&srv, 2,
                 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"node\":"
                 "\"worker-0\",\"psi_usage\":\"node\"},\"value\":[1700000000,\"3\"]}]}}");
    struct kube_err err;
    struct run r = {.loop = kube_loop_new(&err), .server = &srv};
    struct psi_prom_config cfg = {.url = srv.url, .timeout_ms = 3000};
    double mem[1];
    struct gather_usage_in in = {.window_s = 60, .node_mem = mem};
    struct gather_candidates cands = {0};
    struct gather_usage_read u = {0};
    gather_usage_read_start(&u, &in, &cands, &cfg, r.loop, wake, &r);
    assert_true(gather_usage_read_busy(&u));
    assert_false(u.ended);
    run_until_woken(&r); /* the CPU query, then the memory query, then one wake */
    assert_int_equal(r.wakes, 1);
    assert_true(u.ended);
    assert_false(kube_err_failed(&u.cpu_err));
    assert_false(kube_err_failed(&u.mem_err));
    assert_int_equal(u.cpu.n, 1);
    assert_int_equal(u.mem.n, 1);
    gather_usage_read_start(&u, &in, &cands, &cfg, r.loop, wake, &r); /* the replies wait: nothing new */
    assert_false(gather_usage_read_busy(&u));
    gather_usage_read_drop(&u);
    assert_false(u.ended);
    assert_int_equal(u.cpu.n, 0);
    server_stop(&srv); /* joined: what it saw can be read */
    assert_non_null(strstr(srv.seen[0], "node_cpu_seconds_total"));
    assert_non_null(strstr(srv.seen[1], "node_memory_MemTotal_bytes"));
    gather_usage_read_release(&u);
    kube_loop_free(r.loop);
}

static void test_usage_blocking(void **state)
{
    (void)state;
    struct psi_prom_config cfg = {.url = "http://127.0.0.1:1", .connect_timeout_ms = 200, .timeout_ms = 500};
    struct gather_usage_in in = {.window_s = 60};
    struct gather_candidates cands = {0};
    struct gather_usage_read u = {0};
    gather_usage_read_start(&u, &in, &cands, &cfg, NULL, wake, NULL); /* no loop: ended on return */
    assert_true(u.ended);
    assert_string_equal(u.cpu_err.reason, API_REASON_SOURCE_UNREACHABLE);
    double usage[1];
    char why[256];
    in.prom = &u;
    assert_int_equal(gather_usage(&in, &cands, usage, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "the usage query failed"));
    gather_usage_read_release(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_settings), cmocka_unit_test(test_sample_blocking),
        cmocka_unit_test(test_sample_on_loop),  cmocka_unit_test(test_sample_dropped),
        cmocka_unit_test(test_usage_on_loop),   cmocka_unit_test(test_usage_blocking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
