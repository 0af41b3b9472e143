/* scenario: YAML scenario files (see scenario.h for the format). */
#include "hack/sim/scenario.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/duration.h"
#include "api/quantity.h"
#include "base/grow.h"
#include "hack/sim/scenario_deployments.h"
#include "kube/yamljson.h"

/* Parsing context: the error buffer and the path of the field being read. */
struct ctx {
    char *err;
    size_t errlen;
    int failed;
};

__attribute__((format(printf, 2, 3))) static int fail(struct ctx *c, const char *fmt, ...)
{
    if (c->failed)
        return -1;
    c->failed = 1;
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Reject keys of obj that are not in allowed (NULL-terminated). */
static int check_keys(struct ctx *c, const cJSON *obj, const char *path, const char *const *allowed)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, obj) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            ok = ok || strcmp(*a, it->string) == 0;
        if (!ok)
            return fail(c, "%s%s%s: unknown field", path, *path ? "." : "", it->string);
    }
    return 0;
}

static int want_object(struct ctx *c, const cJSON *v, const char *path)
{
    if (v && !cJSON_IsObject(v) && !cJSON_IsNull(v))
        return fail(c, "%s: must be a mapping", path);
    return 0;
}

static int get_string(struct ctx *c, const cJSON *obj, const char *key, const char *path, char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v))
        return fail(c, "%s.%s: must be a string", path, key);
    free(*out);
    *out = strdup(v->valuestring);
    return *out ? 0 : fail(c, "out of memory");
}

static int get_bool(struct ctx *c, const cJSON *obj, const char *key, const char *path, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return fail(c, "%s.%s: must be true or false", path, key);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* A number, or a quantity string ("4Gi", "200m"). present (may be NULL) tells whether set. */
static int get_quantity(struct ctx *c, const cJSON *obj, const char *key, const char *path, double *out, bool *present)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (present)
        *present = false;
    if (!v || cJSON_IsNull(v))
        return 0;
    double d;
    if (cJSON_IsNumber(v)) {
        d = v->valuedouble;
    } else if (cJSON_IsString(v)) {
        char why[160];
        if (api_quantity_parse(v->valuestring, &d, why, sizeof(why)) < 0)
            return fail(c, "%s.%s: %s", path, key, why);
    } else {
        return fail(c, "%s.%s: must be a number or a quantity", path, key);
    }
    if (!isfinite(d) || d < 0)
        return fail(c, "%s.%s: must be a non-negative number", path, key);
    *out = d;
    if (present)
        *present = true;
    return 0;
}

static int get_int(struct ctx *c, const cJSON *obj, const char *key, const char *path, int min, int max, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return fail(c, "%s.%s: must be an integer", path, key);
    if (v->valuedouble < min || v->valuedouble > max)
        return fail(c, "%s.%s: must be between %d and %d", path, key, min, max);
    *out = (int)v->valuedouble;
    return 0;
}

static int get_fraction(struct ctx *c, const cJSON *obj, const char *key, const char *path, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 1))
        return fail(c, "%s.%s: must be a number between 0 and 1", path, key);
    *out = v->valuedouble;
    return 0;
}

static int get_duration(struct ctx *c, const cJSON *obj, const char *key, const char *path, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsNumber(v) && v->valuedouble == 0) {
        *out = 0;
        return 0;
    }
    if (!cJSON_IsString(v))
        return fail(c, "%s.%s: must be a duration such as \"30s\"", path, key);
    char why[160];
    if (api_duration_parse(v->valuestring, out, why, sizeof(why)) < 0)
        return fail(c, "%s.%s: %s", path, key, why);
    return 0;
}

/* A list of strings into a NULL-free array. */
static int get_string_list(struct ctx *c, const cJSON *obj, const char *key, const char *path, char ***out, size_t *n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsArray(v))
        return fail(c, "%s.%s: must be a list of strings", path, key);
    size_t count = (size_t)cJSON_GetArraySize(v);
    char **list = calloc(count ? count : 1, sizeof(*list));
    if (!list)
        return fail(c, "out of memory");
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, v) {
        if (!cJSON_IsString(it)) {
            for (size_t j = 0; j < i; j++)
                free(list[j]);
            free(list);
            return fail(c, "%s.%s[%zu]: must be a string", path, key, i);
        }
        list[i++] = strdup(it->valuestring);
    }
    *out = list;
    *n = count;
    return 0;
}

static void free_list(char **list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

/* A Kubernetes object name usable as a VM, VMI and label value: DNS-1123 label. */
static bool dns_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || (ch == '-' && i > 0 && i + 1 < n);
        if (!ok)
            return false;
    }
    return true;
}

static const char *const strategy_names[] = {"", "None", "LiveMigrate", "LiveMigrateIfPossible", "External"};

