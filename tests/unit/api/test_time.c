/* api_json_parse_time: RFC 3339 times as the API server writes them, and what is no such
 * time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/json.h"

static void test_good_times(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t t;
    } cases[] = {
        {"2024-05-01T10:00:00Z", 1714557600},
        {"2024-05-01t10:00:00z", 1714557600},
        {"2024-05-01T12:00:00+02:00", 1714557600},
        {"2024-05-01T09:30:00-00:30", 1714557600},
        {"2024-05-01T10:00:00.123456Z", 1714557600}, /* metav1.MicroTime: fractions dropped */
        {"1970-01-01T00:00:00Z", 0},
        {"1969-12-31T23:59:59Z", -1},
        {"2024-02-29T00:00:00Z", 1709164800},
        {"2000-02-29T00:00:00Z", 951782400},
        {"2016-12-31T23:59:60Z", 1483228800}, /* a leap second reads as the next one */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t t = 42;
        if (api_json_parse_time(cases[i].s, &t) != 0 || t != cases[i].t)
            fail_msg("%s: got %lld, want %lld", cases[i].s, (long long)t, (long long)cases[i].t);
    }
}

static void test_bad_times(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "",
        "2024-05-01",
        "2024-05-01T10:00:00",  /* no offset */
        "2024-05-01 10:00:00Z", /* a space is not RFC 3339's T */
        "2024-5-01T10:00:00Z",
        "24-05-01T10:00:00Z",
        "2024-05-01T10:00Z",
        "2024-00-01T10:00:00Z",
        "2024-13-01T10:00:00Z",
        "2024-05-00T10:00:00Z",
        "2024-05-32T10:00:00Z",
        "2024-04-31T10:00:00Z", /* April has 30 days */
        "2023-02-29T10:00:00Z", /* not a leap year */
        "1900-02-29T10:00:00Z", /* nor is 1900 */
        "2024-02-30T10:00:00Z",
        "2024-05-01T24:00:00Z",
        "2024-05-01T10:60:00Z",
        "2024-05-01T10:00:61Z",
        "2024-05-01T10:00:00.Z", /* a fraction needs a digit */
        "2024-05-01T10:00:00+2:00",
        "2024-05-01T10:00:00+02",
        "2024-05-01T10:00:00+0200",
        "2024-05-01T10:00:00+24:00",
        "2024-05-01T10:00:00+02:60",
        "2024-05-01T10:00:00Zjunk",
        "2024-05-01T10:00:00+02:00junk",
        "+024-05-01T10:00:00Z",
        "2024-05-01T1a:00:00Z",
        "２０２４-05-01T10:00:00Z",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t t = 42;
        if (api_json_parse_time(cases[i], &t) == 0)
            fail_msg("\"%s\" read as the time %lld", cases[i], (long long)t);
        assert_int_equal(t, 42);
        assert_int_equal(api_json_time_or(cases[i], -7), -7); /* what is no time: the caller's none */
    }
    assert_int_equal(api_json_time_or(NULL, -1), -1);
    assert_int_equal(api_json_time_or("2024-05-01T10:00:00Z", -1), 1714557600);
}

static void test_format_round_trip(void **state)
{
    (void)state;
    char buf[32];
    int64_t t = 0;
    assert_string_equal(api_json_format_time(1714557600, buf, sizeof(buf)), "2024-05-01T10:00:00Z");
    assert_int_equal(api_json_parse_time(buf, &t), 0);
    assert_int_equal(t, 1714557600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_times),
        cmocka_unit_test(test_bad_times),
        cmocka_unit_test(test_format_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
