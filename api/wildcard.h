/* wildcard: namespace patterns of spec.eviction.excludedNamespaces: a namespace name in
 * which '*' stands for any run of characters (empty included) and '?' for any one character.
 * Pure. (Not named glob.h: that is the C library's.) */
#ifndef PSI_API_WILDCARD_H
#define PSI_API_WILDCARD_H

#include <stdbool.h>

/* NULL when pattern is a valid namespace pattern (1..63 of a-z, 0-9, '-', '*', '?', not
 * beginning or ending with '-', so that it can match some namespace), else a static reason. */
const char *api_wildcard_check(const char *pattern);

/* True when name matches pattern as a whole. */
bool api_wildcard_match(const char *pattern, const char *name);

#endif
