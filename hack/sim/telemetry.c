/* telemetry: model, counters and the metrics endpoint (see telemetry.h). */
#include "hack/sim/telemetry.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/jx.h"
#include "base/strbuf.h"
#include "hack/sim/exporter.h"
#include "hack/sim/model.h"
#include "hack/sim/podusage.h"
#include "base/logging.h"
#include "httpd/metrics.h"
#include "httpd/serve.h"

/* A VM's usage counter (guarded by the server mutex). */
struct vm_usage {
    double seconds; /* accumulated CPU seconds up to `at` */
    double rate;    /* cores used since `at` */
    double at;      /* monotonic seconds */
    double memory;  /* bytes in use (its working set) */
    char node[256]; /* where it runs; "" when not running */
};

/* What the last tick computed for a node (for telemetry_cpu_pressure). */
struct node_state {
    char *name;
    double cpu_some;
};

struct telemetry {
    struct sim *s;
    struct workload *w;
    struct nodes *n;
    struct telemetry_opts opts;
    struct psi_serve *srv;
    struct sim_exporter *exp;   /* guarded by the server mutex */
    struct vm_usage *usage;     /* per scenario VM; guarded by the server mutex */
    struct podusage *launchers; /* the launcher pods' own pressure; guarded by the server mutex */
    struct node_state *nodes;
    size_t n_nodes, nodes_cap;
    char *targets_file;
    char *targets_written; /* the JSON last written */
    char host[64];
    int port;
};

static double now_s(void)
{
    return (double)kube_loop_now_ms() / 1000.0;
}

/* What a per-VM series gives. */
enum vm_value { VM_CPU_SECONDS, VM_MEMORY, VM_DIRTY_RATE };

/* The per-VM series, as virt-handler exports them: CPU seconds, resident memory, and (KubeVirt
 * 1.6 and later, pkg/monitoring/metrics/virt-handler/domainstats/dirty_rate_metrics.go) the
 * guest's dirty rate, the scenario's vms[].dirtyRate. virt-handler leaves a migrating VM out
 * of the last (dirty_rate_collector.go: the calculation conflicts with a migration); the
 * simulator does not, and the operator never picks a VM whose migration runs. */
static const struct vm_series {
    const char *name, *type, *help;
    enum vm_value value;
} vm_series[] = {
    {"kubevirt_vmi_cpu_usage_seconds_total", "counter",
     "Total CPU time spent in all modes (sum of both vcpu and hypervisor usage).", VM_CPU_SECONDS},
    {"kubevirt_vmi_memory_resident_bytes", "gauge", "Resident set size of the process running the domain.", VM_MEMORY},
    {"kubevirt_vmi_dirty_rate_bytes_per_second", "gauge", "Guest dirty-rate in bytes per second.", VM_DIRTY_RATE},
};

static double vm_value(const struct telemetry *t, size_t i, enum vm_value v, double now)
{
    const struct vm_usage *u = &t->usage[i];
    return v == VM_MEMORY       ? u->memory
           : v == VM_DIRTY_RATE ? t->s->sc->vms[i].dirty_rate
                                : u->seconds + u->rate * (now - u->at);
}

/* Append the VM series (of node, or all when node is NULL) to text (len bytes); returns the
 * new text, or text as it was on no memory. */
static char *append_vms(const struct telemetry *t, char *text, size_t *len, const char *node, double now)
{
    struct strbuf b = STRBUF_INIT;
    strbuf_addn(&b, text, *len);
    for (size_t k = 0; k < sizeof(vm_series) / sizeof(vm_series[0]); k++) {
        const struct vm_series *m = &vm_series[k];
        bool any = false;
        for (size_t i = 0; i < t->s->sc->n_vms; i++) {
            const struct vm_usage *u = &t->usage[i];
            if (!u->node[0] || (node && strcmp(node, u->node) != 0))
                continue;
            if (!any)
                strbuf_addf(&b, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name, m->type);
            any = true;
            char val[40];
            psi_metrics_format_value(vm_value(t, i, m->value, now), val, sizeof(val));
            strbuf_addf(&b, "%s{name=\"%s\",namespace=\"%s\",node=\"%s\"} %s\n", m->name, t->s->sc->vms[i].name,
                        t->s->sc->namespace, u->node, val);
        }
    }
    size_t n = b.len;
    char *out = strbuf_take(&b);
    if (!out)
        return text;
    free(text);
    *len = n;
    return out;
}

