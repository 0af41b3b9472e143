/* Unit tests for psi_procfs: the /proc/pressure format, good and malformed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "psi/procfs.h"
#include "testutil.h"

static void test_both_lines(void **state)
{
    (void)state;
    struct psi_procfs p;
    char err[256] = "";
    assert_int_equal(psi_procfs_read(testdata_path("pressure_memory.txt"), &p, err, sizeof(err)), 0);
    assert_true(p.has_some);
    assert_true(p.has_full);
    assert_float_equal(p.some.avg10, 12.34, 1e-9);
    assert_float_equal(p.some.avg60, 5.0, 1e-9);
    assert_float_equal(p.some.avg300, 1.0, 1e-9);
    assert_true(p.some.total_us == 987654);
    assert_float_equal(p.full.avg10, 3.21, 1e-9);
    assert_true(p.full.total_us == 12345);
}

static void test_old_kernel_cpu_has_only_some(void **state)
{
    (void)state;
    struct psi_procfs p;
    char err[256] = "";
    assert_int_equal(psi_procfs_read(testdata_path("pressure_cpu_old_kernel.txt"), &p, err, sizeof(err)), 0);
    assert_true(p.has_some);
    assert_false(p.has_full);
    assert_true(p.some.total_us == 42);
}

static void test_order_spaces_and_unknown_keys(void **state)
{
    (void)state;
    struct psi_procfs p;
    char err[256] = "";
    const char *t = "  full total=7 avg300=0.5 avg60=0.25 avg10=0.125 \r\n\n"
                    "some avg10=9.99 avg60=1 avg300=2 total=18446744073709551615 avg3600=1.0\n";
    assert_int_equal(psi_procfs_parse(t, &p, err, sizeof(err)), 0);
    assert_float_equal(p.full.avg10, 0.125, 1e-12);
    assert_float_equal(p.full.avg300, 0.5, 1e-12);
    assert_true(p.full.total_us == 7);
    assert_true(p.some.total_us == UINT64_MAX);
    /* no trailing newline */
    assert_int_equal(psi_procfs_parse("some avg10=1 avg60=2 avg300=3 total=4", &p, err, sizeof(err)), 0);
    assert_float_equal(p.some.avg300, 3, 1e-12);
}

/* Each malformed input fails and the message names the problem. */
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *want;
    } cases[] = {
        {"", "no \"some\" line"},
        {"full avg10=0 avg60=0 avg300=0 total=0\n", "no \"some\" line"},
        {"some avg10=0 avg60=0 avg300=0\n", "key total missing"},
        {"some avg10=0 avg60=0 total=0\n", "key avg300 missing"},
        {"some avg10=x avg60=0 avg300=0 total=0\n", "avg10=x is not a number"},
        {"some avg10=1.5.2 avg60=0 avg300=0 total=0\n", "is not a number"},
        {"some avg10=nan avg60=0 avg300=0 total=0\n", "is not a number"},
        {"some avg10=101 avg60=0 avg300=0 total=0\n", "outside 0..100"},
        {"some avg10=-1 avg60=0 avg300=0 total=0\n", "outside 0..100"},
        {"some avg10=0 avg60=0 avg300=0 total=-5\n", "not an unsigned integer"},
        {"some avg10=0 avg60=0 avg300=0 total=12abc\n", "not an unsigned integer"},
        {"some avg10=0 avg60=0 avg300=0 total=99999999999999999999999\n", "not an unsigned integer"},
        {"some avg10=0 avg10=1 avg60=0 avg300=0 total=0\n", "key avg10 repeated"},
        {"some avg10 avg60=0 avg300=0 total=0\n", "not key=value"},
        {"some avg10= avg60=0 avg300=0 total=0\n", "not key=value"},
        {"some avg10=0 avg60=0 avg300=0 total=0\nsome avg10=0 avg60=0 avg300=0 total=0\n", "second \"some\" line"},
        {"partial avg10=0 avg60=0 avg300=0 total=0\n", "line 1: expected"},
        {"somex avg10=0 avg60=0 avg300=0 total=0\n", "expected"},
        {"some avg10=0 avg60=0 avg300=0 total=0\ngarbage\n", "line 2: expected"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct psi_procfs p;
        char err[256] = "";
        int rc = psi_procfs_parse(cases[i].text, &p, err, sizeof(err));
        if (rc != -1 || !strstr(err, cases[i].want))
            fail_msg("case %zu (%s): rc=%d err=\"%s\", want \"%s\"", i, cases[i].text, rc, err, cases[i].want);
    }
}

/* Without a message buffer (NULL, or of size 0) a malformed input still fails and nothing is
 * written. */
static void test_malformed_without_errbuf(void **state)
{
    (void)state;
    struct psi_procfs p;
    assert_int_equal(psi_procfs_parse("garbage\n", &p, NULL, 0), -1);
    char err[8] = "x";
    assert_int_equal(psi_procfs_parse("garbage\n", &p, err, 0), -1);
    assert_string_equal(err, "x");
    /* a short buffer holds the start of the message, terminated */
    assert_int_equal(psi_procfs_parse("garbage\n", &p, err, sizeof(err)), -1);
    assert_string_equal(err, "line 1:");
}

static void test_read_missing_file_names_path(void **state)
{
    (void)state;
    struct psi_procfs p;
    char err[256] = "";
    assert_int_equal(psi_procfs_read("/nonexistent/pressure/cpu", &p, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent/pressure/cpu"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_lines),
        cmocka_unit_test(test_old_kernel_cpu_has_only_some),
        cmocka_unit_test(test_order_spaces_and_unknown_keys),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_malformed_without_errbuf),
        cmocka_unit_test(test_read_missing_file_names_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
