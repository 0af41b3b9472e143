/* jx: read-only helpers over cJSON API objects. Pure. Every getter takes NULL objects and
 * returns NULL (or the fallback) when a step is missing or of another type. */
#ifndef PSI_SIM_JX_H
#define PSI_SIM_JX_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* The member at a dot-separated path ("status.nodeName"), or NULL. */
const cJSON *jx_get(const cJSON *obj, const char *path);

/* The string at path, or NULL. */
const char *jx_str(const cJSON *obj, const char *path);

/* The string at path, or "" (never NULL). */
const char *jx_str0(const cJSON *obj, const char *path);

/* The number at path, or fallback. */
double jx_num(const cJSON *obj, const char *path, double fallback);

/* The boolean at path, or fallback. */
bool jx_bool(const cJSON *obj, const char *path, bool fallback);

/* metadata.labels[key] (the key may hold dots and slashes), or NULL. */
const char *jx_label(const cJSON *obj, const char *key);

/* metadata.annotations[key] (the key may hold dots and slashes), or NULL. */
const char *jx_annotation(const cJSON *obj, const char *key);

/* The element of status.conditions whose type is type, or NULL. */
const cJSON *jx_condition(const cJSON *obj, const char *type);

/* Whether status.conditions[type].status is "True". */
bool jx_condition_true(const cJSON *obj, const char *type);

/* Whether s equals t (both may be NULL; NULL equals only NULL or ""). */
bool jx_eq(const char *s, const char *t);

#endif