static void reply_metrics(struct telemetry *t, const char *node, struct psi_serve_reply *reply)
{
    double now = now_s();
    size_t len = 0;
    char *text = NULL;
    text = sim_exporter_render(t->exp, now, node, &len); /* NULL when node exports no PSI */
    if (!text) {
        text = strdup("");
        len = 0;
    }
    text = append_vms(t, text, &len, node, now);
    text = podusage_render(t->launchers, node, now, text, &len);
    if (t->opts.deployments)
        text = deployments_render(t->opts.deployments, node, now, text, &len);
    reply->status = 200;
    snprintf(reply->content_type, sizeof(reply->content_type), "%s", PSI_METRICS_CONTENT_TYPE);
    reply->body = text;
    reply->len = len;
}

static void h_metrics(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    (void)req;
    reply_metrics(ud, NULL, reply);
}

static void h_node(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    const char *node = req->path + strlen("/metrics/node/");
    if (!*node || strchr(node, '/')) {
        psi_serve_reply_text(reply, 404, "text/plain", "no such node\n");
        return;
    }
    reply_metrics(ud, node, reply);
}

static void h_health(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    (void)req;
    (void)ud;
    psi_serve_reply_text(reply, 200, "text/plain", "ok\n");
}

/* ---- file_sd ---- */

static int collect_names(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv;
    (void)obj;
    cJSON *arr = ud;
    cJSON_AddItemToArray(arr, cJSON_CreateString(key));
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void write_targets(struct telemetry *t)
{
    if (!t->targets_file)
        return;
    cJSON *names = cJSON_CreateArray();
    kube_informer_foreach(t->s->nodes, collect_names, names);
    size_t n = (size_t)cJSON_GetArraySize(names);
    const char **sorted = calloc(n ? n : 1, sizeof(*sorted));
    size_t k = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, names)
        sorted[k++] = it->valuestring;
    qsort(sorted, n, sizeof(*sorted), cmp_str);
    char addr[96];
    snprintf(addr, sizeof(addr), "%s:%d", t->host, t->port);
    cJSON *targets = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *tg = cJSON_CreateObject();
        cJSON_AddItemToArray(cJSON_AddArrayToObject(tg, "targets"), cJSON_CreateString(addr));
        cJSON *labels = cJSON_AddObjectToObject(tg, "labels");
        char path[300];
        snprintf(path, sizeof(path), "/metrics/node/%s", sorted[i]);
        cJSON_AddStringToObject(labels, "instance", sorted[i]);
        cJSON_AddStringToObject(labels, "__metrics_path__", path);
        cJSON_AddStringToObject(labels, "job", "psi-sim");
        cJSON_AddStringToObject(labels, "sim_scenario", t->s->sc->name);
        cJSON_AddItemToArray(targets, tg);
    }
    free(sorted);
    cJSON_Delete(names);
    char *json = cJSON_Print(targets);
    cJSON_Delete(targets);
    if (!json || (t->targets_written && strcmp(json, t->targets_written) == 0)) {
        free(json);
        return;
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", t->targets_file);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", json) < 0 || fclose(f) != 0 || rename(tmp, t->targets_file) != 0) {
        log_warn("writing the Prometheus targets file failed", "file", t->targets_file, "error", strerror(errno));
        free(json);
        return;
    }
    free(t->targets_written);
    t->targets_written = json;
    log_info("prometheus targets written", "file", t->targets_file, "nodes", n ? "yes" : "none");
}

/* ---- tick ---- */

static struct node_state *node_state(struct telemetry *t, const char *name)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (strcmp(t->nodes[i].name, name) == 0)
            return &t->nodes[i];
    if (BASE_GROW(t->nodes, t->n_nodes + 1, t->nodes_cap) < 0)
        return NULL;
    t->nodes[t->n_nodes].name = strdup(name);
    t->nodes[t->n_nodes].cpu_some = 0;
    return &t->nodes[t->n_nodes++];
}