const char *scenario_strategy_name(enum scenario_strategy st)
{
    return (unsigned)st < sizeof(strategy_names) / sizeof(strategy_names[0]) ? strategy_names[st] : "";
}

int scenario_strategy_parse(const char *s, enum scenario_strategy *out)
{
    for (size_t i = 1; s && i < sizeof(strategy_names) / sizeof(strategy_names[0]); i++) {
        if (strcmp(s, strategy_names[i]) == 0) {
            *out = (enum scenario_strategy)i;
            return 0;
        }
    }
    return -1;
}

static int get_strategy(struct ctx *c, const cJSON *obj, const char *path, enum scenario_strategy *out)
{
    char *s = NULL;
    if (get_string(c, obj, "evictionStrategy", path, &s) < 0)
        return -1;
    if (s && scenario_strategy_parse(s, out) < 0) {
        fail(c, "%s.evictionStrategy: \"%s\" is not one of None, LiveMigrate, LiveMigrateIfPossible, External", path,
             s);
        free(s);
        return -1;
    }
    free(s);
    return 0;
}

static int parse_curve(struct ctx *c, const cJSON *model, const char *key, struct model_curve *curve)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(model, key);
    char path[32];
    snprintf(path, sizeof(path), "model.%s", key);
    static const char *const keys[] = {"curve", "burstiness", "fullRatio", NULL};
    if (want_object(c, v, path) < 0 || check_keys(c, v, path, keys) < 0)
        return -1;
    char *shape = NULL;
    if (get_string(c, v, "curve", path, &shape) < 0)
        return -1;
    if (shape && model_shape_parse(shape, &curve->shape) < 0) {
        fail(c, "%s.curve: \"%s\" is not one of kernel, queueing", path, shape);
        free(shape);
        return -1;
    }
    free(shape);
    double b = curve->burstiness;
    if (get_quantity(c, v, "burstiness", path, &b, NULL) < 0 ||
        get_fraction(c, v, "fullRatio", path, &curve->full_ratio) < 0)
        return -1;
    if (b > 10)
        return fail(c, "%s.burstiness: must be at most 10", path);
    curve->burstiness = b;
    return 0;
}

static int parse_labels(struct ctx *c, const cJSON *obj, const char *path, struct scenario_vm *vm)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "labels");
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsObject(v))
        return fail(c, "%s.labels: must be a mapping", path);
    size_t n = (size_t)cJSON_GetArraySize(v);
    vm->labels = calloc(n ? n : 1, sizeof(*vm->labels));
    if (!vm->labels)
        return fail(c, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach (it, v) {
        char buf[64];
        const char *val = NULL;
        if (cJSON_IsString(it))
            val = it->valuestring;
        else if (cJSON_IsNumber(it))
            val = (snprintf(buf, sizeof(buf), "%g", it->valuedouble), buf);
        else if (cJSON_IsBool(it))
            val = cJSON_IsTrue(it) ? "true" : "false";
        else
            return fail(c, "%s.labels.%s: must be a string", path, it->string);
        vm->labels[vm->n_labels].key = strdup(it->string);
        vm->labels[vm->n_labels].value = strdup(val);
        vm->n_labels++;
    }
    return 0;
}

static void vm_clear(struct scenario_vm *vm)
{
    free(vm->name);
    free(vm->group);
    free(vm->node);
    for (size_t i = 0; i < vm->n_labels; i++) {
        free(vm->labels[i].key);
        free(vm->labels[i].value);
    }
    free(vm->labels);
}

static int copy_vm(struct scenario_vm *dst, const struct scenario_vm *src, const char *name)
{
    *dst = *src;
    dst->name = strdup(name);
    dst->group = strdup(src->group);
    dst->node = src->node ? strdup(src->node) : NULL;
    dst->labels = calloc(src->n_labels ? src->n_labels : 1, sizeof(*dst->labels));
    if (!dst->name || !dst->group || !dst->labels || (src->node && !dst->node))
        return -1;
    for (size_t i = 0; i < src->n_labels; i++) {
        dst->labels[i].key = strdup(src->labels[i].key);
        dst->labels[i].value = strdup(src->labels[i].value);
    }
    return 0;
}

