/* psi-sim: plays, against a real API server, what an OpenShift Virtualization cluster
 * adds to Kubernetes for psi-rebalancer: KubeVirt's VMs, launcher pods, eviction webhook,
 * evacuations and live migrations; the MachineConfig operator; and nodes under load with
 * their PSI, exported for Prometheus with node_exporter's names and served by each node's
 * kubelet Summary API (kubeletd.h). A scenario file says what
 * runs where and what happens over time (hack/sim/scenarios/).
 *
 *   psi-sim --check FILE...              (parse scenario files and say what they hold)
 *   psi-sim --expect FILE [CPUS]         (each pinned node's model pressures, expect.h)
 *   psi-sim --optimum FILE [THRESHOLD [CPUS]]  (the fewest migrations below THRESHOLD %, optimum.h)
 *   psi-sim --scenario FILE [--kubeconfig PATH] [--namespace NS]
 *           [--metrics-bind-address ADDR] [--webhook-address IP] [--webhook-port N]
 *           [--ca-cert FILE --ca-key FILE] [--prometheus-targets DIR] [--kubelet-socket PATH]
 *           [--record FILE] [--ready-file FILE] [--exit-when-done] [--cleanup]
 *           [--log-level LEVEL] [--log-format text|json]
 *
 *   --scenario FILE            the scenario (YAML)
 *   --kubeconfig PATH          as the operator's flag (default: $KUBECONFIG, in-cluster, ~/.kube/config)
 *   --namespace NS             overrides the scenario's namespace
 *   --metrics-bind-address A   the node_exporter / KubeVirt metrics endpoint (default 127.0.0.1:0)
 *   --webhook-address IP       where the eviction webhook listens and the API server calls it
 *                              (default 127.0.0.1); --webhook-port N (default 0: any)
 *   --ca-cert, --ca-key        the CA that signs the webhook's certificate (default
 *                              $PSI_TESTBED/pki/ca.crt and ca.key)
 *   --prometheus-targets DIR   Prometheus file_sd directory (default $PSI_PROMETHEUS_TARGETS)
 *   --kubelet-socket PATH      the API server's egress socket to the kubelets, where psi-sim serves
 *                              every node's Summary API (default $PSI_KUBELET_SOCKET; none, or one
 *                              another process serves: no kubelets, with a warning for the latter)
 *   --record FILE              JSON lines of evictions, migrations, restarts, drains, rollouts
 *   --ready-file FILE          written once every VM (and Deployment pod) runs and the timeline
 *                              starts: a JSON object with the ports, namespace and scenario
 *   --exit-when-done           exit once the timeline is over (default: run until a signal)
 *   --cleanup                  delete the namespace (and so every VM) on exit
 * SIGINT / SIGTERM end it: the webhook is deregistered, the Prometheus targets file
 * removed, cordons it made lifted and node capacities it changed restored. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/jx.h"
#include "hack/sim/deployment.h"
#include "hack/sim/evacuation.h"
#include "hack/sim/expect.h"
#include "hack/sim/optimum.h"
#include "hack/sim/kubeletd.h"
#include "hack/sim/mco.h"
#include "hack/sim/migration.h"
#include "hack/sim/nodes.h"
#include "hack/sim/scenario.h"
#include "hack/sim/sim.h"
#include "hack/sim/telemetry.h"
#include "hack/sim/timeline.h"
#include "hack/sim/webhook.h"
#include "hack/sim/workload.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "kube/loop.h"
#include "kube/rest.h"
#include "base/logging.h"

#define PASS_PERIOD_MS 250

struct app {
    struct sim s;
    struct scenario *sc;
    struct kube_config *cfg, *webhook_cfg;
    struct nodes *nodes;
    struct workload *workload;
    struct kube_informer *deployment_pods;
    struct deployments *deployments;
    struct evacuation *evac;
    struct migration *mig;
    struct mco *mco;
    struct timeline *timeline;
    struct telemetry *tele;
    struct kubeletd *kubelet;
    struct webhook *hook;
    const char *ready_file;
    bool exit_when_done;
    bool began;
    bool waiting_logged;
    bool pass_queued;
    int limits[2]; /* the migration limits last recorded (cluster, node) */
};

static struct kube_loop *g_loop;