/* One simulated node's sums for a tick. */
struct node_sum {
    const char *name; /* the informer's key */
    double cpu, memory, io;
    double served;           /* the share of CPU demand the node serves */
    struct model_node_in in; /* the model's view of it, and its pressures */
    struct model_node_out out;
    bool pod_psi; /* its pods report their own PSI (the node has PSI, its kubelet serves it per pod) */
};

static int add_node(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv;
    (void)obj;
    struct node_sum **cur = ud;
    (*cur)->name = key;
    (*cur)++;
    return 0;
}

static int by_node_name(const void *a, const void *b)
{
    return strcmp(((const struct node_sum *)a)->name, ((const struct node_sum *)b)->name);
}

static struct node_sum *find_node(const struct node_sum *sums, size_t n, const char *name)
{
    struct node_sum key = {.name = name};
    return name ? bsearch(&key, sums, n, sizeof(*sums), by_node_name) : NULL;
}

/* The nodes of one tick, for the Deployments' pods. */
struct tick_nodes {
    struct node_sum *sums;
    size_t n;
};

static void add_pod_demand(const char *node, double cpu, double memory, double io, void *ud)
{
    struct tick_nodes *tn = ud;
    struct node_sum *ns = find_node(tn->sums, tn->n, node);
    if (ns)
        ns->cpu += cpu, ns->memory += memory, ns->io += io;
}

/* The own pressure (percent) of a workload of cpu cores and memory bytes on ns, [PSI_CPU or
 * PSI_MEMORY][PSI_SOME, PSI_FULL]. */
static void pod_pressure(const struct node_sum *ns, double cpu, double memory, double out[2][2])
{
    struct model_pod_out po;
    model_pod(&ns->in, &ns->out, cpu, memory, &po);
    out[PSI_CPU][PSI_SOME] = 100 * po.cpu_some;
    out[PSI_CPU][PSI_FULL] = 100 * po.cpu_full;
    out[PSI_MEMORY][PSI_SOME] = 100 * po.memory_some;
    out[PSI_MEMORY][PSI_FULL] = 100 * po.memory_full;
}

/* deployments_use_fn: a Deployment pod's share of its node's CPU, and its own pressure. */
static void pod_use(const char *node, double cpu, double memory, struct podusage_pod *p, void *ud)
{
    struct tick_nodes *tn = ud;
    const struct node_sum *ns = find_node(tn->sums, tn->n, node);
    if (!ns)
        return;
    p->cores = cpu * ns->served;
    p->psi = ns->pod_psi;
    if (p->psi)
        pod_pressure(ns, cpu, memory, p->pressure);
}

