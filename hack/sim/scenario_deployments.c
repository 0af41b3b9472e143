/* scenario_deployments: the `deployments` section of a scenario (see scenario_deployments.h). */
#include "hack/sim/scenario_deployments.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "hack/sim/scenario.h"

#define MiB (1024.0 * 1024)

/* A name of at most 40 characters usable as a DNS label (lowercase, digits, inner '-'). */
static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 40)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || (ch == '-' && i > 0 && i + 1 < n)))
            return false;
    }
    return true;
}

/* A number or a quantity string at key of obj into *out (absent: untouched). */
static int quantity(const cJSON *obj, const char *key, const char *path, double *out, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    double d = NAN;
    char why[160];
    if (cJSON_IsNumber(v)) {
        d = v->valuedouble;
    } else if (!cJSON_IsString(v)) {
        snprintf(err, errlen, "%s.%s: must be a number or a quantity", path, key);
        return -1;
    } else if (api_quantity_parse(v->valuestring, &d, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "%s.%s: %s", path, key, why);
        return -1;
    }
    if (!isfinite(d) || d < 0) {
        snprintf(err, errlen, "%s.%s: must be a non-negative number", path, key);
        return -1;
    }
    *out = d;
    return 0;
}

static int labels(const cJSON *obj, const char *path, struct scenario_deployment *d, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "labels");
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsObject(v)) {
        snprintf(err, errlen, "%s.labels: must be a mapping", path);
        return -1;
    }
    size_t n = (size_t)cJSON_GetArraySize(v);
    d->labels = calloc(n ? n : 1, sizeof(*d->labels));
    if (!d->labels) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const cJSON *it;
    cJSON_ArrayForEach (it, v) {
        if (!cJSON_IsString(it)) {
            snprintf(err, errlen, "%s.labels.%s: must be a string", path, it->string);
            return -1;
        }
        struct scenario_label *l = &d->labels[d->n_labels++];
        l->key = strdup(it->string);
        l->value = strdup(it->valuestring);
        if (!l->key || !l->value) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* The keys of obj must all be known. */
static int known_keys(const cJSON *obj, const char *path, char *err, size_t errlen)
{
    static const char *const keys[] = {"name",          "replicas", "cpu", "memoryDemand", "io", "cpuRequest",
                                       "memoryRequest", "labels",   NULL};
    const cJSON *it;
    cJSON_ArrayForEach (it, obj) {
        bool ok = false;
        for (const char *const *k = keys; *k && !ok; k++)
            ok = strcmp(*k, it->string) == 0;
        if (!ok) {
            snprintf(err, errlen, "%s.%s: unknown field", path, it->string);
            return -1;
        }
    }
    return 0;
}

/* One entry into d (defaults first). */
static int parse_one(const struct scenario *s, const cJSON *it, const char *path, struct scenario_deployment *d,
                     char *err, size_t errlen)
{
    *d = (struct scenario_deployment){NULL, 1, 0.1, 256 * MiB, 1, 0.1, 128 * MiB, NULL, 0};
    if (!cJSON_IsObject(it)) {
        snprintf(err, errlen, "%s: must be a mapping", path);
        return -1;
    }
    if (known_keys(it, path, err, errlen) < 0)
        return -1;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
    if (!cJSON_IsString(name)) {
        snprintf(err, errlen, "%s.name: required, a string", path);
        return -1;
    }
    if (!valid_name(name->valuestring)) {
        snprintf(err, errlen,
                 "%s.name: \"%s\" is not a valid Deployment name here (lowercase letters, digits and '-', at most 40)",
                 path, name->valuestring);
        return -1;
    }
    if (scenario_deployment_find(s, name->valuestring)) {
        snprintf(err, errlen, "%s.name: Deployment \"%s\" is defined twice", path, name->valuestring);
        return -1;
    }
    if (!(d->name = strdup(name->valuestring))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "replicas");
    if (r && (!cJSON_IsNumber(r) || r->valuedouble != floor(r->valuedouble) || r->valuedouble < 0 ||
              r->valuedouble > 1000)) {
        snprintf(err, errlen, "%s.replicas: must be an integer between 0 and 1000", path);
        return -1;
    }
    if (r)
        d->replicas = (int)r->valuedouble;
    if (quantity(it, "cpu", path, &d->cpu_demand, err, errlen) < 0 ||
        quantity(it, "memoryDemand", path, &d->memory_demand, err, errlen) < 0 ||
        quantity(it, "io", path, &d->io_demand, err, errlen) < 0 ||
        quantity(it, "cpuRequest", path, &d->cpu_request, err, errlen) < 0 ||
        quantity(it, "memoryRequest", path, &d->memory_request, err, errlen) < 0)
        return -1;
    if (d->cpu_request < 0.001) {
        snprintf(err, errlen, "%s.cpuRequest: must be at least 1m", path);
        return -1;
    }
    return labels(it, path, d, err, errlen);
}

static void clear(struct scenario_deployment *d)
{
    free(d->name);
    for (size_t i = 0; i < d->n_labels; i++) {
        free(d->labels[i].key);
        free(d->labels[i].value);
    }
    free(d->labels);
}

int scenario_deployments_parse(struct scenario *s, const cJSON *list, char *err, size_t errlen)
{
    if (!list || cJSON_IsNull(list))
        return 0;
    if (!cJSON_IsArray(list)) {
        snprintf(err, errlen, "deployments: must be a list");
        return -1;
    }
    size_t n = (size_t)cJSON_GetArraySize(list);
    s->deployments = calloc(n ? n : 1, sizeof(*s->deployments));
    if (!s->deployments) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const cJSON *it;
    cJSON_ArrayForEach (it, list) {
        char path[40];
        snprintf(path, sizeof(path), "deployments[%zu]", s->n_deployments);
        struct scenario_deployment d;
        if (parse_one(s, it, path, &d, err, errlen) < 0) {
            clear(&d);
            return -1;
        }
        s->deployments[s->n_deployments++] = d;
    }
    return 0;
}

void scenario_deployments_free(struct scenario *s)
{
    for (size_t i = 0; i < s->n_deployments; i++)
        clear(&s->deployments[i]);
    free(s->deployments);
    s->deployments = NULL;
    s->n_deployments = 0;
}

const struct scenario_deployment *scenario_deployment_find(const struct scenario *s, const char *name)
{
    for (size_t i = 0; name && i < s->n_deployments; i++)
        if (strcmp(s->deployments[i].name, name) == 0)
            return &s->deployments[i];
    return NULL;
}
