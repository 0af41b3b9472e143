/* usage: the usage query and its answers (see usage.h). */
#include "reconcile/move/usage.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"

/* A name as an exact regex alternative inside a PromQL string: regex metacharacters are
 * escaped with a backslash, which the PromQL string needs doubled. */
static void put_regex_name(struct strbuf *b, const char *name)
{
    for (const char *p = name; *p; p++) {
        if (strchr(".^$*+?()[]{}|\\", *p))
            strbuf_addf(b, "\\\\");
        if (*p == '"')
            strbuf_addf(b, "\\");
        strbuf_addn(b, p, 1);
    }
}

/* The name filter of the refs' pods (vmi: their VMIs), ",label=~\"a|b\"" (no comma when
 * !comma), or nothing when there are too many to list; label="" (no series) when none. */
static void put_filter(struct strbuf *b, bool comma, const char *label, const struct usage_ref *refs, size_t n,
                       bool vmi)
{
    if (n > USAGE_MAX_FILTERED)
        return;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = vmi ? refs[i].vmi : refs[i].pod;
        if (!name)
            continue;
        if (k++)
            strbuf_addf(b, "|");
        else
            strbuf_addf(b, "%s%s=~\"", comma ? "," : "", label);
        put_regex_name(b, name);
    }
    if (k)
        strbuf_addf(b, "\"");
    else
        strbuf_addf(b, "%s%s=\"\"", comma ? "," : "", label);
}

char *usage_query(long window_s, const struct usage_ref *refs, size_t nrefs)
{
    if (window_s < 1)
        window_s = 1;
    struct strbuf b = STRBUF_INIT;
    strbuf_addf(
        &b,
        "label_replace(sum by (node, instance) (rate(node_cpu_seconds_total{mode!~\"idle|iowait|steal\"}[%lds])), "
        "\"psi_usage\", \"node\", \"\", \"\")",
        window_s);
    strbuf_addf(&b,
                " or label_replace(sum by (node) (rate(kubevirt_vmi_cpu_usage_seconds_total[%lds])), "
                "\"psi_usage\", \"vmnode\", \"\", \"\")",
                window_s);
    strbuf_addf(&b, " or label_replace(sum by (namespace, name) (rate(kubevirt_vmi_cpu_usage_seconds_total{");
    put_filter(&b, false, "name", refs, nrefs, true);
    strbuf_addf(&b, "}[%lds])), \"psi_usage\", \"vmi\", \"\", \"\")", window_s);
    strbuf_addf(&b, " or label_replace(sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{container!=\"\","
                    "container!=\"POD\"");
    put_filter(&b, true, "pod", refs, nrefs, false);
    strbuf_addf(&b, "}[%lds])), \"psi_usage\", \"pod\", \"\", \"\")", window_s);
    strbuf_addf(&b, " or label_replace(max by (node, instance) (node_load1), \"psi_usage\", \"load1\", \"\", \"\")");
    strbuf_addf(&b,
                " or label_replace(sum by (node, instance) (rate(node_schedstat_waiting_seconds_total[%lds])), "
                "\"psi_usage\", \"waiting\", \"\", \"\")",
                window_s);
    static const char *const stall[][2] = {{"podcpustall", "cpu"}, {"podmemstall", "memory"}};
    for (size_t k = 0; k < sizeof(stall) / sizeof(stall[0]); k++) {
        strbuf_addf(&b,
                    " or label_replace(100 * max by (namespace, pod) (rate(container_pressure_%s_waiting_seconds_total{"
                    "container!=\"\",container!=\"POD\"",
                    stall[k][1]);
        put_filter(&b, true, "pod", refs, nrefs, false);
        strbuf_addf(&b, "}[%lds])), \"psi_usage\", \"%s\", \"\", \"\")", window_s, stall[k][0]);
    }
    strbuf_addf(&b, " or label_replace(max by (namespace, name) (kubevirt_vmi_dirty_rate_bytes_per_second{");
    put_filter(&b, false, "name", refs, nrefs, true);
    strbuf_addf(&b, "}), \"psi_usage\", \"vmidirty\", \"\", \"\")");
    return strbuf_take(&b);
}

