/* resources: quantities and pod requests (see resources.h). */
#include "reconcile/move/resources.h"

#include <math.h>
#include <string.h>

#include "api/quantity.h"

double resources_get(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    double d;
    if (cJSON_IsNumber(v))
        return isfinite(v->valuedouble) && v->valuedouble >= 0 ? v->valuedouble : NAN;
    if (cJSON_IsString(v) && api_quantity_parse(v->valuestring, &d, NULL, 0) == 0)
        return d;
    return NAN;
}

static double request_of(const cJSON *container, const char *res)
{
    const cJSON *req =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(container, "resources"), "requests");
    double v = resources_get(req, res);
    return isnan(v) || v < 0 ? 0 : v;
}

static bool is_sidecar(const cJSON *init)
{
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(init, "restartPolicy");
    return cJSON_IsString(rp) && strcmp(rp->valuestring, "Always") == 0;
}

static double effective(const cJSON *spec, const char *res)
{
    double sum = 0, init_max = 0, sidecars = 0;
    const cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
        sum += request_of(c, res);
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive(spec, "initContainers")) {
        double r = request_of(c, res);
        if (is_sidecar(c)) {
            sidecars += r;
            continue;
        }
        if (sidecars + r > init_max)
            init_max = sidecars + r;
    }
    sum += sidecars;
    double overhead = resources_get(cJSON_GetObjectItemCaseSensitive(spec, "overhead"), res);
    return (sum > init_max ? sum : init_max) + (isnan(overhead) || overhead < 0 ? 0 : overhead);
}

void resources_pod_requests(const cJSON *pod, double *cpu, double *memory)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    *cpu = effective(spec, "cpu");
    *memory = effective(spec, "memory");
}
