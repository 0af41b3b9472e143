/* kube_num: integers read from server replies, and the numbers that are none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/num.h"

static void test_integers(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int64_t min, max, want;
    } good[] = {
        {"0", 0, 10, 0},
        {"404", 100, 599, 404},
        {"-5", -10, 10, -5},
        {"1e2", 0, 1000, 100},
        {"2147483647", 0, INT32_MAX, INT32_MAX},
        {"-9223372036854775808", INT64_MIN, INT64_MAX, INT64_MIN},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        cJSON *j = cJSON_Parse(good[i].json);
        int64_t v = 7;
        if (kube_num_int(j, good[i].min, good[i].max, &v) != 0 || v != good[i].want)
            fail_msg("%s: got %lld", good[i].json, (long long)v);
        cJSON_Delete(j);
    }
}

static void test_not_integers(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int64_t min, max;
    } bad[] = {
        {"1e300", INT64_MIN, INT64_MAX}, /* beyond any integer type: a cast is undefined */
        {"-1e300", INT64_MIN, INT64_MAX},
        {"9223372036854775808", INT64_MIN, INT64_MAX}, /* 2^63 */
        {"1e19", 0, INT64_MAX},
        {"2.5", 0, 10},
        {"-0.5", -10, 10},
        {"600", 100, 599},
        {"99", 100, 599},
        {"2147483648", 0, INT32_MAX},
        {"-1", 0, INT32_MAX},
        {"\"404\"", 100, 599},
        {"true", 0, 10},
        {"null", 0, 10},
        {"[1]", 0, 10},
        {"{}", 0, 10},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *j = cJSON_Parse(bad[i].json);
        assert_non_null(j);
        int64_t v = 7;
        if (kube_num_int(j, bad[i].min, bad[i].max, &v) != -1 || v != 7)
            fail_msg("%s read as %lld", bad[i].json, (long long)v);
        assert_int_equal(kube_num_int_or(j, bad[i].min, bad[i].max, -3), -3);
        cJSON_Delete(j);
    }
    int64_t v = 7;
    assert_int_equal(kube_num_int(NULL, 0, 10, &v), -1);
    /* cJSON does not parse NaN or Inf, but a number item may still hold one */
    cJSON *n = cJSON_CreateNumber(0.0 / 0.0);
    assert_int_equal(kube_num_int(n, INT64_MIN, INT64_MAX, &v), -1);
    cJSON_SetNumberValue(n, 1.0 / 0.0);
    assert_int_equal(kube_num_int(n, INT64_MIN, INT64_MAX, &v), -1);
    cJSON_Delete(n);
    assert_int_equal(v, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_not_integers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