static void on_signal(int sig)
{
    (void)sig;
    if (g_loop)
        kube_loop_stop(g_loop);
}

/* A TCP port number (0: any) from s, into *port; false when s is not one. */
static bool parse_port(const char *s, int *port)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 65535)
        return false;
    *port = (int)v;
    return true;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: psi-sim --check FILE...\n"
               "       psi-sim --expect FILE [CPUS]\n"
               "       psi-sim --optimum FILE [THRESHOLD [CPUS]]\n"
               "       psi-sim --scenario FILE [--kubeconfig PATH] [--namespace NS]\n"
               "               [--metrics-bind-address ADDR] [--webhook-address IP] [--webhook-port N]\n"
               "               [--ca-cert FILE --ca-key FILE] [--prometheus-targets DIR] [--kubelet-socket PATH]\n"
               "               [--record FILE] [--ready-file FILE] [--exit-when-done] [--cleanup]\n"
               "               [--log-level debug|info|warn|error] [--log-format text|json]\n");
}

/* --optimum: the fewest migrations after which every pinned node is below the threshold, in
 * percent; 15 by default, the threshold every scenario header states (scenarios have no
 * threshold field: the operator's comes from its config). */
static int optimum_file(const char *path, const char *threshold_arg, const char *cpus_arg)
{
    char *end = NULL;
    double threshold = threshold_arg ? strtod(threshold_arg, &end) : 15;
    if (threshold_arg && (end == threshold_arg || *end || !(threshold > 0 && threshold < 100))) {
        fprintf(stderr, "psi-sim: --optimum: THRESHOLD \"%s\" is not a percentage between 0 and 100\n", threshold_arg);
        return 2;
    }
    double cpus = cpus_arg ? strtod(cpus_arg, &end) : 0;
    if (cpus_arg && (end == cpus_arg || *end || !(cpus > 0))) {
        fprintf(stderr, "psi-sim: --optimum: CPUS \"%s\" is not a positive number\n", cpus_arg);
        return 2;
    }
    char err[1024];
    struct scenario *sc = scenario_load(path, err, sizeof(err));
    if (!sc) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int rc = optimum_print(stdout, sc, threshold / 100, cpus) < 0 ? 1 : 0;
    scenario_free(sc);
    return rc;
}

/* --check: parse each file, print a line about it; 0 when all parse. */
static int check_files(int argc, char **argv, int first)
{
    int rc = 0;
    for (int i = first; i < argc; i++) {
        char err[1024];
        struct scenario *sc = scenario_load(argv[i], err, sizeof(err));
        if (!sc) {
            fprintf(stderr, "%s\n", err);
            rc = 1;
            continue;
        }
        printf("%s: scenario %s, namespace %s, %zu VMs, %zu Deployments, %zu events%s%s\n", argv[i], sc->name,
               sc->namespace, sc->n_vms, sc->n_deployments, sc->n_events, sc->start_node ? ", starting on " : "",
               sc->start_node ? sc->start_node : "");
        scenario_free(sc);
    }
    return rc;
}

/* --expect: the model's pressures for a scenario's placement. */
static int expect_file(const char *path, const char *cpus_arg)
{
    char *end = NULL;
    double cpus = cpus_arg ? strtod(cpus_arg, &end) : 0;
    if (cpus_arg && (end == cpus_arg || *end || !(cpus > 0))) {
        fprintf(stderr, "psi-sim: --expect: CPUS \"%s\" is not a positive number\n", cpus_arg);
        return 2;
    }
    char err[1024];
    struct scenario *sc = scenario_load(path, err, sizeof(err));
    if (!sc) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    expect_print(stdout, sc, cpus);
    scenario_free(sc);
    return 0;
}

static void inf_log(enum kube_watch_level level, const char *msg, void *ud)
{
    (void)ud;
    enum logging_level l = level == KUBE_WATCH_DEBUG  ? LOGGING_DEBUG
                           : level == KUBE_WATCH_INFO ? LOGGING_DEBUG
                           : level == KUBE_WATCH_WARN ? LOGGING_WARN
                                                      : LOGGING_ERROR;
    log_at(l, msg, (char *)0);
}

