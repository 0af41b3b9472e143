/* podusage: plain pods' CPU counters and working sets (see podusage.h). */
#include "hack/sim/podusage.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "httpd/metrics.h"

struct pod {
    char *uid, *ns, *name, *node;
    double seconds; /* core-seconds up to at */
    double rate;    /* cores since at */
    double at;
    double memory;
    bool marked;
    bool psi;                          /* its node serves per-pod PSI */
    double percent[2][2];              /* pressure since at, [PSI_CPU or PSI_MEMORY][kind] */
    struct summary_psi pressure[2][2]; /* averages and totals up to at */
};

struct podusage {
    struct pod *v;
    size_t n, cap;
    const char *container; /* the container label */
    bool pressure_only;    /* render only the pressure counters */
};

struct podusage *podusage_new(void)
{
    struct podusage *u = calloc(1, sizeof(struct podusage));
    if (u)
        u->container = "app";
    return u;
}

struct podusage *podusage_new_launchers(void)
{
    struct podusage *u = podusage_new();
    if (u) {
        u->container = "compute";
        u->pressure_only = true;
    }
    return u;
}

static void pod_clear(struct pod *p)
{
    free(p->uid);
    free(p->ns);
    free(p->name);
    free(p->node);
}

void podusage_free(struct podusage *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++)
        pod_clear(&u->v[i]);
    free(u->v);
    free(u);
}

void podusage_begin(struct podusage *u)
{
    for (size_t i = 0; i < u->n; i++)
        u->v[i].marked = false;
}

static struct pod *find(const struct podusage *u, const char *uid)
{
    for (size_t i = 0; i < u->n; i++)
        if (strcmp(u->v[i].uid, uid) == 0)
            return &u->v[i];
    return NULL;
}

/* Replace *field with a copy of s unless equal; -1 on no memory. */
static int set_str(char **field, const char *s)
{
    if (*field && strcmp(*field, s) == 0)
        return 0;
    char *c = strdup(s);
    if (!c)
        return -1;
    free(*field);
    *field = c;
    return 0;
}

static bool pressure_ok(const struct podusage_pod *pp)
{
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++)
            if (!(pp->pressure[r][k] >= 0 && pp->pressure[r][k] <= 100))
                return false;
    return true;
}

/* Advance p's pressure by the time from p->at to now, then take pp's. */
static void set_pressure(struct pod *p, const struct podusage_pod *pp, double now)
{
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++) {
            if (p->psi)
                summary_psi_advance(&p->pressure[r][k], p->percent[r][k], now - p->at);
            p->percent[r][k] = pp->psi ? pp->pressure[r][k] : 0;
        }
    p->psi = pp->psi;
}

int podusage_set(struct podusage *u, const struct podusage_pod *pp, double now)
{
    const char *uid = pp->uid, *ns = pp->ns, *name = pp->name, *node = pp->node;
    double cores = pp->cores, memory = pp->memory;
    if (!uid || !*uid || !ns || !*ns || !name || !*name || !node || !*node || !(cores >= 0) || !(memory >= 0) ||
        isinf(cores) || isinf(memory) || !pressure_ok(pp))
        return -1;
    struct pod *p = find(u, uid);
    if (!p) {
        if (BASE_GROW(u->v, u->n + 1, u->cap) < 0)
            return -1;
        p = &u->v[u->n];
        *p = (struct pod){.uid = strdup(uid), .at = now};
        if (!p->uid)
            return -1;
        u->n++;
    }
    if (set_str(&p->ns, ns) < 0 || set_str(&p->name, name) < 0 || set_str(&p->node, node) < 0)
        return -1;
    if (now > p->at)
        p->seconds += p->rate * (now - p->at);
    set_pressure(p, pp, now);
    p->at = now > p->at ? now : p->at;
    p->rate = cores;
    p->memory = memory;
    p->marked = true;
    return 0;
}

void podusage_end(struct podusage *u)
{
    size_t k = 0;
    for (size_t i = 0; i < u->n; i++) {
        if (u->v[i].marked)
            u->v[k++] = u->v[i];
        else
            pod_clear(&u->v[i]);
    }
    u->n = k;
}

size_t podusage_count(const struct podusage *u)
{
    return u->n;
}

static double seconds_at(const struct pod *p, double now)
{
    return p->seconds + (now > p->at ? p->rate * (now - p->at) : 0);
}

double podusage_seconds(const struct podusage *u, const char *uid, double now)
{
    const struct pod *p = find(u, uid);
    return p ? seconds_at(p, now) : -1;
}

int podusage_pressure(const struct podusage *u, const char *uid, struct summary_psi out[2][2])
{
    const struct pod *p = find(u, uid);
    if (!p)
        return -1;
    memcpy(out, p->pressure, sizeof(p->pressure));
    return 0;
}