char *usage_memory_query(const struct usage_ref *refs, size_t nrefs)
{
    struct strbuf b = STRBUF_INIT;
    strbuf_addf(&b,
                "label_replace(sum by (node, instance) (node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes), "
                "\"psi_usage\", \"node\", \"\", \"\")");
    strbuf_addf(
        &b, " or label_replace(sum by (node) (kubevirt_vmi_memory_resident_bytes), \"psi_usage\", \"vmnode\", \"\", "
            "\"\")");
    strbuf_addf(&b, " or label_replace(sum by (namespace, name) (kubevirt_vmi_memory_resident_bytes{");
    put_filter(&b, false, "name", refs, nrefs, true);
    strbuf_addf(&b, "}), \"psi_usage\", \"vmi\", \"\", \"\")");
    strbuf_addf(&b, " or label_replace(sum by (namespace, pod) (container_memory_working_set_bytes{container!=\"\","
                    "container!=\"POD\"");
    put_filter(&b, true, "pod", refs, nrefs, false);
    strbuf_addf(&b, "}), \"psi_usage\", \"pod\", \"\", \"\")");
    return strbuf_take(&b);
}

/* Whether series s names ref r: its VMI (namespace, name) when vmi, else its pod (namespace, pod). */
static bool names_ref(const struct psi_prom_series *s, const struct usage_ref *r, bool vmi)
{
    return base_same(vmi ? r->vmi : r->pod, psi_prom_label_get(s, vmi ? "name" : "pod")) &&
           base_same(r->ns, psi_prom_label_get(s, "namespace"));
}

static double value_of(const struct psi_prom_series *s)
{
    return isfinite(s->value) && s->value >= 0 ? s->value : NAN;
}

void usage_fill(const struct psi_prom_vector *v, const struct psi_node_desc *nodes, size_t nnodes, double *node_usage,
                const struct usage_ref *refs, size_t nrefs, double *ref_usage)
{
    bool have_node_metric = false, have_vm_metric = false;
    double *vm_sum = calloc(nnodes ? nnodes : 1, sizeof(double));
    double *pod_usage = calloc(nrefs ? nrefs : 1, sizeof(double));
    for (size_t i = 0; i < nnodes; i++)
        node_usage[i] = NAN;
    for (size_t j = 0; j < nrefs; j++) {
        ref_usage[j] = NAN;
        if (pod_usage)
            pod_usage[j] = NAN;
    }
    for (size_t k = 0; v && k < v->n; k++) {
        const struct psi_prom_series *s = &v->series[k];
        const char *tag = psi_prom_label_get(s, "psi_usage");
        double val = value_of(s);
        if (base_same(tag, "node")) {
            have_node_metric = true;
            long i = psi_prom_match_node(s, nodes, nnodes);
            if (i >= 0 && !isnan(val))
                node_usage[i] = isnan(node_usage[i]) ? val : node_usage[i] + val;
        } else if (base_same(tag, "vmnode")) {
            have_vm_metric = true;
            long i = psi_prom_match_node(s, nodes, nnodes);
            if (i >= 0 && !isnan(val) && vm_sum)
                vm_sum[i] += val;
        } else if (base_same(tag, "vmi")) {
            have_vm_metric = true;
            for (size_t j = 0; j < nrefs; j++)
                if (names_ref(s, &refs[j], true))
                    ref_usage[j] = val;
        } else if (base_same(tag, "pod")) {
            for (size_t j = 0; j < nrefs && pod_usage; j++)
                if (names_ref(s, &refs[j], false))
                    pod_usage[j] = val;
        }
    }
    for (size_t j = 0; j < nrefs && pod_usage; j++)
        if (isnan(ref_usage[j]))
            ref_usage[j] = pod_usage[j];
    if (!have_node_metric && have_vm_metric && vm_sum)
        for (size_t i = 0; i < nnodes; i++)
            node_usage[i] = vm_sum[i];
    free(vm_sum);
    free(pod_usage);
}

void usage_fill_runqueue(const struct psi_prom_vector *v, const struct psi_node_desc *nodes, size_t nnodes,
                         double *load1, double *waiting)
{
    for (size_t i = 0; i < nnodes; i++)
        load1[i] = waiting[i] = NAN;
    for (size_t k = 0; v && k < v->n; k++) {
        const struct psi_prom_series *s = &v->series[k];
        const char *tag = psi_prom_label_get(s, "psi_usage");
        double *out = base_same(tag, "load1") ? load1 : base_same(tag, "waiting") ? waiting : NULL;
        double val = value_of(s);
        long i = out ? psi_prom_match_node(s, nodes, nnodes) : -1;
        if (i >= 0 && isfinite(val) && val >= 0)
            out[i] = isnan(out[i]) ? val : out[i] + val;
    }
}

/* A stall in percent as read: 0..100, else NAN. */
static double stall_of(double v)
{
    return isfinite(v) && v >= 0 && v <= 100 ? v : NAN;
}

