/* Unit tests for promcred: what a PsiRebalance's metrics.prometheus becomes for the
 * Prometheus client (which token, which trust), with a client from a kubeconfig of
 * tests/testdata/kube and no network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/config.h"
#include "promcred.h"
#include "psi/promtoken.h"

struct fixture {
    struct kube_config *cfg;
    struct kube_client *client;
    struct promcred *pc;
    struct api_spec spec;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    char path[1024];
    snprintf(path, sizeof(path), "%s/kube/tokenfile.yaml", getenv("PSI_TESTDATA"));
    struct kube_err err = {0};
    setenv("PSI_SERVICEACCOUNT_DIR", "/sa", 1);
    if (!f || kube_config_load_file(path, NULL, &f->cfg, &err) < 0 || !(f->client = kube_client_new(f->cfg, &err)) ||
        !(f->pc = promcred_new(f->client)) || api_spec_defaults(&f->spec) < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    api_spec_free(&f->spec);
    promcred_free(f->pc);
    kube_client_free(f->client);
    kube_config_free(f->cfg);
    free(f);
    unsetenv("PSI_SERVICEACCOUNT_DIR");
    return 0;
}

static void set_token_file(struct api_spec *s, const char *v)
{
    free(s->metrics.prometheus.bearer_token_file);
    s->metrics.prometheus.bearer_token_file = v ? strdup(v) : NULL;
}

/* The defaults: the pressure reader's token, the service CA of the ServiceAccount directory,
 * the operator's own token file named as never to be sent, no token over http. */
static void test_defaults_send_the_pressure_reader(void **state)
{
    struct fixture *f = *state;
    struct psi_prom_config c;
    promcred_config(f->pc, &f->spec, &c);
    assert_string_equal(c.url, "https://thanos-querier.openshift-monitoring.svc:9091");
    assert_non_null(c.token_fn);
    assert_non_null(strstr(c.token_fn->identity, PSI_PRESSURE_READER_SA));
    assert_null(c.token_file);
    assert_null(c.ca_file);
    assert_string_equal(c.service_ca_file, "/sa/service-ca.crt");
    assert_non_null(c.own_token_file);
    assert_string_equal(c.own_token_file, f->cfg->token_file);
    assert_int_equal(c.plain_http_token, 0);
    /* this kubeconfig's context names no namespace: no token can be requested, and the
     * message says why, without a request */
    struct kube_err st;
    assert_null(c.token_fn->get(c.token_fn->ud, &st));
    assert_string_equal(st.reason, PSI_REASON_CREDENTIAL);
    assert_non_null(strstr(st.msg, "namespace"));
}

/* bearerTokenFile "": no token; a path: that file and no minted token; the explicit
 * fields pass through. */
static void test_explicit_fields(void **state)
{
    struct fixture *f = *state;
    struct psi_prom_config c;
    set_token_file(&f->spec, "");
    promcred_config(f->pc, &f->spec, &c);
    assert_null(c.token_fn);
    assert_null(c.token_file);

    set_token_file(&f->spec, "/etc/reader/token");
    f->spec.metrics.prometheus.ca_file = strdup("/etc/ca.pem");
    f->spec.metrics.prometheus.send_token_over_plain_http = true;
    promcred_config(f->pc, &f->spec, &c);
    assert_null(c.token_fn);
    assert_string_equal(c.token_file, "/etc/reader/token");
    assert_string_equal(c.ca_file, "/etc/ca.pem");
    assert_int_equal(c.plain_http_token, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults_send_the_pressure_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explicit_fields, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
