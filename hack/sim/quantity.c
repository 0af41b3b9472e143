/* quantity: Kubernetes resource quantities (see quantity.h). */
#include "quantity.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *s, const char *why)
{
    if (err && errlen)
        snprintf(err, errlen, "invalid quantity \"%s\": %s", s ? s : "(null)", why);
    return -1;
}

int quantity_parse(const char *s, double *out, char *err, size_t errlen)
{
    if (!s || !*s)
        return fail(err, errlen, s, "empty");
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
        return fail(err, errlen, s, "no number");
    char *end;
    double v = strtod(s, &end);
    /* strtod accepts "inf", "nan" and hex; the checks above and below keep them out */
    if (end == s || !isfinite(v))
        return fail(err, errlen, s, "no number");
    for (const char *q = s; q < end; q++)
        if (*q == 'x' || *q == 'X')
            return fail(err, errlen, s, "hexadecimal is not a quantity");
    static const struct {
        const char *suffix;
        double mult;
    } suffixes[] = {
        {"", 1},
        {"Ki", 1024.0},
        {"Mi", 1024.0 * 1024},
        {"Gi", 1024.0 * 1024 * 1024},
        {"Ti", 1024.0 * 1024 * 1024 * 1024},
        {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
        {"Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
        {"n", 1e-9},
        {"u", 1e-6},
        {"m", 1e-3},
        {"k", 1e3},
        {"M", 1e6},
        {"G", 1e9},
        {"T", 1e12},
        {"P", 1e15},
        {"E", 1e18},
    };
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (strcmp(end, suffixes[i].suffix) == 0) {
            *out = v * suffixes[i].mult;
            return 0;
        }
    }
    return fail(err, errlen, s, "unknown suffix");
}

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
