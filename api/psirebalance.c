/* api_spec / api_psirebalance: PsiRebalance spec types, defaults, decode, validate, encode. */
#include "api/psirebalance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/duration.h"
#include "api/json.h"
#include "api/names.h"
#include "api/wildcard.h"

static const char *const source_names[] = {"Prometheus", "Kubelet"};
static const char *const resource_names[] = {"cpu", "memory", "io"};
static const char *const effect_names[] = {"PreferNoSchedule", "NoSchedule"};
static const char *const mode_names[] = {"Disabled", "DryRun", "Automatic"};
static const char *const method_names[] = {"Evict", "Migrate", "Auto"};
static const char *const stall_names[] = {"some", "full"};
static const char *const deletion_names[] = {"Retain", "Delete"};

const char *api_source_name(enum api_source v)
{
    return source_names[v];
}

const char *api_resource_name(enum api_resource v)
{
    return resource_names[v];
}

const char *api_taint_effect_name(enum api_taint_effect v)
{
    return effect_names[v];
}

const char *api_eviction_mode_name(enum api_eviction_mode v)
{
    return mode_names[v];
}

const char *api_eviction_method_name(enum api_eviction_method v)
{
    return method_names[v];
}

const char *api_stall_name(enum api_stall v)
{
    return stall_names[v];
}

const char *api_deletion_policy_name(enum api_deletion_policy v)
{
    return deletion_names[v];
}

/* ---- defaults: keep in step with the default: values of the CRD (tests/unit/api/test_drift.c
 * fails when they part) ---- */

#define MS_S 1000LL
#define MS_M (60 * MS_S)
#define MS_H (60 * MS_M)

int api_spec_defaults(struct api_spec *s)
{
    static const char *const excluded[] = {"kube-*", "openshift-*"};
    api_spec_free(s);
    bool ok = api_selector_add_label(&s->node_selector, "node-role.kubernetes.io/worker", "") == 0;

    s->machine_config.enabled = false;
    s->machine_config.schedstats = false;
    s->machine_config.deletion_policy = API_DELETION_RETAIN;

    s->metrics.source = API_SOURCE_PROMETHEUS;
    ok = ok && (s->metrics.prometheus.url = strdup("https://thanos-querier.openshift-monitoring.svc:9091"));
    s->metrics.prometheus.bearer_token_file = NULL;
    s->metrics.prometheus.ca_file = NULL;
    s->metrics.prometheus.send_token_over_plain_http = false;
    s->metrics.interval_ms = 30 * MS_S;
    s->metrics.window_ms = 1 * MS_M;

    s->pressure.resource = API_RESOURCE_CPU;
    s->pressure.stall = API_STALL_SOME;
    s->pressure.taint_above_percent = 25;
    s->pressure.untaint_below_percent = 15;
    s->pressure.sustain_ms = 1 * MS_M;
    s->pressure.max_tainted_percent = 50;
    s->pressure.has_utilization_floor = false;
    s->pressure.utilization_floor_percent = 0;

    ok = ok && (s->taint.key = strdup("rebalance.psi.dev/pressure"));
    s->taint.effect = API_EFFECT_PREFER_NO_SCHEDULE;

    s->eviction.mode = API_MODE_DRY_RUN;
    s->eviction.method = API_METHOD_AUTO;
    s->eviction.evict_above_percent = 40;
    s->eviction.has_relief_target = false;
    s->eviction.relief_target_percent = 0;
    ok = ok && api_selector_add_label(&s->eviction.pod_selector, "kubevirt.io", "virt-launcher") == 0;
    ok = ok && api_json_strv_dup((char *const *)excluded, 2, &s->eviction.excluded_namespaces) == 0;
    s->eviction.nexcluded_namespaces = ok ? 2 : 0;
    s->eviction.max_per_node = 1;
    s->eviction.has_max_per_namespace = false;
    s->eviction.max_per_namespace = 0;
    s->eviction.max_total = 2;
    s->eviction.max_in_flight_migrations = 2;
    s->eviction.max_moves_per_workload = 2;
    s->eviction.max_moves_per_hour = 20;
    s->eviction.cooldown.initial_ms = 10 * MS_M;
    s->eviction.cooldown.max_ms = 2 * MS_H;
    s->eviction.cooldown.history_ms = 24 * MS_H;
    return ok ? 0 : -1;
}

void api_spec_free(struct api_spec *s)
{
    if (!s)
        return;
    api_selector_free(&s->node_selector);
    api_json_strv_free(s->machine_config.roles, s->machine_config.nroles);
    free(s->metrics.prometheus.url);
    free(s->metrics.prometheus.bearer_token_file);
    free(s->metrics.prometheus.ca_file);
    free(s->taint.key);
    api_selector_free(&s->eviction.pod_selector);
    api_json_strv_free(s->eviction.excluded_namespaces, s->eviction.nexcluded_namespaces);
    api_json_strv_free(s->eviction.resources, s->eviction.nresources);
    memset(s, 0, sizeof(*s));
}

/* ---- decode ---- */