/* nodes.sizes: a mapping of node name to {cpus, memory}, each positive when given. */
static int parse_node_sizes(struct ctx *c, struct scenario *s, const cJSON *sizes)
{
    if (!sizes || cJSON_IsNull(sizes))
        return 0;
    if (!cJSON_IsObject(sizes))
        return fail(c, "nodes.sizes: must be a mapping of node name to {cpus, memory}");
    static const char *const keys[] = {"cpus", "memory", NULL};
    size_t n = (size_t)cJSON_GetArraySize(sizes);
    s->node_sizes = calloc(n ? n : 1, sizeof(*s->node_sizes));
    if (!s->node_sizes)
        return fail(c, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach (it, sizes) {
        char path[300];
        snprintf(path, sizeof(path), "nodes.sizes.%s", it->string);
        struct scenario_node_size *ns = &s->node_sizes[s->n_node_sizes];
        if (!cJSON_IsObject(it))
            return fail(c, "%s: must be a mapping", path);
        if (check_keys(c, it, path, keys) < 0 || get_quantity(c, it, "cpus", path, &ns->cpus, NULL) < 0 ||
            get_quantity(c, it, "memory", path, &ns->memory, NULL) < 0)
            return -1;
        if (ns->cpus == 0 && ns->memory == 0)
            return fail(c, "%s: needs cpus or memory", path);
        if (!(ns->node = strdup(it->string)))
            return fail(c, "out of memory");
        s->n_node_sizes++;
    }
    return 0;
}

static int parse_vms(struct ctx *c, struct scenario *s, const cJSON *vms)
{
    if (!vms || !cJSON_IsArray(vms) || cJSON_GetArraySize(vms) == 0)
        return fail(c, "vms: must be a list of at least one VM (or give deployments)");
    static const char *const keys[] = {
        "name",      "count",      "vcpus",  "memory", "cpu", "memoryDemand", "io", "evictionStrategy", "migratable",
        "dirtyRate", "cpuRequest", "labels", "node",   NULL};
    size_t idx = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, vms) {
        char path[32];
        snprintf(path, sizeof(path), "vms[%zu]", idx++);
        if (!cJSON_IsObject(it))
            return fail(c, "%s: must be a mapping", path);
        if (check_keys(c, it, path, keys) < 0)
            return -1;
        struct scenario_vm vm = {0};
        vm.vcpus = 1;
        vm.memory = 1024.0 * 1024 * 1024;
        vm.io_demand = 1;
        vm.migratable = true;
        int count = 1;
        bool has_cpu = false, has_mem_demand = false, has_request = false;
        int rc = 0;
        rc = rc || get_string(c, it, "name", path, &vm.group);
        rc = rc || get_int(c, it, "count", path, 1, 10000, &count);
        rc = rc || get_int(c, it, "vcpus", path, 1, 1024, &vm.vcpus);
        rc = rc || get_quantity(c, it, "memory", path, &vm.memory, NULL);
        rc = rc || get_quantity(c, it, "cpu", path, &vm.cpu_demand, &has_cpu);
        rc = rc || get_quantity(c, it, "memoryDemand", path, &vm.memory_demand, &has_mem_demand);
        rc = rc || get_quantity(c, it, "io", path, &vm.io_demand, NULL);
        rc = rc || get_strategy(c, it, path, &vm.strategy);
        rc = rc || get_bool(c, it, "migratable", path, &vm.migratable);
        rc = rc || get_quantity(c, it, "dirtyRate", path, &vm.dirty_rate, NULL);
        rc = rc || get_quantity(c, it, "cpuRequest", path, &vm.cpu_request, &has_request);
        rc = rc || parse_labels(c, it, path, &vm);
        rc = rc || get_string(c, it, "node", path, &vm.node);
        if (!rc && !vm.group)
            rc = fail(c, "%s.name: required", path);
        if (!rc && vm.memory < 1024 * 1024)
            rc = fail(c, "%s.memory: must be at least 1Mi", path);
        if (rc) {
            vm_clear(&vm);
            return -1;
        }
        if (!has_cpu)
            vm.cpu_demand = 0.05 * vm.vcpus;
        if (!has_mem_demand)
            vm.memory_demand = vm.memory / 2;
        if (!has_request)
            vm.cpu_request = vm.vcpus / s->cpu_allocation_ratio;
        if (vm.cpu_request < 0.001)
            vm.cpu_request = 0.001;
        struct scenario_vm *grown = realloc(s->vms, (s->n_vms + (size_t)count) * sizeof(*grown));
        if (!grown) {
            vm_clear(&vm);
            return fail(c, "out of memory");
        }
        s->vms = grown;
        for (int i = 0; i < count; i++) {
            char name[128];
            if (count > 1)
                snprintf(name, sizeof(name), "%s-%d", vm.group, i);
            else
                snprintf(name, sizeof(name), "%s", vm.group);
            if (!dns_label(name)) {
                vm_clear(&vm);
                return fail(c, "%s.name: \"%s\" is not a valid VM name (lowercase letters, digits and '-', at most 63)",
                            path, name);
            }
            if (scenario_vm_find(s, name)) {
                vm_clear(&vm);
                return fail(c, "%s.name: VM \"%s\" is defined twice", path, name);
            }
            if (copy_vm(&s->vms[s->n_vms], &vm, name) < 0) {
                s->n_vms++;
                vm_clear(&vm);
                return fail(c, "out of memory");
            }
            s->n_vms++;
        }
        vm_clear(&vm);
    }
    return 0;
}

