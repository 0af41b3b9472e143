/* e2e: the Prometheus pressure source against the test bed's real Prometheus.
 *
 *   prom_e2e <psi-pressure-exporter binary> <hack/cluster/ctl>
 * with PSI_PROMETHEUS_URL, PSI_PROMETHEUS_TARGETS and PSI_TESTBED in the environment
 * (prom_e2e.sh sets them from the bed).
 *
 * Runs the pressure exporter with three nodes (worker-2's target carries an InternalIP
 * as instance), registers it as scrape targets, sets pressures, and checks that the
 * source reads them back within tolerance once Prometheus has samples for the window;
 * that a node without series is Unknown; that a change of pressure is followed; that the
 * general instant query works; and that a wrong path (404), a non-JSON endpoint, TLS to
 * a plain-HTTP server, bad PromQL and a stopped Prometheus fail with their reasons. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "e2e_util.h"
#include "psi/prom.h"
#include "tests/common/prom_blocking.h"

#define WINDOW_S 20   /* four scrapes at the bed's 5 s interval */
#define TOLERANCE 1.0 /* percentage points */

static pid_t exporter_pid;
static char targets_file[4096];
static char tmpdir[256];

static void cleanup(void)
{
    if (exporter_pid > 0) {
        kill(exporter_pid, SIGTERM);
        waitpid(exporter_pid, NULL, 0);
        exporter_pid = 0;
    }
    if (targets_file[0])
        unlink(targets_file); /* the exporter removes it too; make sure */
    if (tmpdir[0]) {
        char p[512];
        snprintf(p, sizeof(p), "%s/port", tmpdir);
        unlink(p);
        rmdir(tmpdir);
    }
}

static void on_signal(int sig)
{
    (void)sig;
    cleanup();
    _exit(2);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return s * n;
}

/* PUT a pressure to the exporter; returns the HTTP code. */
static long put_pressure(int port, const char *node, const char *res, double pct)
{
    char url[256], body[32];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/pressure/%s/%s", port, node, res);
    snprintf(body, sizeof(body), "%g", pct);
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
    long code = 0;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(e);
    return code;
}

struct expect {
    int node;
    enum psi_resource res;
    double pct; /* NAN: Unknown */
};

/* Does the sample match every expectation? Writes the first mismatch into why. */
static int matches(const struct psi_sample *s, const struct expect *ex, size_t n, char *why, size_t wlen)
{
    if (kube_err_failed(&s->status)) {
        snprintf(why, wlen, "sample failed: %s: %s", s->status.reason, s->status.msg);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const struct psi_value *v = &s->nodes[ex[i].node].value[ex[i].res];
        const char *name = s->nodes[ex[i].node].name;
        if (isnan(ex[i].pct)) {
            if (v->known) {
                snprintf(why, wlen, "%s %s is %.3f, want Unknown", name, psi_resource_name(ex[i].res), v->percent);
                return 0;
            }
        } else if (!v->known || fabs(v->percent - ex[i].pct) > TOLERANCE) {
            if (v->known)
                snprintf(why, wlen, "%s %s is %.3f, want %.1f", name, psi_resource_name(ex[i].res), v->percent,
                         ex[i].pct);
            else
                snprintf(why, wlen, "%s %s is Unknown, want %.1f", name, psi_resource_name(ex[i].res), ex[i].pct);
            return 0;
        }
    }
    return 1;
}

/* Sample until the expectations hold or timeout_s passes; reports one check. */
static void eventually_sample(struct psi_prom *client, const struct psi_request *req, const struct expect *ex, size_t n,
                              double timeout_s, const char *what)
{
    char why[1200] = "no sample taken";
    double waited = 0;
    for (;;) {
        struct psi_sample s;
        prom_read_blocking(client, req, &s);
        int ok = matches(&s, ex, n, why, sizeof(why));
        psi_sample_free(&s);
        if (ok) {
            e2e_check(1, "%s (after %.0f s)", what, waited);
            return;
        }
        if (waited >= timeout_s) {
            e2e_check(0, "%s: not within %.0f s; last: %s", what, timeout_s, why);
            return;
        }
        sleep_s(2);
        waited += 2;
    }
}

/* One sample through a client of url; checks it fails with reason and a message
 * containing in_msg. */
