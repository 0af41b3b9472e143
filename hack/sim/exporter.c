#include "hack/sim/exporter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "httpd/metrics.h"

#define NCOUNTERS (PSI_NRESOURCES * 2)

struct counter {
    double base;    /* seconds accumulated up to since */
    double since;   /* time of the last change of rate */
    double percent; /* current pressure */
};

struct node {
    char *name;
    struct counter c[NCOUNTERS];
    struct counter idle; /* percent idle; exported once has_idle */
    int has_idle;
    struct counter busy; /* 100 x the cores in use; exported once has_busy */
    int has_busy;
    double mem_total, mem_available; /* bytes; exported once has_memory */
    double load1;                    /* runnable tasks; exported with waiting once has_runqueue */
    struct counter waiting;          /* 100 x the tasks waiting for a CPU */
    int has_runqueue;
    int has_memory;
};

struct sim_exporter {
    struct node *nodes;
    size_t n, cap;
};

static const char *const metric_names[NCOUNTERS] = {
    "node_pressure_cpu_waiting_seconds_total",    "node_pressure_cpu_stalled_seconds_total",
    "node_pressure_memory_waiting_seconds_total", "node_pressure_memory_stalled_seconds_total",
    "node_pressure_io_waiting_seconds_total",     "node_pressure_io_stalled_seconds_total",
};

static const char *const metric_help[NCOUNTERS] = {
    "Total time in seconds that processes have waited for CPU time",
    "Total time in seconds no process could make progress due to CPU congestion",
    "Total time in seconds that processes have waited for memory",
    "Total time in seconds no process could make progress due to memory congestion",
    "Total time in seconds that processes have waited due to IO congestion",
    "Total time in seconds no process could make progress due to IO congestion",
};

static int idx(enum psi_resource r, enum psi_kind k)
{
    return (int)r * 2 + (k == PSI_FULL ? 1 : 0);
}

const char *sim_exporter_metric_name(enum psi_resource r, enum psi_kind kind)
{
    if (r < 0 || r >= PSI_NRESOURCES)
        return NULL;
    return metric_names[idx(r, kind)];
}

struct sim_exporter *sim_exporter_new(void)
{
    return calloc(1, sizeof(struct sim_exporter));
}

void sim_exporter_free(struct sim_exporter *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        free(e->nodes[i].name);
    free(e->nodes);
    free(e);
}

static struct node *find(const struct sim_exporter *e, const char *name)
{
    for (size_t i = 0; name && i < e->n; i++)
        if (strcmp(e->nodes[i].name, name) == 0)
            return &e->nodes[i];
    return NULL;
}

int sim_exporter_add_node(struct sim_exporter *e, const char *node, double now)
{
    if (!node || !*node)
        return -1;
    if (find(e, node))
        return 0;
    if (BASE_GROW(e->nodes, e->n + 1, e->cap) < 0)
        return -1;
    struct node *n = &e->nodes[e->n];
    memset(n, 0, sizeof(*n));
    n->name = strdup(node);
    if (!n->name)
        return -1;
    for (int i = 0; i < NCOUNTERS; i++)
        n->c[i].since = now;
    e->n++;
    return 0;
}

int sim_exporter_remove_node(struct sim_exporter *e, const char *node)
{
    struct node *n = find(e, node);
    if (!n)
        return -1;
    size_t i = (size_t)(n - e->nodes);
    free(n->name);
    memmove(&e->nodes[i], &e->nodes[i + 1], (e->n - i - 1) * sizeof(*e->nodes));
    e->n--;
    return 0;
}

static double value_at(const struct counter *c, double now)
{
    double dt = now - c->since;
    if (dt < 0)
        dt = 0;
    return c->base + c->percent / 100.0 * dt;
}

/* node, added at now when absent; NULL on an empty name or out of memory. */
static struct node *find_or_add(struct sim_exporter *e, const char *node, double now)
{
    struct node *n = find(e, node);
    if (!n && sim_exporter_add_node(e, node, now) == 0)
        n = find(e, node);
    return n;
}

/* Integrate c's rate up to now and go on at percent; -1 when now is before its last change. */
static int counter_set(struct counter *c, double percent, double now)
{
    if (now < c->since)
        return -1;
    c->base = value_at(c, now);
    c->since = now;
    c->percent = percent;
    return 0;
}