/* An enum field into an enum lvalue through an int. */
#define DECODE_ENUM(obj, path, key, names, field, errs)                                           \
    do {                                                                                          \
        int v_ = (int)(field);                                                                    \
        api_json_enum(obj, path, key, names, (int)(sizeof(names) / sizeof(names[0])), &v_, errs); \
        (field) = v_;                                                                             \
    } while (0)

/* bearerTokenFile naming the operator's own token (the default of old CRDs, stored in old
 * objects) means unset: the pressure-reading ServiceAccount's token; warn about it. */
static void legacy_token_file(struct api_spec *s, struct api_errors *warns)
{
    char *f = s->metrics.prometheus.bearer_token_file;
    if (!f || strcmp(f, API_LEGACY_TOKEN_FILE) != 0)
        return;
    free(f);
    s->metrics.prometheus.bearer_token_file = NULL;
    api_errors_add(warns, "spec.metrics.prometheus.bearerTokenFile",
                   "%s is the operator's own token, which is never sent to Prometheus: the token of the "
                   "pressure-reading ServiceAccount is sent instead (remove the field)",
                   API_LEGACY_TOKEN_FILE);
}

/* The object at obj[key] (NULL when absent), with its unknown fields warned about. */
static const cJSON *section(const cJSON *obj, const char *path, const char *key, const char *const *known,
                            char *subpath, struct api_errors *errs, struct api_errors *warns)
{
    const cJSON *o;
    api_json_path(subpath, path, key);
    if (api_json_object(obj, path, key, &o, errs) < 0 || !o)
        return NULL;
    api_json_unknown(o, subpath, known, warns);
    return o;
}

static void decode_selector(const cJSON *obj, const char *path, const char *key, struct api_selector *sel,
                            struct api_errors *errs, struct api_errors *warns)
{
    const cJSON *o;
    char p[API_JSON_PATH_MAX];
    if (api_json_object(obj, path, key, &o, errs) == 0 && o)
        api_selector_decode(o, api_json_path(p, path, key), sel, errs, warns);
}

/* spec.machineConfig into s (when present). */
static void decode_machine_config(const cJSON *json, const char *sp, struct api_spec *s, struct api_errors *errs,
                                  struct api_errors *warns)
{
    static const char *const mc_known[] = {"enabled", "roles", "schedstats", "deletionPolicy", NULL};
    char p[API_JSON_PATH_MAX];
    const cJSON *o;
    if ((o = section(json, sp, "machineConfig", mc_known, p, errs, warns))) {
        api_json_bool(o, p, "enabled", &s->machine_config.enabled, errs);
        api_json_strv(o, p, "roles", &s->machine_config.roles, &s->machine_config.nroles, errs);
        api_json_bool(o, p, "schedstats", &s->machine_config.schedstats, errs);
        DECODE_ENUM(o, p, "deletionPolicy", deletion_names, s->machine_config.deletion_policy, errs);
    }
}

/* spec.metrics and its prometheus section into s (when present). */
static void decode_metrics(const cJSON *json, const char *sp, struct api_spec *s, struct api_errors *errs,
                           struct api_errors *warns)
{
    static const char *const metrics_known[] = {"source", "prometheus", "interval", "window", NULL};
    static const char *const prom_known[] = {"url", "bearerTokenFile", "caFile", "sendTokenOverPlainHTTP", NULL};
    char p[API_JSON_PATH_MAX], pp[API_JSON_PATH_MAX];
    const cJSON *o;
    if ((o = section(json, sp, "metrics", metrics_known, p, errs, warns))) {
        DECODE_ENUM(o, p, "source", source_names, s->metrics.source, errs);
        const cJSON *prom = section(o, p, "prometheus", prom_known, pp, errs, warns);
        if (prom) {
            api_json_string(prom, pp, "url", &s->metrics.prometheus.url, errs);
            api_json_string(prom, pp, "bearerTokenFile", &s->metrics.prometheus.bearer_token_file, errs);
            api_json_string(prom, pp, "caFile", &s->metrics.prometheus.ca_file, errs);
            api_json_bool(prom, pp, "sendTokenOverPlainHTTP", &s->metrics.prometheus.send_token_over_plain_http, errs);
            legacy_token_file(s, warns);
        }
        api_json_duration(o, p, "interval", &s->metrics.interval_ms, errs);
        api_json_duration(o, p, "window", &s->metrics.window_ms, errs);
    }
}

/* spec.pressure into s (when present). */
static void decode_pressure(const cJSON *json, const char *sp, struct api_spec *s, struct api_errors *errs,
                            struct api_errors *warns)
{
    static const char *const pressure_known[] = {"resource",
                                                 "stall",
                                                 "taintAbovePercent",
                                                 "untaintBelowPercent",
                                                 "sustain",
                                                 "maxTaintedPercent",
                                                 "utilizationFloorPercent",
                                                 NULL};
    char p[API_JSON_PATH_MAX];
    const cJSON *o;
    if ((o = section(json, sp, "pressure", pressure_known, p, errs, warns))) {
        DECODE_ENUM(o, p, "resource", resource_names, s->pressure.resource, errs);
        DECODE_ENUM(o, p, "stall", stall_names, s->pressure.stall, errs);
        api_json_int(o, p, "taintAbovePercent", &s->pressure.taint_above_percent, errs);
        api_json_int(o, p, "untaintBelowPercent", &s->pressure.untaint_below_percent, errs);
        api_json_duration(o, p, "sustain", &s->pressure.sustain_ms, errs);
        api_json_int(o, p, "maxTaintedPercent", &s->pressure.max_tainted_percent, errs);
        if (api_json_get(o, "utilizationFloorPercent") &&
            api_json_int(o, p, "utilizationFloorPercent", &s->pressure.utilization_floor_percent, errs) == 0)
            s->pressure.has_utilization_floor = true;
    }
}

