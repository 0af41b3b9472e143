/* api_json: typed field readers over cJSON that record errors with field paths. */
#include "api/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/duration.h"

char *api_json_path(char *buf, const char *path, const char *key)
{
    if (path && *path)
        snprintf(buf, API_JSON_PATH_MAX, "%s.%s", path, key);
    else
        snprintf(buf, API_JSON_PATH_MAX, "%s", key);
    return buf;
}

char *api_json_index(char *buf, const char *path, int i)
{
    snprintf(buf, API_JSON_PATH_MAX, "%s[%d]", path, i);
    return buf;
}

const cJSON *api_json_get(const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj))
        return NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNull(v) ? NULL : v;
}

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsNumber(v))
        return "number";
    if (cJSON_IsBool(v))
        return "boolean";
    if (cJSON_IsArray(v))
        return "array";
    if (cJSON_IsObject(v))
        return "object";
    return "null";
}

static int wrong_type(const char *path, const char *key, const cJSON *v, const char *want, struct api_errors *errs)
{
    char p[API_JSON_PATH_MAX];
    return api_errors_add(errs, api_json_path(p, path, key), "must be of type %s, got %s", want, type_name(v));
}

int api_json_int(const cJSON *obj, const char *path, const char *key, int64_t *out, struct api_errors *errs)
{
    const cJSON *v = api_json_get(obj, key);
    if (!v)
        return 0;
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!cJSON_IsNumber(v) || d != floor(d) || d < -9.0e15 || d > 9.0e15)
        return wrong_type(path, key, v, "integer", errs);
    *out = (int64_t)d;
    return 0;
}

int api_json_bool(const cJSON *obj, const char *path, const char *key, bool *out, struct api_errors *errs)
{
    const cJSON *v = api_json_get(obj, key);
    if (!v)
        return 0;
    if (!cJSON_IsBool(v))
        return wrong_type(path, key, v, "boolean", errs);
    *out = cJSON_IsTrue(v);
    return 0;
}

int api_json_string(const cJSON *obj, const char *path, const char *key, char **out, struct api_errors *errs)
{
    const cJSON *v = api_json_get(obj, key);
    if (!v)
        return 0;
    if (!cJSON_IsString(v))
        return wrong_type(path, key, v, "string", errs);
    char *s = strdup(v->valuestring);
    if (!s) {
        char p[API_JSON_PATH_MAX];
        return api_errors_add(errs, api_json_path(p, path, key), "out of memory");
    }
    free(*out);
    *out = s;
    return 0;
}

int api_json_enum(const cJSON *obj, const char *path, const char *key, const char *const *names, int n, int *out,
                  struct api_errors *errs)
{
    const cJSON *v = api_json_get(obj, key);
    if (!v)
        return 0;
    if (!cJSON_IsString(v))
        return wrong_type(path, key, v, "string", errs);
    for (int i = 0; i < n; i++) {
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    char list[256] = "", p[API_JSON_PATH_MAX];
    size_t off = 0;
    for (int i = 0; i < n && off < sizeof(list); i++)
        off += snprintf(list + off, sizeof(list) - off, "%s\"%s\"", i ? ", " : "", names[i]);
    return api_errors_add(errs, api_json_path(p, path, key), "unsupported value \"%s\": supported values: %s",
                          v->valuestring, list);
}

int api_json_duration(const cJSON *obj, const char *path, const char *key, int64_t *out_ms, struct api_errors *errs)
{
    const cJSON *v = api_json_get(obj, key);
    if (!v)
        return 0;
    if (!cJSON_IsString(v))
        return wrong_type(path, key, v, "string", errs);
    char why[256], p[API_JSON_PATH_MAX];
    if (api_duration_parse(v->valuestring, out_ms, why, sizeof(why)) < 0)
        return api_errors_add(errs, api_json_path(p, path, key), "%s", why);
    return 0;
}

int api_json_time(const cJSON *obj, const char *path, const char *key, int64_t *out, struct api_errors *errs)
{
    const cJSON *v = api_json_get(obj, key);
    if (!v)
        return 0;
    if (!cJSON_IsString(v))
        return wrong_type(path, key, v, "string", errs);
    char p[API_JSON_PATH_MAX];
    if (api_json_parse_time(v->valuestring, out) < 0)
        return api_errors_add(errs, api_json_path(p, path, key),
                              "must be an RFC 3339 time such as 2024-05-01T10:00:00Z, got '%s'", v->valuestring);
    return 0;
}

int api_json_object(const cJSON *obj, const char *path, const char *key, const cJSON **out, struct api_errors *errs)
{
    const cJSON *v = api_json_get(obj, key);
    *out = NULL;
    if (!v)
        return 0;
    if (!cJSON_IsObject(v))
        return wrong_type(path, key, v, "object", errs);
    *out = v;
    return 0;
}

int api_json_array(const cJSON *obj, const char *path, const char *key, const cJSON **out, struct api_errors *errs)
{
    const cJSON *v = api_json_get(obj, key);
    *out = NULL;
    if (!v)
        return 0;
    if (!cJSON_IsArray(v))
        return wrong_type(path, key, v, "array", errs);
    *out = v;
    return 0;
}

void api_json_strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

int api_json_strv_dup(char *const *v, size_t n, char ***out)
{
    char **copy = calloc(n ? n : 1, sizeof(*copy));
    if (!copy)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!(copy[i] = strdup(v[i]))) {
            api_json_strv_free(copy, i);
            return -1;
        }
    }
    *out = copy;
    return 0;
}

