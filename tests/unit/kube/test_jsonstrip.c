/* kube_jsonstrip_managed_fields: what is removed, and the hostile texts left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/jsonstrip.h"

/* The cases are written with ' for " (a \' is an escaped quote); out NULL: unchanged. */
static const struct {
    const char *in, *out;
} cases[] = {
    /* removed: first, middle, last, only member; whitespace around */
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[{'a':1}],'name':'x'}}}",
     "{'type':'ADDED','object':{'metadata':{'name':'x'}}}"},
    {"{'type':'ADDED','object':{'metadata':{'name':'x','managedFields':[],'uid':'u'},'spec':{}}}",
     "{'type':'ADDED','object':{'metadata':{'name':'x','uid':'u'},'spec':{}}}"},
    {"{'type':'ADDED','object':{'metadata':{'name':'x','managedFields':[{'f':{'k':{}}}]}}}",
     "{'type':'ADDED','object':{'metadata':{'name':'x'}}}"},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':null}}}", "{'type':'ADDED','object':{'metadata':{}}}"},
    {" {\r\n 'object' : { 'metadata' : { 'name' : 'x' ,\n\t'managedFields' : [ 1 , 2 ] \n} } , 'type':'ADDED' } \n",
     " {\r\n 'object' : { 'metadata' : { 'name' : 'x' \n} } , 'type':'ADDED' } \n"},
    {"{'object':{'metadata':{ 'managedFields' : [ ] , 'name':'x'}},'type':'MODIFIED'}",
     "{'object':{'metadata':{ 'name':'x'}},'type':'MODIFIED'}"},
    /* the value's strings may hold brackets, quotes and the key itself */
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[{'m':']}\\'{[','managedFields':1}],'name':'x'}}}",
     "{'type':'ADDED','object':{'metadata':{'name':'x'}}}"},
    /* every kind of JSON value, escapes included, inside and around it */
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[-0.5e+3,0,1E9,true,false,null,{},[],'\\\'\\/\\b\\f\\n\\r\\t','\\u00e9\\uD83D\\uDE00'],'name':'\\u0078'}}}",
     "{'type':'ADDED','object':{'metadata':{'name':'\\u0078'}}}"},
    /* a managedFields elsewhere stays */
    {"{'type':'ADDED','object':{'spec':{'managedFields':[1]},'metadata':{'name':'x','managedFields':[]}}}",
     "{'type':'ADDED','object':{'spec':{'managedFields':[1]},'metadata':{'name':'x'}}}"},
    {"{'type':'ADDED','managedFields':[1],'object':{'managedFields':[2],'metadata':{'name':'x'}}}", NULL},
    {"{'type':'ADDED','object':{'spec':{'template':{'metadata':{'managedFields':[1]}}},'metadata':{}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'annotations':{'managedFields':'[]'},'name':'x'}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'annotations':{'a':'\\'managedFields\\':[1],'}}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'name':'x\\',\\'managedFields\\':[1]'}}}", NULL},
    {"{'type':'ADDED','object':{'status':{'metadata':{'managedFields':[]}}}}", NULL},
    {"{'type':'ADDED','object':[{'metadata':{'managedFields':[]}}]}", NULL},
    {"{'type':'ADDED','object':{'metadata':[{'managedFields':[]}]}}", NULL},
    {"[{'object':{'metadata':{'managedFields':[]}}}]", NULL},
    {"{'type':'ERROR','object':{'kind':'Status','code':410}}", NULL},
    /* duplicates and escaped keys on the path: a parser's choice, left alone */
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1],'managedFields':[2]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1]},'metadata':{}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1]}},'object':{}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managed\\u0046ields':[1]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1],'managed\\u0046ields':[2]}}}", NULL},
    {"{'type':'ADDED','\\u006fbject':{'metadata':{'managedFields':[1]}}}", NULL},
    /* malformed: truncated, unbalanced, misplaced separators, bad scalars, trailing bytes */
    {"", NULL},
    {"   ", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1]}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1}}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1]]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1],}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{,'managedFields':[1]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields' [1]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1,,2]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[tru]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[x1]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':['open]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':['a\\']}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1e]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[01]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[.5]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1.]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[-]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[+1]}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1234567890123456789012345678901234567890123456789012345678901234]}}}",
     NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':['\\x']}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':['\\u12G4']}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':['\\u12']}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':['\\uDC00']}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':['\\uD800']}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':['\\uD800\\u0041']}}}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1]}}} x", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1]}}}{}", NULL},
    {"{'type':'ADDED','object':{'metadata':{'managedFields':[1]}}}\f", NULL},
    {"\xef\xbb\xbf{'type':'ADDED','object':{'metadata':{'managedFields':[1]}}}", NULL},
};

/* s with ' turned into ", in a fresh buffer. */
static char *quoted(const char *s)
{
    char *q = strdup(s);
    assert_non_null(q);
    for (char *c = q; *c; c++)
        if (*c == '\'')
            *c = '"';
    return q;
}