/* spec.taint into s (when present). */
static void decode_taint(const cJSON *json, const char *sp, struct api_spec *s, struct api_errors *errs,
                         struct api_errors *warns)
{
    static const char *const taint_known[] = {"key", "effect", NULL};
    char p[API_JSON_PATH_MAX];
    const cJSON *o;
    if ((o = section(json, sp, "taint", taint_known, p, errs, warns))) {
        api_json_string(o, p, "key", &s->taint.key, errs);
        DECODE_ENUM(o, p, "effect", effect_names, s->taint.effect, errs);
    }
}

/* spec.eviction and its cooldown section into s (when present). */
static void decode_eviction(const cJSON *json, const char *sp, struct api_spec *s, struct api_errors *errs,
                            struct api_errors *warns)
{
    static const char *const eviction_known[] = {"mode",
                                                 "method",
                                                 "evictAbovePercent",
                                                 "reliefTargetPercent",
                                                 "resources",
                                                 "podSelector",
                                                 "excludedNamespaces",
                                                 "maxPerNode",
                                                 "maxPerNamespace",
                                                 "maxTotal",
                                                 "maxInFlightMigrations",
                                                 "maxMovesPerWorkload",
                                                 "maxMovesPerHour",
                                                 "allowVMRestart",
                                                 "cooldown",
                                                 NULL};
    static const char *const cooldown_known[] = {"initial", "max", "history", NULL};
    char p[API_JSON_PATH_MAX], pp[API_JSON_PATH_MAX];
    const cJSON *o;
    if ((o = section(json, sp, "eviction", eviction_known, p, errs, warns))) {
        DECODE_ENUM(o, p, "mode", mode_names, s->eviction.mode, errs);
        DECODE_ENUM(o, p, "method", method_names, s->eviction.method, errs);
        api_json_int(o, p, "evictAbovePercent", &s->eviction.evict_above_percent, errs);
        if (api_json_get(o, "reliefTargetPercent") &&
            api_json_int(o, p, "reliefTargetPercent", &s->eviction.relief_target_percent, errs) == 0)
            s->eviction.has_relief_target = true;
        api_json_strv(o, p, "resources", &s->eviction.resources, &s->eviction.nresources, errs);
        decode_selector(o, p, "podSelector", &s->eviction.pod_selector, errs, warns);
        api_json_strv(o, p, "excludedNamespaces", &s->eviction.excluded_namespaces, &s->eviction.nexcluded_namespaces,
                      errs);
        api_json_int(o, p, "maxPerNode", &s->eviction.max_per_node, errs);
        if (api_json_get(o, "maxPerNamespace") &&
            api_json_int(o, p, "maxPerNamespace", &s->eviction.max_per_namespace, errs) == 0)
            s->eviction.has_max_per_namespace = true;
        api_json_int(o, p, "maxTotal", &s->eviction.max_total, errs);
        api_json_int(o, p, "maxInFlightMigrations", &s->eviction.max_in_flight_migrations, errs);
        api_json_int(o, p, "maxMovesPerWorkload", &s->eviction.max_moves_per_workload, errs);
        api_json_int(o, p, "maxMovesPerHour", &s->eviction.max_moves_per_hour, errs);
        api_json_bool(o, p, "allowVMRestart", &s->eviction.allow_vm_restart, errs);
        const cJSON *cd = section(o, p, "cooldown", cooldown_known, pp, errs, warns);
        if (cd) {
            api_json_duration(cd, pp, "initial", &s->eviction.cooldown.initial_ms, errs);
            api_json_duration(cd, pp, "max", &s->eviction.cooldown.max_ms, errs);
            api_json_duration(cd, pp, "history", &s->eviction.cooldown.history_ms, errs);
        }
    }
}

int api_spec_decode(const cJSON *json, struct api_spec *s, struct api_errors *errs, struct api_errors *warns)
{
    static const char *const spec_known[] = {"nodeSelector", "machineConfig", "metrics", "pressure",
                                             "taint",        "eviction",      NULL};
    size_t before = errs ? errs->n : 0;
    if (api_spec_defaults(s) < 0)
        return api_errors_add(errs, "spec", "out of memory");
    if (!json)
        return 0;
    if (!cJSON_IsObject(json))
        return api_errors_add(errs, "spec", "must be of type object");
    const char *sp = "spec";
    api_json_unknown(json, sp, spec_known, warns);
    decode_selector(json, sp, "nodeSelector", &s->node_selector, errs, warns);
    decode_machine_config(json, sp, s, errs, warns);
    decode_metrics(json, sp, s, errs, warns);
    decode_pressure(json, sp, s, errs, warns);
    decode_taint(json, sp, s, errs, warns);
    decode_eviction(json, sp, s, errs, warns);
    return errs && errs->n > before ? -1 : 0;
}

