#include "psi/procfs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psi/source.h"

/* Parse the "key=value ..." part of one line (len bytes at s) into ln. */
static int parse_fields(const char *s, size_t len, int lineno, struct psi_procfs_line *ln, char *errbuf, size_t errlen)
{
    enum { K10, K60, K300, KTOTAL, NKEYS };
    static const char *const keys[NKEYS] = {"avg10", "avg60", "avg300", "total"};
    int seen[NKEYS] = {0};
    size_t i = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i >= len)
            break;
        size_t start = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        char tok[128];
        size_t tlen = i - start;
        if (tlen >= sizeof(tok))
            return psi_errbuf_fail(errbuf, errlen, "line %d: field too long", lineno);
        memcpy(tok, s + start, tlen);
        tok[tlen] = '\0';
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || eq[1] == '\0')
            return psi_errbuf_fail(errbuf, errlen, "line %d: field \"%s\" is not key=value", lineno, tok);
        *eq = '\0';
        const char *val = eq + 1;
        int k = -1;
        for (int j = 0; j < NKEYS; j++)
            if (strcmp(tok, keys[j]) == 0)
                k = j;
        if (k < 0)
            continue; /* a key of a later kernel */
        if (seen[k]++)
            return psi_errbuf_fail(errbuf, errlen, "line %d: key %s repeated", lineno, tok);
        char *end = NULL;
        errno = 0;
        if (k == KTOTAL) {
            if (val[0] == '-' || val[0] == '+')
                return psi_errbuf_fail(errbuf, errlen, "line %d: total=%s is not an unsigned integer", lineno, val);
            unsigned long long t = strtoull(val, &end, 10);
            if (errno || !end || *end != '\0')
                return psi_errbuf_fail(errbuf, errlen, "line %d: total=%s is not an unsigned integer", lineno, val);
            ln->total_us = (uint64_t)t;
        } else {
            double d = strtod(val, &end);
            if (errno || !end || *end != '\0' || isnan(d) || isinf(d))
                return psi_errbuf_fail(errbuf, errlen, "line %d: %s=%s is not a number", lineno, tok, val);
            if (d < 0 || d > 100)
                return psi_errbuf_fail(errbuf, errlen, "line %d: %s=%s is outside 0..100", lineno, tok, val);
            if (k == K10)
                ln->avg10 = d;
            else if (k == K60)
                ln->avg60 = d;
            else
                ln->avg300 = d;
        }
    }
    for (int j = 0; j < NKEYS; j++)
        if (!seen[j])
            return psi_errbuf_fail(errbuf, errlen, "line %d: key %s missing", lineno, keys[j]);
    return 0;
}

int psi_procfs_parse(const char *text, struct psi_procfs *out, char *errbuf, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!text)
        return psi_errbuf_fail(errbuf, errlen, "no input");
    const char *p = text;
    int lineno = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        const char *s = p;
        size_t l = len;
        while (l > 0 && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
            l--;
        while (l > 0 && (*s == ' ' || *s == '\t')) {
            s++;
            l--;
        }
        if (l > 0) {
            struct psi_procfs_line *ln;
            int *has;
            if (l >= 5 && strncmp(s, "some", 4) == 0 && (s[4] == ' ' || s[4] == '\t')) {
                ln = &out->some;
                has = &out->has_some;
            } else if (l >= 5 && strncmp(s, "full", 4) == 0 && (s[4] == ' ' || s[4] == '\t')) {
                ln = &out->full;
                has = &out->has_full;
            } else {
                return psi_errbuf_fail(errbuf, errlen, "line %d: expected \"some ...\" or \"full ...\", got \"%.*s\"",
                                       lineno, (int)(l > 40 ? 40 : l), s);
            }
            if (*has)
                return psi_errbuf_fail(errbuf, errlen, "line %d: second \"%.4s\" line", lineno, s);
            if (parse_fields(s + 4, l - 4, lineno, ln, errbuf, errlen) < 0)
                return -1;
            *has = 1;
        }
        p = nl ? nl + 1 : p + len;
    }
    if (!out->has_some)
        return psi_errbuf_fail(errbuf, errlen, "no \"some\" line");
    return 0;
}

int psi_procfs_read(const char *path, struct psi_procfs *out, char *errbuf, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    FILE *f = fopen(path, "r");
    if (!f)
        return psi_errbuf_fail(errbuf, errlen, "%s: %s", path, strerror(errno));
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    int rerr = ferror(f);
    fclose(f);
    if (rerr)
        return psi_errbuf_fail(errbuf, errlen, "%s: read error", path);
    buf[n] = '\0';
    if (memchr(buf, '\0', n))
        return psi_errbuf_fail(errbuf, errlen, "%s: binary content", path);
    char inner[256];
    if (psi_procfs_parse(buf, out, inner, sizeof(inner)) < 0)
        return psi_errbuf_fail(errbuf, errlen, "%s: %s", path, inner);
    return 0;
}
