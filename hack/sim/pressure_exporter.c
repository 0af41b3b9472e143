/* psi-pressure-exporter: serves node_exporter-named PSI counters for simulated nodes, with
 * pressures a test sets at run time over HTTP. For the operator's e2e tests.
 *
 *   psi-pressure-exporter [--listen ADDR] [--node NAME]... [--instance NODE=VALUE]...
 *                         [--targets FILE] [--port-file FILE]
 *
 *   --listen ADDR     bind address (default 127.0.0.1:0: a free port, printed on stdout)
 *   --node NAME       export NAME from the start, every pressure 0 (repeatable)
 *   --instance N=V    the instance label of node N's scrape target (default: N), e.g. an
 *                     InternalIP with a port, to exercise matching by address
 *   --targets FILE    keep a Prometheus file_sd file there listing one target per node:
 *                     {"targets": ["<listen>"], "labels": {"instance": "<node or V>",
 *                     "__metrics_path__": "/metrics/node/<node>"}}, rewritten atomically
 *                     whenever the set of nodes changes, removed at exit
 *   --port-file FILE  write the port listened on to FILE once listening
 *
 * HTTP (the control interface, chosen over a control file so a test can change pressure
 * with one request and see the answer):
 *   PUT    /pressure/<node>/<resource>[/some|/full]   body: a percent 0..100; adds the node
 *   PUT    /pressure/<node>/utilization               body: the CPU utilisation percent;
 *                                                     the node then exports node_cpu_seconds_total
 *   DELETE /pressure/<node>                           stop exporting the node
 *   GET    /pressure                                  "node resource kind percent" lines
 *   GET    /metrics                                   every node, instance="<node>" labels
 *   GET    /metrics/node/<node>                       one node, no labels (per-node target)
 *   GET    /metrics/all/<anything>                    as /metrics: a plain-text endpoint to
 *                                                     point a JSON client at in error tests
 *   GET    /healthz                                   "ok"
 * Runs until SIGINT or SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/grow.h"
#include "hack/sim/exporter.h"
#include "httpd/serve.h"

struct instance_override {
    char *node;
    char *value;
};

struct app {
    struct sim_exporter *exp;
    struct psi_serve *srv;
    char host[64];
    int port;
    const char *targets;
    struct instance_override *inst;
    size_t n_inst, inst_cap;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *instance_of(const struct app *a, const char *node)
{
    for (size_t i = 0; i < a->n_inst; i++)
        if (strcmp(a->inst[i].node, node) == 0)
            return a->inst[i].value;
    return node;
}

/* Rewrite the file_sd targets file (write a temporary, then rename). */
static int write_targets(const struct app *a)
{
    if (!a->targets)
        return 0;
    char addr[96];
    const char *h = a->host[0] ? a->host : "127.0.0.1";
    if (strchr(h, ':'))
        snprintf(addr, sizeof(addr), "[%s]:%d", h, a->port);
    else
        snprintf(addr, sizeof(addr), "%s:%d", h, a->port);
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < sim_exporter_count(a->exp); i++) {
        const char *node = sim_exporter_node(a->exp, i);
        char path[512];
        snprintf(path, sizeof(path), "/metrics/node/%s", node);
        cJSON *g = cJSON_CreateObject();
        cJSON *t = cJSON_AddArrayToObject(g, "targets");
        cJSON_AddItemToArray(t, cJSON_CreateString(addr));
        cJSON *l = cJSON_AddObjectToObject(g, "labels");
        cJSON_AddStringToObject(l, "instance", instance_of(a, node));
        cJSON_AddStringToObject(l, "__metrics_path__", path);
        cJSON_AddItemToArray(arr, g);
    }
    char *text = arr ? cJSON_Print(arr) : NULL;
    cJSON_Delete(arr);
    if (!text)
        return -1;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", a->targets);
    FILE *f = fopen(tmp, "w");
    int rc = -1;
    if (f) {
        int ok = fputs(text, f) >= 0 && fputs("\n", f) >= 0;
        ok = (fclose(f) == 0) && ok;
        if (ok && rename(tmp, a->targets) == 0)
            rc = 0;
    }
    if (rc < 0)
        fprintf(stderr, "level=error msg=\"writing targets file %s: %s\"\n", a->targets, strerror(errno));
    free(text);
    return rc;
}

static void reply_metrics(struct app *a, const char *node, struct psi_serve_reply *rep)
{
    size_t len = 0;
    char *text = sim_exporter_render(a->exp, now_s(), node, &len);
    if (!text) {
        psi_serve_reply_text(rep, node ? 404 : 500, NULL, node ? "no such node\n" : "out of memory\n");
        return;
    }
    rep->status = 200;
    snprintf(rep->content_type, sizeof(rep->content_type), "text/plain; version=0.0.4; charset=utf-8");
    rep->body = text;
    rep->len = len;
}

