/* api_json: typed reads of fields of a cJSON object, for the decoders of this directory.
 * Each reader leaves *out alone when the field is absent or null (so a caller pre-fills the
 * default), stores the value when it has the right type, and otherwise adds an error naming
 * path.key to errs and returns -1. */
#ifndef PSI_API_JSON_H
#define PSI_API_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/errors.h"

/* Longest field path the decoders build. */
#define API_JSON_PATH_MAX 512

/* Write "path.key" (or "key" when path is empty) into buf of API_JSON_PATH_MAX bytes; returns buf. */
char *api_json_path(char *buf, const char *path, const char *key);

/* Write "path[i]" into buf of API_JSON_PATH_MAX bytes; returns buf. */
char *api_json_index(char *buf, const char *path, int i);

/* obj[key] when present and not null, else NULL. */
const cJSON *api_json_get(const cJSON *obj, const char *key);

/* An integral JSON number into *out. */
int api_json_int(const cJSON *obj, const char *path, const char *key, int64_t *out, struct api_errors *errs);

/* A JSON boolean into *out. */
int api_json_bool(const cJSON *obj, const char *path, const char *key, bool *out, struct api_errors *errs);

/* A JSON string, duplicated into *out (the previous *out is freed). */
int api_json_string(const cJSON *obj, const char *path, const char *key, char **out, struct api_errors *errs);

/* A JSON string that must be one of names[0..n) into *out (its index). */
int api_json_enum(const cJSON *obj, const char *path, const char *key, const char *const *names, int n, int *out,
                  struct api_errors *errs);

/* A duration string ("30s") into *out_ms. */
int api_json_duration(const cJSON *obj, const char *path, const char *key, int64_t *out_ms, struct api_errors *errs);

/* An RFC 3339 timestamp string into *out (Unix seconds). */
int api_json_time(const cJSON *obj, const char *path, const char *key, int64_t *out, struct api_errors *errs);

/* A JSON object into *out (NULL when absent or null). */
int api_json_object(const cJSON *obj, const char *path, const char *key, const cJSON **out, struct api_errors *errs);

/* A JSON array into *out (NULL when absent or null). */
int api_json_array(const cJSON *obj, const char *path, const char *key, const cJSON **out, struct api_errors *errs);

/* A JSON array of strings into a new NULL-free vector *out of *n entries (previous freed with
 * api_json_strv_free); an element that is not a string is an error at path.key[i]. */
int api_json_strv(const cJSON *obj, const char *path, const char *key, char ***out, size_t *n, struct api_errors *errs);

/* Free a vector of n strings. */
void api_json_strv_free(char **v, size_t n);

/* Duplicate a vector of n strings into *out; returns 0, or -1 on no memory. */
int api_json_strv_dup(char *const *v, size_t n, char ***out);

/* Add a warning "unknown field, ignored" to warns for each key of obj not in known (NULL-terminated). */
void api_json_unknown(const cJSON *obj, const char *path, const char *const *known, struct api_errors *warns);

/* Parse an RFC 3339 timestamp ("2024-05-01T10:00:00Z", fraction and offset allowed) to Unix seconds. */
int api_json_parse_time(const char *s, int64_t *out);

/* s parsed as api_json_parse_time does, or none when s is NULL or not a timestamp. */
int64_t api_json_time_or(const char *s, int64_t none);

/* Format Unix seconds as "YYYY-MM-DDTHH:MM:SSZ" into buf (at least 21 bytes); returns buf. */
char *api_json_format_time(int64_t t, char *buf, size_t len);

#endif
