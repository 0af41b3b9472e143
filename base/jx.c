/* jx: read-only helpers over cJSON API objects (see jx.h). */
#include "base/jx.h"

#include <string.h>

const cJSON *jx_get(const cJSON *obj, const char *path)
{
    const cJSON *cur = obj;
    const char *p = path;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char key[128];
        if (n >= sizeof(key) || !cJSON_IsObject(cur))
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        p += n + (dot ? 1 : 0);
    }
    return cur;
}

const cJSON *jx_at(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

const char *jx_at_str(const cJSON *obj, const char *key)
{
    const cJSON *v = jx_at(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *jx_nonempty(const cJSON *obj, const char *path)
{
    const char *s = jx_str(obj, path);
    return s && *s ? s : NULL;
}

const char *jx_str(const cJSON *obj, const char *path)
{
    const cJSON *v = jx_get(obj, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *jx_str0(const cJSON *obj, const char *path)
{
    const char *s = jx_str(obj, path);
    return s ? s : "";
}

double jx_num(const cJSON *obj, const char *path, double fallback)
{
    const cJSON *v = jx_get(obj, path);
    return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

bool jx_bool(const cJSON *obj, const char *path, bool fallback)
{
    const cJSON *v = jx_get(obj, path);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : fallback;
}

static const char *meta_map(const cJSON *obj, const char *map, const char *key)
{
    const cJSON *m = jx_get(obj, map);
    const cJSON *v = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *jx_label(const cJSON *obj, const char *key)
{
    return meta_map(obj, "metadata.labels", key);
}

const char *jx_annotation(const cJSON *obj, const char *key)
{
    return meta_map(obj, "metadata.annotations", key);
}

const cJSON *jx_condition(const cJSON *obj, const char *type)
{
    const cJSON *conds = jx_get(obj, "status.conditions");
    const cJSON *c;
    cJSON_ArrayForEach (c, (cJSON_IsArray(conds) ? conds : NULL)) {
        if (jx_eq(jx_str(c, "type"), type))
            return c;
    }
    return NULL;
}

bool jx_condition_true(const cJSON *obj, const char *type)
{
    return jx_eq(jx_str(jx_condition(obj, type), "status"), "True");
}

bool jx_eq(const char *s, const char *t)
{
    if (!s || !*s)
        return !t || !*t;
    return t && strcmp(s, t) == 0;
}
