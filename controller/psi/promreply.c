/* psi_promreply: a Prometheus query reply read without a JSON tree (see promreply.h). */
#include "psi/promreply.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonlex.h"
#include "base/strbuf.h"

/* One label of the series being read: offsets of its name and value in the reader's chars. */
struct lab {
    size_t name, value;
};

struct reader {
    const char *start, *p, *end;
    /* Where this text stands in the whole reply when a stream cut series from it: bytes
     * past prefix (data.result's '[') come dropped bytes later in the reply, and the
     * first series read is the index_base'th. */
    size_t prefix, dropped, index_base;
    bool partial;      /* a stream's read before the reply's end: see stream_step */
    size_t array_open; /* where data.result's series start (after its '['), once read */
    size_t checkpoint; /* after the ',' behind the last series handed, or 0 */
    int depth;
    bool bound; /* the error is a bound passed, not broken JSON */
    char *why;
    size_t whylen;
    struct psi_promreply *out;
    const struct psi_promreply_sink *sink; /* or NULL: series kept in out->vector */
    size_t nseries;                        /* series read (index_base and on) */
    size_t sunk;                           /* series handed to the sink by this read */
    size_t vcap;                           /* series allocated in out->vector */
    struct strbuf chars;                   /* the labels of the series being read, NUL-separated */
    struct lab *labs;
    struct psi_prom_label *handed; /* the labels handed to the sink: labcap of them */
    size_t nlabs, labcap;
};

/* Outcome of reading a series: read, a shape that is no vector's (the JSON may still be
 * fine), or an error that ends the read. */
enum { SERIES_OK = 0, SERIES_SHAPE = 1, READ_ERROR = -1 };

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bound(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct reader *r, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t at = (size_t)(r->p - r->start);
    if (r->prefix && at >= r->prefix)
        at += r->dropped;
    snprintf(r->why, r->whylen, "at byte %zu: %s", at, msg);
    return READ_ERROR;
}

static int bound(struct reader *r, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->bound = true;
    return fail(r, "%s", msg);
}

/* Append n bytes of s to b; -1 on no memory. */
static int buf_add(struct strbuf *b, const char *s, size_t n)
{
    strbuf_addn(b, s, n);
    return strbuf_failed(b) ? -1 : 0;
}

static void ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

/* The next non-space byte, or 0 at the end. */
static char peek(struct reader *r)
{
    ws(r);
    return r->p < r->end ? *r->p : '\0';
}

static int expect(struct reader *r, char c)
{
    if (peek(r) != c)
        return r->p < r->end ? fail(r, "'%c' expected", c) : fail(r, "the reply ends early, '%c' expected", c);
    r->p++;
    return 0;
}

