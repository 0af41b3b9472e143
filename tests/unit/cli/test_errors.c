/* cli_errors: each failure a user meets gets a sentence that names it and what to do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cli/errors.h"

static struct kube_err mk(long status, const char *reason, const char *msg)
{
    struct kube_err e = {.status = status};
    snprintf(e.reason, sizeof(e.reason), "%s", reason);
    snprintf(e.msg, sizeof(e.msg), "%s", msg);
    return e;
}

static void test_crd_absent(void **state)
{
    (void)state;
    char b[1024];
    struct kube_err e = mk(404, "NotFound", "the server could not find the requested resource");
    cli_error_explain(&e, CLI_REQUEST_COLLECTION, NULL, NULL, b, sizeof(b));
    assert_non_null(strstr(b, "is not installed"));
    assert_non_null(strstr(b, CLI_RESOURCE));
    assert_non_null(strstr(b, "kubectl apply -f crds/"));
    cli_error_explain(&e, CLI_REQUEST_NAMED, "demo", NULL, b, sizeof(b));
    assert_string_equal(b, "PsiRebalance \"demo\" not found (kubectl get psirebalances lists them)");
}

static void test_forbidden_unauthorized(void **state)
{
    (void)state;
    char b[1024];
    struct kube_err e = mk(403, "Forbidden", "psirebalances.rebalance.psi.dev is forbidden: User \"bob\" cannot list");
    cli_error_explain(&e, CLI_REQUEST_COLLECTION, NULL, NULL, b, sizeof(b));
    assert_non_null(strstr(b, "you may not read PsiRebalances (403 Forbidden)"));
    assert_non_null(strstr(b, "User \"bob\" cannot list"));
    assert_non_null(strstr(b, "get, list and watch"));
    e = mk(401, "Unauthorized", "Unauthorized");
    cli_error_explain(&e, CLI_REQUEST_NAMED, "demo", NULL, b, sizeof(b));
    assert_non_null(strstr(b, "refused the credentials"));
}

static void test_config_transport_other(void **state)
{
    (void)state;
    char b[1024];
    struct kube_err e = mk(0, "Config", "kubeconfig /x: cannot read: No such file or directory");
    cli_error_explain(&e, CLI_REQUEST_CONFIG, NULL, NULL, b, sizeof(b));
    assert_non_null(strstr(b, "cannot use the kubeconfig: kubeconfig /x: cannot read"));
    assert_non_null(strstr(b, "KUBECONFIG"));
    e = mk(0, "Transport", "Couldn't connect to server");
    cli_error_explain(&e, CLI_REQUEST_COLLECTION, NULL, "https://127.0.0.1:6443", b, sizeof(b));
    assert_string_equal(b, "cannot reach the API server at https://127.0.0.1:6443: Couldn't connect to server");
    e = mk(500, "InternalError", "etcd is down");
    cli_error_explain(&e, CLI_REQUEST_COLLECTION, NULL, NULL, b, sizeof(b));
    assert_string_equal(b, "the API server answered 500 InternalError: etcd is down");
}

static void test_transient(void **state)
{
    (void)state;
    struct kube_err e = mk(429, "TooManyRequests", "storage is (re)initializing");
    assert_true(cli_error_transient(&e));
    e = mk(503, "ServiceUnavailable", "");
    assert_true(cli_error_transient(&e));
    e = mk(504, "Timeout", "");
    assert_true(cli_error_transient(&e));
    e = mk(500, "InternalError", "");
    assert_true(cli_error_transient(&e));
    static const long final[] = {0, 400, 401, 403, 404, 410, 422};
    for (size_t i = 0; i < sizeof(final) / sizeof(final[0]); i++) {
        e = mk(final[i], "X", "");
        assert_false(cli_error_transient(&e));
    }
    e = mk(500, "Unknown", "");
    assert_false(cli_error_transient(&e));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crd_absent),
        cmocka_unit_test(test_forbidden_unauthorized),
        cmocka_unit_test(test_config_transport_other),
        cmocka_unit_test(test_transient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