/* What the parser makes of the original less object.metadata.managedFields. */
static cJSON *parsed_without(const char *text)
{
    cJSON *ev = cJSON_Parse(text);
    cJSON *md = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "object"), "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
    return ev;
}

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *in = quoted(cases[i].in);
        char *want = quoted(cases[i].out ? cases[i].out : cases[i].in);
        size_t len = strlen(in);
        char *orig = strdup(in);
        assert_non_null(orig);
        size_t n = kube_jsonstrip_managed_fields(in, len);
        if (n != strlen(want) || memcmp(in, want, n) != 0)
            fail_msg("case %zu: %s\n got %.*s\nwant %s", i, cases[i].in, (int)n, in, want);
        assert_int_equal(in[n], '\0');
        /* What is stripped parsed before, and parses to the same less the managedFields. */
        if (cases[i].out) {
            cJSON *before = parsed_without(orig);
            cJSON *after = cJSON_ParseWithLength(in, n);
            if (!before || !after || !cJSON_Compare(before, after, 1))
                fail_msg("case %zu: %s parses to something else once stripped", i, cases[i].in);
            cJSON_Delete(before);
            cJSON_Delete(after);
        }
        free(orig);
        free(in);
        free(want);
    }
}

/* Only the given length is read and written; the bytes after it stay. */
static void test_length_bounds(void **state)
{
    (void)state;
    char *in = quoted("{'object':{'metadata':{'managedFields':[1]}}}{'object':{'metadata':{'managedFields':[1]}}}");
    size_t half = strlen(in) / 2;
    char *rest = strdup(in + half);
    assert_non_null(rest);
    size_t n = kube_jsonstrip_managed_fields(in, half);
    char *want = quoted("{'object':{'metadata':{}}}");
    assert_int_equal(n, strlen(want));
    assert_memory_equal(in, want, n);
    assert_string_equal(in + half, rest);
    assert_int_equal(kube_jsonstrip_managed_fields(in, 0), 0);
    free(want);
    free(rest);
    free(in);
}

/* Nesting: up to KUBE_JSONSTRIP_MAX_DEPTH is scanned, deeper is left alone. */
static char *nested(size_t depth)
{
    static const char head[] = "{\"object\":{\"metadata\":{\"managedFields\":[1]},\"spec\":";
    size_t inner = depth - 2; /* the event and its object are two levels */
    size_t len = sizeof(head) - 1 + 2 * inner + 2;
    char *s = malloc(len + 1);
    assert_non_null(s);
    memcpy(s, head, sizeof(head) - 1);
    char *p = s + sizeof(head) - 1;
    memset(p, '[', inner);
    memset(p + inner, ']', inner);
    memcpy(p + 2 * inner, "}}", 3);
    return s;
}

static void test_depth(void **state)
{
    (void)state;
    char *ok = nested(KUBE_JSONSTRIP_MAX_DEPTH);
    size_t len = strlen(ok);
    assert_int_equal(kube_jsonstrip_managed_fields(ok, len), len - strlen("\"managedFields\":[1]"));
    char *deep = nested(KUBE_JSONSTRIP_MAX_DEPTH + 1);
    len = strlen(deep);
    assert_int_equal(kube_jsonstrip_managed_fields(deep, len), len);
    free(ok);
    free(deep);
}

/* A realistic event: a PsiRebalance's status write echoed back with its field sets. */
static void test_large_event(void **state)
{
    (void)state;
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "type", "MODIFIED");
    cJSON *o = cJSON_AddObjectToObject(ev, "object");
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(md, "name", "default");
    cJSON *entry = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(md, "managedFields"), entry);
    cJSON_AddStringToObject(entry, "manager", "psi-rebalancer");
    cJSON *fs = cJSON_AddObjectToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(entry, "fieldsV1"), "f:status"),
                                        "f:nodes");
    cJSON *nodes = cJSON_AddArrayToObject(cJSON_AddObjectToObject(o, "status"), "nodes");
    for (int i = 0; i < 200; i++) {
        char name[32], key[64];
        snprintf(name, sizeof(name), "node-%03d", i);
        snprintf(key, sizeof(key), "k:{\"name\":\"%s\"}", name);
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(fs, key), "f:name");
        cJSON *n = cJSON_CreateObject();
        cJSON_AddStringToObject(n, "name", name);
        cJSON_AddItemToArray(nodes, n);
    }
    char *text = cJSON_PrintUnformatted(ev);
    assert_non_null(text);
    size_t len = strlen(text);
    size_t n = kube_jsonstrip_managed_fields(text, len);
    assert_true(n < len);
    cJSON *after = cJSON_ParseWithLength(text, n);
    cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
    assert_true(cJSON_Compare(ev, after, 1));
    assert_null(strstr(text, "f:nodes"));
    cJSON_Delete(after);
    cJSON_free(text);
    cJSON_Delete(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_length_bounds),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_large_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