/* The escape at r->p (its backslash), as UTF-8 into u8 (*n bytes); r->p moves past it. */
static int escape(struct reader *r, char *u8, size_t *n)
{
    enum jsonlex_fault fault;
    unsigned cp;
    size_t len = jsonlex_escape(r->p, (size_t)(r->end - r->p), &cp, &fault);
    if (!len && fault == JSONLEX_ESCAPE_UNKNOWN)
        return fail(r, "a string has the unknown escape \\%c", r->p[1]);
    if (!len)
        return fail(r, "%s", jsonlex_fault_text(fault));
    if (cp == 0)
        return fail(r, "a string holds a NUL (\\u0000)");
    r->p += len;
    if (cp < 0x80) {
        u8[0] = (char)cp;
        *n = 1;
    } else if (cp < 0x800) {
        u8[0] = (char)(0xC0 | (cp >> 6));
        u8[1] = (char)(0x80 | (cp & 0x3F));
        *n = 2;
    } else if (cp < 0x10000) {
        u8[0] = (char)(0xE0 | (cp >> 12));
        u8[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u8[2] = (char)(0x80 | (cp & 0x3F));
        *n = 3;
    } else {
        u8[0] = (char)(0xF0 | (cp >> 18));
        u8[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u8[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u8[3] = (char)(0x80 | (cp & 0x3F));
        *n = 4;
    }
    return 0;
}

/* A JSON string at r->p (after spaces): checked, and when b is not NULL its text appended
 * to b up to max bytes (the rest is checked and dropped). */
static int string(struct reader *r, struct strbuf *b, size_t max)
{
    if (expect(r, '"') < 0)
        return READ_ERROR;
    size_t kept = 0;
    for (;;) {
        const char *run = r->p;
        while (r->p < r->end && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20)
            r->p++;
        size_t n = (size_t)(r->p - run);
        if (b && kept < max) {
            size_t take = n < max - kept ? n : max - kept;
            if (buf_add(b, run, take) < 0)
                return bound(r, "out of memory");
            kept += take;
        }
        if (r->p >= r->end)
            return fail(r, "the reply ends inside a string");
        char c = *r->p;
        if (c == '"') {
            r->p++;
            return 0;
        }
        if (c != '\\')
            return fail(r, "a string holds a control character (0x%02x)", (unsigned)(unsigned char)c);
        if (r->end - r->p < 2)
            return fail(r, "the reply ends inside a string");
        char u8[4];
        size_t un = 0;
        if (escape(r, u8, &un) < 0)
            return READ_ERROR;
        if (b && kept + un <= max) {
            if (buf_add(b, u8, un) < 0)
                return bound(r, "out of memory");
            kept += un;
        } else {
            kept = max; /* cut here: no code point split */
        }
    }
}

/* A string kept as a new C string of at most PSI_PROMREPLY_MAX_TEXT bytes. */
static int string_dup(struct reader *r, char **out)
{
    struct strbuf b = STRBUF_INIT;
    if (string(r, &b, PSI_PROMREPLY_MAX_TEXT) < 0) {
        free(b.s);
        return READ_ERROR;
    }
    if (!b.s && !(b.s = strdup("")))
        return bound(r, "out of memory");
    free(*out);
    *out = b.s;
    return 0;
}

/* A JSON number, checked; its value in *out when out is not NULL. */
static int number(struct reader *r, double *out)
{
    ws(r);
    enum jsonlex_fault fault;
    size_t n = jsonlex_number(r->p, (size_t)(r->end - r->p), &fault);
    if (!n)
        return fail(r, "%s", jsonlex_fault_text(fault));
    const char *s = r->p;
    r->p += n;
    if (!out)
        return 0;
    char tmp[65];
    if (n >= sizeof(tmp))
        return bound(r, "a number is longer than 64 characters");
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    *out = strtod(tmp, NULL);
    return 0;
}

static int literal(struct reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return fail(r, "a value is no JSON value");
    r->p += n;
    return 0;
}

static int skip_value(struct reader *r);

/* The members or elements of an object or array after its opening bracket, skipped; or,
 * with after_comma, after a ',' that ends an element (one must follow). */
static int skip_members(struct reader *r, char close, int object, bool after_comma)
{
    if (++r->depth > PSI_PROMREPLY_MAX_DEPTH)
        return bound(r, "JSON nested deeper than %d levels", PSI_PROMREPLY_MAX_DEPTH);
    if (!after_comma && peek(r) == close) {
        r->p++;
        r->depth--;
        return 0;
    }
    for (;;) {
        if (object && (string(r, NULL, 0) < 0 || expect(r, ':') < 0))
            return READ_ERROR;
        if (skip_value(r) < 0)
            return READ_ERROR;
        char c = peek(r);
        if (c == close) {
            r->p++;
            r->depth--;
            return 0;
        }
        if (expect(r, ',') < 0)
            return READ_ERROR;
    }
}

static int skip_value(struct reader *r)
{
    switch (peek(r)) {
    case '{': r->p++; return skip_members(r, '}', 1, false);
    case '[': r->p++; return skip_members(r, ']', 0, false);
    case '"': return string(r, NULL, 0);
    case 't': return literal(r, "true");
    case 'f': return literal(r, "false");
    case 'n': return literal(r, "null");
    case '\0':
        if (r->p >= r->end)
            return fail(r, "the reply ends where a value should be");
        return fail(r, "a value is no JSON value");
    default: return number(r, NULL);
    }
}

/* Object members one by one: calls member(r, key, ud) with the key read (cut to keycap
 * bytes) and r->p at its value, which member must consume. */
typedef int (*member_fn)(struct reader *r, const char *key, void *ud);

static int members_capped(struct reader *r, size_t keycap, member_fn member, void *ud)
{
    if (expect(r, '{') < 0)
        return READ_ERROR;
    if (++r->depth > PSI_PROMREPLY_MAX_DEPTH)
        return bound(r, "JSON nested deeper than %d levels", PSI_PROMREPLY_MAX_DEPTH);
    if (peek(r) == '}') {
        r->p++;
        r->depth--;
        return 0;
    }
    for (;;) {
        struct strbuf key = STRBUF_INIT;
        int rc = string(r, &key, keycap);
        rc = rc < 0 ? rc : expect(r, ':');
        rc = rc < 0 ? rc : member(r, key.s ? key.s : "", ud);
        free(key.s);
        if (rc != 0)
            return rc;
        if (peek(r) == '}') {
            r->p++;
            r->depth--;
            return 0;
        }
        if (expect(r, ',') < 0)
            return READ_ERROR;
    }
}

/* members_capped with keys cut to 64 bytes: the envelope's and a series' member names. */
static int members(struct reader *r, member_fn member, void *ud)
{
    return members_capped(r, 64, member, ud);
}

/* ---- series ---- */

struct series_state {
    size_t idx;
    bool metric, value;
    double ts, v;
    char *problem; /* out->result_problem */
    size_t plen;
};

static int shape(struct series_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int shape(struct series_state *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->problem, s->plen, fmt, ap);
    va_end(ap);
    return SERIES_SHAPE;
}

static int label_member(struct reader *r, const char *key, void *ud)
{
    struct series_state *s = ud;
    if (r->nlabs == PSI_PROMREPLY_MAX_LABELS)
        return bound(r, "result[%zu] has more than %d labels", s->idx, PSI_PROMREPLY_MAX_LABELS);
    if (peek(r) != '"')
        return shape(s, "result[%zu] label \"%.64s\" is not a string", s->idx, key);
    if (r->nlabs == r->labcap) {
        size_t cap = r->labcap ? r->labcap * 2 : 16;
        struct lab *nl = realloc(r->labs, cap * sizeof(*nl));
        if (nl)
            r->labs = nl;
        struct psi_prom_label *nh = nl && r->sink ? realloc(r->handed, cap * sizeof(*nh)) : NULL;
        if (nh)
            r->handed = nh;
        if (!nl || (r->sink && !nh))
            return bound(r, "out of memory");
        r->labcap = cap;
    }
    struct lab *l = &r->labs[r->nlabs];
    l->name = r->chars.len;
    if (buf_add(&r->chars, key, strlen(key) + 1) < 0)
        return bound(r, "out of memory");
    l->value = r->chars.len;
    if (string(r, &r->chars, SIZE_MAX) < 0 || buf_add(&r->chars, "", 1) < 0)
        return READ_ERROR;
    r->nlabs++;
    return 0;
}

/* metric: an object of string labels. Label names are read whole (members cuts keys to 64
 * bytes). */
static int metric(struct reader *r, struct series_state *s)
{
    if (peek(r) != '{')
        return shape(s, "result[%zu] is not an object with a \"metric\" object", s->idx);
    return members_capped(r, SIZE_MAX, label_member, s);
}

static int not_pair(struct series_state *s)
{
    return shape(s, "result[%zu].value is not a [time, \"value\"] pair", s->idx);
}

/* value: [time, "value"]. */
static int value_pair(struct reader *r, struct series_state *s)
{
    if (peek(r) != '[')
        return not_pair(s);
    r->p++;
    char c = peek(r);
    if (c == ']' || c == '\0')
        return not_pair(s);
    if (c == '"' || c == '{' || c == '[' || c == 't' || c == 'f' || c == 'n')
        return shape(s, "result[%zu].value is not a [number, string] pair", s->idx);
    if (number(r, &s->ts) < 0)
        return READ_ERROR;
    if (peek(r) != ',')
        return not_pair(s);
    r->p++;
    if (peek(r) != '"')
        return shape(s, "result[%zu].value is not a [number, string] pair", s->idx);
    struct strbuf v = STRBUF_INIT;
    if (string(r, &v, 65) < 0) {
        free(v.s);
        return READ_ERROR;
    }
    int ok = v.len <= 64 && psi_promreply_value(v.s ? v.s : "", &s->v) == 0; /* Go writes 24 at most */
    int rc = ok ? 0 : shape(s, "result[%zu] value \"%.64s\" is not a number", s->idx, v.s ? v.s : "");
    free(v.s);
    if (rc)
        return rc;
    if (peek(r) != ']')
        return not_pair(s);
    r->p++;
    return 0;
}

static int series_member(struct reader *r, const char *key, void *ud)
{
    struct series_state *s = ud;
    if (strcmp(key, "metric") == 0 && !s->metric) {
        s->metric = true;
        return metric(r, s);
    }
    if (strcmp(key, "value") == 0 && !s->value) {
        s->value = true;
        return value_pair(r, s);
    }
    return skip_value(r);
}

/* Hand the series just read to the sink, its labels pointing into the reader's buffer. */
static void hand_series(struct reader *r, const struct series_state *s)
{
    for (size_t i = 0; i < r->nlabs; i++)
        r->handed[i] = (struct psi_prom_label){r->chars.s + r->labs[i].name, r->chars.s + r->labs[i].value};
    struct psi_prom_series series = {r->nlabs ? r->handed : NULL, r->nlabs, s->v, s->ts};
    r->sink->fn(r->sink->ud, &series);
    r->sunk++;
}

/* Keep the series just read, its labels in one allocation, or hand it to the sink. */
static int keep_series(struct reader *r, const struct series_state *s)
{
    struct psi_prom_vector *v = &r->out->vector;
    if (r->nseries == PSI_PROMREPLY_MAX_SERIES)
        return bound(r, "more than %d series", PSI_PROMREPLY_MAX_SERIES);
    r->nseries++;
    if (r->sink) {
        hand_series(r, s);
        return 0;
    }
    if (v->n == r->vcap) {
        size_t cap = r->vcap ? r->vcap * 2 : 64;
        struct psi_prom_series *ns = realloc(v->series, cap * sizeof(*ns));
        if (!ns)
            return bound(r, "out of memory");
        v->series = ns;
        r->vcap = cap;
    }
    struct psi_prom_series *out = &v->series[v->n];
    *out = (struct psi_prom_series){NULL, 0, s->v, s->ts};
    if (r->nlabs) {
        size_t head = r->nlabs * sizeof(struct psi_prom_label);
        char *block = malloc(head + r->chars.len);
        if (!block)
            return bound(r, "out of memory");
        char *text = block + head;
        memcpy(text, r->chars.s, r->chars.len);
        out->labels = (struct psi_prom_label *)(void *)block;
        for (size_t i = 0; i < r->nlabs; i++)
            out->labels[i] = (struct psi_prom_label){text + r->labs[i].name, text + r->labs[i].value};
        out->n_labels = r->nlabs;
    }
    v->n++;
    return 0;
}

/* The series at r->p, read into s and the reader's label buffers (kept by the caller once
 * the text after it shows it complete). */
static int series(struct reader *r, size_t idx, struct series_state *s)
{
    *s = (struct series_state){.idx = idx, .problem = r->out->result_problem, .plen = sizeof(r->out->result_problem)};
    r->nlabs = 0;
    r->chars.len = 0;
    if (peek(r) != '{')
        return shape(s, "result[%zu] is not an object with a \"metric\" object", idx);
    int rc = members(r, series_member, s);
    if (rc != 0)
        return rc;
    if (!s->value)
        return shape(s, "result[%zu].value is not a [time, \"value\"] pair", idx);
    return SERIES_OK;
}

static void vector_clear(struct reader *r)
{
    psi_prom_vector_free(&r->out->vector);
    r->vcap = 0;
    r->nseries = r->index_base;
}

/* data.result: an instant vector's series; any other shape is noted and skipped. */
static int result(struct reader *r)
{
    struct psi_promreply *o = r->out;
    const char *start = r->p;
    int depth = r->depth;
    /* In a stream's text cut of the series handed, the '[' is followed by what followed a ','. */
    bool cut = r->index_base > 0;
    o->has_result = true;
    if (o->result_type && strcmp(o->result_type, "vector") != 0)
        return skip_value(r);
    int rc = SERIES_SHAPE;
    if (peek(r) != '[') {
        snprintf(o->result_problem, sizeof(o->result_problem), "data.result is not an array");
    } else {
        r->p++;
        r->array_open = (size_t)(r->p - r->start);
        rc = SERIES_OK;
        if (!cut && peek(r) == ']')
            r->p++;
        else
            for (size_t i = r->index_base;; i++) {
                struct series_state st;
                rc = series(r, i, &st);
                if (rc != SERIES_OK)
                    break;
                char c = peek(r);
                if (c != ']' && c != ',')
                    return expect(r, ',');
                if (c == ']' && r->partial)
                    return fail(r, "the series end here: the reply's end reads them"); /* see stream_step */
                if (keep_series(r, &st) < 0)
                    return READ_ERROR;
                r->p++;
                if (c == ']')
                    break;
                r->checkpoint = (size_t)(r->p - r->start);
            }
    }
    if (rc != SERIES_SHAPE)
        return rc;
    /* not a vector's shape: the JSON may still be fine; read it again, skipping */
    vector_clear(r);
    r->p = start;
    r->depth = depth;
    if (cut && peek(r) == '[') {
        r->p++;
        return skip_members(r, ']', 0, true);
    }
    return skip_value(r);
}

static int data_member(struct reader *r, const char *key, void *ud)
{
    (void)ud;
    struct psi_promreply *o = r->out;
    if (strcmp(key, "resultType") == 0 && !o->result_type && peek(r) == '"')
        return string_dup(r, &o->result_type);
    if (strcmp(key, "result") == 0 && !o->has_result)
        return result(r);
    return skip_value(r);
}

/* warnings: the first string kept. */
static int warnings(struct reader *r)
{
    if (peek(r) != '[')
        return skip_value(r);
    const char *start = r->p;
    r->p++;
    if (peek(r) == '"' && string_dup(r, &r->out->warning) < 0)
        return READ_ERROR;
    r->p = start;
    return skip_value(r);
}

static int top_member(struct reader *r, const char *key, void *ud)
{
    (void)ud;
    struct psi_promreply *o = r->out;
    char **text = strcmp(key, "status") == 0      ? &o->status
                  : strcmp(key, "errorType") == 0 ? &o->error_type
                  : strcmp(key, "error") == 0     ? &o->error
                                                  : NULL;
    if (text && !*text && peek(r) == '"')
        return string_dup(r, text);
    if (strcmp(key, "warnings") == 0 && !o->warning)
        return warnings(r);
    if (strcmp(key, "data") == 0 && !o->has_data && peek(r) == '{') {
        o->has_data = true;
        return members(r, data_member, NULL);
    }
    return skip_value(r);
}

/* Read r's text into r->out: as psi_promreply_read. */
static int read_all(struct reader *r)
{
    struct psi_promreply *out = r->out;
    memset(out, 0, sizeof(*out));
    r->nseries = r->index_base;
    int rc = peek(r) == '{' ? members(r, top_member, NULL) : skip_value(r);
    if (rc == 0 && peek(r) != '\0')
        rc = fail(r, "data after the JSON value");
    else if (rc == 0 && r->p < r->end)
        rc = fail(r, "a NUL byte after the JSON value");
    free(r->chars.s);
    free(r->labs);
    free(r->handed);
    if (rc != 0) {
        psi_promreply_free(out);
        return r->bound ? -2 : -1;
    }
    return 0;
}

int psi_promreply_read(const char *body, size_t len, struct psi_promreply *out, char *why, size_t whylen)
{
    struct reader r = {.start = body, .p = body, .end = body + len, .why = why, .whylen = whylen, .out = out};
    return read_all(&r);
}

/* ---- stream ---- */

static struct reader stream_reader(struct psi_promreply_stream *s, struct psi_promreply *out, char *why, size_t whylen)
{
    const char *text = s->text.s ? s->text.s : "";
    return (struct reader){.start = text,
                           .p = text,
                           .end = text + s->text.len,
                           .prefix = s->prefix,
                           .dropped = s->dropped,
                           .index_base = s->handed,
                           .why = why,
                           .whylen = whylen,
                           .out = out,
                           .sink = s->sink};
}

/* Read what has come so far, handing the series that a ',' after them shows complete (the
 * last one, and any after a ']', wait for the reply's end), and cut them from the text:
 * it keeps what precedes data.result's first series and what follows the last one handed.
 * When four steps of text are kept and none can be handed (the text is no vector's, or a
 * series is that long), the streaming ends: the rest is kept whole for the final read, so
 * that no text is read again and again. */
static void stream_step(struct psi_promreply_stream *s)
{
    struct psi_promreply out;
    char why[8];
    struct reader r = stream_reader(s, &out, why, sizeof(why));
    r.partial = true;
    read_all(&r);
    psi_promreply_free(&out);
    if (r.sunk) {
        size_t cut = r.checkpoint - r.array_open;
        memmove(s->text.s + r.array_open, s->text.s + r.checkpoint, s->text.len - r.checkpoint + 1);
        s->text.len -= cut;
        s->prefix = r.array_open;
        s->dropped += cut;
        s->handed += r.sunk;
    } else {
        s->whole = s->text.len >= 4 * s->step;
    }
    s->read_len = s->text.len;
}

void psi_promreply_stream_init(struct psi_promreply_stream *s, const struct psi_promreply_sink *sink)
{
    memset(s, 0, sizeof(*s));
    s->sink = sink;
    s->step = PSI_PROMREPLY_STEP;
}

int psi_promreply_stream_feed(struct psi_promreply_stream *s, const char *data, size_t n)
{
    if (buf_add(&s->text, data, n) < 0)
        return -1;
    if (!s->whole && s->text.len - s->read_len >= s->step)
        stream_step(s);
    return 0;
}

int psi_promreply_stream_end(struct psi_promreply_stream *s, struct psi_promreply *out, char *why, size_t whylen)
{
    struct reader r = stream_reader(s, out, why, whylen);
    return read_all(&r);
}

void psi_promreply_stream_free(struct psi_promreply_stream *s)
{
    free(s->text.s);
    memset(s, 0, sizeof(*s));
}

void psi_promreply_free(struct psi_promreply *out)
{
    if (!out)
        return;
    free(out->status);
    free(out->error_type);
    free(out->error);
    free(out->warning);
    free(out->result_type);
    psi_prom_vector_free(&out->vector);
    memset(out, 0, sizeof(*out));
}

int psi_promreply_value(const char *s, double *out)
{
    if (strcmp(s, "NaN") == 0) {
        *out = NAN;
        return 0;
    }
    if (strcmp(s, "+Inf") == 0 || strcmp(s, "-Inf") == 0) {
        *out = s[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    /* [-+]?digits[.digits][(e|E)[-+]digits], or .digits: what Go's strconv writes and reads */
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    size_t mant = strspn(p, "0123456789");
    p += mant;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        mant += frac;
        p += 1 + frac;
    }
    if (!mant)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        size_t e = strspn(p, "0123456789");
        if (!e)
            return -1;
        p += e;
    }
    if (*p)
        return -1;
    errno = 0;
    double d = strtod(s, NULL);
    if (errno == ERANGE && isinf(d))
        return -1; /* 1e999 is no float Prometheus writes */
    *out = d;
    return 0;
}
