/* Unit tests of api_quantity: every form of a Kubernetes quantity, and what is no quantity. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/quantity.h"

static double q(const char *s)
{
    double v = -1;
    assert_int_equal(api_quantity_parse(s, &v, NULL, 0), 0);
    return v;
}

/* s is refused, *out untouched, and the message names s and says why. */
static void bad(const char *s, const char *why)
{
    double v = 42;
    char err[256] = "", name[65] = "";
    assert_int_equal(api_quantity_parse(s, &v, err, sizeof(err)), -1);
    assert_true(v == 42);
    if (s)
        snprintf(name, sizeof(name), "%s", s); /* a long one is named by its start */
    if (s && !strstr(err, name))
        fail_msg("\"%s\": the message does not name it: %s", s, err);
    if (!strstr(err, why))
        fail_msg("\"%s\": want \"%s\" in: %s", s ? s : "(null)", why, err);
}

static void test_quantities(void **state)
{
    (void)state;
    assert_true(fabs(q("100m") - 0.1) < 1e-12);
    assert_true(fabs(q("2") - 2) < 1e-12);
    assert_true(fabs(q("1.5") - 1.5) < 1e-12);
    assert_true(fabs(q("250u") - 250e-6) < 1e-15);
    assert_true(fabs(q("4Gi") - 4294967296.0) < 1);
    assert_true(fabs(q("512Mi") - 536870912.0) < 1);
    assert_true(fabs(q("512M") - 512e6) < 1);
    assert_true(fabs(q("1Ki") - 1024) < 1e-9);
    assert_true(fabs(q("1k") - 1000) < 1e-9);
    assert_true(fabs(q("3G") - 3e9) < 1);
    assert_true(fabs(q("1e3") - 1000) < 1e-9);
    assert_true(fabs(q("2e3") - 2000) < 1e-9);
    assert_true(fabs(q("1E") - 1e18) < 1e3); /* the exa suffix, not an exponent */
    assert_true(fabs(q("12E-1") - 1.2) < 1e-12);
    assert_true(fabs(q(".5") - 0.5) < 1e-12);
    assert_true(fabs(q("+1") - 1) < 1e-12);
    assert_true(fabs(q("1e-400")) < 1e-300); /* underflows to 0: still a quantity */
    assert_true(fabs(q("8Ei") - 9223372036854775808.0) < 1e4);
}

static void test_not_quantities(void **state)
{
    (void)state;
    bad("", "empty");
    bad(NULL, "empty");
    bad("m", "no number");
    bad("Gi", "no number");
    bad("abc", "no number");
    bad("nan", "no number");
    bad("inf", "no number");
    bad("1Xi", "unknown suffix");
    bad("4GB", "unknown suffix");
    bad("1 Gi", "unknown suffix");
    bad("1e3Ki", "unknown suffix");
    bad("0x10", "hexadecimal");
    bad("0x1p3", "hexadecimal");
    bad("-1", "negative");
    bad("-0.5Gi", "negative");
    bad("--1", "negative");
    bad("+-1", "no number");
    bad("1e999", "too large");
    bad("9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "9999999999Ei",
        "too large"); /* 1e310 bytes: beyond a double */
    bad("9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
        "too large");
    bad("infinity", "no number");
    bad("+Inf", "no number");
    bad("NaN", "no number");
    bad("1e", "unknown suffix");
    bad("1e+", "unknown suffix");
    bad("1.5.5", "unknown suffix");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_not_quantities),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
