/* wildcard: namespace patterns (see wildcard.h). */
#include "api/wildcard.h"

#include <string.h>

const char *api_wildcard_check(const char *pattern)
{
    size_t n = strlen(pattern);
    if (n == 0)
        return "must not be empty";
    if (n > 63)
        return "must be at most 63 characters";
    for (size_t i = 0; i < n; i++) {
        char c = pattern[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '*' || c == '?'))
            return "may contain only lowercase alphanumerics, '-', and the wildcards '*' and '?'";
    }
    if (pattern[0] == '-' || pattern[n - 1] == '-')
        return "must not begin or end with '-' (no namespace does)";
    return NULL;
}

bool api_wildcard_match(const char *p, const char *s)
{
    /* Iterative matching with one backtrack point (the last '*'): linear in practice. */
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*p == '?' || (*p && *p != '*' && *p == *s)) {
            p++;
            s++;
        } else if (*p == '*') {
            star = p++;
            resume = s;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}