static void on_metrics(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)req;
    reply_metrics(ud, NULL, rep);
}

static void on_metrics_node(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    reply_metrics(ud, req->path + strlen("/metrics/node/"), rep);
}

static void on_healthz(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)req;
    (void)ud;
    psi_serve_reply_text(rep, 200, NULL, "ok\n");
}

static void on_pressure_list(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)req;
    struct app *a = ud;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) {
        psi_serve_reply_text(rep, 500, NULL, "out of memory\n");
        return;
    }
    for (size_t i = 0; i < sim_exporter_count(a->exp); i++) {
        const char *node = sim_exporter_node(a->exp, i);
        for (int r = 0; r < PSI_NRESOURCES; r++)
            for (int k = 0; k < 2; k++)
                fprintf(f, "%s %s %s %g\n", node, psi_resource_name((enum psi_resource)r), k ? "full" : "some",
                        sim_exporter_pressure(a->exp, node, (enum psi_resource)r, (enum psi_kind)k));
    }
    fclose(f);
    rep->status = 200;
    rep->body = out;
    rep->len = len;
}

/* Split "/pressure/<node>[/<resource>[/<kind>]]" into parts; returns the count or -1. */
static int split_pressure_path(const char *path, char parts[3][256])
{
    const char *p = path + strlen("/pressure/");
    int n = 0;
    while (*p) {
        if (n == 3)
            return -1;
        const char *slash = strchr(p, '/');
        size_t l = slash ? (size_t)(slash - p) : strlen(p);
        if (l == 0 || l >= 256)
            return -1;
        memcpy(parts[n], p, l);
        parts[n][l] = '\0';
        n++;
        p += l;
        if (*p == '/')
            p++;
    }
    return n;
}

