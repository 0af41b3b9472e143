/* psi-rebalancer: the operator binary. Flags, signals, and the wiring of the parts:
 * config and client (kube/), leader election, the manager (informers, queue, reconciler),
 * and the HTTP endpoints (serve/). Only this file exits. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "election.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/loop.h"
#include "kube/rest.h"
#include "base/logging.h"
#include "manager.h"
#include "psi_build.h"
#include "serve/authz.h"
#include "httpd/metrics.h"
#include "httpd/serve.h"
#include "httpd/tls.h"
#include "servicemonitor.h"

struct flags {
    const char *kubeconfig, *context;
    int leader_elect;
    const char *election_namespace, *election_id;
    const char *metrics_addr, *health_addr;
    int metrics_secure;
    const char *metrics_cert_dir, *metrics_tls_min, *metrics_ciphers;
    double api_qps;
    int api_burst;
    enum logging_level level;
    enum logging_format format;
};

struct request_observer {
    struct psi_metric *requests;
    struct kube_loop *loop;
};

struct operator
{
    struct flags flags;
    struct kube_config *cfg;
    struct kube_client *client;
    struct kube_loop *loop;
    struct kube_events *events;
    struct election *election;
    struct psi_metrics *metrics;
    struct psi_serve *health, *metrics_server;
    struct psi_tls *tls;
    struct psi_authz *authz;
    struct manager *manager;
    struct request_observer observer;
    int leading; /* the manager runs */
    int ready;   /* published to /readyz under the health server's lock */
    int exit_code;
    uint64_t start_timer;
};

static struct kube_loop *signal_loop;

static void on_signal(int sig)
{
    (void)sig;
    if (signal_loop)
        kube_loop_stop(signal_loop);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: psi-rebalancer [flags]\n"
            "  --kubeconfig PATH                    kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
            "  --context NAME                       kubeconfig context (default: current-context)\n"
            "  --leader-elect=true|false            elect a leader through a Lease (default true)\n"
            "  --leader-election-namespace NS       namespace of the Lease (default: the pod's or the context's)\n"
            "  --leader-election-id NAME            name of the Lease (default psi-rebalancer-leader)\n"
            "  --kube-api-qps N                     API writes per second (default 50)\n"
            "  --kube-api-burst N                   API write burst (default 100)\n"
            "  --metrics-bind-address ADDR          /metrics address (default $POD_IP:8443, or 127.0.0.1:8443\n"
            "                                       outside a pod; :8080 when not secure; :PORT for every\n"
            "                                       address; 0 disables)\n"
            "  --metrics-secure=true|false          HTTPS, and only for callers whose token may get /metrics\n"
            "                                       (TokenReview, SubjectAccessReview) (default true); false:\n"
            "                                       plain HTTP to anyone who can connect\n"
            "  --metrics-cert-dir DIR               serving certificate DIR/tls.crt and key DIR/tls.key,\n"
            "                                       reloaded when they change (default: self-signed)\n"
            "  --metrics-tls-min-version V          VersionTLS12 (default) or VersionTLS13\n"
            "  --metrics-tls-cipher-suites LIST     TLS 1.2 suites by IANA name, comma-separated (default:\n"
            "                                       the ECDHE AEAD suites of the intermediate profile)\n"
            "  --health-probe-bind-address ADDR     /healthz and /readyz address (default $POD_IP:8081, or\n"
            "                                       127.0.0.1:8081 outside a pod; 0 disables)\n"
            "  --log-level debug|info|warn|error    (default info)\n"
            "  --log-format text|json               (default text)\n"
            "  --version                            print the version and build, and exit\n");
}

