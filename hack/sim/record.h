/* record: the simulator's record of what happened (evictions asked, migrations and their
 * phases, VM restarts, drains, pool rollouts), one JSON object per line, for tests that
 * check limits and outcomes and for the demo's summary. Thread-safe (the webhook writes
 * from its own threads). Every line has "t" (seconds since the record was opened, a
 * number), "time" (RFC 3339 UTC) and "type", then the given string fields. */
#ifndef PSI_SIM_RECORD_H
#define PSI_SIM_RECORD_H

#include <stddef.h>

struct record;

/* Open (truncate) path for writing; path NULL gives a record that writes nothing. NULL
 * with why in err when the file cannot be opened. Close with record_close. */
struct record *record_open(const char *path, char *err, size_t errlen);

/* Flush and close (NULL is fine). */
void record_close(struct record *r);

/* Append a line of type with key/value string pairs, the list ended by NULL (a NULL value
 * is written as ""). Lines are flushed at once. */
void record_add(struct record *r, const char *type, ...) __attribute__((sentinel));

#endif