/* Record the migration limits when they change (the KubeVirt CR was edited). */
static void note_limits(struct app *a)
{
    int c, n;
    sim_migration_limits(&a->s, &c, &n);
    if (c == a->limits[0] && n == a->limits[1])
        return;
    a->limits[0] = c;
    a->limits[1] = n;
    char cs[16], ns[16];
    snprintf(cs, sizeof(cs), "%d", c);
    snprintf(ns, sizeof(ns), "%d", n);
    log_info("migration limits", "parallelMigrationsPerCluster", cs, "parallelOutboundMigrationsPerNode", ns);
    record_add(a->s.rec, "limits", "perCluster", cs, "perNode", ns, NULL);
}

static void pass(struct kube_loop *loop, void *ud);

static void pass_soon(struct app *a)
{
    if (!a->pass_queued && kube_loop_timer(a->s.loop, 20, 0, pass, a))
        a->pass_queued = true;
}

static void on_add(const char *key, const void *obj, void *ud)
{
    (void)key;
    (void)obj;
    pass_soon(ud);
}

static void on_update(const char *key, const void *o, const void *n, void *ud)
{
    (void)key;
    (void)o;
    (void)n;
    pass_soon(ud);
}

static void on_delete(const char *key, const void *obj, bool unknown, void *ud)
{
    (void)key;
    (void)obj;
    (void)unknown;
    pass_soon(ud);
}

static struct kube_informer *informer(struct app *a, const char *path, const char *selector, struct kube_err *err)
{
    struct kube_informer_opts o = {
        .path = path,
        .label_selector = selector,
        .list_mode = KUBE_WATCH_LIST_AUTO,
        .handlers = {.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .log = inf_log},
        .ud = a,
    };
    struct kube_informer *inf = kube_informer_new(&o, err);
    if (inf && kube_informer_start(inf, a->s.loop, a->s.client, err) < 0) {
        kube_informer_free(inf);
        return NULL;
    }
    return inf;
}

static void write_ready(struct app *a)
{
    if (!a->ready_file)
        return;
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", a->ready_file);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        log_warn("writing the ready file failed", "file", a->ready_file, "error", strerror(errno));
        return;
    }
    fprintf(f, "{\"scenario\":\"%s\",\"namespace\":\"%s\",\"metricsPort\":%d,\"webhookPort\":%d}\n", a->sc->name,
            a->sc->namespace, telemetry_port(a->tele), webhook_port(a->hook));
    if (fclose(f) != 0 || rename(tmp, a->ready_file) != 0)
        log_warn("writing the ready file failed", "file", a->ready_file, "error", strerror(errno));
}

static void pass(struct kube_loop *loop, void *ud)
{
    struct app *a = ud;
    (void)loop;
    a->pass_queued = false;
    if (!sim_synced(&a->s))
        return;
    nodes_sync(a->nodes);
    if (a->kubelet)
        kubeletd_sync(a->kubelet);
    if (!nodes_ready(a->nodes)) {
        if (!a->waiting_logged) {
            char want[16];
            snprintf(want, sizeof(want), "%d", a->sc->node_count);
            log_info("waiting for the simulated nodes", "selector", a->sc->node_selector, "want", want);
            a->waiting_logged = true;
        }
        return;
    }
    sim_index_pods(&a->s);
    note_limits(a);
    if (a->mco)
        mco_sync(a->mco);
    workload_sync(a->workload);
    if (workload_start_began(a->workload))
        deployments_sync(a->deployments);
    evacuation_sync(a->evac);
    migration_sync(a->mig);
    if (!a->began && workload_started(a->workload)) {
        a->began = true;
        timeline_begin(a->timeline);
        write_ready(a);
        log_info("simulation running", "scenario", a->sc->name, "namespace", a->sc->namespace);
    }
    timeline_step(a->timeline);
    if (a->exit_when_done && a->began && timeline_done(a->timeline)) {
        log_info("timeline over: exiting");
        kube_loop_stop(a->s.loop);
    }
}

static void tick(struct kube_loop *loop, void *ud)
{
    (void)loop;
    struct app *a = ud;
    if (sim_synced(&a->s) && nodes_ready(a->nodes))
        telemetry_tick(a->tele);
}

/* How long a namespace left Terminating by an earlier run may take to go. */
#define NAMESPACE_GONE_TIMEOUT_S 120