int sim_exporter_set(struct sim_exporter *e, const char *node, enum psi_resource r, enum psi_kind kind, double percent,
                     double now)
{
    if (r < 0 || r >= PSI_NRESOURCES || !(percent >= 0 && percent <= 100))
        return -1;
    struct node *n = find_or_add(e, node, now);
    return n ? counter_set(&n->c[idx(r, kind)], percent, now) : -1;
}

int sim_exporter_set_utilization(struct sim_exporter *e, const char *node, double percent, double now)
{
    if (!(percent >= 0 && percent <= 100))
        return -1;
    struct node *n = find_or_add(e, node, now);
    if (!n)
        return -1;
    if (!n->has_idle) {
        n->idle = (struct counter){0, now, 100};
        n->has_idle = 1;
    }
    return counter_set(&n->idle, 100 - percent, now);
}

int sim_exporter_set_cpu_busy(struct sim_exporter *e, const char *node, double cores, double now)
{
    if (!(cores >= 0) || isinf(cores))
        return -1;
    struct node *n = find_or_add(e, node, now);
    if (!n)
        return -1;
    if (!n->has_busy) {
        n->busy = (struct counter){0, now, 0};
        n->has_busy = 1;
    }
    return counter_set(&n->busy, 100 * cores, now);
}

int sim_exporter_set_runqueue(struct sim_exporter *e, const char *node, double load1, double waiting, double now)
{
    if (!(load1 >= 0) || isinf(load1) || !(waiting >= 0) || isinf(waiting))
        return -1;
    struct node *n = find_or_add(e, node, now);
    if (!n)
        return -1;
    if (!n->has_runqueue) {
        n->waiting = (struct counter){0, now, 0};
        n->has_runqueue = 1;
    }
    n->load1 = load1;
    return counter_set(&n->waiting, 100 * waiting, now);
}

int sim_exporter_set_memory(struct sim_exporter *e, const char *node, double total, double available, double now)
{
    if (!(total >= 0 && available >= 0 && available <= total))
        return -1;
    struct node *n = find_or_add(e, node, now);
    if (!n)
        return -1;
    n->mem_total = total;
    n->mem_available = available;
    n->has_memory = 1;
    return 0;
}

double sim_exporter_pressure(const struct sim_exporter *e, const char *node, enum psi_resource r, enum psi_kind kind)
{
    const struct node *n = find(e, node);
    if (!n || r < 0 || r >= PSI_NRESOURCES)
        return NAN;
    return n->c[idx(r, kind)].percent;
}

double sim_exporter_counter(const struct sim_exporter *e, const char *node, enum psi_resource r, enum psi_kind kind,
                            double now)
{
    const struct node *n = find(e, node);
    if (!n || r < 0 || r >= PSI_NRESOURCES)
        return NAN;
    return value_at(&n->c[idx(r, kind)], now);
}

size_t sim_exporter_count(const struct sim_exporter *e)
{
    return e->n;
}

const char *sim_exporter_node(const struct sim_exporter *e, size_t i)
{
    return i < e->n ? e->nodes[i].name : NULL;
}

/* One memory gauge family (available: MemAvailable, else MemTotal) of the nodes that set it. */
static void render_memory(struct psi_metrics_text *t, const struct sim_exporter *e, const struct node *only,
                          const char *name, const char *help, int available)
{
    int family = 0;
    for (size_t i = 0; i < e->n; i++) {
        const struct node *n = &e->nodes[i];
        if ((only && n != only) || !n->has_memory)
            continue;
        if (!family++)
            psi_metrics_text_family(t, name, "gauge", help);
        psi_metrics_text_str(t, name);
        if (!only) {
            psi_metrics_text_str(t, "{instance=\"");
            psi_metrics_text_label_value(t, n->name);
            psi_metrics_text_str(t, "\"}");
        }
        psi_metrics_text_add(t, " ", 1);
        psi_metrics_text_value(t, available ? n->mem_available : n->mem_total);
        psi_metrics_text_add(t, "\n", 1);
    }
}

