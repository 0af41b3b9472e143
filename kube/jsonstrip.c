/* kube_jsonstrip: remove object.metadata.managedFields from a watch event's text (see jsonstrip.h). */
#include "kube/jsonstrip.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/jsonlex.h"

/* The objects on the path, by their depth less one: the event, its object, the metadata;
 * path_key[level] is the key of the next step (the last one is the member removed). */
enum { AT_EVENT, AT_OBJECT, AT_METADATA, PATH_LEN };
static const char *const path_key[PATH_LEN] = {"object", "metadata", "managedFields"};

#define NONE SIZE_MAX

enum strip_state {
    S_VALUE,      /* a value is expected */
    S_FIRST_KEY,  /* after '{': a key or '}' */
    S_KEY,        /* after ',' in an object: a key */
    S_FIRST_ITEM, /* after '[': a value or ']' */
    S_AFTER,      /* after a value: ',' or the close of its container */
    S_DONE,       /* the top-level value is complete */
};

struct strip_scan {
    const char *s;
    size_t n, i;
    enum strip_state state;
    char stack[KUBE_JSONSTRIP_MAX_DEPTH]; /* '{' or '[' per open container */
    size_t depth;                         /* containers open */
    size_t path_open;                     /* of which objects on the path (the outermost ones) */
    bool path_next;                       /* the coming value is the path's next step */
    bool doubt;                           /* malformed or unsure: leave the text alone */
    unsigned seen[PATH_LEN];              /* path keys met, per level */
    bool found, in_target, want_next;     /* the member to remove: met, being scanned, just ended */
    size_t target_key;                    /* where its key starts */
    size_t meta_last_end;                 /* end of the last value completed in metadata, or NONE */
    size_t cut_from, cut_to;              /* the bytes to remove */
};

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(struct strip_scan *p)
{
    while (p->i < p->n && is_ws(p->s[p->i]))
        p->i++;
}

static bool in_metadata(const struct strip_scan *p)
{
    return p->depth == PATH_LEN && p->path_open == PATH_LEN;
}

/* A string at p->i (its opening quote): moves past it; returns whether it holds no escape,
 * with its body's offset and length. An unterminated string or a bad escape is a doubt. */
static bool scan_string(struct strip_scan *p, size_t *body, size_t *blen)
{
    size_t start = ++p->i;
    bool plain = true;
    while (p->i < p->n && p->s[p->i] != '"') {
        if (p->s[p->i] == '\\') {
            plain = false;
            p->i++; /* the escaped byte, whatever it is, is no closing quote */
        }
        p->i++;
    }
    if (p->i >= p->n) {
        p->doubt = true;
        return false;
    }
    for (size_t k = start; !plain && k < p->i;) {
        enum jsonlex_fault fault;
        size_t e = p->s[k] == '\\' ? jsonlex_escape(p->s + k, p->i - k, NULL, &fault) : 1;
        if (e == 0) {
            p->doubt = true;
            return false;
        }
        k += e;
    }
    *body = start;
    *blen = p->i - start;
    p->i++;
    return plain;
}

static bool is_delim(char c)
{
    return is_ws(c) || c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || c == '"';
}

static bool token_is(const char *t, size_t len, const char *word)
{
    return len == strlen(word) && memcmp(t, word, len) == 0;
}

/* Whether t[0..len) is a JSON number of at most 63 characters (longer is no int64 or
 * double anyway, and not every parser takes it). */
static bool is_number(const char *t, size_t len)
{
    enum jsonlex_fault fault;
    return len > 0 && len <= 63 && jsonlex_number(t, len, &fault) == len;
}

/* A number, true, false or null at p->i: moves past it; anything else is a doubt. */
static void scan_scalar(struct strip_scan *p)
{
    size_t start = p->i;
    while (p->i < p->n && !is_delim(p->s[p->i]))
        p->i++;
    const char *t = p->s + start;
    size_t len = p->i - start;
    if (!token_is(t, len, "true") && !token_is(t, len, "false") && !token_is(t, len, "null") && !is_number(t, len))
        p->doubt = true;
}

/* A value just ended at p->i. */
static void value_done(struct strip_scan *p)
{
    p->state = p->depth ? S_AFTER : S_DONE;
    if (!in_metadata(p))
        return;
    if (p->in_target) {
        p->cut_to = p->i;
        p->in_target = false;
        p->want_next = true;
    }
    p->meta_last_end = p->i;
}