static int add_target(struct ctx *c, struct scenario_event *ev, const char *name, const char *path)
{
    for (size_t i = 0; i < ev->n_vms; i++)
        if (strcmp(ev->vms[i], name) == 0)
            return 0;
    if (BASE_GROW(ev->vms, ev->n_vms + 1, ev->vms_cap) < 0)
        return fail(c, "out of memory");
    ev->vms[ev->n_vms] = strdup(name);
    if (!ev->vms[ev->n_vms])
        return fail(c, "%s: out of memory", path);
    ev->n_vms++;
    return 0;
}

static int parse_demand(struct ctx *c, const struct scenario *s, const cJSON *d, const char *path,
                        struct scenario_event *ev)
{
    static const char *const keys[] = {"vm", "vms", "group", "cpu", "memory", "io", NULL};
    if (!cJSON_IsObject(d))
        return fail(c, "%s: must be a mapping", path);
    if (check_keys(c, d, path, keys) < 0)
        return -1;
    ev->kind = SCENARIO_EVENT_DEMAND;
    ev->cpu = ev->memory = ev->io = NAN;
    char *one = NULL, *group = NULL;
    char **list = NULL;
    size_t n = 0;
    bool has;
    double v;
    int rc = 0;
    rc = rc || get_string(c, d, "vm", path, &one);
    rc = rc || get_string(c, d, "group", path, &group);
    rc = rc || get_string_list(c, d, "vms", path, &list, &n);
    if (!rc && get_quantity(c, d, "cpu", path, &v, &has) == 0 && has)
        ev->cpu = v;
    if (!rc && get_quantity(c, d, "memory", path, &v, &has) == 0 && has)
        ev->memory = v;
    if (!rc && get_quantity(c, d, "io", path, &v, &has) == 0 && has)
        ev->io = v;
    rc = rc || c->failed;
    if (!rc && one) {
        if (!scenario_vm_find(s, one))
            rc = fail(c, "%s.vm: no VM named \"%s\"", path, one);
        else
            rc = add_target(c, ev, one, path);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        if (!scenario_vm_find(s, list[i]))
            rc = fail(c, "%s.vms[%zu]: no VM named \"%s\"", path, i, list[i]);
        else
            rc = add_target(c, ev, list[i], path);
    }
    if (!rc && group) {
        size_t found = 0;
        for (size_t i = 0; !rc && i < s->n_vms; i++) {
            if (strcmp(s->vms[i].group, group) == 0) {
                found++;
                rc = add_target(c, ev, s->vms[i].name, path);
            }
        }
        if (!rc && !found)
            rc = fail(c, "%s.group: no VM group named \"%s\"", path, group);
    }
    if (!rc && ev->n_vms == 0)
        rc = fail(c, "%s: names no VM (give vm, vms or group)", path);
    if (!rc && isnan(ev->cpu) && isnan(ev->memory) && isnan(ev->io))
        rc = fail(c, "%s: sets nothing (give cpu, memory or io)", path);
    free(one);
    free(group);
    free_list(list, n);
    return rc ? -1 : 0;
}