static bool listed(char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

/* The model for one node, and its series. */
static void tick_node(struct telemetry *t, struct node_sum *ns, double now)
{
    const struct scenario *sc = t->s->sc;
    struct model_node_in in = {
        .cpu_demand = sc->node_base_cpu + ns->cpu, .memory_demand = ns->memory, .io = sc->node_io, .io_demand = ns->io};
    nodes_capacity(t->n, ns->name, &in.cpus, &in.memory);
    struct model_node_out out;
    model_node(&sc->model, &in, &out);
    ns->served = out.cpu_served;
    ns->in = in;
    ns->out = out;
    struct node_state *st = node_state(t, ns->name);
    if (st)
        st->cpu_some = 100 * out.cpu_some;
    bool psi = sc->psi_without_pool || (t->opts.psi_on && t->opts.psi_on(ns->name, t->opts.psi_ud));
    ns->pod_psi = psi && sc->kubelet_pod_psi && !listed(sc->kubelet_no_psi, sc->n_kubelet_no_psi, ns->name);
    const char *key = ns->name;
    if (t->opts.kubelet) {
        struct kubeletd_update u = {
            .psi = psi,
            .pressure = {{100 * out.cpu_some, 0},
                         {100 * out.memory_some, 100 * out.memory_full},
                         {100 * out.io_some, 100 * out.io_full}},
            .cpu_cores = ns->cpu * out.cpu_served + sc->node_base_cpu,
            .memory_capacity = in.memory,
            .memory_working_set = ns->memory,
        };
        kubeletd_update(t->opts.kubelet, key, &u, now);
    }
    psi_serve_lock(t->srv);
    if (psi) {
        sim_exporter_set(t->exp, key, PSI_CPU, PSI_SOME, 100 * out.cpu_some, now);
        sim_exporter_set(t->exp, key, PSI_CPU, PSI_FULL, 0, now);
        sim_exporter_set(t->exp, key, PSI_MEMORY, PSI_SOME, 100 * out.memory_some, now);
        sim_exporter_set(t->exp, key, PSI_MEMORY, PSI_FULL, 100 * out.memory_full, now);
        sim_exporter_set(t->exp, key, PSI_IO, PSI_SOME, 100 * out.io_some, now);
        sim_exporter_set(t->exp, key, PSI_IO, PSI_FULL, 100 * out.io_full, now);
        double busy = (ns->cpu * out.cpu_served + sc->node_base_cpu) / in.cpus;
        sim_exporter_set_utilization(t->exp, key, 100 * (busy < 1 ? busy : 1), now);
        if (sc->node_cpu_seconds)
            sim_exporter_set_cpu_busy(t->exp, key, busy * in.cpus, now);
        /* runnable tasks: what is served plus what waits, demand x (1 + some), as
         * bench/psi-kernel's runnable counts follow below capacity (bench/README.md) */
        double runnable = in.cpu_demand * (1 + out.cpu_some), running = busy * in.cpus;
        sim_exporter_set_runqueue(t->exp, key, runnable, runnable > running ? runnable - running : 0, now);
        sim_exporter_set_memory(t->exp, key, in.memory, in.memory > ns->memory ? in.memory - ns->memory : 0, now);
    } else if (!isnan(sim_exporter_pressure(t->exp, key, PSI_CPU, PSI_SOME))) {
        sim_exporter_remove_node(t->exp, key);
    }
    psi_serve_unlock(t->srv);
}

/* A launcher pod as the kubelet lists it. */
struct pod_ref {
    const char *vmi_uid, *node;
    struct summary_pod p;
};

static int collect_pod(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct pod_ref **cur = ud;
    const char *uid = jx_label(obj, SIM_CREATED_BY_LABEL);
    if (!uid || !sim_pod_live(obj) || !jx_str(obj, "spec.nodeName"))
        return 0;
    (*cur)->vmi_uid = uid;
    (*cur)->node = jx_str(obj, "spec.nodeName");
    (*cur)->p = (struct summary_pod){.name = jx_str0(obj, "metadata.name"),
                                     .ns = jx_str0(obj, "metadata.namespace"),
                                     .uid = jx_str0(obj, "metadata.uid")};
    (*cur)++;
    return 0;
}

static int by_node_then_uid(const void *a, const void *b)
{
    const struct pod_ref *x = a, *y = b;
    int c = strcmp(x->node, y->node);
    return c ? c : strcmp(x->vmi_uid, y->vmi_uid);
}

/* A launcher pod's own pressure, advanced in t->launchers (between podusage_begin and _end)
 * and copied into p: the pod's cgroup, so a new pod (a migration's target, a restarted VM)
 * starts from 0. */
static void launcher_pressure(struct telemetry *t, struct pod_ref *p, const struct node_sum *ns, double cpu,
                              double memory, double now)
{
    struct podusage_pod pu = {.uid = p->p.uid,
                              .ns = p->p.ns,
                              .name = p->p.name,
                              .node = p->node,
                              .cores = p->p.cpu_cores,
                              .memory = memory,
                              .psi = ns && ns->pod_psi};
    if (pu.psi)
        pod_pressure(ns, cpu, memory, pu.pressure);
    if (podusage_set(t->launchers, &pu, now) < 0 || podusage_pressure(t->launchers, pu.uid, p->p.pressure) < 0)
        log_warn("launcher pod pressure not recorded", "pod", p->p.name);
}

/* The launcher pods running now, sorted by node then VMI uid, into *out (caller frees); how
 * many. *out is NULL when out of memory. */
static size_t launcher_pods(struct telemetry *t, struct pod_ref **out)
{
    size_t np = kube_informer_len(t->s->pods);
    struct pod_ref *pods = calloc(np ? np : 1, sizeof(*pods)), *cur = pods;
    *out = pods;
    if (!pods)
        return 0;
    kube_informer_foreach(t->s->pods, collect_pod, &cur);
    np = (size_t)(cur - pods);
    qsort(pods, np, sizeof(*pods), by_node_then_uid);
    return np;
}

/* Give each launcher pod its VM's usage and its own pressure (t->launchers: its container's
 * pressure counters). Under the server lock. */
static void account_launchers(struct telemetry *t, struct pod_ref *pods, size_t np, const struct node_sum *sums,
                              size_t nnodes, double now)
{
    const struct scenario *sc = t->s->sc;
    podusage_begin(t->launchers);
    for (size_t i = 0; i < sc->n_vms; i++) {
        const struct vm_usage *u = &t->usage[i];
        const char *uid = workload_vmi_uid(t->w, i);
        if (!u->node[0] || !uid)
            continue;
        struct pod_ref key = {.vmi_uid = uid, .node = u->node};
        struct pod_ref *p = bsearch(&key, pods, np, sizeof(*pods), by_node_then_uid);
        if (!p)
            continue;
        double cpu, mem, io;
        workload_demand(t->w, i, &cpu, &mem, &io);
        p->p.cpu_cores = u->rate;
        p->p.cpu_seconds = u->seconds;
        p->p.memory_bytes = mem;
        launcher_pressure(t, p, find_node(sums, nnodes, u->node), cpu, mem, now);
    }
    podusage_end(t->launchers);
}

/* Give every node's kubelet the launcher pods running there (pods, sorted by node) and the
 * Deployments' pods. */
static void kubelet_pods(struct telemetry *t, const struct pod_ref *pods, size_t np, const struct node_sum *sums,
                         size_t nnodes, double now)
{
    for (size_t i = 0, j = 0; i < nnodes; i++) {
        while (j < np && strcmp(pods[j].node, sums[i].name) < 0)
            j++;
        size_t first = j;
        while (j < np && strcmp(pods[j].node, sums[i].name) == 0)
            j++;
        size_t plain = t->opts.deployments ? deployments_summary(t->opts.deployments, sums[i].name, now, NULL, 0) : 0;
        struct summary_pod *list = calloc(j - first + plain ? j - first + plain : 1, sizeof(*list));
        if (!list)
            break;
        for (size_t k = first; k < j; k++)
            list[k - first] = pods[k].p;
        if (plain)
            deployments_summary(t->opts.deployments, sums[i].name, now, list + (j - first), plain);
        kubeletd_set_pods(t->opts.kubelet, sums[i].name, list, j - first + plain);
        free(list);
    }
}

void telemetry_tick(struct telemetry *t)
{
    const struct scenario *sc = t->s->sc;
    double now = now_s();
    /* sum the demand per node in one pass over the VMs (nodes sorted by name) */
    size_t n = kube_informer_len(t->s->nodes);
    struct node_sum *sums = calloc(n ? n : 1, sizeof(*sums));
    if (!sums)
        return;
    struct node_sum *cur = sums;
    kube_informer_foreach(t->s->nodes, add_node, &cur);
    n = (size_t)(cur - sums);
    qsort(sums, n, sizeof(*sums), by_node_name);
    for (size_t i = 0; i < sc->n_vms; i++) {
        struct node_sum *ns = find_node(sums, n, workload_node_of(t->w, i));
        if (!ns)
            continue;
        double cpu, mem, io;
        workload_demand(t->w, i, &cpu, &mem, &io);
        ns->cpu += cpu;
        ns->memory += mem;
        ns->io += io;
    }
    struct tick_nodes tn = {sums, n};
    if (t->opts.deployments)
        deployments_demand(t->opts.deployments, add_pod_demand, &tn);
    for (size_t i = 0; i < n; i++)
        tick_node(t, &sums[i], now);
    psi_serve_lock(t->srv);
    if (t->opts.deployments)
        deployments_account(t->opts.deployments, pod_use, &tn, now);
    /* nodes that left the simulation stop exporting */
    for (size_t i = 0; i < sim_exporter_count(t->exp);) {
        const char *name = sim_exporter_node(t->exp, i);
        if (!find_node(sums, n, name))
            sim_exporter_remove_node(t->exp, name);
        else
            i++;
    }
    for (size_t i = 0; i < sc->n_vms; i++) {
        struct vm_usage *u = &t->usage[i];
        u->seconds += u->rate * (now - u->at);
        u->at = now;
        const char *node = workload_node_of(t->w, i);
        struct node_sum *ns = find_node(sums, n, node);
        double cpu, mem, io;
        workload_demand(t->w, i, &cpu, &mem, &io);
        snprintf(u->node, sizeof(u->node), "%s", node ? node : "");
        u->rate = ns ? cpu * ns->served : 0;
        u->memory = mem;
    }
    struct pod_ref *pods;
    size_t np = launcher_pods(t, &pods);
    if (pods)
        account_launchers(t, pods, np, sums, n, now);
    psi_serve_unlock(t->srv);
    if (t->opts.kubelet && pods)
        kubelet_pods(t, pods, np, sums, n, now);
    free(pods);
    free(sums);
    write_targets(t);
}

double telemetry_cpu_pressure(const struct telemetry *t, const char *node)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (strcmp(t->nodes[i].name, node) == 0)
            return t->nodes[i].cpu_some;
    return -1;
}