int api_json_strv(const cJSON *obj, const char *path, const char *key, char ***out, size_t *n, struct api_errors *errs)
{
    const cJSON *arr;
    if (api_json_array(obj, path, key, &arr, errs) < 0)
        return -1;
    if (!arr)
        return 0;
    char p[API_JSON_PATH_MAX], ip[API_JSON_PATH_MAX];
    api_json_path(p, path, key);
    int count = cJSON_GetArraySize(arr);
    char **v = calloc(count ? (size_t)count : 1, sizeof(*v));
    if (!v)
        return api_errors_add(errs, p, "out of memory");
    size_t k = 0;
    int rc = 0;
    const cJSON *it;
    int i = 0;
    cJSON_ArrayForEach (it, arr) {
        if (!cJSON_IsString(it)) {
            rc = api_errors_add(errs, api_json_index(ip, p, i), "must be of type string, got %s", type_name(it));
        } else if (!(v[k++] = strdup(it->valuestring))) {
            k--;
            rc = api_errors_add(errs, p, "out of memory");
        }
        i++;
    }
    if (rc < 0) {
        api_json_strv_free(v, k);
        return -1;
    }
    api_json_strv_free(*out, *n);
    *out = v;
    *n = k;
    return 0;
}

void api_json_unknown(const cJSON *obj, const char *path, const char *const *known, struct api_errors *warns)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, obj) {
        bool found = false;
        for (const char *const *k = known; *k && !found; k++)
            found = strcmp(*k, it->string) == 0;
        if (!found) {
            char p[API_JSON_PATH_MAX];
            api_errors_add(warns, api_json_path(p, path, it->string), "unknown field, ignored");
        }
    }
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int api_json_parse_time(const char *s, int64_t *out)
{
    int Y, M, D, h, m, sec;
    if (strlen(s) < 20 || digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
        digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) || s[13] != ':' ||
        digits(s + 14, 2, &m) || s[16] != ':' || digits(s + 17, 2, &sec))
        return -1;
    static const int month_days[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
    if (M < 1 || M > 12 || D < 1 || D > month_days[M - 1] || (M == 2 && D == 29 && !leap) || h > 23 || m > 59 ||
        sec > 60)
        return -1;
    const char *p = s + 19;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    int offset = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return -1;
        offset = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    struct tm tm = {.tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = m, .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1 && !(Y == 1969 && M == 12 && D == 31))
        return -1;
    *out = (int64_t)t - offset;
    return 0;
}

int64_t api_json_time_or(const char *s, int64_t none)
{
    int64_t t;
    return s && api_json_parse_time(s, &t) == 0 ? t : none;
}

char *api_json_format_time(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm))
        snprintf(buf, len, "1970-01-01T00:00:00Z");
    else
        strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}
