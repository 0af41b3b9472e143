/* api_quantity: Kubernetes resource quantities (see quantity.h). */
#include "api/quantity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *s, const char *why)
{
    if (err && errlen)
        snprintf(err, errlen, "invalid quantity \"%.64s%s\": %s", s ? s : "(null)", s && strlen(s) > 64 ? "..." : "",
                 why);
    return -1;
}

/* Store v unless it overflowed a double (1e999, 1e308Ei). */
static int finite_out(double v, double *out, char *err, size_t errlen, const char *s)
{
    if (!isfinite(v))
        return fail(err, errlen, s, "too large");
    *out = v;
    return 0;
}

int api_quantity_parse(const char *s, double *out, char *err, size_t errlen)
{
    static const struct {
        const char *suffix;
        double mult;
    } suffixes[] = {
        {"", 1.0},
        {"Ki", 1024.0},
        {"Mi", 1048576.0},
        {"Gi", 1073741824.0},
        {"Ti", 1099511627776.0},
        {"Pi", 1125899906842624.0},
        {"Ei", 1152921504606846976.0},
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
    if (!s || !*s)
        return fail(err, errlen, s, "empty");
    const char *p = s;
    if (*p == '-')
        return fail(err, errlen, s, "negative: a capacity, request or size is at least 0");
    if (*p == '+')
        p++;
    size_t digits = strspn(p, "0123456789");
    const char *q = p + digits; /* just past the number's mantissa */
    size_t frac = 0;
    if (*q == '.') {
        frac = strspn(q + 1, "0123456789");
        q += 1 + frac;
    }
    if (digits + frac == 0)
        return fail(err, errlen, s, "no number");
    char *end;
    double v = strtod(s, &end);
    if (end < q)
        return fail(err, errlen, s, "no number");
    /* strtod read further: an exponent ("1e3") is fine when nothing follows it; hexadecimal
     * ("0x10") is no quantity */
    if (end > q) {
        if ((*q != 'e' && *q != 'E') || *end != '\0')
            return fail(err, errlen, s, *q == 'x' || *q == 'X' ? "hexadecimal is not a quantity" : "unknown suffix");
        return finite_out(v, out, err, errlen, s);
    }
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (strcmp(end, suffixes[i].suffix) == 0)
            return finite_out(v * suffixes[i].mult, out, err, errlen, s);
    return fail(err, errlen, s, "unknown suffix");
}