/* ---- validate ---- */

static int check_range(const char *field, int64_t v, int64_t min, int64_t max, struct api_errors *errs)
{
    if (v < min || v > max)
        return api_errors_add(errs, field, "must be between %lld and %lld, got %lld", (long long)min, (long long)max,
                              (long long)v);
    return 0;
}

/* A level a pressure must fall below: 1..99 (0 could never be met: a pressure is never below 0). */
static int check_below_level(const char *field, int64_t v, struct api_errors *errs)
{
    if (v == 0)
        return api_errors_add(errs, field, "must be at least 1: a pressure is never below 0, so 0 would never be met");
    return check_range(field, v, 1, 99, errs);
}

static int check_duration(const char *field, int64_t ms, int64_t min, int64_t max, struct api_errors *errs)
{
    if (ms < min || ms > max) {
        char a[32], b[32], c[32];
        return api_errors_add(errs, field, "must be between %s and %s, got %s", api_duration_format(min, a, sizeof(a)),
                              api_duration_format(max, b, sizeof(b)), api_duration_format(ms, c, sizeof(c)));
    }
    return 0;
}

/* A list of strings: at most max items, each checked by check (NULL-returning when fine), no
 * duplicates (reported at the second occurrence, as the API server does). */
static int check_set(const char *field, char *const *v, size_t n, size_t max, const char *(*check)(const char *),
                     const char *what, struct api_errors *errs)
{
    int rc = 0;
    char p[API_JSON_PATH_MAX];
    if (n > max)
        rc = api_errors_add(errs, field, "must have at most %zu items, has %zu", max, n);
    for (size_t i = 0; i < n; i++) {
        const char *why = check(v[i]);
        if (why)
            rc = api_errors_add(errs, api_json_index(p, field, (int)i), "'%s' is not %s: %s", v[i], what, why);
        for (size_t k = 0; k < i; k++) {
            if (strcmp(v[k], v[i]) == 0) {
                rc = api_errors_add(errs, api_json_index(p, field, (int)i), "duplicate value '%s'", v[i]);
                break;
            }
        }
    }
    return rc;
}

/* cpu or memory: the resources with a per-workload demand (io has none). */
static const char *check_balanced(const char *r)
{
    if (strcmp(r, "cpu") == 0 || strcmp(r, "memory") == 0)
        return NULL;
    return "supported values: \"cpu\", \"memory\"";
}

/* The CRD's URL pattern ^https?://[^\s/?#]+(/[^\s?#]*)?$ and length: the operator appends
 * /api/v1/query to the URL, so a query (?) or fragment (#) would end up before that path. */
static const char *check_url(const char *u)
{
    if (strlen(u) > 2048)
        return "must be at most 2048 characters";
    const char *p = u;
    if (strncmp(p, "https://", 8) == 0)
        p += 8;
    else if (strncmp(p, "http://", 7) == 0)
        p += 7;
    else
        return "must be an http:// or https:// URL";
    size_t host = strcspn(p, " \t\r\n\f\v/?#");
    if (host == 0)
        return "must name a host after the scheme";
    if (p[strcspn(p, " \t\r\n\f\v")] != '\0')
        return "must not contain white space";
    if (strpbrk(p, "?#"))
        return "must not carry a query (?) or fragment (#): /api/v1/query is appended to it";
    return NULL;
}

/* ^(/.*)?$ (or ^/.*$ when !empty_ok) and at most 4096 characters. */
static const char *check_file(const char *f, bool empty_ok)
{
    if (strlen(f) > 4096)
        return "must be at most 4096 characters";
    if (!*f && empty_ok)
        return NULL;
    if (f[0] != '/' || strchr(f, '\n'))
        return "must be an absolute path";
    return NULL;
}

/* Taint keys Kubernetes components own: prefix kubernetes.io, k8s.io or a subdomain of them. */
static bool reserved_taint_key(const char *key)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return false;
    size_t n = (size_t)(slash - key);
    static const char *const domains[] = {"kubernetes.io", "k8s.io"};
    for (int i = 0; i < 2; i++) {
        size_t d = strlen(domains[i]);
        if (n == d && strncmp(key, domains[i], d) == 0)
            return true;
        if (n > d && key[n - d - 1] == '.' && strncmp(key + n - d, domains[i], d) == 0)
            return true;
    }
    return false;
}

/* True when errs names none of the fields (NULL-terminated): a cross-field rule may run. */
static bool fields_ok(const struct api_errors *errs, const char *const *fields)
{
    for (; *fields; fields++)
        if (api_errors_any_under(errs, *fields))
            return false;
    return true;
}

#define FIELDS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* spec.machineConfig: role names (deprecated, still held to the CRD's rules). */
static void validate_machine_config(const struct api_spec *s, struct api_errors *errs)
{
    check_set("spec.machineConfig.roles", s->machine_config.roles, s->machine_config.nroles, 16,
              api_names_check_dns_label, "a role name", errs);
}

