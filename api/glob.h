/* api_glob: namespace patterns of spec.eviction.excludedNamespaces: a namespace name in
 * which '*' stands for any run of characters (empty included) and '?' for any one character. */
#ifndef PSI_API_GLOB_H
#define PSI_API_GLOB_H

#include <stdbool.h>

/* NULL when pattern is a valid namespace pattern (1..63 of a-z, 0-9, '-', '*', '?', not
 * beginning or ending with '-', so that it can match some namespace), else a static reason. */
const char *api_glob_check(const char *pattern);

/* True when name matches pattern as a whole. */
bool api_glob_match(const char *pattern, const char *name);

#endif