static void expect_failure(const char *url, const struct psi_request *req, const char *reason, const char *in_msg,
                           const char *what)
{
    struct psi_prom_config cfg = {.url = url, .connect_timeout_ms = 2000, .timeout_ms = 5000};
    struct kube_err st;
    struct psi_prom *p = psi_prom_new(&cfg, &st);
    if (!p) {
        e2e_check(0, "%s: client not created: %s", what, st.msg);
        return;
    }
    struct psi_sample s;
    int rc = prom_read_blocking(p, req, &s);
    int ok = rc == -1 && kube_err_failed(&s.status) && strcmp(s.status.reason, reason) == 0 &&
             strstr(s.status.msg, in_msg) != NULL;
    int unknown = 1;
    for (size_t i = 0; i < s.n_nodes; i++)
        for (int r = 0; r < PSI_NRESOURCES; r++)
            if (s.nodes[i].value[r].known)
                unknown = 0;
    e2e_check(ok && unknown, "%s: reason %s, message \"%s\"", what, s.status.reason, s.status.msg);
    psi_sample_free(&s);
    psi_prom_free(p);
}

static int run_ctl(const char *ctl, const char *testbed, const char *verb)
{
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' %s prometheus >&2", ctl, testbed, verb);
    int rc = system(cmd);
    return rc == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: prom_e2e <psi-pressure-exporter> <hack/cluster/ctl>\n");
        return 2;
    }
    const char *prom = getenv("PSI_PROMETHEUS_URL");
    const char *tdir = getenv("PSI_PROMETHEUS_TARGETS");
    const char *testbed = getenv("PSI_TESTBED");
    if (!prom || !tdir || !testbed) {
        fprintf(stderr, "PSI_PROMETHEUS_URL, PSI_PROMETHEUS_TARGETS and PSI_TESTBED must be set\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    atexit(cleanup);

    snprintf(tmpdir, sizeof(tmpdir), "/tmp/psi-prom-e2e-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        tmpdir[0] = '\0';
        return 2;
    }
    char portfile[512];
    snprintf(portfile, sizeof(portfile), "%s/port", tmpdir);
    snprintf(targets_file, sizeof(targets_file), "%s/psi-prom-e2e-%d.json", tdir, (int)getpid());

    exporter_pid = fork();
    if (exporter_pid == 0) {
        execl(argv[1], argv[1], "--node", "worker-0", "--node", "worker-1", "--node", "worker-2", "--instance",
              "worker-2=10.99.0.2:9100", "--targets", targets_file, "--port-file", portfile, (char *)NULL);
        perror("exec psi-pressure-exporter");
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 300 && port <= 0; i++) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            if (fscanf(f, "%d", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (port <= 0)
            sleep_s(0.1);
    }
    e2e_check(port > 0, "exporter listens (port %d) and wrote %s", port, targets_file);
    if (port <= 0)
        return 1;

    e2e_check(put_pressure(port, "worker-0", "cpu", 30) == 200 && put_pressure(port, "worker-0", "memory", 5) == 200 &&
                  put_pressure(port, "worker-0", "io", 1) == 200 && put_pressure(port, "worker-1", "cpu", 60) == 200 &&
                  put_pressure(port, "worker-2", "cpu", 10) == 200 && put_pressure(port, "worker-2", "io", 20) == 200,
              "pressures set on the exporter");

    const char *ips2[] = {"10.99.0.2"};
    const char *ips3[] = {"10.99.0.3"};
    const struct psi_node_desc nodes[] = {
        {"worker-0", NULL, 0, 0},
        {"worker-1", NULL, 0, 0},
        {"worker-2", ips2, 1, 0}, /* its series carry instance="10.99.0.2:9100" */
        {"worker-3", ips3, 1, 0}, /* not exported */
    };
    struct psi_request req = {nodes, 4, 0, 0, WINDOW_S, 0};
    struct psi_prom_config cfg = {.url = prom, .connect_timeout_ms = 2000, .timeout_ms = 10000};
    struct kube_err st;
    struct psi_prom *client = psi_prom_new(&cfg, &st);
    e2e_check(client != NULL, "Prometheus client for %s", prom);
    if (!client)
        return 1;

    const struct expect first[] = {
        {0, PSI_CPU, 30},   {0, PSI_MEMORY, 5}, {0, PSI_IO, 1},       {1, PSI_CPU, 60},
        {1, PSI_MEMORY, 0}, {1, PSI_IO, 0},     {2, PSI_CPU, 10},     {2, PSI_MEMORY, 0},
        {2, PSI_IO, 20},    {3, PSI_CPU, NAN},  {3, PSI_MEMORY, NAN}, {3, PSI_IO, NAN},
    };
    eventually_sample(client, &req, first, sizeof(first) / sizeof(first[0]), 150,
                      "pressures read back through Prometheus (worker-2 by InternalIP, worker-3 Unknown)");

    /* Only cpu asked: the others stay Unknown even where series exist. */
    struct psi_request cpu_only = req;
    cpu_only.resources = PSI_RES_BIT(PSI_CPU);
    const struct expect cpu_ex[] = {{0, PSI_CPU, 30}, {0, PSI_MEMORY, NAN}, {2, PSI_IO, NAN}};
    eventually_sample(client, &cpu_only, cpu_ex, 3, 30, "a cpu-only request leaves memory and io Unknown");

    /* A change of pressure is followed once the window has passed. */
    e2e_check(put_pressure(port, "worker-1", "cpu", 15) == 200, "worker-1 cpu set to 15 %%");
    const struct expect second[] = {{1, PSI_CPU, 15}, {0, PSI_CPU, 30}};
    eventually_sample(client, &req, second, 2, 120, "the new pressure of worker-1 is read back");

    /* The general instant query: the exporter's targets, by their instance labels. */
    {
        struct psi_prom *p = psi_prom_new(&cfg, &st);
        struct psi_prom_vector v;
        const char *q = "up{instance=~\"worker-0|worker-1|10.99.0.2:9100\"}";
        int rc = p ? prom_query_blocking(p, q, &v, &st) : -1;
        int up = 0;
        for (size_t i = 0; rc == 0 && i < v.n; i++)
            if (v.series[i].value == 1 && psi_prom_label_get(&v.series[i], "job"))
                up++;
        e2e_check(rc == 0 && up >= 3, "instant query %s: %d targets up (%s)", q, up, rc == 0 ? "ok" : st.msg);
        if (rc == 0)
            psi_prom_vector_free(&v);
        /* Bad PromQL: the real Prometheus refuses it with bad_data. */
        rc = p ? prom_query_blocking(p, "rate(node_pressure_cpu_waiting_seconds_total[", &v, &st) : 0;
        e2e_check(rc == -1 && strcmp(st.reason, PSI_REASON_QUERY) == 0 && strstr(st.msg, "bad_data"),
                  "bad PromQL: reason %s, message \"%s\"", st.reason, st.msg);
        psi_prom_free(p);
    }

    /* Failures with clear reasons. */
    char url[512];
    snprintf(url, sizeof(url), "%s/no/such/prefix", prom);
    expect_failure(url, &req, PSI_REASON_NOT_FOUND, "/no/such/prefix/api/v1/query", "wrong URL path");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics/all", port);
    expect_failure(url, &req, PSI_REASON_MALFORMED, "not JSON", "a plain-text endpoint");
    if (strncmp(prom, "http://", 7) == 0) {
        snprintf(url, sizeof(url), "https://%s", prom + 7);
        expect_failure(url, &req, PSI_REASON_TLS, "TLS", "TLS to a plain-HTTP server");
    }

    /* Prometheus stopped: SourceUnreachable, every node Unknown; started again: values back. */
    if (run_ctl(argv[2], testbed, "stop") == 0) {
        expect_failure(prom, &req, PSI_REASON_UNREACHABLE, prom, "Prometheus stopped");
        e2e_check(run_ctl(argv[2], testbed, "start") == 0, "Prometheus started again");
        const struct expect back[] = {{0, PSI_CPU, 30}, {1, PSI_CPU, 15}, {3, PSI_CPU, NAN}};
        eventually_sample(client, &req, back, 3, 120, "pressures read again after the restart");
    } else {
        e2e_check(0, "stopping Prometheus with %s", argv[2]);
    }

    psi_prom_free(client);
    cleanup();
    struct stat sb;
    e2e_check(stat(targets_file, &sb) != 0, "targets file removed");
    int rc = e2e_report();
    curl_global_cleanup();
    return rc;
}