/* spec.metrics: the Prometheus URL and files, interval and window. */
static void validate_metrics(const struct api_spec *s, struct api_errors *errs)
{
    const char *why;
    const char *url = s->metrics.prometheus.url;
    if (url && (why = check_url(url)))
        api_errors_add(errs, "spec.metrics.prometheus.url", "'%s' %s", url, why);
    if (!url && s->metrics.source == API_SOURCE_PROMETHEUS)
        api_errors_add(errs, "spec.metrics.prometheus", "is required when source is Prometheus");
    if (s->metrics.prometheus.bearer_token_file && (why = check_file(s->metrics.prometheus.bearer_token_file, true)))
        api_errors_add(errs, "spec.metrics.prometheus.bearerTokenFile", "%s", why);
    if (s->metrics.prometheus.ca_file && (why = check_file(s->metrics.prometheus.ca_file, false)))
        api_errors_add(errs, "spec.metrics.prometheus.caFile", "%s", why);
    check_duration("spec.metrics.interval", s->metrics.interval_ms, 5 * MS_S, MS_H, errs);
    check_duration("spec.metrics.window", s->metrics.window_ms, 10 * MS_S, MS_H, errs);
    if (fields_ok(errs, FIELDS("spec.metrics.interval", "spec.metrics.window")) &&
        s->metrics.window_ms < s->metrics.interval_ms) {
        char b[32];
        api_errors_add(errs, "spec.metrics.window",
                       "must be at least interval (%s), so that no stall between two "
                       "samples goes unseen",
                       api_duration_format(s->metrics.interval_ms, b, sizeof(b)));
    }
}

/* spec.pressure: thresholds, sustain, floor, and the stall kind the resource has. */
static void validate_pressure(const struct api_spec *s, struct api_errors *errs)
{
    check_range("spec.pressure.taintAbovePercent", s->pressure.taint_above_percent, 1, 100, errs);
    check_below_level("spec.pressure.untaintBelowPercent", s->pressure.untaint_below_percent, errs);
    check_duration("spec.pressure.sustain", s->pressure.sustain_ms, 0, MS_H, errs);
    check_range("spec.pressure.maxTaintedPercent", s->pressure.max_tainted_percent, 0, 99, errs);
    if (s->pressure.has_utilization_floor) {
        check_range("spec.pressure.utilizationFloorPercent", s->pressure.utilization_floor_percent, 1, 100, errs);
        if (s->pressure.resource != API_RESOURCE_CPU && fields_ok(errs, FIELDS("spec.pressure.resource")))
            api_errors_add(errs, "spec.pressure.utilizationFloorPercent", "applies only when resource is cpu, not %s",
                           resource_names[s->pressure.resource]);
    }
    if (s->pressure.stall == API_STALL_FULL && s->pressure.resource == API_RESOURCE_CPU &&
        fields_ok(errs, FIELDS("spec.pressure.resource")))
        api_errors_add(errs, "spec.pressure.stall",
                       "full applies to memory and io: the kernel reports CPU full as 0 "
                       "for a whole node");
    if (fields_ok(errs, FIELDS("spec.pressure.taintAbovePercent", "spec.pressure.untaintBelowPercent")) &&
        s->pressure.untaint_below_percent >= s->pressure.taint_above_percent)
        api_errors_add(errs, "spec.pressure.untaintBelowPercent", "must be less than taintAbovePercent (%lld)",
                       (long long)s->pressure.taint_above_percent);
}

/* spec.taint: a qualified key outside the namespaces Kubernetes owns. */
static void validate_taint(const struct api_spec *s, struct api_errors *errs)
{
    const char *why;
    if (!s->taint.key)
        api_errors_add(errs, "spec.taint.key", "Required value");
    else if ((why = api_names_check_qualified(s->taint.key)))
        api_errors_add(errs, "spec.taint.key", "'%s' is not a qualified name: %s", s->taint.key, why);
    else if (reserved_taint_key(s->taint.key))
        api_errors_add(errs, "spec.taint.key",
                       "'%s' must not be in the kubernetes.io or k8s.io namespaces, which "
                       "Kubernetes components own",
                       s->taint.key);
}

/* spec.eviction.cooldown: initial <= max <= history, each in its range. */
static void validate_eviction_cooldown(const struct api_spec *s, struct api_errors *errs)
{
    check_duration("spec.eviction.cooldown.initial", s->eviction.cooldown.initial_ms, MS_M, 24 * MS_H, errs);
    check_duration("spec.eviction.cooldown.max", s->eviction.cooldown.max_ms, MS_M, 168 * MS_H, errs);
    check_duration("spec.eviction.cooldown.history", s->eviction.cooldown.history_ms, MS_M, 720 * MS_H, errs);
    char b[32];
    if (fields_ok(errs, FIELDS("spec.eviction.cooldown.initial", "spec.eviction.cooldown.max")) &&
        s->eviction.cooldown.initial_ms > s->eviction.cooldown.max_ms)
        api_errors_add(errs, "spec.eviction.cooldown.max", "must be at least initial (%s)",
                       api_duration_format(s->eviction.cooldown.initial_ms, b, sizeof(b)));
    if (fields_ok(errs, FIELDS("spec.eviction.cooldown.max", "spec.eviction.cooldown.history")) &&
        s->eviction.cooldown.max_ms > s->eviction.cooldown.history_ms)
        api_errors_add(errs, "spec.eviction.cooldown.history",
                       "must be at least max (%s), or the doubling would be forgotten before it ends",
                       api_duration_format(s->eviction.cooldown.max_ms, b, sizeof(b)));
}