void usage_fill_stall(const struct psi_prom_vector *v, const struct usage_ref *refs, size_t nrefs, double *cpu_stall,
                      double *mem_stall)
{
    for (size_t j = 0; j < nrefs; j++)
        cpu_stall[j] = mem_stall[j] = NAN;
    for (size_t k = 0; v && k < v->n; k++) {
        const struct psi_prom_series *s = &v->series[k];
        const char *tag = psi_prom_label_get(s, "psi_usage");
        double *out = base_same(tag, "podcpustall") ? cpu_stall : base_same(tag, "podmemstall") ? mem_stall : NULL;
        if (!out)
            continue;
        for (size_t j = 0; j < nrefs; j++)
            if (names_ref(s, &refs[j], false))
                out[j] = stall_of(s->value);
    }
}

void usage_fill_dirty(const struct psi_prom_vector *v, const struct usage_ref *refs, size_t nrefs, double *dirty_bps)
{
    for (size_t j = 0; j < nrefs; j++)
        dirty_bps[j] = NAN;
    for (size_t k = 0; v && k < v->n; k++) {
        const struct psi_prom_series *s = &v->series[k];
        if (!base_same(psi_prom_label_get(s, "psi_usage"), "vmidirty"))
            continue;
        for (size_t j = 0; j < nrefs; j++)
            if (names_ref(s, &refs[j], true))
                dirty_bps[j] = value_of(s);
    }
}

/* stats.<resource>.psi.some.<avg> of a Summary's pod (percent), NAN when absent or invalid. */
static double pod_stall(const cJSON *stats, const char *resource, const char *avg)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(stats, resource);
    const cJSON *some = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "psi"), "some");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(some, avg);
    return cJSON_IsNumber(v) ? stall_of(v->valuedouble) : NAN;
}

static double nano_cores(const cJSON *stats)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(stats, "cpu"), "usageNanoCores");
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble / 1e9 : NAN;
}

static double working_set(const cJSON *stats)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(stats, "memory"), "workingSetBytes");
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : NAN;
}

/* Call on(pod, j, ctx) for each pod of a Summary that refs[j] names. */
static void each_ref_pod(const cJSON *summary, const struct usage_ref *refs, size_t nrefs,
                         void (*on)(const cJSON *pod, size_t j, void *ctx), void *ctx)
{
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive(summary, "pods")) {
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(pod, "podRef");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(ref, "name");
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(ref, "namespace");
        if (!cJSON_IsString(name) || !cJSON_IsString(ns))
            continue;
        for (size_t j = 0; j < nrefs; j++)
            if (base_same(refs[j].pod, name->valuestring) && base_same(refs[j].ns, ns->valuestring))
                on(pod, j, ctx);
    }
}

/* usage_from_summary and usage_memory_from_summary: one reading of the node and its pods. */
struct reading_ctx {
    double (*reading)(const cJSON *);
    double *ref_usage;
};

static void on_reading(const cJSON *pod, size_t j, void *ctx)
{
    struct reading_ctx *r = ctx;
    r->ref_usage[j] = r->reading(pod);
}

static void from_summary(const cJSON *summary, double (*reading)(const cJSON *), double *node_usage,
                         const struct usage_ref *refs, size_t nrefs, double *ref_usage)
{
    *node_usage = reading(cJSON_GetObjectItemCaseSensitive(summary, "node"));
    struct reading_ctx r = {reading, ref_usage};
    each_ref_pod(summary, refs, nrefs, on_reading, &r);
}

struct stall_ctx {
    const char *avg;
    double *cpu, *mem;
};

static void on_stall(const cJSON *pod, size_t j, void *ctx)
{
    struct stall_ctx *s = ctx;
    s->cpu[j] = pod_stall(pod, "cpu", s->avg);
    s->mem[j] = pod_stall(pod, "memory", s->avg);
}

void usage_stall_from_summary(const cJSON *summary, const char *avg, const struct usage_ref *refs, size_t nrefs,
                              double *cpu_stall, double *mem_stall)
{
    struct stall_ctx s = {avg, cpu_stall, mem_stall};
    each_ref_pod(summary, refs, nrefs, on_stall, &s);
}

void usage_from_summary(const cJSON *summary, double *node_usage, const struct usage_ref *refs, size_t nrefs,
                        double *ref_usage)
{
    from_summary(summary, nano_cores, node_usage, refs, nrefs, ref_usage);
}

void usage_memory_from_summary(const cJSON *summary, double *node_used, const struct usage_ref *refs, size_t nrefs,
                               double *ref_used)
{
    from_summary(summary, working_set, node_used, refs, nrefs, ref_used);
}