static int parse_events(struct ctx *c, struct scenario *s, const cJSON *events)
{
    if (!events || cJSON_IsNull(events))
        return 0;
    if (!cJSON_IsArray(events))
        return fail(c, "events: must be a list");
    size_t n = (size_t)cJSON_GetArraySize(events);
    s->events = calloc(n ? n : 1, sizeof(*s->events));
    if (!s->events)
        return fail(c, "out of memory");
    static const char *const keys[] = {"at", "demand", "drain", "rollingDrain", "machineConfig", NULL};
    size_t idx = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, events) {
        char path[48];
        snprintf(path, sizeof(path), "events[%zu]", idx++);
        if (!cJSON_IsObject(it))
            return fail(c, "%s: must be a mapping", path);
        if (check_keys(c, it, path, keys) < 0)
            return -1;
        struct scenario_event *ev = &s->events[s->n_events++];
        ev->cpu = ev->memory = ev->io = NAN;
        if (!cJSON_GetObjectItemCaseSensitive(it, "at"))
            return fail(c, "%s.at: required", path);
        if (get_duration(c, it, "at", path, &ev->at_ms) < 0)
            return -1;
        int actions = 0;
        const cJSON *a;
        char sub[80];
        if ((a = cJSON_GetObjectItemCaseSensitive(it, "demand"))) {
            actions++;
            snprintf(sub, sizeof(sub), "%s.demand", path);
            if (parse_demand(c, s, a, sub, ev) < 0)
                return -1;
        }
        if ((a = cJSON_GetObjectItemCaseSensitive(it, "drain"))) {
            static const char *const dkeys[] = {"node", "rebootDelay", NULL};
            actions++;
            snprintf(sub, sizeof(sub), "%s.drain", path);
            ev->kind = SCENARIO_EVENT_DRAIN;
            ev->reboot_delay_ms = 10000;
            if (!cJSON_IsObject(a))
                return fail(c, "%s: must be a mapping", sub);
            if (check_keys(c, a, sub, dkeys) < 0 || get_string(c, a, "node", sub, &ev->node) < 0 ||
                get_duration(c, a, "rebootDelay", sub, &ev->reboot_delay_ms) < 0)
                return -1;
            if (!ev->node)
                return fail(c, "%s.node: required", sub);
        }
        if ((a = cJSON_GetObjectItemCaseSensitive(it, "rollingDrain"))) {
            static const char *const rkeys[] = {"rebootDelay", NULL};
            actions++;
            snprintf(sub, sizeof(sub), "%s.rollingDrain", path);
            ev->kind = SCENARIO_EVENT_ROLLING_DRAIN;
            ev->reboot_delay_ms = 10000;
            if (want_object(c, a, sub) < 0 || check_keys(c, a, sub, rkeys) < 0 ||
                get_duration(c, a, "rebootDelay", sub, &ev->reboot_delay_ms) < 0)
                return -1;
        }
        if ((a = cJSON_GetObjectItemCaseSensitive(it, "machineConfig"))) {
            static const char *const mkeys[] = {"name", "role", "kernelArguments", NULL};
            actions++;
            snprintf(sub, sizeof(sub), "%s.machineConfig", path);
            ev->kind = SCENARIO_EVENT_MACHINE_CONFIG;
            if (!cJSON_IsObject(a))
                return fail(c, "%s: must be a mapping", sub);
            if (check_keys(c, a, sub, mkeys) < 0 || get_string(c, a, "name", sub, &ev->mc_name) < 0 ||
                get_string(c, a, "role", sub, &ev->mc_role) < 0 ||
                get_string_list(c, a, "kernelArguments", sub, &ev->kernel_args, &ev->n_kernel_args) < 0)
                return -1;
            if (!ev->mc_role)
                return fail(c, "%s.role: required", sub);
            if (!ev->mc_name) {
                char name[128];
                snprintf(name, sizeof(name), "99-%s-sim", ev->mc_role);
                ev->mc_name = strdup(name);
            }
        }
        if (actions != 1)
            return fail(c, "%s: needs exactly one of demand, drain, rollingDrain, machineConfig", path);
    }
    /* stable sort by time (insertion sort: scenarios are short) */
    for (size_t i = 1; i < s->n_events; i++) {
        struct scenario_event tmp = s->events[i];
        size_t j = i;
        while (j > 0 && s->events[j - 1].at_ms > tmp.at_ms) {
            s->events[j] = s->events[j - 1];
            j--;
        }
        s->events[j] = tmp;
    }
    return 0;
}

/* The mco section: the MachineConfig operator stand-in and its pools. */
static int parse_mco(struct ctx *c, struct scenario *s, const cJSON *root)
{
    const cJSON *mco = cJSON_GetObjectItemCaseSensitive(root, "mco");
    static const char *const mkeys[] = {"enabled", "pools", "paused", "compact", "rebootDelay", "drainTimeout", NULL};
    if (want_object(c, mco, "mco") < 0 || check_keys(c, mco, "mco", mkeys) < 0 ||
        get_bool(c, mco, "enabled", "mco", &s->mco_enabled) < 0 ||
        get_string_list(c, mco, "pools", "mco", &s->mco_pools, &s->n_mco_pools) < 0 ||
        get_string_list(c, mco, "paused", "mco", &s->mco_paused, &s->n_mco_paused) < 0 ||
        get_bool(c, mco, "compact", "mco", &s->mco_compact) < 0 ||
        get_duration(c, mco, "rebootDelay", "mco", &s->mco_reboot_delay_ms) < 0 ||
        get_duration(c, mco, "drainTimeout", "mco", &s->mco_drain_timeout_ms) < 0)
        return -1;
    if (!s->mco_pools) {
        s->mco_pools = calloc(1, sizeof(char *));
        s->mco_pools[0] = strdup("worker");
        s->n_mco_pools = 1;
    }
    for (size_t i = 0; i < s->n_mco_pools; i++)
        if (!dns_label(s->mco_pools[i]))
            return fail(c, "mco.pools[%zu]: \"%s\" is not a valid pool name", i, s->mco_pools[i]);
    for (size_t i = 0; i < s->n_mco_paused; i++) {
        bool known = false;
        for (size_t j = 0; j < s->n_mco_pools; j++)
            known = known || strcmp(s->mco_paused[i], s->mco_pools[j]) == 0;
        if (!known)
            return fail(c, "mco.paused[%zu]: \"%s\" is not one of mco.pools", i, s->mco_paused[i]);
    }
    return 0;
}

