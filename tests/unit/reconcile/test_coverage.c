/* Unit tests of controller/reconcile/status/coverage: which nodes a sample that did not fail measured,
 * the reason that follows, and the list of the others with why, cut to fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reconcile/status/coverage.h"

/* A sample of n nodes named w0..; known[i] says whether node i has a CPU reading. */
static struct psi_sample sample_of(struct psi_node_sample *nodes, char (*names)[16], size_t n, const bool *known)
{
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "w%zu", i);
        nodes[i] = (struct psi_node_sample){.name = names[i]};
        nodes[i].value[PSI_CPU] = (struct psi_value){known[i], known[i] ? 12.5 : 0};
        nodes[i].value[PSI_MEMORY] = (struct psi_value){1, 3.0}; /* another resource does not count */
    }
    return (struct psi_sample){.nodes = nodes, .n_nodes = n};
}

static void test_all_some_none(void **state)
{
    (void)state;
    struct psi_node_sample nodes[3];
    char names[3][16], text[256];
    const bool all[3] = {true, true, true}, some[3] = {true, false, false}, none[3] = {false, false, false};

    struct psi_sample s = sample_of(nodes, names, 3, all);
    struct coverage c = coverage_of(&s, PSI_CPU, text, sizeof(text));
    assert_int_equal(c.asked, 3);
    assert_int_equal(c.measured, 3);
    assert_string_equal(text, "");
    assert_string_equal(coverage_reason(&c), COVERAGE_REASON_ALL);

    s = sample_of(nodes, names, 3, some);
    nodes[2].unread = PSI_REASON_NO_PSI;
    c = coverage_of(&s, PSI_CPU, text, sizeof(text));
    assert_int_equal(c.measured, 1);
    assert_string_equal(text, "w1 (NoSeries), w2 (PSIUnavailable)");
    assert_string_equal(coverage_reason(&c), COVERAGE_REASON_PARTIAL);
    /* the memory readings do not make the nodes measured when cpu is acted on */
    c = coverage_of(&s, PSI_MEMORY, text, sizeof(text));
    assert_int_equal(c.measured, 3);

    s = sample_of(nodes, names, 3, none);
    c = coverage_of(&s, PSI_CPU, text, sizeof(text));
    assert_int_equal(c.measured, 0);
    assert_string_equal(coverage_reason(&c), COVERAGE_REASON_NONE);

    /* an empty reply for no node asked is no failure */
    s = sample_of(nodes, names, 0, none);
    c = coverage_of(&s, PSI_CPU, text, sizeof(text));
    assert_string_equal(coverage_reason(&c), COVERAGE_REASON_ALL);
}

static void test_list_cut_to_fit(void **state)
{
    (void)state;
    enum { N = 40 };
    struct psi_node_sample nodes[N];
    char names[N][16], text[64];
    bool known[N] = {false};
    struct psi_sample s = sample_of(nodes, names, N, known);
    struct coverage c = coverage_of(&s, PSI_CPU, text, sizeof(text));
    assert_int_equal(c.measured, 0);
    assert_true(strlen(text) < sizeof(text));
    assert_int_equal(strncmp(text, "w0 (NoSeries), w1 (NoSeries)", 28), 0);
    assert_non_null(strstr(text, ", ..."));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_some_none),
        cmocka_unit_test(test_list_cut_to_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