/* spec.eviction: thresholds against spec.pressure, resources, selectors, limits, cooldown. */
static void validate_eviction(const struct api_spec *s, struct api_errors *errs)
{
    check_range("spec.eviction.evictAbovePercent", s->eviction.evict_above_percent, 1, 100, errs);
    if (fields_ok(errs, FIELDS("spec.eviction.evictAbovePercent", "spec.pressure.taintAbovePercent")) &&
        s->eviction.evict_above_percent < s->pressure.taint_above_percent)
        api_errors_add(errs, "spec.eviction.evictAbovePercent",
                       "must be greater than or equal to spec.pressure.taintAbovePercent (%lld)",
                       (long long)s->pressure.taint_above_percent);
    if (s->eviction.has_relief_target) {
        check_below_level("spec.eviction.reliefTargetPercent", s->eviction.relief_target_percent, errs);
        if (fields_ok(errs, FIELDS("spec.eviction.reliefTargetPercent", "spec.pressure.taintAbovePercent")) &&
            s->eviction.relief_target_percent >= s->pressure.taint_above_percent)
            api_errors_add(errs, "spec.eviction.reliefTargetPercent",
                           "must be less than spec.pressure.taintAbovePercent (%lld)",
                           (long long)s->pressure.taint_above_percent);
    }
    check_set("spec.eviction.resources", s->eviction.resources, s->eviction.nresources, 2, check_balanced,
              "a resource moves can balance", errs);
    api_selector_validate(&s->eviction.pod_selector, "spec.eviction.podSelector", errs);
    check_set("spec.eviction.excludedNamespaces", s->eviction.excluded_namespaces, s->eviction.nexcluded_namespaces, 64,
              api_wildcard_check, "a namespace name or pattern", errs);
    check_range("spec.eviction.maxPerNode", s->eviction.max_per_node, 1, 100, errs);
    if (s->eviction.has_max_per_namespace)
        check_range("spec.eviction.maxPerNamespace", s->eviction.max_per_namespace, 1, 1000, errs);
    check_range("spec.eviction.maxTotal", s->eviction.max_total, 1, 1000, errs);
    check_range("spec.eviction.maxInFlightMigrations", s->eviction.max_in_flight_migrations, 1, 1000, errs);
    check_range("spec.eviction.maxMovesPerWorkload", s->eviction.max_moves_per_workload, 1, API_MOVE_HISTORY_MAX_TIMES,
                errs);
    check_range("spec.eviction.maxMovesPerHour", s->eviction.max_moves_per_hour, 1, 1000, errs);
    if (fields_ok(errs, FIELDS("spec.eviction.maxPerNode", "spec.eviction.maxTotal")) &&
        s->eviction.max_per_node > s->eviction.max_total)
        api_errors_add(errs, "spec.eviction.maxPerNode", "must not exceed maxTotal (%lld)",
                       (long long)s->eviction.max_total);
    if (s->eviction.has_max_per_namespace &&
        fields_ok(errs, FIELDS("spec.eviction.maxPerNamespace", "spec.eviction.maxTotal")) &&
        s->eviction.max_per_namespace > s->eviction.max_total)
        api_errors_add(errs, "spec.eviction.maxPerNamespace", "must not exceed maxTotal (%lld)",
                       (long long)s->eviction.max_total);
    validate_eviction_cooldown(s, errs);
}

int api_spec_validate(const struct api_spec *s, struct api_errors *errs)
{
    size_t before = errs ? errs->n : 0;
    api_selector_validate(&s->node_selector, "spec.nodeSelector", errs);
    validate_machine_config(s, errs);
    validate_metrics(s, errs);
    validate_pressure(s, errs);
    validate_taint(s, errs);
    validate_eviction(s, errs);
    return errs && errs->n > before ? -1 : 0;
}

/* ---- encode ---- */

static bool add_strv(cJSON *o, const char *key, char *const *v, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(o, key);
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *s = cJSON_CreateString(v[i]);
        if (!s || !cJSON_AddItemToArray(arr, s)) {
            cJSON_Delete(s);
            return false;
        }
    }
    return arr != NULL;
}

static bool add_duration(cJSON *o, const char *key, int64_t ms)
{
    char b[32];
    return cJSON_AddStringToObject(o, key, api_duration_format(ms, b, sizeof(b))) != NULL;
}

static bool add_int(cJSON *o, const char *key, int64_t v)
{
    return cJSON_AddNumberToObject(o, key, (double)v) != NULL;
}

static bool add_selector(cJSON *o, const char *key, const struct api_selector *sel)
{
    cJSON *j = api_selector_encode(sel);
    if (!j || !cJSON_AddItemToObject(o, key, j)) {
        cJSON_Delete(j);
        return false;
    }
    return true;
}

