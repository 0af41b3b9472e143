/* api_duration: the durations of the PsiRebalance API ("30s", "1m30s", "500ms", "2h").
 * The accepted language is exactly the CRD's pattern ^([0-9]{1,5}(ms|s|m|h)){1,4}$: one to
 * four terms, each up to five digits and a unit, in any order (as Go and CEL accept them). */
#ifndef PSI_API_DURATION_H
#define PSI_API_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Parse s into milliseconds; returns 0, or -1 with why in err (of errlen bytes, may be NULL). */
int api_duration_parse(const char *s, int64_t *out_ms, char *err, size_t errlen);

/* Write ms (>= 0) in canonical form ("1h30m", "1m", "30s", "1s500ms", "0s") into buf; returns buf. */
char *api_duration_format(int64_t ms, char *buf, size_t len);

#endif
