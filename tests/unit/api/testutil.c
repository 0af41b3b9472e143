/* Helpers for the api unit tests. */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

const char *tu_src_path(const char *rel)
{
    static char buf[4096];
    const char *td = getenv("PSI_TESTDATA"); /* <root>/tests/testdata */
    if (!td)
        fail_msg("PSI_TESTDATA is not set (run through ctest)");
    snprintf(buf, sizeof(buf), "%s/../../%s", td, rel);
    return buf;
}

char *tu_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        fail_msg("cannot read %s", path);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

cJSON *tu_json(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("JSON does not parse near: %.40s", cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?");
    return j;
}

cJSON *tu_load_json(const char *rel)
{
    char *text = tu_read_file(tu_src_path(rel));
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("%s does not parse as JSON", rel);
    free(text);
    return j;
}

static int matches(const char *re, const char *s)
{
    regex_t r;
    if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
        return 0;
    int ok = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    return ok;
}

static cJSON *scalar(const yaml_node_t *n)
{
    const char *v = (const char *)n->data.scalar.value;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return cJSON_CreateString(v);
    if (!*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0)
        return cJSON_CreateNull();
    if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "TRUE") == 0)
        return cJSON_CreateTrue();
    if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 || strcmp(v, "FALSE") == 0)
        return cJSON_CreateFalse();
    if (matches("^[-+]?[0-9]+$", v) || matches("^[-+]?([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?$", v) ||
        matches("^[-+]?[0-9]+[eE][-+]?[0-9]+$", v))
        return cJSON_CreateNumber(strtod(v, NULL));
    return cJSON_CreateString(v);
}

static cJSON *convert(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    if (!n || depth > 200)
        return NULL;
    switch (n->type) {
    case YAML_SCALAR_NODE: return scalar(n);
    case YAML_SEQUENCE_NODE: {
        cJSON *a = cJSON_CreateArray();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            cJSON *c = convert(doc, yaml_document_get_node(doc, *it), depth + 1);
            if (!c)
                fail_msg("bad YAML sequence item");
            cJSON_AddItemToArray(a, c);
        }
        return a;
    }
    case YAML_MAPPING_NODE: {
        cJSON *o = cJSON_CreateObject();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            if (!k || k->type != YAML_SCALAR_NODE)
                fail_msg("YAML mapping key is not a scalar");
            cJSON *c = convert(doc, yaml_document_get_node(doc, p->value), depth + 1);
            if (!c)
                fail_msg("bad YAML mapping value");
            cJSON_AddItemToObject(o, (const char *)k->data.scalar.value, c);
        }
        return o;
    }
    default: return NULL;
    }
}

cJSON *tu_load_yaml(const char *rel)
{
    const char *path = tu_src_path(rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc))
        fail_msg("%s: YAML error: %s at line %zu", rel, parser.problem ? parser.problem : "?",
                 parser.problem_mark.line + 1);
    cJSON *j = convert(&doc, yaml_document_get_root_node(&doc), 0);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(f);
    if (!j)
        fail_msg("%s: empty YAML document", rel);
    return j;
}
