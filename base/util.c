/* util: small helpers (see util.h). */
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *base_strdup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

bool base_same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

const char *base_nonempty(const char *s)
{
    return s && *s ? s : NULL;
}

const char *base_or_empty(const char *s)
{
    return s ? s : "";
}

void base_append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = len ? strlen(buf) : 0;
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}