cJSON *api_spec_encode(const struct api_spec *s)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && add_selector(o, "nodeSelector", &s->node_selector);

    cJSON *mc = ok ? cJSON_AddObjectToObject(o, "machineConfig") : NULL;
    ok = mc && cJSON_AddBoolToObject(mc, "enabled", s->machine_config.enabled) &&
         (!s->machine_config.nroles || add_strv(mc, "roles", s->machine_config.roles, s->machine_config.nroles)) &&
         cJSON_AddBoolToObject(mc, "schedstats", s->machine_config.schedstats) &&
         cJSON_AddStringToObject(mc, "deletionPolicy", deletion_names[s->machine_config.deletion_policy]);

    cJSON *m = ok ? cJSON_AddObjectToObject(o, "metrics") : NULL;
    ok = m && cJSON_AddStringToObject(m, "source", source_names[s->metrics.source]);
    cJSON *pr = ok ? cJSON_AddObjectToObject(m, "prometheus") : NULL;
    ok = pr && (!s->metrics.prometheus.url || cJSON_AddStringToObject(pr, "url", s->metrics.prometheus.url)) &&
         (!s->metrics.prometheus.bearer_token_file ||
          cJSON_AddStringToObject(pr, "bearerTokenFile", s->metrics.prometheus.bearer_token_file)) &&
         (!s->metrics.prometheus.ca_file || cJSON_AddStringToObject(pr, "caFile", s->metrics.prometheus.ca_file)) &&
         cJSON_AddBoolToObject(pr, "sendTokenOverPlainHTTP", s->metrics.prometheus.send_token_over_plain_http) &&
         add_duration(m, "interval", s->metrics.interval_ms) && add_duration(m, "window", s->metrics.window_ms);

    cJSON *p = ok ? cJSON_AddObjectToObject(o, "pressure") : NULL;
    ok = p && cJSON_AddStringToObject(p, "resource", resource_names[s->pressure.resource]) &&
         cJSON_AddStringToObject(p, "stall", stall_names[s->pressure.stall]) &&
         add_int(p, "taintAbovePercent", s->pressure.taint_above_percent) &&
         add_int(p, "untaintBelowPercent", s->pressure.untaint_below_percent) &&
         add_duration(p, "sustain", s->pressure.sustain_ms) &&
         add_int(p, "maxTaintedPercent", s->pressure.max_tainted_percent) &&
         (!s->pressure.has_utilization_floor ||
          add_int(p, "utilizationFloorPercent", s->pressure.utilization_floor_percent));

    cJSON *t = ok ? cJSON_AddObjectToObject(o, "taint") : NULL;
    ok = t && cJSON_AddStringToObject(t, "key", s->taint.key ? s->taint.key : "") &&
         cJSON_AddStringToObject(t, "effect", effect_names[s->taint.effect]);

    cJSON *e = ok ? cJSON_AddObjectToObject(o, "eviction") : NULL;
    ok = e && cJSON_AddStringToObject(e, "mode", mode_names[s->eviction.mode]) &&
         cJSON_AddStringToObject(e, "method", method_names[s->eviction.method]) &&
         add_int(e, "evictAbovePercent", s->eviction.evict_above_percent) &&
         (!s->eviction.has_relief_target || add_int(e, "reliefTargetPercent", s->eviction.relief_target_percent)) &&
         (!s->eviction.nresources || add_strv(e, "resources", s->eviction.resources, s->eviction.nresources)) &&
         add_selector(e, "podSelector", &s->eviction.pod_selector) &&
         add_strv(e, "excludedNamespaces", s->eviction.excluded_namespaces, s->eviction.nexcluded_namespaces) &&
         add_int(e, "maxPerNode", s->eviction.max_per_node) &&
         (!s->eviction.has_max_per_namespace || add_int(e, "maxPerNamespace", s->eviction.max_per_namespace)) &&
         add_int(e, "maxTotal", s->eviction.max_total) &&
         add_int(e, "maxInFlightMigrations", s->eviction.max_in_flight_migrations) &&
         add_int(e, "maxMovesPerWorkload", s->eviction.max_moves_per_workload) &&
         add_int(e, "maxMovesPerHour", s->eviction.max_moves_per_hour) &&
         cJSON_AddBoolToObject(e, "allowVMRestart", s->eviction.allow_vm_restart);
    cJSON *cd = ok ? cJSON_AddObjectToObject(e, "cooldown") : NULL;
    ok = cd && add_duration(cd, "initial", s->eviction.cooldown.initial_ms) &&
         add_duration(cd, "max", s->eviction.cooldown.max_ms) &&
         add_duration(cd, "history", s->eviction.cooldown.history_ms);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- equal ---- */

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool strv_eq(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return false;
    return true;
}

