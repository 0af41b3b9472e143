/* quantity_format: resource amounts as quantities (see quantity_format.h). */
#include "hack/sim/quantity_format.h"

#include <math.h>
#include <stdio.h>

char *quantity_format_bytes(double bytes, char *buf, size_t len)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {{"Gi", 1024.0 * 1024 * 1024}, {"Mi", 1024.0 * 1024}, {"Ki", 1024.0}};
    double b = bytes < 0 ? 0 : floor(bytes + 0.5);
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (b >= units[i].mult && fmod(b, units[i].mult) == 0) {
            snprintf(buf, len, "%.0f%s", b / units[i].mult, units[i].suffix);
            return buf;
        }
    }
    snprintf(buf, len, "%.0f", b);
    return buf;
}

char *quantity_format_cpu(double cores, char *buf, size_t len)
{
    if (cores < 0)
        cores = 0;
    double milli = ceil(cores * 1000.0 - 1e-6);
    if (fmod(milli, 1000.0) == 0)
        snprintf(buf, len, "%.0f", milli / 1000.0);
    else
        snprintf(buf, len, "%.0fm", milli);
    return buf;
}