/* ---- life ---- */

struct telemetry *telemetry_start(struct sim *s, struct workload *w, struct nodes *n, const struct telemetry_opts *opts,
                                  char *err, size_t errlen)
{
    struct telemetry *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->s = s;
    t->w = w;
    t->n = n;
    t->opts = *opts;
    t->exp = sim_exporter_new();
    t->usage = calloc(s->sc->n_vms ? s->sc->n_vms : 1, sizeof(*t->usage));
    t->launchers = podusage_new_launchers();
    if (!t->exp || !t->usage || !t->launchers) {
        snprintf(err, errlen, "out of memory");
        telemetry_free(t);
        return NULL;
    }
    double now = now_s();
    for (size_t i = 0; i < s->sc->n_vms; i++)
        t->usage[i].at = now;
    int port = 0;
    char why[256];
    /* One Prometheus target per simulated node, each may keep a connection open. */
    const struct psi_serve_limits many_targets = {.max_connections = 8192};
    if (psi_serve_parse_bind(opts->bind, t->host, sizeof(t->host), &port, why, sizeof(why)) < 0 ||
        !(t->srv = psi_serve_new(opts->bind, why, sizeof(why))) || psi_serve_set_limits(t->srv, &many_targets) < 0 ||
        psi_serve_route(t->srv, "GET", "/metrics", h_metrics, t) < 0 ||
        psi_serve_route(t->srv, "GET", "/metrics/node/*", h_node, t) < 0 ||
        psi_serve_route(t->srv, "GET", "/healthz", h_health, t) < 0 || psi_serve_start(t->srv, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "metrics endpoint %s: %s", opts->bind, why);
        telemetry_free(t);
        return NULL;
    }
    if (!t->host[0])
        snprintf(t->host, sizeof(t->host), "127.0.0.1");
    t->port = psi_serve_port(t->srv);
    if (opts->targets_dir) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/psi-sim-%s.json", opts->targets_dir, s->sc->namespace);
        t->targets_file = strdup(path);
    }
    return t;
}

int telemetry_port(const struct telemetry *t)
{
    return t->port;
}

void telemetry_free(struct telemetry *t)
{
    if (!t)
        return;
    psi_serve_free(t->srv);
    if (t->targets_file && t->targets_written && unlink(t->targets_file) == 0)
        log_info("prometheus targets removed", "file", t->targets_file);
    free(t->targets_file);
    free(t->targets_written);
    sim_exporter_free(t->exp);
    free(t->usage);
    podusage_free(t->launchers);
    for (size_t i = 0; i < t->n_nodes; i++)
        free(t->nodes[i].name);
    free(t->nodes);
    free(t);
}
