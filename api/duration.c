/* api_duration: parse and format the API's duration strings. */
#include "api/duration.h"

#include <stdio.h>
#include <string.h>

#define MAX_TERMS 4
#define MAX_DIGITS 5

int api_duration_parse(const char *s, int64_t *out_ms, char *err, size_t errlen)
{
    char dummy[8];
    if (!err) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    if (!s || !*s) {
        snprintf(err, errlen, "must be a duration such as 30s, 1m or 1h30m, got an empty string");
        return -1;
    }
    int64_t total = 0;
    int terms = 0;
    const char *p = s;
    while (*p) {
        int digits = 0;
        int64_t n = 0;
        while (*p >= '0' && *p <= '9') {
            if (++digits > MAX_DIGITS) {
                snprintf(err, errlen, "must be a duration with at most %d digits per term, got '%s'", MAX_DIGITS, s);
                return -1;
            }
            n = n * 10 + (*p++ - '0');
        }
        if (!digits) {
            snprintf(err, errlen, "must be a duration such as 30s, 1m or 1h30m (units ms, s, m, h), got '%s'", s);
            return -1;
        }
        int64_t unit;
        if (p[0] == 'm' && p[1] == 's') {
            unit = 1;
            p += 2;
        } else if (*p == 's') {
            unit = 1000;
            p++;
        } else if (*p == 'm') {
            unit = 60 * 1000;
            p++;
        } else if (*p == 'h') {
            unit = 3600 * 1000;
            p++;
        } else {
            snprintf(err, errlen, "must be a duration such as 30s, 1m or 1h30m (units ms, s, m, h), got '%s'", s);
            return -1;
        }
        if (++terms > MAX_TERMS) {
            snprintf(err, errlen, "must be a duration of at most %d terms, got '%s'", MAX_TERMS, s);
            return -1;
        }
        total += n * unit; /* at most 4 * 99999 h: far from overflow */
    }
    *out_ms = total;
    return 0;
}

char *api_duration_format(int64_t ms, char *buf, size_t len)
{
    if (ms <= 0) {
        snprintf(buf, len, "0s");
        return buf;
    }
    int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, r = ms % 1000;
    size_t off = 0;
    buf[0] = '\0';
    if (h && off < len)
        off += snprintf(buf + off, len - off, "%lldh", (long long)h);
    if (m && off < len)
        off += snprintf(buf + off, len - off, "%lldm", (long long)m);
    if (s && off < len)
        off += snprintf(buf + off, len - off, "%llds", (long long)s);
    if (r && off < len)
        snprintf(buf + off, len - off, "%lldms", (long long)r);
    return buf;
}
