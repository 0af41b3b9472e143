#include "base/logging.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum logging_level min_level = LOGGING_INFO;
static enum logging_format out_format = LOGGING_TEXT;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

bool logging_parse_level(const char *s, enum logging_level *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum logging_level)i;
            return true;
        }
    return false;
}

bool logging_parse_format(const char *s, enum logging_format *out)
{
    if (strcmp(s, "text") == 0)
        *out = LOGGING_TEXT;
    else if (strcmp(s, "json") == 0)
        *out = LOGGING_JSON;
    else
        return false;
    return true;
}

void logging_setup(enum logging_level level, enum logging_format format)
{
    min_level = level;
    out_format = format;
}

struct out {
    char *buf;
    int len, pos;
};

static void put(struct out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && o->pos < o->len - 1; i++)
        o->buf[o->pos++] = s[i];
    o->buf[o->pos] = '\0';
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

/* A JSON string body (without quotes), escaping what JSON requires. */
static void put_json_escaped(struct out *o, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c, esc[2] = 0;
            puts_(o, esc);
        } else if (c == '\n') {
            puts_(o, "\\n");
        } else if (c < 0x20) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            puts_(o, esc);
        } else {
            put(o, s, 1);
        }
    }
}

static bool needs_quotes(const char *s)
{
    if (!*s)
        return true;
    for (; *s; s++)
        if (*s == ' ' || *s == '"' || *s == '=' || *s == '\\' || (unsigned char)*s < 0x20)
            return true;
    return false;
}

int logging_format_line(char *buf, int len, const struct logging_entry *e)
{
    enum logging_level level = e->level;
    const char *msg = e->msg;
    const char *const *kv = e->kv;
    int nkv = e->nkv;
    double t = e->t;
    struct out o = {buf, len, 0};
    if (len <= 0)
        return 0;
    buf[0] = '\0';
    time_t secs = (time_t)t;
    struct tm tm;
    gmtime_r(&secs, &tm);
    char ts[40];
    int ms = (int)((t - (double)secs) * 1000.0);
    snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    if (e->format == LOGGING_JSON) {
        puts_(&o, "{\"level\":\"");
        puts_(&o, level_names[level]);
        puts_(&o, "\",\"time\":\"");
        puts_(&o, ts);
        puts_(&o, "\",\"msg\":\"");
        put_json_escaped(&o, msg);
        puts_(&o, "\"");
        for (int i = 0; i + 1 < nkv; i += 2) {
            puts_(&o, ",\"");
            put_json_escaped(&o, kv[i]);
            puts_(&o, "\":\"");
            put_json_escaped(&o, kv[i + 1] ? kv[i + 1] : "");
            puts_(&o, "\"");
        }
        puts_(&o, "}");
        return o.pos;
    }
    puts_(&o, level_names[level]);
    puts_(&o, " ");
    puts_(&o, ts);
    puts_(&o, " ");
    puts_(&o, msg);
    for (int i = 0; i + 1 < nkv; i += 2) {
        const char *v = kv[i + 1] ? kv[i + 1] : "";
        puts_(&o, " ");
        puts_(&o, kv[i]);
        puts_(&o, "=");
        if (needs_quotes(v)) {
            puts_(&o, "\"");
            put_json_escaped(&o, v);
            puts_(&o, "\"");
        } else {
            puts_(&o, v);
        }
    }
    return o.pos;
}

void log_at(enum logging_level level, const char *msg, ...)
{
    if (level < min_level)
        return;
    const char *kv[64];
    int nkv = 0;
    va_list ap;
    va_start(ap, msg);
    for (const char *s; nkv < 64 && (s = va_arg(ap, const char *)) != NULL;) {
        kv[nkv++] = s;
        if (nkv < 64)
            kv[nkv++] = va_arg(ap, const char *);
    }
    va_end(ap);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char line[8192];
    struct logging_entry e = {out_format, level, (double)now.tv_sec + (double)now.tv_nsec / 1e9, msg, kv, nkv};
    int n = logging_format_line(line, (int)sizeof(line) - 1, &e);
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}