static void on_pressure_put(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    struct app *a = ud;
    char parts[3][256];
    int n = split_pressure_path(req->path, parts);
    enum psi_resource r = PSI_CPU;
    enum psi_kind k = PSI_SOME;
    bool utilization = n == 2 && strcmp(parts[1], "utilization") == 0;
    if (n < 2 || (!utilization && psi_resource_parse(parts[1], &r) < 0)) {
        psi_serve_reply_text(rep, 400, NULL,
                             "use PUT /pressure/<node>/<cpu|memory|io>[/some|/full] or /pressure/<node>/utilization "
                             "with a percent as body\n");
        return;
    }
    if (n == 3) {
        if (strcmp(parts[2], "full") == 0) {
            k = PSI_FULL;
        } else if (strcmp(parts[2], "some") != 0) {
            psi_serve_reply_text(rep, 400, NULL, "kind must be some or full\n");
            return;
        }
    }
    char *end = NULL;
    double pct = strtod(req->body, &end);
    while (end && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
        end++;
    if (!req->body_len || end == req->body || (end && *end) || !(pct >= 0 && pct <= 100)) {
        psi_serve_reply_text(rep, 400, NULL, "body must be a percent 0..100\n");
        return;
    }
    size_t before = sim_exporter_count(a->exp);
    int rc = utilization ? sim_exporter_set_utilization(a->exp, parts[0], pct, now_s())
                         : sim_exporter_set(a->exp, parts[0], r, k, pct, now_s());
    if (rc < 0) {
        psi_serve_reply_text(rep, 500, NULL, "cannot set pressure\n");
        return;
    }
    if (sim_exporter_count(a->exp) != before && write_targets(a) < 0) {
        psi_serve_reply_text(rep, 500, NULL, "pressure set, but the targets file could not be written\n");
        return;
    }
    psi_serve_reply_text(rep, 200, NULL, "ok\n");
}

static void on_pressure_delete(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    struct app *a = ud;
    char parts[3][256];
    if (split_pressure_path(req->path, parts) != 1) {
        psi_serve_reply_text(rep, 400, NULL, "use DELETE /pressure/<node>\n");
        return;
    }
    if (sim_exporter_remove_node(a->exp, parts[0]) < 0) {
        psi_serve_reply_text(rep, 404, NULL, "no such node\n");
        return;
    }
    write_targets(a);
    psi_serve_reply_text(rep, 200, NULL, "ok\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: psi-pressure-exporter [--listen ADDR] [--node NAME]... "
               "[--instance NODE=VALUE]... [--targets FILE] [--port-file FILE]\n");
}

static const struct option long_opts[] = {
    {"listen", required_argument, NULL, 'l'},
    {"node", required_argument, NULL, 'n'},
    {"instance", required_argument, NULL, 'i'},
    {"targets", required_argument, NULL, 't'},
    {"port-file", required_argument, NULL, 'p'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* --instance NODE=VALUE into a. Returns -1 to go on, or the exit status. */
static int add_instance(struct app *a, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) {
        fprintf(stderr, "psi-pressure-exporter: --instance wants NODE=VALUE, got \"%s\"\n", arg);
        return 2;
    }
    if (BASE_GROW(a->inst, a->n_inst + 1, a->inst_cap) < 0)
        return 1;
    a->inst[a->n_inst].node = strndup(arg, (size_t)(eq - arg));
    a->inst[a->n_inst].value = strdup(eq + 1);
    a->n_inst++;
    return -1;
}

/* The command line into a, *listen and *port_file. Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct app *a, const char **listen, const char **port_file)
{
    double t0 = now_s();
    int c, rc;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (c) {
        case 'l': *listen = optarg; break;
        case 'n':
            if (sim_exporter_add_node(a->exp, optarg, t0) < 0) {
                fprintf(stderr, "psi-pressure-exporter: bad node name \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'i':
            if ((rc = add_instance(a, optarg)) >= 0)
                return rc;
            break;
        case 't': a->targets = optarg; break;
        case 'p': *port_file = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    return -1;
}

/* The server on listen with its routes (not started). Returns -1 to go on, or the exit status. */
static int make_server(struct app *a, const char *listen)
{
    char err[512];
    int dummy_port;
    if (psi_serve_parse_bind(listen, a->host, sizeof(a->host), &dummy_port, err, sizeof(err)) < 0 ||
        !(a->srv = psi_serve_new(listen, err, sizeof(err)))) {
        fprintf(stderr, "psi-pressure-exporter: %s\n", err);
        return 2;
    }
    /* One Prometheus target per simulated node, each may keep a connection open. */
    struct psi_serve_limits lim = {.max_connections = 8192};
    psi_serve_set_limits(a->srv, &lim);
    if (psi_serve_route(a->srv, "GET", "/healthz", on_healthz, a) < 0 ||
        psi_serve_route(a->srv, "GET", "/metrics", on_metrics, a) < 0 ||
        psi_serve_route(a->srv, "GET", "/metrics/node/*", on_metrics_node, a) < 0 ||
        psi_serve_route(a->srv, "GET", "/metrics/all/*", on_metrics, a) < 0 ||
        psi_serve_route(a->srv, "GET", "/pressure", on_pressure_list, a) < 0 ||
        psi_serve_route(a->srv, "PUT", "/pressure/*", on_pressure_put, a) < 0 ||
        psi_serve_route(a->srv, "DELETE", "/pressure/*", on_pressure_delete, a) < 0) {
        fprintf(stderr, "psi-pressure-exporter: out of memory\n");
        return 1;
    }
    return -1;
}

/* Start serving, then write the targets file and port_file (NULL: none). Returns 0, or -1
 * (said on stderr). */
static int start(struct app *a, const char *port_file)
{
    char err[512];
    if (psi_serve_start(a->srv, err, sizeof(err)) < 0) {
        fprintf(stderr, "psi-pressure-exporter: %s\n", err);
        return -1;
    }
    a->port = psi_serve_port(a->srv);
    psi_serve_lock(a->srv);
    int trc = write_targets(a);
    psi_serve_unlock(a->srv);
    if (trc < 0)
        return -1;
    if (port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%d\n", a->port) < 0 || fclose(f) != 0 || rename(tmp, port_file) != 0) {
            fprintf(stderr, "psi-pressure-exporter: writing %s: %s\n", port_file, strerror(errno));
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct app a;
    memset(&a, 0, sizeof(a));
    const char *listen = "127.0.0.1:0", *port_file = NULL;
    a.exp = sim_exporter_new();
    if (!a.exp)
        return 1;
    int rc = parse_args(argc, argv, &a, &listen, &port_file);
    if (rc >= 0)
        return rc;
    if ((rc = make_server(&a, listen)) >= 0)
        return rc;
    /* Signals are taken by sigwait below; block them before the server thread starts so
     * it inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    if (start(&a, port_file) < 0) {
        psi_serve_free(a.srv);
        return 1;
    }
    printf("listening on http://%s:%d\n", a.host[0] ? a.host : "0.0.0.0", a.port);
    fflush(stdout);
    int sig = 0;
    sigwait(&sigs, &sig);
    psi_serve_free(a.srv);
    if (a.targets)
        unlink(a.targets);
    sim_exporter_free(a.exp);
    for (size_t i = 0; i < a.n_inst; i++) {
        free(a.inst[i].node);
        free(a.inst[i].value);
    }
    free(a.inst);
    return 0;
}
