/* api_names: Kubernetes name syntax checks. */
#include "api/names.h"

#include <stdbool.h>
#include <string.h>

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* n characters of s form a name part: 1..63 of [-A-Za-z0-9_.], alphanumeric at both ends. */
static const char *check_name_part(const char *s, size_t n)
{
    if (n == 0)
        return "name part must not be empty";
    if (n > 63)
        return "name part must be at most 63 characters";
    if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return "name part must begin and end with an alphanumeric character";
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return "name part may contain only alphanumerics, '-', '_' and '.'";
    return NULL;
}

/* n characters of s form a DNS-1123 label. */
static const char *check_dns_label_n(const char *s, size_t n)
{
    if (n == 0)
        return "must not be empty";
    if (n > 63)
        return "must be at most 63 characters";
    if (!is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
        return "must begin and end with a lowercase alphanumeric character";
    for (size_t i = 0; i < n; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return "may contain only lowercase alphanumerics and '-'";
    return NULL;
}

static const char *check_dns_subdomain_n(const char *s, size_t n)
{
    if (n == 0)
        return "must not be empty";
    if (n > 253)
        return "must be at most 253 characters";
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (check_dns_label_n(s + start, i - start))
                return "must be dot-separated lowercase alphanumerics and '-', each part beginning "
                       "and ending with an alphanumeric";
            start = i + 1;
        }
    }
    return NULL;
}

const char *api_names_check_qualified(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return check_name_part(s, strlen(s));
    if (strchr(slash + 1, '/'))
        return "must contain at most one '/'";
    if (slash == s)
        return "prefix before '/' must not be empty";
    if (check_dns_subdomain_n(s, (size_t)(slash - s))) {
        if (slash - s > 253)
            return "prefix before '/' must be at most 253 characters";
        return "prefix before '/' must be a DNS subdomain (lowercase alphanumerics, '-' and '.')";
    }
    return check_name_part(slash + 1, strlen(slash + 1));
}

const char *api_names_check_label_value(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return NULL;
    if (n > 63)
        return "must be at most 63 characters";
    const char *why = check_name_part(s, n);
    if (why)
        return "must begin and end with an alphanumeric character and contain only alphanumerics, "
               "'-', '_' and '.'";
    return NULL;
}

const char *api_names_check_dns_label(const char *s)
{
    return check_dns_label_n(s, strlen(s));
}

const char *api_names_check_dns_subdomain(const char *s)
{
    return check_dns_subdomain_n(s, strlen(s));
}