/* node_load1 (loadavg collector) and node_schedstat_waiting_seconds_total{cpu="0"}
 * (schedstat collector) of the nodes that set them, with node_exporter's names and help. */
static void render_runqueue(struct psi_metrics_text *t, const struct sim_exporter *e, const struct node *only,
                            double now)
{
    for (int k = 0; k < 2; k++) {
        int family = 0;
        for (size_t i = 0; i < e->n; i++) {
            const struct node *n = &e->nodes[i];
            if ((only && n != only) || !n->has_runqueue)
                continue;
            if (!family++) {
                if (k == 0)
                    psi_metrics_text_family(t, "node_load1", "gauge", "1m load average.");
                else
                    psi_metrics_text_family(t, "node_schedstat_waiting_seconds_total", "counter",
                                            "Number of seconds spent by processing waiting for this CPU.");
            }
            psi_metrics_text_str(t, k == 0 ? "node_load1" : "node_schedstat_waiting_seconds_total{cpu=\"0\"");
            if (!only) {
                psi_metrics_text_str(t, k == 0 ? "{instance=\"" : ",instance=\"");
                psi_metrics_text_label_value(t, n->name);
                psi_metrics_text_str(t, k == 0 ? "\"}" : "\"");
            }
            if (k == 1)
                psi_metrics_text_str(t, "}");
            psi_metrics_text_add(t, " ", 1);
            psi_metrics_text_value(t, k == 0 ? n->load1 : value_at(&n->waiting, now));
            psi_metrics_text_add(t, "\n", 1);
        }
    }
}

/* One node_cpu_seconds_total sample of CPU 0 in mode. */
static void render_cpu_mode(struct psi_metrics_text *t, const struct node *n, const struct node *only, const char *mode,
                            double v)
{
    psi_metrics_text_str(t, "node_cpu_seconds_total{cpu=\"0\",mode=\"");
    psi_metrics_text_str(t, mode);
    psi_metrics_text_str(t, "\"");
    if (!only) {
        psi_metrics_text_str(t, ",instance=\"");
        psi_metrics_text_label_value(t, n->name);
        psi_metrics_text_str(t, "\"");
    }
    psi_metrics_text_str(t, "} ");
    psi_metrics_text_value(t, v);
    psi_metrics_text_add(t, "\n", 1);
}

char *sim_exporter_render(const struct sim_exporter *e, double now, const char *node, size_t *len)
{
    const struct node *only = NULL;
    if (node && !(only = find(e, node)))
        return NULL;
    struct psi_metrics_text t = {0};
    for (int k = 0; k < NCOUNTERS; k++) {
        psi_metrics_text_family(&t, metric_names[k], "counter", metric_help[k]);
        for (size_t i = 0; i < e->n; i++) {
            const struct node *n = &e->nodes[i];
            if (only && n != only)
                continue;
            psi_metrics_text_str(&t, metric_names[k]);
            if (!only) {
                psi_metrics_text_str(&t, "{instance=\"");
                psi_metrics_text_label_value(&t, n->name);
                psi_metrics_text_str(&t, "\"}");
            }
            psi_metrics_text_add(&t, " ", 1);
            psi_metrics_text_value(&t, value_at(&n->c[k], now));
            psi_metrics_text_add(&t, "\n", 1);
        }
    }
    int family = 0;
    for (size_t i = 0; i < e->n; i++) {
        const struct node *n = &e->nodes[i];
        if ((only && n != only) || (!n->has_idle && !n->has_busy))
            continue;
        if (!family++)
            psi_metrics_text_family(&t, "node_cpu_seconds_total", "counter", "Seconds the CPUs spent in each mode.");
        if (n->has_idle)
            render_cpu_mode(&t, n, only, "idle", value_at(&n->idle, now));
        if (n->has_busy)
            render_cpu_mode(&t, n, only, "user", value_at(&n->busy, now));
    }
    render_runqueue(&t, e, only, now);
    render_memory(&t, e, only, "node_memory_MemTotal_bytes", "Memory information field MemTotal_bytes.", 0);
    render_memory(&t, e, only, "node_memory_MemAvailable_bytes", "Memory information field MemAvailable_bytes.", 1);
    return psi_metrics_text_finish(&t, len);
}
