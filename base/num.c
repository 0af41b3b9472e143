#include "base/num.h"

#include <math.h>

int kube_num_int(const cJSON *v, int64_t min, int64_t max, int64_t *out)
{
    if (!cJSON_IsNumber(v))
        return -1;
    double d = v->valuedouble;
    /* min and max as doubles may round outwards (INT64_MAX becomes 2^63): compare with
     * the bounds strictly where rounding could let an out-of-range value through */
    if (!isfinite(d) || d != floor(d) || d < (double)min || d >= 9223372036854775808.0)
        return -1;
    int64_t i = (int64_t)d;
    if (i < min || i > max)
        return -1;
    *out = i;
    return 0;
}

int64_t kube_num_int_or(const cJSON *v, int64_t min, int64_t max, int64_t fallback)
{
    int64_t i = fallback;
    return kube_num_int(v, min, max, &i) == 0 ? i : fallback;
}