static int parse_bool(const char *s, int *out)
{
    if (!s || strcmp(s, "true") == 0)
        *out = 1;
    else if (strcmp(s, "false") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

/* The addresses probes and scrapes need and no more: the pod's own address (POD_IP, from
 * the downward API), where the kubelet probes and Prometheus scrapes; outside a pod, the
 * loopback address. */
static int default_binds(struct flags *f)
{
    static char metrics[80], health[80];
    const char *ip = getenv("POD_IP");
    if (!ip || !*ip || strlen(ip) > 60)
        ip = "127.0.0.1";
    int v6 = strchr(ip, ':') != NULL;
    snprintf(metrics, sizeof(metrics), "%s%s%s:%d", v6 ? "[" : "", ip, v6 ? "]" : "", f->metrics_secure ? 8443 : 8080);
    snprintf(health, sizeof(health), "%s%s%s:8081", v6 ? "[" : "", ip, v6 ? "]" : "");
    if (!f->metrics_addr)
        f->metrics_addr = metrics;
    if (!f->health_addr)
        f->health_addr = health;
    return 0;
}

/* The controller's command-line flags (getopt_long values). */
enum flag_id {
    KUBECONFIG = 1,
    CONTEXT,
    LEADER_ELECT,
    NAMESPACE,
    ID,
    QPS,
    BURST,
    METRICS,
    HEALTH,
    LEVEL,
    FORMAT,
    HELP,
    VERSION,
    SECURE,
    CERT_DIR,
    TLS_MIN,
    CIPHERS
};

static const struct option flag_options[] = {
    {"kubeconfig", required_argument, 0, KUBECONFIG},
    {"context", required_argument, 0, CONTEXT},
    {"leader-elect", optional_argument, 0, LEADER_ELECT},
    {"leader-election-namespace", required_argument, 0, NAMESPACE},
    {"leader-election-id", required_argument, 0, ID},
    {"kube-api-qps", required_argument, 0, QPS},
    {"kube-api-burst", required_argument, 0, BURST},
    {"metrics-bind-address", required_argument, 0, METRICS},
    {"health-probe-bind-address", required_argument, 0, HEALTH},
    {"log-level", required_argument, 0, LEVEL},
    {"log-format", required_argument, 0, FORMAT},
    {"help", no_argument, 0, HELP},
    {"version", no_argument, 0, VERSION},
    {"metrics-secure", optional_argument, 0, SECURE},
    {"metrics-cert-dir", required_argument, 0, CERT_DIR},
    {"metrics-tls-min-version", required_argument, 0, TLS_MIN},
    {"metrics-tls-cipher-suites", required_argument, 0, CIPHERS},
    {0, 0, 0, 0},
};

/* Apply flag c with argument arg (NULL when it has none) to f; --help and --version print
 * and exit. -1 (with a message) on a bad value or an unknown flag. */
static int apply_flag(int c, const char *arg, struct flags *f)
{
    switch (c) {
    case KUBECONFIG: f->kubeconfig = arg; break;
    case CONTEXT: f->context = arg; break;
    case LEADER_ELECT:
        if (parse_bool(arg, &f->leader_elect) < 0) {
            fprintf(stderr, "psi-rebalancer: --leader-elect: want true or false, got '%s'\n", arg);
            return -1;
        }
        break;
    case NAMESPACE: f->election_namespace = arg; break;
    case ID: f->election_id = arg; break;
    case QPS:
    case BURST: {
        char *end;
        double v = strtod(arg, &end);
        if (*end || !(v > 0) || v > 10000) {
            fprintf(stderr, "psi-rebalancer: --%s: want a number above 0, got '%s'\n",
                    c == QPS ? "kube-api-qps" : "kube-api-burst", arg);
            return -1;
        }
        if (c == QPS)
            f->api_qps = v;
        else
            f->api_burst = (int)v;
        break;
    }
    case METRICS: f->metrics_addr = arg; break;
    case HEALTH: f->health_addr = arg; break;
    case SECURE:
        if (parse_bool(arg, &f->metrics_secure) < 0) {
            fprintf(stderr, "psi-rebalancer: --metrics-secure: want true or false, got '%s'\n", arg);
            return -1;
        }
        break;
    case CERT_DIR: f->metrics_cert_dir = arg; break;
    case TLS_MIN: f->metrics_tls_min = arg; break;
    case CIPHERS: f->metrics_ciphers = arg; break;
    case LEVEL:
        if (!logging_parse_level(arg, &f->level)) {
            fprintf(stderr, "psi-rebalancer: --log-level: want debug, info, warn or error, got '%s'\n", arg);
            return -1;
        }
        break;
    case FORMAT:
        if (!logging_parse_format(arg, &f->format)) {
            fprintf(stderr, "psi-rebalancer: --log-format: want text or json, got '%s'\n", arg);
            return -1;
        }
        break;
    case HELP: usage(stdout); exit(0);
    case VERSION: printf("psi-rebalancer %s (build %s)\n", PSI_VERSION, PSI_BUILD); exit(0);
    default: usage(stderr); return -1;
    }
    return 0;
}

/* Parse argv into f over the defaults; -1 (with a message) on a bad flag or argument. */
static int parse_flags(int argc, char **argv, struct flags *f)
{
    *f = (struct flags){.leader_elect = 1,
                        .election_id = "psi-rebalancer-leader",
                        .metrics_secure = 1,
                        .api_qps = 50,
                        .api_burst = 100,
                        .level = LOGGING_INFO,
                        .format = LOGGING_TEXT};
    int c;
    while ((c = getopt_long(argc, argv, "", flag_options, NULL)) != -1)
        if (apply_flag(c, optarg, f) < 0)
            return -1;
    if (optind < argc) {
        fprintf(stderr, "psi-rebalancer: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    return default_binds(f);
}

/* ---- HTTP endpoints ---- */

/* /healthz: ok while the event loop makes progress (its heartbeat is recent). */
static void healthz(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    (void)req;
    const struct operator* op = ud;
    uint64_t now = kube_loop_now_ms(), beat = kube_loop_last_beat_ms(op->loop);
    if (!kube_loop_stalled(now, beat, ELECTION_LOOP_STALL_MS)) {
        psi_serve_reply_text(reply, 200, "text/plain", "ok\n");
        return;
    }
    char why[96];
    snprintf(why, sizeof(why), "event loop stuck for %llu s\n", (unsigned long long)((now - beat) / 1000));
    psi_serve_reply_text(reply, 503, "text/plain", why);
}

static void readyz(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    (void)req;
    const struct operator* op = ud;
    if (op->ready)
        psi_serve_reply_text(reply, 200, "text/plain", "ok\n");
    else
        psi_serve_reply_text(reply, 503, "text/plain", "informer caches not synced\n");
}

/* /metrics: rendered for a caller whose token may get it (when secure). */
static void metrics(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    struct operator* op = ud;
    if (op->authz) {
        char why[512];
        int status = psi_authz_check(op->authz, req->bearer, "get", req->path, req->ticket, why, sizeof(why));
        if (status == PSI_AUTHZ_LATER) { /* its review is queued: the server runs this again */
            reply->status = PSI_SERVE_LATER;
            return;
        }
        if (status != 200) {
            psi_serve_reply_text(reply, status, "text/plain", why);
            return;
        }
    }
    size_t len = 0;
    char *text = psi_metrics_render(op->metrics, &len);
    if (!text) {
        psi_serve_reply_text(reply, 500, "text/plain", "out of memory\n");
        return;
    }
    reply->status = 200;
    snprintf(reply->content_type, sizeof(reply->content_type), "%s", PSI_METRICS_CONTENT_TYPE);
    reply->body = text;
    reply->len = len;
}

/* A REST call of the operator's client ended (on the loop's thread): counted, and a sign of
 * progress for the heartbeat however long the iteration that makes it. */
static void count_request(const char *method, long status, void *ud)
{
    struct request_observer *o = ud;
    char code[16];
    snprintf(code, sizeof(code), "%ld", status);
    const char *values[] = {method, code};
    psi_metric_inc(o->requests, values, 1);
    kube_loop_beat(o->loop);
}

/* psi_rebalancer_api_requests_total{method, code}: every REST call of the operator's client
 * (code 0: no reply). Watches are counted by the manager's watch metrics. */
static int count_api_requests(struct operator* op)
{
    static const char *const labels[] = {"method", "code", NULL};
    struct psi_metric *f =
        psi_metrics_counter(op->metrics, "psi_rebalancer_api_requests_total",
                            "Requests to the API server by method and HTTP status (0: no reply).", labels);
    if (!f)
        return -1;
    op->observer = (struct request_observer){.requests = f, .loop = op->loop};
    kube_client_set_observer(op->client, count_request, &op->observer);
    return 0;
}

/* A scrape's token review is answered (in the reviewer thread): the server runs the
 * /metrics handler again for it. */
static void resume_scrape(void *server, unsigned long long ticket)
{
    if (psi_serve_resume(server, ticket) < 0)
        log_warn("metrics request left to time out", "error", "out of memory");
}

static struct psi_serve *serve_on(const char *addr, const char *what)
{
    if (strcmp(addr, "0") == 0)
        return NULL;
    char err[256];
    struct psi_serve *s = psi_serve_new(addr, err, sizeof(err));
    if (!s)
        log_error("bad bind address", "flag", what, "address", addr, "error", err);
    return s;
}

static void log_serving(const struct psi_serve *s, const char *paths, const char *scheme)
{
    if (!s)
        return;
    char port[16];
    snprintf(port, sizeof(port), "%d", psi_serve_port(s));
    log_info("serving", "paths", paths, "port", port, "scheme", scheme);
}

static void set_ready(struct operator* op, int ready)
{
    if (op->ready == ready)
        return;
    if (op->health)
        psi_serve_lock(op->health);
    op->ready = ready;
    if (op->health)
        psi_serve_unlock(op->health);
}

/* ---- leading ---- */

/* The operator's namespace: --leader-election-namespace (the pod's, in the manifests), else the
 * kubeconfig's (in a pod: its ServiceAccount's), else default. */
static const char *own_namespace(const struct operator* op)
{
    return op->flags.election_namespace ? op->flags.election_namespace
           : op->cfg->namespace         ? op->cfg->namespace
                                        : "default";
}

static void start_manager(struct kube_loop *loop, void *ud);

/* Every half second: start the manager once elected, and publish readiness (a standby
 * replica is ready; the leader once its caches are synced). */
static void watch_ready(struct kube_loop *loop, void *ud)
{
    struct operator* op = ud;
    if (op->election && election_leading(op->election) && !op->manager && !op->start_timer)
        start_manager(loop, op);
    set_ready(op, !op->leading || manager_synced(op->manager));
}

static void start_manager(struct kube_loop *loop, void *ud)
{
    (void)loop;
    struct operator* op = ud;
    op->start_timer = 0;
    struct kube_err err;
    op->manager = manager_new(op->client, op->loop, op->events, op->metrics, &err);
    if (op->manager && manager_start(op->manager, &err) == 0) {
        op->leading = 1;
        log_info("started reconciling");
        if (servicemonitor_follow(op->client, own_namespace(op), SERVICEMONITOR_NAME, &err) < 0)
            log_warn("servicemonitor not followed", "error", err.msg);
        return;
    }
    log_error("start failed, retrying", "error", err.msg);
    manager_free(op->manager);
    op->manager = NULL;
    op->start_timer = kube_loop_timer(op->loop, 5000, 0, start_manager, op);
}

/* ---- wiring ---- */

static void log_tls(const char *msg, void *ud)
{
    (void)ud;
    log_info(msg);
}

/* HTTPS and authorization for the metrics server, unless --metrics-secure=false. */
static int secure_metrics(struct operator* op)
{
    char err[512];
    struct psi_tls_options o = {.cert_dir = op->flags.metrics_cert_dir,
                                .min_version = op->flags.metrics_tls_min,
                                .ciphers = op->flags.metrics_ciphers,
                                .log = log_tls};
    if (!op->flags.metrics_secure) {
        log_warn("metrics served over plain HTTP to anyone who can connect (--metrics-secure=false)");
        return 0;
    }
    if (!(op->tls = psi_tls_new(&o, err, sizeof(err))) ||
        !(op->authz = psi_authz_new(op->flags.kubeconfig, op->flags.context, op->metrics, resume_scrape,
                                    op->metrics_server, err, sizeof(err))) ||
        psi_serve_set_tls(op->metrics_server, op->tls) < 0) {
        log_error("metrics endpoint not secured", "error", err);
        return -1;
    }
    if (!op->flags.metrics_cert_dir)
        log_info("metrics served with a self-signed certificate (no --metrics-cert-dir)");
    return 0;
}

/* The health endpoint and the metrics endpoint, each in a thread of its own. */
static int start_endpoints(struct operator* op)
{
    op->health = serve_on(op->flags.health_addr, "--health-probe-bind-address");
    op->metrics_server = serve_on(op->flags.metrics_addr, "--metrics-bind-address");
    if ((strcmp(op->flags.health_addr, "0") != 0 && !op->health) ||
        (strcmp(op->flags.metrics_addr, "0") != 0 && !op->metrics_server))
        return -1;
    char serr[256] = "out of memory";
    if (op->health && (psi_serve_route(op->health, "GET", "/healthz", healthz, op) < 0 ||
                       psi_serve_route(op->health, "GET", "/readyz", readyz, op) < 0 ||
                       psi_serve_start(op->health, serr, sizeof(serr)) < 0)) {
        log_error("health endpoint not started", "address", op->flags.health_addr, "error", serr);
        return -1;
    }
    if (op->metrics_server && secure_metrics(op) < 0)
        return -1;
    if (op->metrics_server && (psi_serve_route(op->metrics_server, "GET", "/metrics", metrics, op) < 0 ||
                               psi_serve_start(op->metrics_server, serr, sizeof(serr)) < 0)) {
        log_error("metrics endpoint not started", "address", op->flags.metrics_addr, "error", serr);
        return -1;
    }
    log_serving(op->health, "/healthz,/readyz", "http");
    log_serving(op->metrics_server, "/metrics", op->tls ? "https" : "http");
    return 0;
}

static int setup(struct operator* op)
{
    struct kube_err err = {0};
    if (kube_config_load(op->flags.kubeconfig, op->flags.context, &op->cfg, &err) < 0 ||
        !(op->client = kube_client_new(op->cfg, &err)) || !(op->loop = kube_loop_new(&err))) {
        log_error("cannot reach the API server", "error", err.msg);
        return -1;
    }
    char host[256] = "psi-rebalancer";
    gethostname(host, sizeof(host) - 1);
    char identity[320];
    snprintf(identity, sizeof(identity), "%s_%d", host, (int)getpid());
    kube_client_set_rate_limit(op->client, op->flags.api_qps, op->flags.api_burst);
    op->events = kube_events_new(op->client, "rebalance.psi.dev/psi-rebalancer", identity, &err);
    op->metrics = psi_metrics_new();
    if (!op->events || !op->metrics || count_api_requests(op) < 0) {
        log_error("setup failed", "error", op->events ? "out of memory" : err.msg);
        return -1;
    }
    if (start_endpoints(op) < 0)
        return -1;
    if (op->flags.leader_elect) {
        const char *ns = own_namespace(op);
        op->election = election_start(op->flags.kubeconfig, op->flags.context, ns, op->flags.election_id, identity,
                                      op->loop, &err);
        if (!op->election) {
            log_error("leader election not set up", "error", err.msg);
            return -1;
        }
        log_info("waiting for leadership", "lease", op->flags.election_id, "namespace", ns, "identity", identity);
    } else {
        op->start_timer = kube_loop_timer(op->loop, 0, 0, start_manager, op);
    }
    kube_loop_timer(op->loop, 500, 500, watch_ready, op);
    return 0;
}

/* Graceful end: Events still held back are sent, then the Lease is released so a successor
 * takes over at once. The loop has returned, so no reconcile is half done. */
static void shutdown_operator(struct operator* op)
{
    struct kube_err err;
    if (op->events && kube_events_flush(op->events, (int64_t)time(NULL) * 1000, 1, NULL, &err) < 0)
        log_warn("events not flushed at shutdown", "error", err.msg);
    manager_free(op->manager);
    if (op->election && election_lost(op->election))
        op->exit_code = 1;
    election_stop(op->election);
    psi_serve_free(op->health);
    psi_authz_stop(op->authz); /* its reviewer resumes requests of the metrics server */
    psi_serve_free(op->metrics_server);
    psi_authz_free(op->authz);
    psi_tls_free(op->tls);
    psi_metrics_free(op->metrics);
    kube_events_free(op->events);
    kube_loop_free(op->loop);
    kube_client_free(op->client);
    kube_config_free(op->cfg);
}

int main(int argc, char **argv)
{
    struct operator op = {0};
    if (parse_flags(argc, argv, &op.flags) < 0)
        return 2;
    logging_setup(op.flags.level, op.flags.format);
    /* One malloc arena for all threads: the HTTP servers' and the leader election's threads
     * allocate little, and an arena each would keep pages of its own resident. */
    mallopt(M_ARENA_MAX, 1);
    /* Buffers of 128 KiB and more (a /metrics page, a Prometheus reply, a burst of watch
     * events, a status) are mapped on their own and unmapped when freed. glibc's default
     * raises this threshold to the size of the largest such buffer freed so far, after which
     * they come from the heap and stay resident until the next trim: at 1,000 nodes the
     * 0.5 MiB of a /metrics page stayed up to a cycle after each scrape. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    signal(SIGPIPE, SIG_IGN);
    log_info("psi-rebalancer starting", "version", PSI_VERSION, "build", PSI_BUILD);
    if (setup(&op) < 0) {
        shutdown_operator(&op);
        curl_global_cleanup();
        return 1;
    }
    signal_loop = op.loop;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    struct kube_err err;
    if (kube_loop_run(op.loop, &err) < 0) {
        log_error("event loop failed", "error", err.msg);
        op.exit_code = 1;
    }
    log_info("shutting down");
    signal_loop = NULL;
    shutdown_operator(&op);
    curl_global_cleanup();
    return op.exit_code;
}
