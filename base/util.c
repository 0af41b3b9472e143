/* util: small helpers (see util.h). */
#include "base/util.h"

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
