/* logging: one line per event on stderr, `level time msg key=value ...`, or one JSON object
 * per line with --log-format=json. Values with spaces, quotes or '=' are quoted. */
#ifndef PSI_LOGGING_H
#define PSI_LOGGING_H

#include <stdbool.h>

enum logging_level { LOGGING_DEBUG, LOGGING_INFO, LOGGING_WARN, LOGGING_ERROR };
enum logging_format { LOGGING_TEXT, LOGGING_JSON };

/* Parse a --log-level value ("debug", "info", "warn", "error"); false when unknown. */
bool logging_parse_level(const char *s, enum logging_level *out);

/* Parse a --log-format value ("text", "json"); false when unknown. */
bool logging_parse_format(const char *s, enum logging_format *out);

/* Set the least level written and the format (defaults: info, text). */
void logging_setup(enum logging_level level, enum logging_format format);

/* Write msg at level with key/value string pairs, the list ended by NULL (a NULL value is
 * written as an empty string). Lines are written whole, with one write(2). */
void log_at(enum logging_level level, const char *msg, ...) __attribute__((sentinel));

#define log_debug(...) log_at(LOGGING_DEBUG, __VA_ARGS__, (char *)0)
#define log_info(...) log_at(LOGGING_INFO, __VA_ARGS__, (char *)0)
#define log_warn(...) log_at(LOGGING_WARN, __VA_ARGS__, (char *)0)
#define log_error(...) log_at(LOGGING_ERROR, __VA_ARGS__, (char *)0)

/* One log line's content: time t (Unix seconds with milliseconds), level, message and nkv
 * strings kv, alternately key and value (a NULL value shows as ""). */
struct logging_entry {
    enum logging_format format;
    enum logging_level level;
    double t;
    const char *msg;
    const char *const *kv;
    int nkv;
};

/* Render e (without the newline) into buf of len bytes, as log_at would write it. Returns the
 * length written. */
int logging_format_line(char *buf, int len, const struct logging_entry *e);

#endif
