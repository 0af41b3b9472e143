/* Unit tests of controller/reconcile/sampling's Prometheus client: one per PsiRebalance, the
 * pressure source's and the usage queries' (sampling_prom), made anew only when its settings
 * change, and never outlived by a source over it. No server: the client points at a closed
 * port and the one sample fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/reasons.h"
#include "reconcile/sampling.h"

static const struct kube_event_ref ref = {"rebalance.psi.dev/v1alpha1", "PsiRebalance", NULL, "test", NULL};

static void test_one_client(void **state)
{
    (void)state;
    struct sampling s;
    sampling_init(&s);
    struct psi_prom_config cfg = {.url = "http://127.0.0.1:1", .connect_timeout_ms = 200, .timeout_ms = 500};
    struct kube_err st;
    kube_err_clear(&st);
    struct psi_prom *p = sampling_prom(&s, &cfg, &st);
    assert_non_null(p);
    assert_false(kube_err_failed(&st));
    assert_ptr_equal(sampling_prom(&s, &cfg, &st), p); /* asked again: the same client */

    /* a sample: the pressure source reads through that very client */
    struct api_spec spec;
    memset(&spec, 0, sizeof(spec));
    assert_int_equal(api_spec_defaults(&spec), 0);
    spec.metrics.source = API_SOURCE_PROMETHEUS;
    struct ownership_nodes nodes = {0};
    struct sampling_in in = {NULL, NULL, &ref, &spec, &nodes, &cfg, 0};
    assert_int_equal(sampling_take(&s, &in), -1); /* nothing listens there */
    assert_string_equal(s.reason, API_REASON_SOURCE_UNREACHABLE);
    assert_non_null(s.source);
    assert_ptr_equal(s.source->impl, p);
    assert_ptr_equal(sampling_prom(&s, &cfg, &st), p); /* and the usage queries still get it */

    /* other settings: a new client, and the source over the old one is gone with it */
    cfg.url = "http://127.0.0.1:2";
    assert_non_null(sampling_prom(&s, &cfg, &st));
    assert_null(s.source);

    /* no settings (no memory to make them): no client, and why */
    assert_null(sampling_prom(&s, NULL, &st));
    assert_true(kube_err_failed(&st));
    assert_string_equal(st.reason, API_REASON_SOURCE_CONFIG_ERROR);
    api_spec_free(&spec);
    sampling_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
