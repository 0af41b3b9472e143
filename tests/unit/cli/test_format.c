/* cli_format: colour rules, percentages, durations, bars with threshold marks, newer values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cli/format.h"

static void test_style(void **state)
{
    (void)state;
    assert_true(cli_style_detect(true, NULL).color);
    assert_true(cli_style_detect(true, "").color); /* NO_COLOR set but empty: colour stays */
    assert_false(cli_style_detect(true, "1").color);
    assert_false(cli_style_detect(false, NULL).color);
    struct cli_style on = {true}, off = {false};
    assert_string_equal(cli_style_state(&off, API_NODE_TAINTED), "");
    assert_string_equal(cli_style_reset(&off), "");
    assert_string_equal(cli_style_level(&off, 50, 25, 30), "");
    assert_string_equal(cli_style_state(&on, API_NODE_TAINTED), "\033[31m");
    assert_string_not_equal(cli_style_state(&on, API_NODE_NORMAL), cli_style_state(&on, API_NODE_TAINTED));
    assert_string_equal(cli_style_level(&on, 31, 25, 30), "\033[31m");
    assert_string_equal(cli_style_level(&on, 26, 25, 30), "\033[33m");
    assert_string_equal(cli_style_level(&on, 25, 25, 30), "\033[32m");
    assert_string_equal(cli_style_level(&on, NAN, 25, 30), "");
}

static void test_pct_duration(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(cli_fmt_pct(NAN, b, sizeof(b)), "-");
    assert_string_equal(cli_fmt_pct(53.24, b, sizeof(b)), "53.2%");
    assert_string_equal(cli_fmt_pct(0, b, sizeof(b)), "0.0%");
    assert_string_equal(cli_fmt_duration(45, b, sizeof(b)), "45s");
    assert_string_equal(cli_fmt_duration(120, b, sizeof(b)), "2m");
    assert_string_equal(cli_fmt_duration(190, b, sizeof(b)), "3m10s");
    assert_string_equal(cli_fmt_duration(7500, b, sizeof(b)), "2h5m");
    assert_string_equal(cli_fmt_duration(7200, b, sizeof(b)), "2h");
    assert_string_equal(cli_fmt_duration(90000, b, sizeof(b)), "1d1h");
    assert_string_equal(cli_fmt_duration(-5, b, sizeof(b)), "0s");
}

static void test_bar(void **state)
{
    (void)state;
    char b[32];
    /* 20 cells, 5 % each: taint 25 % in cell 5, evict 30 % in cell 6 */
    assert_string_equal(cli_bar(50, 25, 30, 20, b, sizeof(b)), "#####|!###..........");
    assert_string_equal(cli_bar(0, 25, 30, 20, b, sizeof(b)), ".....|!.............");
    assert_string_equal(cli_bar(150, 25, 30, 20, b, sizeof(b)), "#####|!#############");
    assert_string_equal(cli_bar(-3, 25, 30, 20, b, sizeof(b)), ".....|!.............");
    assert_string_equal(cli_bar(NAN, 25, 30, 20, b, sizeof(b)), "     |!             ");
    assert_string_equal(cli_bar(100, 100, 100, 10, b, sizeof(b)), "#########!"); /* marks stay inside */
    assert_string_equal(cli_bar(50, 25, 30, 20, b, 10), "");                     /* too small a buffer */
}

static void test_extra(void **state)
{
    (void)state;
    char b[128];
    cJSON *v = cJSON_Parse("[12.34, \"31.0\", {\"source\": \"31.0\", \"destination\": 12.5, \"note\": \"x\"}, "
                           "\"abc\", [1], {\"a\": \"b\"}, true]");
    assert_non_null(v);
    assert_string_equal(cli_fmt_extra(cJSON_GetArrayItem(v, 0), b, sizeof(b)), "12.3%");
    assert_string_equal(cli_fmt_extra(cJSON_GetArrayItem(v, 1), b, sizeof(b)), "31.0%");
    assert_string_equal(cli_fmt_extra(cJSON_GetArrayItem(v, 2), b, sizeof(b)), "source 31.0%, destination 12.5%");
    assert_null(cli_fmt_extra(cJSON_GetArrayItem(v, 3), b, sizeof(b)));
    assert_null(cli_fmt_extra(cJSON_GetArrayItem(v, 4), b, sizeof(b)));
    assert_null(cli_fmt_extra(cJSON_GetArrayItem(v, 5), b, sizeof(b)));
    assert_null(cli_fmt_extra(cJSON_GetArrayItem(v, 6), b, sizeof(b)));
    assert_null(cli_fmt_extra(NULL, b, sizeof(b)));
    cJSON_Delete(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_style),
        cmocka_unit_test(test_pct_duration),
        cmocka_unit_test(test_bar),
        cmocka_unit_test(test_extra),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