/* The model and kubevirt sections: the pressure curves, KubeVirt's settings and its migrations. */
static int parse_kubevirt(struct ctx *c, struct scenario *s, const cJSON *root)
{
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    static const char *const mdkeys[] = {"cpu", "memory", "io", NULL};
    if (want_object(c, model, "model") < 0 || check_keys(c, model, "model", mdkeys) < 0 ||
        parse_curve(c, model, "cpu", &s->model.cpu) < 0 || parse_curve(c, model, "memory", &s->model.memory) < 0 ||
        parse_curve(c, model, "io", &s->model.io) < 0)
        return -1;

    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(root, "kubevirt");
    static const char *const kkeys[] = {"evictionStrategy",
                                        "parallelMigrationsPerCluster",
                                        "parallelOutboundMigrationsPerNode",
                                        "cpuAllocationRatio",
                                        "restartDelay",
                                        "migration",
                                        NULL};
    if (want_object(c, kv, "kubevirt") < 0 || check_keys(c, kv, "kubevirt", kkeys) < 0 ||
        get_strategy(c, kv, "kubevirt", &s->cluster_strategy) < 0 ||
        get_int(c, kv, "parallelMigrationsPerCluster", "kubevirt", 1, 1000, &s->parallel_per_cluster) < 0 ||
        get_int(c, kv, "parallelOutboundMigrationsPerNode", "kubevirt", 1, 1000, &s->parallel_outbound_per_node) < 0 ||
        get_quantity(c, kv, "cpuAllocationRatio", "kubevirt", &s->cpu_allocation_ratio, NULL) < 0 ||
        get_duration(c, kv, "restartDelay", "kubevirt", &s->restart_delay_ms) < 0)
        return -1;
    if (s->cpu_allocation_ratio < 1)
        return fail(c, "kubevirt.cpuAllocationRatio: must be at least 1");
    const cJSON *mig = cJSON_GetObjectItemCaseSensitive(kv, "migration");
    static const char *const gkeys[] = {"base",    "bandwidth", "phaseDelay",           "failureRate",
                                        "failVMs", "backoff",   "unschedulableTimeout", "completionTimeoutPerGiB",
                                        NULL};
    if (want_object(c, mig, "kubevirt.migration") < 0 || check_keys(c, mig, "kubevirt.migration", gkeys) < 0 ||
        get_duration(c, mig, "base", "kubevirt.migration", &s->migration_base_ms) < 0 ||
        get_quantity(c, mig, "bandwidth", "kubevirt.migration", &s->migration_bandwidth, NULL) < 0 ||
        get_duration(c, mig, "phaseDelay", "kubevirt.migration", &s->migration_phase_delay_ms) < 0 ||
        get_fraction(c, mig, "failureRate", "kubevirt.migration", &s->migration_failure_rate) < 0 ||
        get_string_list(c, mig, "failVMs", "kubevirt.migration", &s->fail_vms, &s->n_fail_vms) < 0 ||
        get_duration(c, mig, "backoff", "kubevirt.migration", &s->migration_backoff_ms) < 0 ||
        get_duration(c, mig, "unschedulableTimeout", "kubevirt.migration", &s->unschedulable_timeout_ms) < 0)
        return -1;
    int timeout = (int)s->completion_timeout_per_gib_s;
    if (get_int(c, mig, "completionTimeoutPerGiB", "kubevirt.migration", 1, 100000, &timeout) < 0)
        return -1;
    s->completion_timeout_per_gib_s = timeout;
    if (s->migration_bandwidth <= 0)
        return fail(c, "kubevirt.migration.bandwidth: must be positive");
    return 0;
}

