/* podusage: plain pods' CPU counters and working sets (see podusage.h). */
#include "hack/sim/podusage.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "serve/metrics.h"

struct pod {
    char *uid, *ns, *name, *node;
    double seconds; /* core-seconds up to at */
    double rate;    /* cores since at */
    double at;
    double memory;
    bool marked;
};

struct podusage {
    struct pod *v;
    size_t n, cap;
};

struct podusage *podusage_new(void)
{
    return calloc(1, sizeof(struct podusage));
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

int podusage_set(struct podusage *u, const struct podusage_pod *pp, double now)
{
    const char *uid = pp->uid, *ns = pp->ns, *name = pp->name, *node = pp->node;
    double cores = pp->cores, memory = pp->memory;
    if (!uid || !*uid || !ns || !*ns || !name || !*name || !node || !*node || !(cores >= 0) || !(memory >= 0) ||
        isinf(cores) || isinf(memory))
        return -1;
    struct pod *p = find(u, uid);
    if (!p) {
        if (BASE_GROW(u->v, u->n + 1, u->cap) < 0)
            return -1;
        p = &u->v[u->n];
        *p = (struct pod){strdup(uid), NULL, NULL, NULL, 0, 0, now, 0, false};
        if (!p->uid)
            return -1;
        u->n++;
    }
    if (set_str(&p->ns, ns) < 0 || set_str(&p->name, name) < 0 || set_str(&p->node, node) < 0)
        return -1;
    if (now > p->at)
        p->seconds += p->rate * (now - p->at);
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

static void series(struct psi_metrics_text *t, const char *metric, const struct pod *p, double v)
{
    psi_metrics_text_str(t, metric);
    psi_metrics_text_str(t, "{container=\"app\",namespace=\"");
    psi_metrics_text_label_value(t, p->ns);
    psi_metrics_text_str(t, "\",node=\"");
    psi_metrics_text_label_value(t, p->node);
    psi_metrics_text_str(t, "\",pod=\"");
    psi_metrics_text_label_value(t, p->name);
    psi_metrics_text_str(t, "\"} ");
    psi_metrics_text_value(t, v);
    psi_metrics_text_str(t, "\n");
}

/* Append one family: every pod on node (all when NULL). */
static void family(struct psi_metrics_text *t, const struct podusage *u, const char *node, double now, bool cpu)
{
    bool any = false;
    for (size_t i = 0; i < u->n; i++) {
        const struct pod *p = &u->v[i];
        if (node && strcmp(node, p->node) != 0)
            continue;
        if (!any)
            psi_metrics_text_family(t, cpu ? "container_cpu_usage_seconds_total" : "container_memory_working_set_bytes",
                                    cpu ? "counter" : "gauge",
                                    cpu ? "Cumulative cpu time consumed in seconds." : "Current working set in bytes.");
        any = true;
        if (cpu)
            series(t, "container_cpu_usage_seconds_total", p, seconds_at(p, now));
        else
            series(t, "container_memory_working_set_bytes", p, p->memory);
    }
}

char *podusage_render(const struct podusage *u, const char *node, double now, char *text, size_t *len)
{
    struct psi_metrics_text t = {0};
    family(&t, u, node, now, true);
    family(&t, u, node, now, false);
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
        if (k < max)
            out[k] = (struct summary_pod){p->name, p->ns, p->uid, p->rate, seconds_at(p, now), p->memory};
        k++;
    }
    return k;
}
