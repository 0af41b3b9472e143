#include "yamljson.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define MAX_DEPTH 100

static int all_digits(const char *s, const char *digits)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!strchr(digits, *s))
            return 0;
    return 1;
}

/* YAML 1.2 core schema integer/float (no underscores or sexagesimals). */
static int plain_number(const char *s, double *v)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (p[0] == '0' && p[1] == 'x' && p == s)
        return all_digits(p + 2, "0123456789abcdefABCDEF") && (*v = (double)strtoull(p + 2, NULL, 16), 1);
    if (p[0] == '0' && p[1] == 'o' && p == s)
        return all_digits(p + 2, "01234567") && (*v = (double)strtoull(p + 2, NULL, 8), 1);
    if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF") || !strcmp(s, ".nan") ||
        !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))
        return 0; /* not representable in JSON: keep as a string */
    /* [0-9]* (.[0-9]*)? ([eE][-+]?[0-9]+)? with at least one digit in the mantissa */
    int mant = 0;
    while (isdigit((unsigned char)*p)) {
        p++;
        mant++;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            p++;
            mant++;
        }
    }
    if (!mant)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p)
        return 0;
    char *end;
    *v = strtod(s, &end);
    return *end == 0;
}

/* Type a scalar: quoted or explicitly !!str-tagged scalars are strings, plain ones by the
 * core schema. */
static cJSON *scalar(const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (tag && strcmp(tag, "!")) {
        if (!strcmp(tag, YAML_STR_TAG) || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
            return cJSON_CreateString(s);
    } else if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !ev->data.scalar.plain_implicit) {
        return cJSON_CreateString(s);
    }
    if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
        return cJSON_CreateNull();
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
        return cJSON_CreateTrue();
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
        return cJSON_CreateFalse();
    double v;
    if (plain_number(s, &v))
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(s);
}

#define MAX_NODES 1000000 /* bounds alias expansion ("billion laughs") */

struct frame {
    cJSON *node;  /* array or object being filled */
    char *key;    /* pending mapping key (objects) */
    size_t key_line, key_col;
};

struct anchor {
    char *name;
    cJSON *node;
    int open; /* still being filled: an alias to it would recurse */
};

struct builder {
    struct frame stack[MAX_DEPTH + 1];
    int depth;
    struct anchor *anchors;
    size_t nanchors;
    long nodes;
    cJSON *graveyard; /* nodes out of the tree (keys, replaced values): anchors may still point
                         into them, so they live until the end */
    cJSON *root;
    char *errbuf;
    size_t errlen;
};

static long count_nodes(const cJSON *j)
{
    long n = 1;
    for (const cJSON *c = j->child; c; c = c->next)
        n += count_nodes(c);
    return n;
}

static int fail(struct builder *b, const yaml_mark_t *m, const char *what)
{
    snprintf(b->errbuf, b->errlen, "line %zu column %zu: %s", m->line + 1, m->column + 1, what);
    return -1;
}

static int remember_anchor(struct builder *b, const yaml_char_t *name, cJSON *node, int open)
{
    if (!name)
        return 0;
    struct anchor *na = realloc(b->anchors, sizeof(*na) * (b->nanchors + 1));
    if (!na)
        return -1;
    b->anchors = na;
    na[b->nanchors].name = strdup((const char *)name);
    na[b->nanchors].node = node;
    na[b->nanchors].open = open;
    if (!na[b->nanchors].name)
        return -1;
    b->nanchors++;
    return 0;
}

/* Put a node that does not go into the tree aside until the end. */
static void discard(struct builder *b, cJSON *node)
{
    cJSON_AddItemToArray(b->graveyard, node);
}