/* Whether the namespace is being deleted (status.phase Terminating); false when it is not
 * there or cannot be read (creating it then says why). */
static bool namespace_terminating(struct app *a)
{
    struct kube_err kerr = {0};
    char *path = kube_path("v1", NULL, "namespaces", a->sc->namespace, NULL);
    cJSON *ns = path ? kube_rest_get(a->s.client, path, &kerr) : NULL;
    free(path);
    bool terminating = jx_eq(jx_str0(ns, "status.phase"), "Terminating");
    cJSON_Delete(ns);
    return terminating;
}

/* Create the scenario's namespace (an existing one is used), first waiting for one that an
 * earlier run left Terminating to go: objects cannot be created in it. */
static int ensure_namespace(struct app *a, char *err, size_t errlen)
{
    for (int waited = 0; namespace_terminating(a); waited++) {
        if (waited == 0)
            log_info("waiting for the namespace to finish terminating", "namespace", a->sc->namespace);
        if (waited >= NAMESPACE_GONE_TIMEOUT_S) {
            snprintf(err, errlen, "the namespace %s is still Terminating after %d s (see its status.conditions)",
                     a->sc->namespace, NAMESPACE_GONE_TIMEOUT_S);
            return -1;
        }
        sleep(1);
    }
    cJSON *ns = cJSON_CreateObject();
    cJSON_AddStringToObject(ns, "apiVersion", "v1");
    cJSON_AddStringToObject(ns, "kind", "Namespace");
    cJSON *md = cJSON_AddObjectToObject(ns, "metadata");
    cJSON_AddStringToObject(md, "name", a->sc->namespace);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "labels"), SIM_MANAGED_LABEL, a->sc->name);
    struct kube_err kerr = {0};
    char *path = kube_path("v1", NULL, "namespaces", NULL, NULL);
    cJSON *res = kube_rest_create(a->s.client, path, ns, NULL, &kerr);
    free(path);
    cJSON_Delete(ns);
    if (!res && kerr.status != 409) {
        snprintf(err, errlen, "creating the namespace %s failed: %s", a->sc->namespace, kerr.msg);
        return -1;
    }
    cJSON_Delete(res);
    return 0;
}

static void cleanup_namespace(struct app *a)
{
    struct kube_err kerr = {0};
    char *path = kube_path("v1", NULL, "namespaces", a->sc->namespace, NULL);
    cJSON *res = kube_rest_delete(a->s.client, path, NULL, NULL, &kerr);
    free(path);
    if (res || kerr.status == 404)
        log_info("namespace deleted", "namespace", a->sc->namespace);
    else
        log_warn("deleting the namespace failed", "namespace", a->sc->namespace, "error", kerr.msg);
    cJSON_Delete(res);
}

/* The command line. */
struct flags {
    const char *scenario_path, *kubeconfig, *ns, *metrics, *hook_addr, *ca_cert, *ca_key, *record_path;
    const char *targets, *kubelet_socket, *ready_file;
    int hook_port;
    bool cleanup, exit_when_done;
    enum logging_level level;
    enum logging_format format;
    char ca_cert_buf[4096], ca_key_buf[4096];
};

