/* resources: quantities and pod requests (see resources.h). */
#include "resources.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int resources_parse_quantity(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    size_t digits = strspn(p, "0123456789");
    const char *q = p + digits;
    size_t frac = 0;
    if (*q == '.') {
        frac = strspn(q + 1, "0123456789");
        q += 1 + frac;
    }
    if (digits + frac == 0)
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (end < q)
        return -1;
    /* strtod may have read an exponent ("1e3"): accept it only when it is all that follows */
    const char *suffix = end;
    if (end > q) {
        if ((*q != 'e' && *q != 'E') || *suffix != '\0')
            return -1;
        *out = v;
        return 0;
    }
    static const struct {
        const char *s;
        double mult;
    } suffixes[] = {
        {"Ki", 1024.0},
        {"Mi", 1048576.0},
        {"Gi", 1073741824.0},
        {"Ti", 1099511627776.0},
        {"Pi", 1125899906842624.0},
        {"Ei", 1152921504606846976.0},
        {"n", 1e-9},
        {"u", 1e-6},
        {"m", 1e-3},
        {"", 1.0},
        {"k", 1e3},
        {"M", 1e6},
        {"G", 1e9},
        {"T", 1e12},
        {"P", 1e15},
        {"E", 1e18},
    };
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (strcmp(suffix, suffixes[i].s) == 0) {
            *out = v * suffixes[i].mult;
            return 0;
        }
    return -1;
}

double resources_get(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    double d;
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (cJSON_IsString(v) && resources_parse_quantity(v->valuestring, &d) == 0)
        return d;
    return NAN;
}

static double request_of(const cJSON *container, const char *res)
{
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(container, "resources"), "requests");
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
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
        sum += request_of(c, res);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "initContainers")) {
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
