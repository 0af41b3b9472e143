/* api_duration: the duration language of the CRD pattern, parsed and formatted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/duration.h"

static void test_parse_valid(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t ms;
    } cases[] = {
        {"0s", 0},
        {"30s", 30000},
        {"1m", 60000},
        {"10m", 600000},
        {"1h", 3600000},
        {"1m30s", 90000},
        {"500ms", 500},
        {"1s500ms", 1500},
        {"1h30m", 5400000},
        {"90m", 5400000},
        {"30s1m", 90000},
        {"99999h", 99999LL * 3600000},
        {"1h1m1s1ms", 3661001},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = -1;
        char err[128] = "";
        if (api_duration_parse(cases[i].s, &ms, err, sizeof(err)) != 0)
            fail_msg("'%s' refused: %s", cases[i].s, err);
        assert_int_equal(ms, cases[i].ms);
    }
}

static void test_parse_invalid(void **state)
{
    (void)state;
    /* Each is refused by the CRD pattern ^([0-9]{1,5}(ms|s|m|h)){1,4}$ too. */
    static const char *const bad[] = {
        "", "30", "s", "1d", "1.5h", "-1s", " 1s", "1s ", "1 s", "1us", "1ns", "100000s", "1s1s1s1s1s", "1H", "1m30",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ms = 42;
        char err[128] = "";
        if (api_duration_parse(bad[i], &ms, err, sizeof(err)) == 0)
            fail_msg("'%s' accepted", bad[i]);
        assert_int_equal(ms, 42); /* untouched */
        assert_true(strlen(err) > 0);
    }
    int64_t ms;
    assert_int_equal(api_duration_parse(NULL, &ms, NULL, 0), -1);
}

static void test_format(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(api_duration_format(0, b, sizeof(b)), "0s");
    assert_string_equal(api_duration_format(30000, b, sizeof(b)), "30s");
    assert_string_equal(api_duration_format(60000, b, sizeof(b)), "1m");
    assert_string_equal(api_duration_format(90000, b, sizeof(b)), "1m30s");
    assert_string_equal(api_duration_format(86400000, b, sizeof(b)), "24h");
    assert_string_equal(api_duration_format(1500, b, sizeof(b)), "1s500ms");
    assert_string_equal(api_duration_format(3661001, b, sizeof(b)), "1h1m1s1ms");
}

static void test_format_parses_back(void **state)
{
    (void)state;
    static const int64_t values[] = {1, 999, 1000, 59999, 60000, 3599999, 3600000, 7200000, 2592000000LL};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char b[32];
        int64_t back = -1;
        assert_int_equal(api_duration_parse(api_duration_format(values[i], b, sizeof(b)), &back, NULL, 0), 0);
        assert_int_equal(back, values[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid),
        cmocka_unit_test(test_parse_invalid),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_parses_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