bool api_spec_equal(const struct api_spec *a, const struct api_spec *b)
{
    return api_selector_equal(&a->node_selector, &b->node_selector) &&
           a->machine_config.enabled == b->machine_config.enabled &&
           strv_eq(a->machine_config.roles, a->machine_config.nroles, b->machine_config.roles,
                   b->machine_config.nroles) &&
           a->machine_config.schedstats == b->machine_config.schedstats &&
           a->machine_config.deletion_policy == b->machine_config.deletion_policy &&
           a->metrics.source == b->metrics.source && str_eq(a->metrics.prometheus.url, b->metrics.prometheus.url) &&
           str_eq(a->metrics.prometheus.bearer_token_file, b->metrics.prometheus.bearer_token_file) &&
           str_eq(a->metrics.prometheus.ca_file, b->metrics.prometheus.ca_file) &&
           a->metrics.prometheus.send_token_over_plain_http == b->metrics.prometheus.send_token_over_plain_http &&
           a->metrics.interval_ms == b->metrics.interval_ms && a->metrics.window_ms == b->metrics.window_ms &&
           a->pressure.resource == b->pressure.resource && a->pressure.stall == b->pressure.stall &&
           a->pressure.taint_above_percent == b->pressure.taint_above_percent &&
           a->pressure.untaint_below_percent == b->pressure.untaint_below_percent &&
           a->pressure.sustain_ms == b->pressure.sustain_ms &&
           a->pressure.max_tainted_percent == b->pressure.max_tainted_percent &&
           a->pressure.has_utilization_floor == b->pressure.has_utilization_floor &&
           (!a->pressure.has_utilization_floor ||
            a->pressure.utilization_floor_percent == b->pressure.utilization_floor_percent) &&
           str_eq(a->taint.key, b->taint.key) && a->taint.effect == b->taint.effect &&
           a->eviction.mode == b->eviction.mode && a->eviction.method == b->eviction.method &&
           a->eviction.evict_above_percent == b->eviction.evict_above_percent &&
           a->eviction.has_relief_target == b->eviction.has_relief_target &&
           (!a->eviction.has_relief_target || a->eviction.relief_target_percent == b->eviction.relief_target_percent) &&
           strv_eq(a->eviction.resources, a->eviction.nresources, b->eviction.resources, b->eviction.nresources) &&
           api_selector_equal(&a->eviction.pod_selector, &b->eviction.pod_selector) &&
           strv_eq(a->eviction.excluded_namespaces, a->eviction.nexcluded_namespaces, b->eviction.excluded_namespaces,
                   b->eviction.nexcluded_namespaces) &&
           a->eviction.max_per_node == b->eviction.max_per_node &&
           a->eviction.has_max_per_namespace == b->eviction.has_max_per_namespace &&
           (!a->eviction.has_max_per_namespace || a->eviction.max_per_namespace == b->eviction.max_per_namespace) &&
           a->eviction.max_total == b->eviction.max_total &&
           a->eviction.max_in_flight_migrations == b->eviction.max_in_flight_migrations &&
           a->eviction.max_moves_per_workload == b->eviction.max_moves_per_workload &&
           a->eviction.max_moves_per_hour == b->eviction.max_moves_per_hour &&
           a->eviction.allow_vm_restart == b->eviction.allow_vm_restart &&
           a->eviction.cooldown.initial_ms == b->eviction.cooldown.initial_ms &&
           a->eviction.cooldown.max_ms == b->eviction.cooldown.max_ms &&
           a->eviction.cooldown.history_ms == b->eviction.cooldown.history_ms;
}

/* ---- whole object ---- */

void api_psirebalance_free(struct api_psirebalance *p)
{
    if (!p)
        return;
    free(p->name);
    free(p->uid);
    free(p->resource_version);
    api_spec_free(&p->spec);
    api_status_free(&p->status);
    memset(p, 0, sizeof(*p));
}

int api_psirebalance_decode(const cJSON *json, struct api_psirebalance *out, struct api_errors *errs,
                            struct api_errors *warns)
{
    static const char *const known[] = {"apiVersion", "kind", "metadata", "spec", "status", NULL};
    size_t before = errs ? errs->n : 0;
    api_psirebalance_free(out);
    if (!cJSON_IsObject(json)) {
        api_spec_defaults(&out->spec);
        return api_errors_add(errs, "", "a PsiRebalance must be a JSON object");
    }
    api_json_unknown(json, "", known, warns);
    const cJSON *v = api_json_get(json, "apiVersion");
    if (v && (!cJSON_IsString(v) || strcmp(v->valuestring, API_API_VERSION) != 0))
        api_errors_add(errs, "apiVersion", "must be %s", API_API_VERSION);
    v = api_json_get(json, "kind");
    if (v && (!cJSON_IsString(v) || strcmp(v->valuestring, API_KIND) != 0))
        api_errors_add(errs, "kind", "must be %s", API_KIND);
    const cJSON *md;
    if (api_json_object(json, "", "metadata", &md, errs) == 0 && md) {
        api_json_string(md, "metadata", "name", &out->name, errs);
        api_json_string(md, "metadata", "uid", &out->uid, errs);
        api_json_string(md, "metadata", "resourceVersion", &out->resource_version, errs);
        api_json_int(md, "metadata", "generation", &out->generation, errs);
    }
    const cJSON *spec = api_json_get(json, "spec");
    api_spec_decode(spec, &out->spec, errs, warns);
    api_spec_validate(&out->spec, errs);
    const cJSON *status = api_json_get(json, "status");
    if (status) {
        out->has_status = true;
        api_status_decode(status, &out->status, warns, warns);
    }
    return errs && errs->n > before ? -1 : 0;
}
