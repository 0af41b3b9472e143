/* strbuf: a growing string (see strbuf.h). */
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* Room for n more bytes and the terminator. */
static bool reserve(struct strbuf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n > (size_t)-1 / 2 - b->len || base_grow(&b->s, b->len + n + 1, &b->cap, 1) < 0) {
        b->failed = true;
        return false;
    }
    return true;
}

void strbuf_addn(struct strbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void strbuf_add(struct strbuf *b, const char *s)
{
    if (s)
        strbuf_addn(b, s, strlen(s));
}

void strbuf_addf(struct strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

bool strbuf_failed(const struct strbuf *b)
{
    return b->failed;
}

const char *strbuf_str(const struct strbuf *b)
{
    return b->s ? b->s : "";
}

char *strbuf_take(struct strbuf *b)
{
    char *s = b->failed ? NULL : b->s ? b->s : strdup("");
    if (b->failed)
        free(b->s);
    *b = (struct strbuf)STRBUF_INIT;
    return s;
}

void strbuf_release(struct strbuf *b)
{
    free(b->s);
    *b = (struct strbuf)STRBUF_INIT;
}
