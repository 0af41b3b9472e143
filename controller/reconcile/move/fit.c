/* fit: whether a workload fits on a node, and the VMI facts the plan reads (see fit.h). */
#include "reconcile/move/fit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/jx.h"

bool rebalance_tolerates(const cJSON *tolerations, const cJSON *taint)
{
    const char *key = jx_at_str(taint, "key"), *value = jx_at_str(taint, "value"), *effect = jx_at_str(taint, "effect");
    const cJSON *t;
    cJSON_ArrayForEach (t, tolerations) {
        const char *tk = jx_at_str(t, "key"), *tv = jx_at_str(t, "value"), *te = jx_at_str(t, "effect"),
                   *op = jx_at_str(t, "operator");
        if (te && *te && !jx_eq(te, effect))
            continue;
        bool exists = jx_eq(op, "Exists");
        if (!tk || !*tk) {
            if (exists)
                return true; /* empty key with Exists tolerates everything */
            continue;
        }
        if (!jx_eq(tk, key))
            continue;
        if (exists || strcmp(tv ? tv : "", value ? value : "") == 0)
            return true;
    }
    return false;
}

static bool parse_long(const char *s, long long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end)
        return false;
    *out = v;
    return true;
}

/* One node selector requirement against a value (NULL: the label/field is absent). */
static bool requirement_matches(const cJSON *req, const char *value)
{
    const char *op = jx_at_str(req, "operator");
    const cJSON *values = jx_at(req, "values"), *v;
    if (jx_eq(op, "Exists"))
        return value != NULL;
    if (jx_eq(op, "DoesNotExist"))
        return value == NULL;
    if (jx_eq(op, "In") || jx_eq(op, "NotIn")) {
        bool in = false;
        cJSON_ArrayForEach (v, values)
            if (value && cJSON_IsString(v) && strcmp(v->valuestring, value) == 0)
                in = true;
        return jx_eq(op, "In") ? in : !in;
    }
    if (jx_eq(op, "Gt") || jx_eq(op, "Lt")) {
        long long have, want;
        const cJSON *first = cJSON_GetArrayItem(values, 0);
        if (!parse_long(value, &have) || !cJSON_IsString(first) || !parse_long(first->valuestring, &want))
            return false;
        return jx_eq(op, "Gt") ? have > want : have < want;
    }
    return false;
}

static bool term_matches(const cJSON *term, const struct nodelabels *labels, const char *node_name)
{
    const cJSON *exprs = jx_at(term, "matchExpressions"), *fields = jx_at(term, "matchFields"), *r;
    if (cJSON_GetArraySize(exprs) == 0 && cJSON_GetArraySize(fields) == 0)
        return false; /* an empty term matches no node */
    cJSON_ArrayForEach (r, exprs)
        if (!requirement_matches(r, nodelabels_get(labels, jx_at_str(r, "key") ? jx_at_str(r, "key") : "")))
            return false;
    cJSON_ArrayForEach (r, fields) {
        const char *key = jx_at_str(r, "key");
        if (!requirement_matches(r, jx_eq(key, "metadata.name") ? node_name : NULL))
            return false;
    }
    return true;
}