static int parse_root(struct ctx *c, struct scenario *s, const cJSON *root)
{
    static const char *const keys[] = {"name",    "description", "namespace",   "seed",   "tick",
                                       "nodes",   "model",       "kubevirt",    "vms",    "start",
                                       "kubelet", "mco",         "deployments", "events", NULL};
    if (!cJSON_IsObject(root))
        return fail(c, "the scenario must be a mapping");
    if (check_keys(c, root, "", keys) < 0)
        return -1;
    if (get_string(c, root, "name", "", &s->name) < 0 || get_string(c, root, "description", "", &s->description) < 0 ||
        get_string(c, root, "namespace", "", &s->namespace) < 0 || get_duration(c, root, "tick", "", &s->tick_ms) < 0)
        return -1;
    if (!s->name)
        return fail(c, "name: required");
    if (!dns_label(s->namespace))
        return fail(c, "namespace: \"%s\" is not a valid namespace name", s->namespace);
    if (s->tick_ms < 100)
        return fail(c, "tick: must be at least 100ms");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(root, "seed");
    if (seed) {
        if (!cJSON_IsNumber(seed) || seed->valuedouble < 0 || seed->valuedouble != floor(seed->valuedouble))
            return fail(c, "seed: must be a non-negative integer");
        s->seed = (uint64_t)seed->valuedouble;
    }

    /* mco first: its `enabled` decides the default of nodes.psi */
    if (parse_mco(c, s, root) < 0)
        return -1;
    s->psi_without_pool = !s->mco_enabled;

    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    static const char *const nkeys[] = {"selector", "count", "cpus",  "applyCapacity", "memory", "io",
                                        "baseCpu",  "psi",   "sizes", "cpuSeconds",    NULL};
    bool has_cpus = false;
    if (want_object(c, nodes, "nodes") < 0 || check_keys(c, nodes, "nodes", nkeys) < 0 ||
        get_string(c, nodes, "selector", "nodes", &s->node_selector) < 0 ||
        get_int(c, nodes, "count", "nodes", 0, 100000, &s->node_count) < 0 ||
        get_quantity(c, nodes, "cpus", "nodes", &s->node_cpus, &has_cpus) < 0 ||
        get_quantity(c, nodes, "memory", "nodes", &s->node_memory, NULL) < 0 ||
        get_quantity(c, nodes, "io", "nodes", &s->node_io, NULL) < 0 ||
        get_quantity(c, nodes, "baseCpu", "nodes", &s->node_base_cpu, NULL) < 0 ||
        get_bool(c, nodes, "psi", "nodes", &s->psi_without_pool) < 0 ||
        get_bool(c, nodes, "cpuSeconds", "nodes", &s->node_cpu_seconds) < 0)
        return -1;
    if (parse_node_sizes(c, s, cJSON_GetObjectItemCaseSensitive(nodes, "sizes")) < 0)
        return -1;
    s->apply_capacity = has_cpus || s->n_node_sizes > 0;
    if (get_bool(c, nodes, "applyCapacity", "nodes", &s->apply_capacity) < 0)
        return -1;
    if (s->apply_capacity && !has_cpus && s->n_node_sizes == 0)
        return fail(c, "nodes.applyCapacity: needs nodes.cpus or nodes.sizes");
    if (has_cpus && s->node_cpus < 0.001)
        return fail(c, "nodes.cpus: must be positive");
    if (s->node_io <= 0)
        return fail(c, "nodes.io: must be positive");

    if (parse_kubevirt(c, s, root) < 0)
        return -1;

    /* a scenario of Deployments alone needs no VM */
    const cJSON *vms = cJSON_GetObjectItemCaseSensitive(root, "vms");
    const cJSON *deployments = cJSON_GetObjectItemCaseSensitive(root, "deployments");
    char why[512];
    if ((vms || !deployments) && parse_vms(c, s, vms) < 0)
        return -1;
    if (scenario_deployments_parse(s, deployments, why, sizeof(why)) < 0)
        return fail(c, "%s", why);
    for (size_t i = 0; i < s->n_fail_vms; i++)
        if (!scenario_vm_find(s, s->fail_vms[i]))
            return fail(c, "kubevirt.migration.failVMs[%zu]: no VM named \"%s\"", i, s->fail_vms[i]);

    const cJSON *start = cJSON_GetObjectItemCaseSensitive(root, "start");
    static const char *const skeys[] = {"node", NULL};
    if (want_object(c, start, "start") < 0 || check_keys(c, start, "start", skeys) < 0 ||
        get_string(c, start, "node", "start", &s->start_node) < 0)
        return -1;

    const cJSON *kl = cJSON_GetObjectItemCaseSensitive(root, "kubelet");
    static const char *const klkeys[] = {"noPsi", "podPsi", "slow", "slowDelay", NULL};
    if (want_object(c, kl, "kubelet") < 0 || check_keys(c, kl, "kubelet", klkeys) < 0 ||
        get_string_list(c, kl, "noPsi", "kubelet", &s->kubelet_no_psi, &s->n_kubelet_no_psi) < 0 ||
        get_bool(c, kl, "podPsi", "kubelet", &s->kubelet_pod_psi) < 0 ||
        get_string_list(c, kl, "slow", "kubelet", &s->kubelet_slow, &s->n_kubelet_slow) < 0 ||
        get_duration(c, kl, "slowDelay", "kubelet", &s->kubelet_slow_delay_ms) < 0)
        return -1;

    return parse_events(c, s, cJSON_GetObjectItemCaseSensitive(root, "events"));
}

