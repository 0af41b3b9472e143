/* jx: read-only accessors over cJSON API objects, shared by the controller and the simulator.
 * Pure. Every getter takes NULL objects and returns NULL (or the fallback) when a step is
 * missing or of another type.
 *
 * "" and NULL: jx_str returns a string member as it is, "" included; NULL means it is
 * missing (or not a string). Where an empty string means the same as a missing one (most
 * optional API fields), say so with jx_nonempty. jx_eq compares that way too: a missing
 * string equals "". */
#ifndef PSI_BASE_JX_H
#define PSI_BASE_JX_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* The member at a dot-separated path ("status.nodeName"), or NULL. */
const cJSON *jx_get(const cJSON *obj, const char *path);

/* The member key of obj, the key taken as it is (it may hold dots and slashes), or NULL. */
const cJSON *jx_at(const cJSON *obj, const char *key);

/* The string member key of obj, the key taken as it is, "" included; or NULL. */
const char *jx_at_str(const cJSON *obj, const char *key);

/* The string at path ("" included), or NULL. */
const char *jx_str(const cJSON *obj, const char *path);

/* The string at path when it is not empty, or NULL ("" counts as missing). */
const char *jx_nonempty(const cJSON *obj, const char *path);

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
