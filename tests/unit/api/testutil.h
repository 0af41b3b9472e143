/* Helpers shared by the api unit tests: test data files, YAML to cJSON, and the invalid
 * document table. */
#ifndef PSI_TEST_API_TESTUTIL_H
#define PSI_TEST_API_TESTUTIL_H

#include <cjson/cJSON.h>

/* Path of a file under the source tree: rel is relative to the repository root. Returns a
 * static buffer, overwritten by the next call. */
const char *tu_src_path(const char *rel);

/* The whole content of path, NUL-terminated (caller frees); fails the test when unreadable. */
char *tu_read_file(const char *path);

/* The JSON file at rel (from the repository root); fails the test when it does not parse. */
cJSON *tu_load_json(const char *rel);

/* The first YAML document of the file at rel as cJSON: plain scalars become numbers, booleans
 * and null as YAML 1.2's core schema says, everything else strings. Fails the test on error. */
cJSON *tu_load_yaml(const char *rel);

/* Parse a JSON string; fails the test when it does not parse. */
cJSON *tu_json(const char *text);

#endif