bool rebalance_affinity_matches(const cJSON *affinity, const struct nodelabels *labels, const char *node_name)
{
    const cJSON *req = jx_at(jx_at(affinity, "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution");
    if (!req || cJSON_IsNull(req))
        return true;
    const cJSON *term;
    cJSON_ArrayForEach (term, jx_at(req, "nodeSelectorTerms"))
        if (term_matches(term, labels, node_name))
            return true;
    return false;
}

/* why (len bytes) formatted from fmt and returned; with why NULL, nothing is formatted and a
 * static empty string stands for the refusal. */
static const char *refuse(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *refuse(char *why, size_t len, const char *fmt, ...)
{
    if (!why)
        return "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return why;
}

/* rebalance_fit, formatting why only when why is not NULL. */
static const char *fit_refusal(const struct rebalance_candidate *c, const struct rebalance_node *n, char *why,
                               size_t len)
{
    if (n->unschedulable) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "key", "node.kubernetes.io/unschedulable");
        cJSON_AddStringToObject(t, "effect", "NoSchedule");
        bool ok = t && rebalance_tolerates(c->tolerations, t);
        cJSON_Delete(t);
        if (!ok)
            return refuse(why, len, "cordoned");
    }
    if (!isnan(n->alloc_cpu) && !isnan(n->req_cpu) && n->req_cpu + c->req_cpu > n->alloc_cpu + 1e-9)
        return refuse(why, len, "insufficient cpu (%.2f of %.2f cores requested, the pod wants %.2f)", n->req_cpu,
                      n->alloc_cpu, c->req_cpu);
    if (!isnan(n->alloc_memory) && !isnan(n->req_memory) && n->req_memory + c->req_memory > n->alloc_memory + 0.5)
        return refuse(why, len, "insufficient memory (%.0f Mi of %.0f Mi requested, the pod wants %.0f Mi)",
                      n->req_memory / 1048576.0, n->alloc_memory / 1048576.0, c->req_memory / 1048576.0);
    double mem = isnan(c->mem_used) ? c->req_memory : c->mem_used;
    if (!isnan(n->alloc_memory) && !isnan(n->mem_used) && !isnan(mem) && n->mem_used + mem > n->alloc_memory)
        return refuse(why, len, "insufficient memory in use (%.0f Mi of %.0f Mi used, the pod uses %.0f Mi)",
                      n->mem_used / 1048576.0, n->alloc_memory / 1048576.0, mem / 1048576.0);
    if (!isnan(n->alloc_pods) && !isnan(n->req_pods) && n->req_pods + 1 > n->alloc_pods + 1e-9)
        return refuse(why, len, "too many pods");
    const cJSON *sel;
    cJSON_ArrayForEach (sel, c->node_selector) {
        const char *have = nodelabels_get(n->labels, sel->string);
        if (!cJSON_IsString(sel) || !have || strcmp(have, sel->valuestring) != 0)
            return refuse(why, len, "node selector %s does not match", sel->string);
    }
    if (!rebalance_affinity_matches(c->affinity, n->labels, n->name))
        return refuse(why, len, "required node affinity does not match");
    const cJSON *t;
    cJSON_ArrayForEach (t, n->taints) {
        const char *effect = jx_at_str(t, "effect");
        if (!jx_eq(effect, "NoSchedule") && !jx_eq(effect, "NoExecute"))
            continue;
        if (!rebalance_tolerates(c->tolerations, t))
            return refuse(why, len, "untolerated taint %s:%s", jx_at_str(t, "key") ? jx_at_str(t, "key") : "", effect);
    }
    return NULL;
}

const char *rebalance_fit(const struct rebalance_candidate *c, const struct rebalance_node *n, char *why, size_t len)
{
    return fit_refusal(c, n, why, len);
}

bool rebalance_fits(const struct rebalance_candidate *c, const struct rebalance_node *n)
{
    return fit_refusal(c, n, NULL, 0) == NULL;
}

double rebalance_vmi_vcpus(const cJSON *vmi)
{
    const cJSON *cpu = jx_at(jx_at(jx_at(vmi, "spec"), "domain"), "cpu");
    if (!cJSON_IsObject(cpu))
        return NAN;
    double v = 1;
    static const char *const keys[] = {"cores", "sockets", "threads"};
    for (int i = 0; i < 3; i++) {
        const cJSON *k = jx_at(cpu, keys[i]);
        if (!k)
            continue;
        if (!cJSON_IsNumber(k) || k->valuedouble < 1 || k->valuedouble > 1024)
            return NAN;
        v *= k->valuedouble;
    }
    return v;
}

const char *rebalance_vmi_check(const cJSON *vmi)
{
    const cJSON *c;
    cJSON_ArrayForEach (c, jx_at(jx_at(vmi, "status"), "conditions"))
        if (jx_eq(jx_at_str(c, "type"), "LiveMigratable") && jx_eq(jx_at_str(c, "status"), "False"))
            return "not live-migratable";
    return NULL;
}
