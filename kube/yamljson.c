#include "kube/yamljson.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/grow.h"

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
    if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF") || !strcmp(s, ".nan") || !strcmp(s, ".NaN") ||
        !strcmp(s, ".NAN"))
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
#define NO_ANCHOR ((size_t)-1)

/* An open-addressing table from (owner, string) to a value: anchors by name (owner NULL,
 * value: index + 1 in anchors) and the keys of the mappings being built (owner: the
 * object, value: its item), so that alias and duplicate-key lookups cost O(1) and a
 * document of n nodes is read in O(n). */
struct slot {
    const void *owner;
    const char *key;
    void *val;
};

struct table {
    struct slot *s;
    size_t cap, n; /* cap: 0 or a power of two */
};

static size_t slot_hash(const void *owner, const char *key)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uintptr_t)owner;
    for (; *key; key++) {
        h ^= (unsigned char)*key;
        h *= 1099511628211ULL;
    }
    return (size_t)(h ^ (h >> 29));
}

static struct slot *table_find(const struct table *t, const void *owner, const char *key)
{
    if (!t->cap)
        return NULL;
    for (size_t i = slot_hash(owner, key) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        struct slot *sl = &t->s[i];
        if (!sl->key)
            return NULL;
        if (sl->owner == owner && strcmp(sl->key, key) == 0)
            return sl;
    }
}

static void table_insert(struct slot *s, size_t cap, struct slot v)
{
    size_t i = slot_hash(v.owner, v.key) & (cap - 1);
    while (s[i].key)
        i = (i + 1) & (cap - 1);
    s[i] = v;
}

/* Set (owner, key) to val, replacing an earlier value; key must outlive the table or be
 * set again. Returns 0, or -1 out of memory. */
static int table_set(struct table *t, const void *owner, const char *key, void *val)
{
    struct slot *sl = table_find(t, owner, key);
    if (sl) {
        sl->key = key;
        sl->val = val;
        return 0;
    }
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct slot *ns = calloc(cap, sizeof(*ns));
        if (!ns)
            return -1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->s[i].key)
                table_insert(ns, cap, t->s[i]);
        free(t->s);
        t->s = ns;
        t->cap = cap;
    }
    table_insert(t->s, t->cap, (struct slot){owner, key, val});
    t->n++;
    return 0;
}

struct frame {
    cJSON *node;   /* array or object being filled */
    char *key;     /* pending mapping key (objects) */
    size_t anchor; /* index of its anchor, or NO_ANCHOR */
    long count;    /* nodes in the subtree so far, itself included */
    int height;    /* levels of the subtree so far (1: no children yet) */
};

struct anchor {
    char *name;
    cJSON *node;
    int open;   /* still being filled: an alias to it would recurse */
    long count; /* nodes of its subtree, once closed */
    int height;
};

struct builder {
    struct frame stack[MAX_DEPTH + 1];
    int depth;
    struct anchor *anchors;
    size_t nanchors, anchors_cap;
    struct table by_name; /* anchor name -> index + 1 of its latest definition */
    struct table keys;    /* (object, key) -> item, for the objects being built */
    long nodes;
    cJSON *graveyard; /* nodes out of the tree (keys, replaced values): anchors may still point
                         into them, so they live until the end */
    cJSON *root;
    char *errbuf;
    size_t errlen;
};

static int fail(struct builder *b, const yaml_mark_t *m, const char *what)
{
    snprintf(b->errbuf, b->errlen, "line %zu column %zu: %s", m->line + 1, m->column + 1, what);
    return -1;
}

/* Remember an anchor (name may be NULL: none) for node; *index is its index or NO_ANCHOR. */
static int remember_anchor(struct builder *b, const yaml_char_t *name, cJSON *node, int open, size_t *index)
{
    *index = NO_ANCHOR;
    if (!name)
        return 0;
    if (BASE_GROW(b->anchors, b->nanchors + 1, b->anchors_cap) < 0)
        return -1;
    struct anchor *a = &b->anchors[b->nanchors];
    *a = (struct anchor){strdup((const char *)name), node, open, 1, 1};
    if (!a->name)
        return -1;
    b->nanchors++;
    *index = b->nanchors - 1;
    /* a later anchor of the same name hides the earlier one */
    return table_set(&b->by_name, NULL, a->name, (void *)(uintptr_t)b->nanchors);
}

