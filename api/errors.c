/* api_errors: a growable list of field errors. */
#include "api/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/strbuf.h"

int api_errors_add(struct api_errors *e, const char *field, const char *fmt, ...)
{
    if (!e)
        return -1;
    if (BASE_GROW(e->v, e->n + 1, e->cap) < 0) {
        e->oom = true;
        return -1;
    }
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&msg, fmt, ap);
    va_end(ap);
    char *f = strdup(field ? field : "");
    if (rc < 0 || !f) {
        if (rc >= 0)
            free(msg);
        free(f);
        e->oom = true;
        return -1;
    }
    e->v[e->n].field = f;
    e->v[e->n].msg = msg;
    e->n++;
    return -1;
}

const struct api_error *api_errors_find(const struct api_errors *e, const char *field)
{
    for (size_t i = 0; e && i < e->n; i++)
        if (strcmp(e->v[i].field, field) == 0)
            return &e->v[i];
    return NULL;
}

bool api_errors_any_under(const struct api_errors *e, const char *field)
{
    size_t len = strlen(field);
    for (size_t i = 0; e && i < e->n; i++) {
        const char *f = e->v[i].field;
        if (strncmp(f, field, len) == 0 && (f[len] == '\0' || f[len] == '.' || f[len] == '['))
            return true;
    }
    return false;
}

char *api_errors_join(const struct api_errors *e, const char *sep)
{
    struct strbuf b = STRBUF_INIT;
    for (size_t i = 0; i < e->n; i++)
        strbuf_addf(&b, "%s%s: %s", i ? sep : "", e->v[i].field, e->v[i].msg);
    return strbuf_take(&b);
}

void api_errors_free(struct api_errors *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].field);
        free(e->v[i].msg);
    }
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
    e->oom = false;
}
