#include "base/base64.h"

#include <stdlib.h>
#include <string.h>

static int sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Free buf, report where decoding failed, return -1. */
static int fail_at(unsigned char *buf, size_t *bad_at, size_t at)
{
    free(buf);
    if (bad_at)
        *bad_at = at;
    return -1;
}

int kube_base64_decode(const char *text, unsigned char **out, size_t *out_len, size_t *bad_at)
{
    size_t n = strlen(text);
    unsigned char *buf = malloc(n / 4 * 3 + 4);
    if (!buf) {
        if (bad_at)
            *bad_at = 0;
        return -1;
    }
    size_t len = 0, pad = 0, digits = 0;
    unsigned int acc = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\r' || c == '\n' || c == ' ' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            /* padding only completes a group of 2 or 3 digits, at most 2 of them */
            if (pad > 2 || (digits % 4) + pad > 4 || digits % 4 < 2)
                return fail_at(buf, bad_at, i);
            continue;
        }
        int v = sextet(c);
        if (v < 0 || pad) /* not base64, or data after padding */
            return fail_at(buf, bad_at, i);
        acc = (acc << 6) | (unsigned int)v;
        digits++;
        if (digits % 4 == 0) {
            buf[len++] = (unsigned char)(acc >> 16);
            buf[len++] = (unsigned char)(acc >> 8);
            buf[len++] = (unsigned char)acc;
            acc = 0;
        }
    }
    switch (digits % 4) {
    case 1: /* a lone digit carries no full byte */ return fail_at(buf, bad_at, n);
    case 2:
        if (pad && pad != 2)
            return fail_at(buf, bad_at, n);
        buf[len++] = (unsigned char)(acc >> 4);
        break;
    case 3:
        if (pad && pad != 1)
            return fail_at(buf, bad_at, n);
        buf[len++] = (unsigned char)(acc >> 10);
        buf[len++] = (unsigned char)(acc >> 2);
        break;
    default:
        if (pad)
            return fail_at(buf, bad_at, n);
        break;
    }
    buf[len] = 0;
    *out = buf;
    *out_len = len;
    return 0;
}
