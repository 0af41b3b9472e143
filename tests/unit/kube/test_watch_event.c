/* kube_watch_event_decode: the events of a watch stream, good and bad, one at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "kube/watch.h"

static void test_good_events(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        enum kube_watch_type type;
    } cases[] = {
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}", KUBE_WATCH_ADDED},
        {"{\"type\":\"MODIFIED\",\"object\":{}}", KUBE_WATCH_MODIFIED},
        {"{\"type\":\"DELETED\",\"object\":{\"kind\":\"Node\"},\"extra\":1}", KUBE_WATCH_DELETED},
        {"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}", KUBE_WATCH_BOOKMARK},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *ev = cJSON_Parse(cases[i].json);
        struct kube_watch_event e;
        char why[128] = "";
        if (kube_watch_event_decode(ev, &e, why, sizeof(why)) != 0)
            fail_msg("%s: %s", cases[i].json, why);
        assert_false(e.error);
        assert_int_equal(e.type, cases[i].type);
        assert_ptr_equal(e.object, cJSON_GetObjectItemCaseSensitive(ev, "object"));
        cJSON_Delete(ev);
    }
}

static void test_error_events(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        long code;
        const char *reason, *message;
    } cases[] = {
        {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\",\"message\":\"too old\"}}",
         410, "Expired", "too old"},
        {"{\"type\":\"ERROR\",\"object\":{\"code\":1e300}}", 0, NULL, NULL}, /* no integer: no status */
        {"{\"type\":\"ERROR\",\"object\":{\"code\":-1e300}}", 0, NULL, NULL},
        {"{\"type\":\"ERROR\",\"object\":{\"code\":410.5}}", 0, NULL, NULL},
        {"{\"type\":\"ERROR\",\"object\":{\"code\":4100}}", 0, NULL, NULL},
        {"{\"type\":\"ERROR\",\"object\":{\"code\":\"410\"}}", 0, NULL, NULL},
        {"{\"type\":\"ERROR\",\"object\":{\"reason\":7,\"message\":[]}}", 0, NULL, NULL},
        {"{\"type\":\"ERROR\",\"object\":\"gone\"}", 0, NULL, NULL},
        {"{\"type\":\"ERROR\"}", 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *ev = cJSON_Parse(cases[i].json);
        assert_non_null(ev);
        struct kube_watch_event e;
        char why[128] = "";
        if (kube_watch_event_decode(ev, &e, why, sizeof(why)) != 0)
            fail_msg("%s: %s", cases[i].json, why);
        assert_true(e.error);
        if (e.code != cases[i].code)
            fail_msg("%s: code %ld, want %ld", cases[i].json, e.code, cases[i].code);
        if (cases[i].reason)
            assert_string_equal(e.reason, cases[i].reason);
        else
            assert_null(e.reason);
        if (cases[i].message)
            assert_string_equal(e.message, cases[i].message);
        else
            assert_null(e.message);
        cJSON_Delete(ev);
    }
}

static void test_malformed_events(void **state)
{
    (void)state;
    static const struct {
        const char *json, *why;
    } cases[] = {
        {"[]", "not a JSON object"},
        {"\"ADDED\"", "not a JSON object"},
        {"null", "not a JSON object"},
        {"{}", "no \"type\""},
        {"{\"type\":null,\"object\":{}}", "no \"type\""},
        {"{\"type\":1,\"object\":{}}", "no \"type\""},
        {"{\"type\":\"added\",\"object\":{}}", "unknown type \"added\""},
        {"{\"type\":\"\",\"object\":{}}", "unknown type"},
        {"{\"type\":\"ADDED \",\"object\":{}}", "unknown type"},
        {"{\"type\":\"ADDED\"}", "ADDED event has no object"},
        {"{\"type\":\"MODIFIED\",\"object\":null}", "no object"},
        {"{\"type\":\"DELETED\",\"object\":[]}", "no object"},
        {"{\"type\":\"BOOKMARK\",\"object\":\"rv\"}", "no object"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *ev = cJSON_Parse(cases[i].json);
        assert_non_null(ev);
        struct kube_watch_event e;
        char why[128] = "";
        if (kube_watch_event_decode(ev, &e, why, sizeof(why)) != -1)
            fail_msg("%s decoded", cases[i].json);
        if (!strstr(why, cases[i].why))
            fail_msg("%s: want \"%s\" in \"%s\"", cases[i].json, cases[i].why, why);
        cJSON_Delete(ev);
    }
    struct kube_watch_event e;
    char why[128];
    assert_int_equal(kube_watch_event_decode(NULL, &e, why, sizeof(why)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_events),
        cmocka_unit_test(test_error_events),
        cmocka_unit_test(test_malformed_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