/* Put a node that does not go into the tree aside until the end. */
static void discard(struct builder *b, cJSON *node)
{
    cJSON_AddItemToArray(b->graveyard, node);
}

/* Take node as the pending key of mapping frame f. */
static int take_key(struct builder *b, struct frame *f, cJSON *node, const yaml_mark_t *m)
{
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
    return 0;
}

/* Attach a finished node of count nodes and height levels to its parent (or make it the
 * root); takes ownership. */
static int attach(struct builder *b, cJSON *node, long count, int height, const yaml_mark_t *m)
{
    if (b->depth == 0) {
        b->root = node;
        return 0;
    }
    struct frame *f = &b->stack[b->depth - 1];
    if (cJSON_IsObject(f->node) && !f->key)
        return take_key(b, f, node, m);
    f->count += count;
    if (height + 1 > f->height)
        f->height = height + 1;
    if (cJSON_IsArray(f->node)) {
        cJSON_AddItemToArray(f->node, node);
        return 0;
    }
    struct slot *old = table_find(&b->keys, f->node, f->key);
    if (old)
        discard(b, cJSON_DetachItemViaPointer(f->node, old->val)); /* a later duplicate key wins
                                                                      (an anchor may still use the old value) */
    cJSON_AddItemToObject(f->node, f->key, node);
    free(f->key);
    f->key = NULL;
    if (table_set(&b->keys, f->node, node->string, node) < 0)
        return fail(b, m, "out of memory");
    return 0;
}

static int on_alias(struct builder *b, const yaml_event_t *ev)
{
    const yaml_mark_t *m = &ev->start_mark;
    struct slot *sl = table_find(&b->by_name, NULL, (const char *)ev->data.alias.anchor);
    if (!sl)
        return fail(b, m, "unknown alias");
    const struct anchor *a = &b->anchors[(uintptr_t)sl->val - 1];
    if (a->open)
        return fail(b, m, "recursive alias");
    b->nodes += a->count;
    if (b->nodes > MAX_NODES)
        return fail(b, m, "document too large (alias expansion)");
    if (b->depth + a->height > MAX_DEPTH + 1)
        return fail(b, m, "nesting too deep (alias expansion)");
    cJSON *node = cJSON_Duplicate(a->node, 1);
    if (!node)
        return fail(b, m, "out of memory");
    return attach(b, node, a->count, a->height, m);
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
    const yaml_mark_t *m = &ev->start_mark;
    cJSON *node = NULL;
    size_t anchor;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        node = scalar(ev);
        if (!node)
            return fail(b, m, "out of memory");
        if (++b->nodes > MAX_NODES)
            return cJSON_Delete(node), fail(b, m, "document too large");
        if (remember_anchor(b, ev->data.scalar.anchor, node, 0, &anchor))
            return cJSON_Delete(node), fail(b, m, "out of memory");
        return attach(b, node, 1, 1, m);
    case YAML_ALIAS_EVENT: return on_alias(b, ev);
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
        const yaml_char_t *name = seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor;
        if (remember_anchor(b, name, node, 1, &anchor))
            return cJSON_Delete(node), fail(b, m, "out of memory");
        b->stack[b->depth++] = (struct frame){node, NULL, anchor, 1, 1};
        return 0;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        struct frame f = b->stack[--b->depth];
        free(f.key); /* cannot be set: the parser pairs keys and values */
        if (f.anchor != NO_ANCHOR) {
            struct anchor *a = &b->anchors[f.anchor];
            a->open = 0;
            a->count = f.count;
            a->height = f.height;
        }
        return attach(b, f.node, f.count, f.height, m);
    }
    default: return 0;
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
                         parser.problem_mark.line + 1, parser.problem_mark.column + 1, parser.problem, parser.context,
                         parser.context_mark.line + 1, parser.context_mark.column + 1);
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
    free(b.by_name.s);
    free(b.keys.s);
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