static const struct option long_opts[] = {
    {"scenario", required_argument, 0, 's'},
    {"kubeconfig", required_argument, 0, 'k'},
    {"namespace", required_argument, 0, 'n'},
    {"metrics-bind-address", required_argument, 0, 'm'},
    {"webhook-address", required_argument, 0, 'w'},
    {"webhook-port", required_argument, 0, 'W'},
    {"ca-cert", required_argument, 0, 'c'},
    {"ca-key", required_argument, 0, 'K'},
    {"prometheus-targets", required_argument, 0, 'p'},
    {"kubelet-socket", required_argument, 0, 'L'},
    {"record", required_argument, 0, 'r'},
    {"ready-file", required_argument, 0, 'R'},
    {"exit-when-done", no_argument, 0, 'x'},
    {"cleanup", no_argument, 0, 'C'},
    {"log-level", required_argument, 0, 'l'},
    {"log-format", required_argument, 0, 'f'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* Take option c (its argument: optarg) into f. Returns -1 to go on, or the exit status. */
static int take_flag(struct flags *f, int c)
{
    switch (c) {
    case 's': f->scenario_path = optarg; break;
    case 'k': f->kubeconfig = optarg; break;
    case 'n': f->ns = optarg; break;
    case 'm': f->metrics = optarg; break;
    case 'w': f->hook_addr = optarg; break;
    case 'W':
        if (!parse_port(optarg, &f->hook_port)) {
            fprintf(stderr, "psi-sim: --webhook-port: \"%s\" is no port (0 to 65535)\n", optarg);
            return 2;
        }
        break;
    case 'c': f->ca_cert = optarg; break;
    case 'K': f->ca_key = optarg; break;
    case 'p': f->targets = optarg; break;
    case 'L': f->kubelet_socket = optarg; break;
    case 'r': f->record_path = optarg; break;
    case 'R': f->ready_file = optarg; break;
    case 'x': f->exit_when_done = true; break;
    case 'C': f->cleanup = true; break;
    case 'l':
        if (!logging_parse_level(optarg, &f->level)) {
            fprintf(stderr, "psi-sim: --log-level: unknown level \"%s\"\n", optarg);
            return 2;
        }
        break;
    case 'f':
        if (!logging_parse_format(optarg, &f->format)) {
            fprintf(stderr, "psi-sim: --log-format: unknown format \"%s\"\n", optarg);
            return 2;
        }
        break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    return -1;
}

/* The command line into f (defaults from the environment). Returns -1 to go on, or the exit
 * status. */
static int parse_flags(int argc, char **argv, struct flags *f)
{
    *f = (struct flags){.metrics = "127.0.0.1:0",
                        .hook_addr = "127.0.0.1",
                        .targets = getenv("PSI_PROMETHEUS_TARGETS"),
                        .kubelet_socket = getenv("PSI_KUBELET_SOCKET"),
                        .level = LOGGING_INFO,
                        .format = LOGGING_TEXT};
    int c, rc;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1)
        if ((rc = take_flag(f, c)) >= 0)
            return rc;
    if (!f->scenario_path || optind < argc) {
        usage(stderr);
        return 2;
    }
    return -1;
}

/* The webhook's CA: the flags', else the test bed's ($PSI_TESTBED/pki). Returns 0, or -1 when
 * there is none. */
static int find_ca(struct flags *f)
{
    const char *bed = getenv("PSI_TESTBED");
    if (!f->ca_cert && bed) {
        snprintf(f->ca_cert_buf, sizeof(f->ca_cert_buf), "%s/pki/ca.crt", bed);
        f->ca_cert = f->ca_cert_buf;
    }
    if (!f->ca_key && bed) {
        snprintf(f->ca_key_buf, sizeof(f->ca_key_buf), "%s/pki/ca.key", bed);
        f->ca_key = f->ca_key_buf;
    }
    return f->ca_cert && f->ca_key ? 0 : -1;
}

/* The API client, the loop and the record. Returns 0, or -1 (logged). */
static int connect_api(struct app *a, const struct flags *f)
{
    struct kube_err kerr = {0};
    char err[1024];
    if (kube_config_load(f->kubeconfig, NULL, &a->cfg, &kerr) < 0 ||
        kube_config_load(f->kubeconfig, NULL, &a->webhook_cfg, &kerr) < 0) {
        log_error("loading the kubeconfig failed", "error", kerr.msg);
        return -1;
    }
    a->s.sc = a->sc;
    a->s.rng = a->sc->seed * 0x9E3779B97F4A7C15ull + 1;
    a->s.started_ms = kube_loop_now_ms();
    if (!(a->s.client = kube_client_new(a->cfg, &kerr)) || !(a->s.loop = kube_loop_new(&kerr))) {
        log_error("starting the API client failed", "error", kerr.msg);
        return -1;
    }
    kube_client_set_rate_limit(a->s.client, 100, 200);
    kube_client_set_timeout(a->s.client, 15000);
    if (!(a->s.rec = record_open(f->record_path, err, sizeof(err)))) {
        log_error("opening the record failed", "error", err);
        return -1;
    }
    if (ensure_namespace(a, err, sizeof(err)) < 0 || sim_publish_kubevirt(&a->s, err, sizeof(err)) < 0) {
        log_error("preparing the namespace failed", "error", err);
        return -1;
    }
    return 0;
}

/* The informer of a->sc's namespace for resource of group-version gv into *inf, unless an
 * earlier one failed (*inf left NULL then). */
static void watch_ns(struct app *a, struct kube_informer **inf, const char *gv, const char *resource,
                     const char *selector, struct kube_err *kerr)
{
    char *path = kube_path(gv, a->sc->namespace, resource, NULL, NULL);
    *inf = path ? informer(a, path, selector, kerr) : NULL;
    if (!path)
        kube_err_set(kerr, 0, "Config", "out of memory");
    free(path);
}

/* Every watch the simulation reads. Returns 0, or -1 (logged). */
static int start_watches(struct app *a)
{
    struct kube_err kerr = {0};
    a->s.nodes = informer(a, "/api/v1/nodes", a->sc->node_selector, &kerr);
    if (a->s.nodes)
        watch_ns(a, &a->s.pods, "v1", "pods", "kubevirt.io=virt-launcher", &kerr);
    if (a->s.pods)
        watch_ns(a, &a->s.vms, SIM_KUBEVIRT_GV, "virtualmachines", NULL, &kerr);
    if (a->s.vms)
        watch_ns(a, &a->s.vmis, SIM_KUBEVIRT_GV, "virtualmachineinstances", NULL, &kerr);
    if (a->s.vmis)
        watch_ns(a, &a->s.vmims, SIM_KUBEVIRT_GV, "virtualmachineinstancemigrations", NULL, &kerr);
    if (a->s.vmims)
        watch_ns(a, &a->s.kubevirts, SIM_KUBEVIRT_GV, "kubevirts", NULL, &kerr);
    if (a->s.kubevirts && a->sc->mco_enabled) {
        a->s.mcs = informer(a, "/apis/" SIM_MC_GV "/machineconfigs", NULL, &kerr);
        if (a->s.mcs)
            a->s.mcps = informer(a, "/apis/" SIM_MC_GV "/machineconfigpools", NULL, &kerr);
    }
    if (a->s.kubevirts)
        watch_ns(a, &a->deployment_pods, "v1", "pods", DEPLOYMENT_LABEL, &kerr);
    if (!a->s.kubevirts || (a->sc->mco_enabled && !a->s.mcps) || !a->deployment_pods) {
        log_error("starting the watches failed", "error", kerr.msg);
        return -1;
    }
    return 0;
}

/* The webhook, the simulated parts, the kubelets and the metrics endpoint. Returns 0, or -1
 * (logged). */
static int start_parts(struct app *a, const struct flags *f)
{
    char err[1024];
    struct webhook_opts wo = {
        .cfg = a->webhook_cfg,
        .sc = a->sc,
        .rec = a->s.rec,
        .host = f->hook_addr,
        .port = f->hook_port,
        .ca_cert = f->ca_cert,
        .ca_key = f->ca_key,
    };
    if (!(a->hook = webhook_start(&wo, err, sizeof(err)))) {
        log_error("starting the eviction webhook failed", "error", err);
        return -1;
    }
    a->nodes = nodes_new(&a->s);
    a->workload = workload_new(&a->s);
    a->deployments = deployments_new(&a->s, a->deployment_pods);
    if (a->workload && a->deployments)
        workload_hold_start(a->workload, deployments_running, a->deployments);
    a->evac = evacuation_new(&a->s);
    a->mig = migration_new(&a->s);
    if (a->sc->mco_enabled)
        a->mco = mco_new(&a->s);
    a->timeline = timeline_new(&a->s, a->workload, a->mco);
    if (!a->nodes || !a->workload || !a->deployments || !a->evac || !a->mig || (a->sc->mco_enabled && !a->mco) ||
        !a->timeline) {
        log_error("out of memory");
        return -1;
    }
    /* without them the rest of the simulation still runs (another simulator may serve them) */
    if (f->kubelet_socket && *f->kubelet_socket &&
        !(a->kubelet = kubeletd_new(&a->s, f->kubelet_socket, f->ca_cert, f->ca_key, err, sizeof(err))))
        log_warn("no kubelets: their socket cannot be served", "error", err);
    struct telemetry_opts to = {
        .bind = f->metrics,
        .targets_dir = f->targets && *f->targets ? f->targets : NULL,
        .psi_on = a->mco ? mco_node_psi : NULL,
        .psi_ud = a->mco,
        .kubelet = a->kubelet,
        .deployments = a->deployments,
    };
    if (!(a->tele = telemetry_start(&a->s, a->workload, a->nodes, &to, err, sizeof(err)))) {
        log_error("starting the metrics endpoint failed", "error", err);
        return -1;
    }
    char mport[16], wport[16];
    snprintf(mport, sizeof(mport), "%d", telemetry_port(a->tele));
    snprintf(wport, sizeof(wport), "%d", webhook_port(a->hook));
    log_info("psi-sim started", "scenario", a->sc->name, "namespace", a->sc->namespace, "metrics_port", mport,
             "webhook_port", wport, "vms", a->sc->n_vms ? "yes" : "no");
    return 0;
}

/* Run the loop until a signal (or the timeline's end). Returns 0, or -1 (logged). */
static int run(struct app *a)
{
    g_loop = a->s.loop;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    kube_loop_timer(a->s.loop, PASS_PERIOD_MS, PASS_PERIOD_MS, pass, a);
    kube_loop_timer(a->s.loop, (uint64_t)a->sc->tick_ms, (uint64_t)a->sc->tick_ms, tick, a);
    struct kube_err kerr = {0};
    int rc = kube_loop_run(a->s.loop, &kerr);
    g_loop = NULL;
    if (rc < 0) {
        log_error("the event loop failed", "error", kerr.msg);
        return -1;
    }
    log_info("stopping");
    return 0;
}

/* Stop and free everything a holds; with cleanup, delete the namespace first. */
static void app_free(struct app *a, bool cleanup)
{
    webhook_free(a->hook);
    telemetry_free(a->tele);
    kubeletd_free(a->kubelet);
    timeline_free(a->timeline);
    mco_free(a->mco);
    migration_free(a->mig);
    evacuation_free(a->evac);
    workload_free(a->workload);
    deployments_free(a->deployments);
    nodes_free(a->nodes);
    if (cleanup && a->s.client)
        cleanup_namespace(a);
    struct kube_informer *infs[] = {a->deployment_pods, a->s.mcps, a->s.mcs,  a->s.kubevirts, a->s.vmims,
                                    a->s.vmis,          a->s.vms,  a->s.pods, a->s.nodes};
    for (size_t i = 0; i < sizeof(infs) / sizeof(infs[0]); i++)
        kube_informer_free(infs[i]);
    kube_loop_free(a->s.loop);
    kube_client_free(a->s.client);
    free(a->s.pod_index);
    record_close(a->s.rec);
    kube_config_free(a->webhook_cfg);
    kube_config_free(a->cfg);
    scenario_free(a->sc);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--check") == 0)
        return check_files(argc, argv, 2);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "--expect") == 0)
        return expect_file(argv[2], argc == 4 ? argv[3] : NULL);
    if (argc >= 3 && argc <= 5 && strcmp(argv[1], "--optimum") == 0)
        return optimum_file(argv[2], argc >= 4 ? argv[3] : NULL, argc == 5 ? argv[4] : NULL);
    struct flags f;
    int rc = parse_flags(argc, argv, &f);
    if (rc >= 0)
        return rc;
    logging_setup(f.level, f.format);
    struct app a;
    memset(&a, 0, sizeof(a));
    a.ready_file = f.ready_file;
    a.exit_when_done = f.exit_when_done;
    char err[1024];
    a.sc = scenario_load(f.scenario_path, err, sizeof(err));
    if (!a.sc) {
        log_error("loading the scenario failed", "error", err);
        return 1;
    }
    if (f.ns) {
        free(a.sc->namespace);
        a.sc->namespace = strdup(f.ns);
    }
    if (find_ca(&f) < 0) {
        log_error("the webhook needs a CA: give --ca-cert and --ca-key (or set PSI_TESTBED)");
        scenario_free(a.sc);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = connect_api(&a, &f) == 0 && start_watches(&a) == 0 && start_parts(&a, &f) == 0 && run(&a) == 0 ? 0 : 1;
    app_free(&a, f.cleanup);
    curl_global_cleanup();
    return rc;
}
