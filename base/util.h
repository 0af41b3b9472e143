/* util: the small helpers every module wanted a copy of. Pure except base_mono_ms (a clock,
 * defined in clock.c). */
#ifndef PSI_BASE_UTIL_H
#define PSI_BASE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A copy of s (caller frees), NULL when s is NULL. Check: NULL also means no memory when s
 * is set. */
char *base_strdup_or_null(const char *s);

/* Whether a and b are both set and equal (NULL equals nothing). Compare jx_eq, for which a
 * missing string and "" are the same. */
bool base_same(const char *a, const char *b);

/* s when it is set and not empty, else NULL ("" counts as missing). */
const char *base_nonempty(const char *s);

/* s, or "" when s is NULL. */
const char *base_or_empty(const char *s);

/* Append printf-formatted text to buf (len bytes, terminated), cut at its end; len 0: nothing. */
void base_append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Milliseconds on the monotonic clock (for durations and deadlines, not for dates). */
int64_t base_mono_ms(void);

#endif