/* Attach a finished node to its parent (or make it the root); takes ownership. */
static int attach(struct builder *b, cJSON *node, const yaml_mark_t *m)
{
    if (b->depth == 0) {
        b->root = node;
        return 0;
    }
    struct frame *f = &b->stack[b->depth - 1];
    if (cJSON_IsArray(f->node)) {
        cJSON_AddItemToArray(f->node, node);
        return 0;
    }
    if (!f->key) {
        if (!cJSON_IsString(node)) {
            int key_is_scalar = !cJSON_IsArray(node) && !cJSON_IsObject(node);
            /* a plain key like 1 or true is used as its text */
            char *text = key_is_scalar ? cJSON_PrintUnformatted(node) : NULL;
            discard(b, node);
            if (!text)
                return fail(b, m, "mapping key is not a scalar");
            f->key = text;
        } else {
            f->key = strdup(node->valuestring);
            discard(b, node);
            if (!f->key)
                return fail(b, m, "out of memory");
        }
        f->key_line = m->line;
        f->key_col = m->column;
        return 0;
    }
    cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(f->node, f->key);
    if (old)
        discard(b, old); /* a later duplicate key wins (an anchor may still use the old value) */
    cJSON_AddItemToObject(f->node, f->key, node);
    free(f->key);
    f->key = NULL;
    return 0;
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
    const yaml_mark_t *m = &ev->start_mark;
    cJSON *node = NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        node = scalar(ev);
        if (!node)
            return fail(b, m, "out of memory");
        if (++b->nodes > MAX_NODES)
            return cJSON_Delete(node), fail(b, m, "document too large");
        if (remember_anchor(b, ev->data.scalar.anchor, node, 0))
            return cJSON_Delete(node), fail(b, m, "out of memory");
        return attach(b, node, m);
    case YAML_ALIAS_EVENT:
        for (size_t i = b->nanchors; i-- > 0;) {
            if (strcmp(b->anchors[i].name, (const char *)ev->data.alias.anchor))
                continue;
            if (b->anchors[i].open)
                return fail(b, m, "recursive alias");
            b->nodes += count_nodes(b->anchors[i].node);
            if (b->nodes > MAX_NODES)
                return fail(b, m, "document too large (alias expansion)");
            node = cJSON_Duplicate(b->anchors[i].node, 1);
            if (!node)
                return fail(b, m, "out of memory");
            return attach(b, node, m);
        }
        return fail(b, m, "unknown alias");
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        if (b->depth >= MAX_DEPTH)
            return fail(b, m, "nesting too deep");
        int seq = ev->type == YAML_SEQUENCE_START_EVENT;
        node = seq ? cJSON_CreateArray() : cJSON_CreateObject();
        if (!node)
            return fail(b, m, "out of memory");
        if (++b->nodes > MAX_NODES)
            return cJSON_Delete(node), fail(b, m, "document too large");
        const yaml_char_t *anchor = seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor;
        if (remember_anchor(b, anchor, node, 1))
            return cJSON_Delete(node), fail(b, m, "out of memory");
        b->stack[b->depth++] = (struct frame){node, NULL, 0, 0};
        return 0;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        struct frame f = b->stack[--b->depth];
        free(f.key); /* cannot be set: the parser pairs keys and values */
        for (size_t i = 0; i < b->nanchors; i++)
            if (b->anchors[i].node == f.node)
                b->anchors[i].open = 0;
        return attach(b, f.node, m);
    }
    default:
        return 0;
    }
}

cJSON *kube_yamljson_parse(const char *text, size_t len, char *errbuf, size_t errlen)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(errbuf, errlen, "cannot initialise the YAML parser");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    struct builder b = {.errbuf = errbuf, .errlen = errlen, .graveyard = cJSON_CreateArray()};
    if (!b.graveyard) {
        yaml_parser_delete(&parser);
        snprintf(errbuf, errlen, "out of memory");
        return NULL;
    }
    int done = 0, failed = 0;
    while (!done && !failed) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            if (parser.context)
                snprintf(errbuf, errlen, "line %zu column %zu: %s %s (line %zu column %zu)",
                         parser.problem_mark.line + 1, parser.problem_mark.column + 1, parser.problem,
                         parser.context, parser.context_mark.line + 1, parser.context_mark.column + 1);
            else
                snprintf(errbuf, errlen, "line %zu column %zu: %s", parser.problem_mark.line + 1,
                         parser.problem_mark.column + 1, parser.problem ? parser.problem : "YAML error");
            failed = 1;
            break;
        }
        /* only the first document is read */
        if (ev.type == YAML_STREAM_END_EVENT || ev.type == YAML_DOCUMENT_END_EVENT)
            done = 1;
        else if (on_event(&b, &ev))
            failed = 1;
        yaml_event_delete(&ev);
    }
    /* after an error: open collections are not attached to their parents yet */
    while (b.depth > 0) {
        struct frame *f = &b.stack[--b.depth];
        free(f->key);
        cJSON_Delete(f->node);
    }
    for (size_t i = 0; i < b.nanchors; i++)
        free(b.anchors[i].name);
    cJSON_Delete(b.graveyard);
    free(b.anchors);
    yaml_parser_delete(&parser);
    if (failed) {
        cJSON_Delete(b.root);
        return NULL;
    }
    if (!b.root)
        b.root = cJSON_CreateNull();
    if (!b.root)
        snprintf(errbuf, errlen, "out of memory");
    return b.root;
}