static void defaults(struct scenario *s)
{
    s->namespace = strdup("psi-sim");
    s->tick_ms = 1000;
    s->seed = 1;
    s->node_selector = strdup("node-role.kubernetes.io/worker");
    s->node_io = 1000;
    model_params_default(&s->model);
    s->cluster_strategy = SCENARIO_STRATEGY_LIVE_MIGRATE;
    s->parallel_per_cluster = 5;
    s->parallel_outbound_per_node = 2;
    s->cpu_allocation_ratio = 10;
    s->restart_delay_ms = 1000;
    s->migration_base_ms = 2000;
    s->migration_bandwidth = 1024.0 * 1024 * 1024;
    s->migration_phase_delay_ms = 200;
    s->migration_backoff_ms = 20000;
    s->unschedulable_timeout_ms = 5 * 60 * 1000;
    s->completion_timeout_per_gib_s = 150;
    s->mco_reboot_delay_ms = 10000;
    s->mco_drain_timeout_ms = 10 * 60 * 1000;
    s->kubelet_slow_delay_ms = 30000;
    s->kubelet_pod_psi = true;
}

struct scenario *scenario_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct ctx c = {err, errlen, 0};
    char yerr[256];
    cJSON *root = kube_yamljson_parse(text, len, yerr, sizeof(yerr));
    if (!root) {
        fail(&c, "not valid YAML: %s", yerr);
        return NULL;
    }
    struct scenario *s = calloc(1, sizeof(*s));
    if (!s) {
        cJSON_Delete(root);
        fail(&c, "out of memory");
        return NULL;
    }
    defaults(s);
    int rc = parse_root(&c, s, root);
    cJSON_Delete(root);
    if (rc < 0 || c.failed) {
        if (!c.failed)
            fail(&c, "invalid scenario");
        scenario_free(s);
        return NULL;
    }
    return s;
}

struct scenario *scenario_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *grown = cap < (8u << 20) ? realloc(buf, cap * 2) : NULL;
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    int read_err = ferror(f);
    fclose(f);
    if (!buf || read_err) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read the file (too large or an I/O error)", path);
        return NULL;
    }
    char why[512];
    struct scenario *s = scenario_parse(buf, n, why, sizeof(why));
    free(buf);
    if (!s)
        snprintf(err, errlen, "%s: %s", path, why);
    return s;
}

void scenario_free(struct scenario *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->description);
    free(s->namespace);
    free(s->node_selector);
    for (size_t i = 0; i < s->n_node_sizes; i++)
        free(s->node_sizes[i].node);
    free(s->node_sizes);
    free_list(s->fail_vms, s->n_fail_vms);
    free_list(s->kubelet_no_psi, s->n_kubelet_no_psi);
    free_list(s->kubelet_slow, s->n_kubelet_slow);
    for (size_t i = 0; i < s->n_vms; i++)
        vm_clear(&s->vms[i]);
    free(s->vms);
    scenario_deployments_free(s);
    free(s->start_node);
    free_list(s->mco_pools, s->n_mco_pools);
    free_list(s->mco_paused, s->n_mco_paused);
    for (size_t i = 0; i < s->n_events; i++) {
        struct scenario_event *ev = &s->events[i];
        free_list(ev->vms, ev->n_vms);
        free(ev->node);
        free(ev->mc_name);
        free(ev->mc_role);
        free_list(ev->kernel_args, ev->n_kernel_args);
    }
    free(s->events);
    free(s);
}

const struct scenario_vm *scenario_vm_find(const struct scenario *s, const char *name)
{
    for (size_t i = 0; name && i < s->n_vms; i++)
        if (strcmp(s->vms[i].name, name) == 0)
            return &s->vms[i];
    return NULL;
}

void scenario_node_size(const struct scenario *s, const char *node, double *cpus, double *memory)
{
    *cpus = s->node_cpus;
    *memory = s->node_memory;
    for (size_t i = 0; node && i < s->n_node_sizes; i++) {
        if (strcmp(s->node_sizes[i].node, node) != 0)
            continue;
        if (s->node_sizes[i].cpus > 0)
            *cpus = s->node_sizes[i].cpus;
        if (s->node_sizes[i].memory > 0)
            *memory = s->node_sizes[i].memory;
    }
}

bool scenario_vm_always_fails(const struct scenario *s, const char *name)
{
    for (size_t i = 0; name && i < s->n_fail_vms; i++)
        if (strcmp(s->fail_vms[i], name) == 0)
            return true;
    return false;
}