static void series(struct psi_metrics_text *t, const char *metric, const char *container, const struct pod *p, double v)
{
    psi_metrics_text_str(t, metric);
    psi_metrics_text_str(t, "{container=\"");
    psi_metrics_text_str(t, container);
    psi_metrics_text_str(t, "\",namespace=\"");
    psi_metrics_text_label_value(t, p->ns);
    psi_metrics_text_str(t, "\",node=\"");
    psi_metrics_text_label_value(t, p->node);
    psi_metrics_text_str(t, "\",pod=\"");
    psi_metrics_text_label_value(t, p->name);
    psi_metrics_text_str(t, "\"} ");
    psi_metrics_text_value(t, v);
    psi_metrics_text_str(t, "\n");
}

/* What a family's value is. */
enum family_value { VALUE_CPU_SECONDS, VALUE_WORKING_SET, VALUE_STALL_SECONDS };

/* The families rendered, in order: use, then the PSI counters (cAdvisor's metrics/prometheus.go
 * names and help). */
static const struct family {
    const char *name, *type, *help;
    enum family_value value;
    int resource, kind; /* the stall counted: PSI_CPU or PSI_MEMORY, PSI_SOME or PSI_FULL */
} families[] = {
    {"container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed in seconds.", VALUE_CPU_SECONDS, 0,
     0},
    {"container_memory_working_set_bytes", "gauge", "Current working set in bytes.", VALUE_WORKING_SET, 0, 0},
    {"container_pressure_cpu_waiting_seconds_total", "counter",
     "Total time duration tasks in the container have waited due to CPU congestion.", VALUE_STALL_SECONDS, PSI_CPU,
     PSI_SOME},
    {"container_pressure_cpu_stalled_seconds_total", "counter",
     "Total time duration no tasks in the container could make progress due to CPU congestion.", VALUE_STALL_SECONDS,
     PSI_CPU, PSI_FULL},
    {"container_pressure_memory_waiting_seconds_total", "counter",
     "Total time duration tasks in the container have waited due to memory congestion.", VALUE_STALL_SECONDS,
     PSI_MEMORY, PSI_SOME},
    {"container_pressure_memory_stalled_seconds_total", "counter",
     "Total time duration no tasks in the container could make progress due to memory congestion.", VALUE_STALL_SECONDS,
     PSI_MEMORY, PSI_FULL},
};

/* Pod p's stall total (microseconds) of resource r, kind k at now. */
static double stall_us_at(const struct pod *p, int r, int k, double now)
{
    return p->pressure[r][k].total_us + (now > p->at ? p->percent[r][k] / 100.0 * (now - p->at) * 1e6 : 0);
}

static double family_value(const struct family *f, const struct pod *p, double now)
{
    switch (f->value) {
    case VALUE_CPU_SECONDS: return seconds_at(p, now);
    case VALUE_WORKING_SET: return p->memory;
    case VALUE_STALL_SECONDS: return stall_us_at(p, f->resource, f->kind, now) / 1e6;
    }
    return 0;
}

/* Append family f: every pod on node (all when NULL); the stall counters only of pods with PSI. */
static void family(struct psi_metrics_text *t, const struct podusage *u, const char *node, double now,
                   const struct family *f)
{
    if (u->pressure_only && f->value != VALUE_STALL_SECONDS)
        return;
    bool any = false;
    for (size_t i = 0; i < u->n; i++) {
        const struct pod *p = &u->v[i];
        if ((node && strcmp(node, p->node) != 0) || (f->value == VALUE_STALL_SECONDS && !p->psi))
            continue;
        if (!any)
            psi_metrics_text_family(t, f->name, f->type, f->help);
        any = true;
        series(t, f->name, u->container, p, family_value(f, p, now));
    }
}

char *podusage_render(const struct podusage *u, const char *node, double now, char *text, size_t *len)
{
    struct psi_metrics_text t = {0};
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
        family(&t, u, node, now, &families[f]);
    size_t add = 0;
    char *more = psi_metrics_text_finish(&t, &add);
    if (!more || add == 0) {
        free(more);
        return text;
    }
    size_t have = text ? *len : 0;
    char *out = realloc(text, have + add + 1);
    if (!out) {
        free(more);
        return text;
    }
    memcpy(out + have, more, add + 1);
    *len = have + add;
    free(more);
    return out;
}

size_t podusage_summary(const struct podusage *u, const char *node, double now, struct summary_pod *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < u->n; i++) {
        const struct pod *p = &u->v[i];
        if (strcmp(node, p->node) != 0)
            continue;
        if (k < max) {
            out[k] = (struct summary_pod){.name = p->name,
                                          .ns = p->ns,
                                          .uid = p->uid,
                                          .cpu_cores = p->rate,
                                          .cpu_seconds = seconds_at(p, now),
                                          .memory_bytes = p->memory};
            memcpy(out[k].pressure, p->pressure, sizeof(out[k].pressure));
        }
        k++;
    }
    return k;
}