/* A key at p->i, then its colon. */
static void scan_key(struct strip_scan *p)
{
    if (p->s[p->i] != '"') {
        p->doubt = true;
        return;
    }
    size_t start = p->i, body, blen;
    bool plain = scan_string(p, &body, &blen);
    if (p->doubt)
        return;
    if (in_metadata(p) && p->want_next) {
        /* The member removed is followed by this one: remove up to this key. */
        p->cut_from = p->target_key;
        p->cut_to = start;
        p->want_next = false;
    }
    size_t level = p->depth - 1;
    if (p->path_open == p->depth && level < PATH_LEN) {
        const char *want = path_key[level];
        if (!plain) {
            p->doubt = true; /* an escaped key might spell the path's */
            return;
        }
        if (blen == strlen(want) && memcmp(p->s + body, want, blen) == 0) {
            if (++p->seen[level] > 1) {
                p->doubt = true; /* duplicates: which one a parser keeps is its choice */
                return;
            }
            if (level == AT_METADATA) {
                p->found = p->in_target = true;
                p->target_key = start;
                /* The last member: remove from the end of the one before (its comma). */
                p->cut_from = p->meta_last_end != NONE ? p->meta_last_end : start;
            } else {
                p->path_next = true;
            }
        }
    }
    skip_ws(p);
    if (p->i >= p->n || p->s[p->i] != ':') {
        p->doubt = true;
        return;
    }
    p->i++;
    p->state = S_VALUE;
}

/* A value at p->i: a container opens, or a string or scalar is scanned. */
static void scan_value(struct strip_scan *p)
{
    char c = p->s[p->i];
    bool next = p->path_next;
    p->path_next = false;
    if (c == '{' || c == '[') {
        if (p->depth == KUBE_JSONSTRIP_MAX_DEPTH) {
            p->doubt = true;
            return;
        }
        p->stack[p->depth++] = c;
        p->i++;
        if (c == '{' && (next || p->depth == 1))
            p->path_open = p->depth;
        p->state = c == '{' ? S_FIRST_KEY : S_FIRST_ITEM;
        return;
    }
    if (c == '"') {
        size_t body, blen;
        (void)scan_string(p, &body, &blen);
    } else {
        scan_scalar(p);
    }
    if (!p->doubt)
        value_done(p);
}

/* The close c of the innermost container at p->i. */
static void scan_close(struct strip_scan *p, char c)
{
    char open = p->stack[p->depth - 1];
    if (!((open == '{' && c == '}') || (open == '[' && c == ']'))) {
        p->doubt = true;
        return;
    }
    if (p->path_open == p->depth)
        p->path_open--;
    p->depth--;
    p->i++;
    value_done(p);
}

static void scan_step(struct strip_scan *p)
{
    char c = p->s[p->i];
    switch (p->state) {
    case S_VALUE: scan_value(p); break;
    case S_FIRST_KEY:
        if (c == '}')
            scan_close(p, c);
        else
            scan_key(p);
        break;
    case S_KEY: scan_key(p); break;
    case S_FIRST_ITEM:
        if (c == ']')
            scan_close(p, c);
        else
            scan_value(p);
        break;
    case S_AFTER:
        if (c == ',') {
            p->i++;
            p->state = p->stack[p->depth - 1] == '{' ? S_KEY : S_VALUE;
        } else if (c == '}' || c == ']') {
            scan_close(p, c);
        } else {
            p->doubt = true;
        }
        break;
    case S_DONE: break;
    }
}

size_t kube_jsonstrip_managed_fields(char *text, size_t len)
{
    struct strip_scan p = {.s = text, .n = len, .state = S_VALUE, .meta_last_end = NONE};
    skip_ws(&p);
    if (p.i >= len || text[p.i] != '{')
        return len; /* no event object */
    while (!p.doubt && p.state != S_DONE) {
        skip_ws(&p);
        if (p.i >= len) {
            p.doubt = true; /* truncated */
            break;
        }
        scan_step(&p);
    }
    skip_ws(&p);
    if (p.doubt || !p.found || p.i != len)
        return len;
    memmove(text + p.cut_from, text + p.cut_to, len - p.cut_to);
    size_t n = len - (p.cut_to - p.cut_from);
    text[n] = '\0';
    return n;
}
