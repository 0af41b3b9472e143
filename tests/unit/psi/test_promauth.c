/* Unit tests for psi_promauth (what the Prometheus client trusts and sends) and the pure
 * parts of psi_promtoken (the TokenRequest reply, the renewal time), with files in a
 * temporary directory and no network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "psi/prom.h"
#include "psi/promauth.h"
#include "psi/promtoken.h"
#include "psi/specfile.h"

#define PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

static char dir[64], root[80];
static const char *roots[] = {root, NULL}; /* the files of a test are allowed under dir */

static const char *path_of(const char *name)
{
    static char p[4][128];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
    return p[i];
}

/* Replace name with text the way the kubelet does: a new file renamed over the old one. */
static void put(const char *name, const char *text)
{
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.new", path_of(name));
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, path_of(name)), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/psi-promauth-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(root, sizeof(root), "%s/", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"service-ca.crt", "ca.pem", "token", "own", "notpem", "fifo", "to-pipe"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        unlink(path_of(names[i]));
    return rmdir(dir);
}

/* caFile unset: the service CA is trusted with the system store while it exists, and a
 * service CA that appears, changes or goes is seen at the next request. */
static void test_service_ca_default(void **state)
{
    (void)state;
    struct psi_promauth_config cfg = {.service_ca_file = path_of("service-ca.crt")};
    struct kube_err st;
    struct psi_promauth *a = psi_promauth_new(&cfg, &st);
    assert_non_null(a);
    const char *tok = "x";
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    assert_null(tok);
    assert_non_null(strstr(psi_promauth_trust(a), "system trust store"));
    assert_non_null(strstr(psi_promauth_trust(a), "no service CA at"));

    put("service-ca.crt", PEM);
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    assert_non_null(strstr(psi_promauth_trust(a), "service CA "));
    assert_null(strstr(psi_promauth_trust(a), "no service CA"));
    assert_non_null(strstr(psi_promauth_trust(a), path_of("service-ca.crt")));

    put("service-ca.crt", "rotated, but no certificate\n");
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_TLS);
    assert_non_null(strstr(st.msg, path_of("service-ca.crt")));
    assert_non_null(strstr(st.msg, "no PEM certificate"));

    put("service-ca.crt", PEM PEM);
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    unlink(path_of("service-ca.crt"));
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    assert_non_null(strstr(psi_promauth_trust(a), "no service CA at"));
    psi_promauth_free(a);
}

/* caFile set: it alone is trusted, and it must exist (the one refusal of psi/specfile.h,
 * naming no file) and hold a certificate. */
static void test_ca_file(void **state)
{
    (void)state;
    struct psi_promauth_config cfg = {
        .ca_file = path_of("ca.pem"), .service_ca_file = path_of("service-ca.crt"), .file_roots = roots};
    struct kube_err st;
    struct psi_promauth *a = psi_promauth_new(&cfg, &st);
    const char *tok;
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_CONFIG);
    assert_non_null(strstr(st.msg, "caFile must be a regular file of at most 4 MiB under "));
    assert_null(strstr(st.msg, "ca.pem"));
    put("ca.pem", PEM);
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    assert_int_equal(strncmp(psi_promauth_trust(a), "CA file ", 8), 0);
    assert_non_null(strstr(psi_promauth_trust(a), path_of("ca.pem")));
    assert_null(strstr(psi_promauth_trust(a), "system"));
    psi_promauth_free(a);
}

static const char *fixed_token(void *ud, struct kube_err *st)
{
    kube_err_clear(st);
    return ud;
}

static const char *no_token(void *ud, struct kube_err *st)
{
    (void)ud;
    psi_fail(st, PSI_REASON_CREDENTIAL, "no token for ServiceAccount ns/reader");
    return NULL;
}

/* A token function's token goes over https; over http only when asked by name. */
static void test_token_fn_and_plain_http(void **state)
{
    (void)state;
    struct psi_prom_token_fn fn = {fixed_token, "reader-token", "ServiceAccount ns/reader"};
    struct psi_promauth_config cfg = {.token_fn = &fn, .token_file = "/ignored"};
    struct kube_err st;
    struct psi_promauth *a = psi_promauth_new(&cfg, &st);
    const char *tok = NULL;
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    assert_string_equal(tok, "reader-token");
    assert_string_equal(psi_promauth_identity(a), "the token of ServiceAccount ns/reader");
    assert_int_equal(psi_promauth_prepare(a, 0, &tok, &st), -1);
    assert_null(tok);
    assert_string_equal(st.reason, PSI_REASON_CONFIG);
    assert_non_null(strstr(st.msg, "plain http://"));
    assert_non_null(strstr(st.msg, "sendTokenOverPlainHTTP"));
    psi_promauth_free(a);

    cfg.plain_http_token = 1;
    a = psi_promauth_new(&cfg, &st);
    assert_int_equal(psi_promauth_prepare(a, 0, &tok, &st), 0);
    assert_string_equal(tok, "reader-token");
    psi_promauth_free(a);

    struct psi_prom_token_fn bad = {no_token, NULL, "ServiceAccount ns/reader"};
    struct psi_promauth_config bcfg = {.token_fn = &bad};
    a = psi_promauth_new(&bcfg, &st);
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_CREDENTIAL);
    psi_promauth_free(a);

    /* no token at all: plain http is fine */
    struct psi_promauth_config none = {0};
    a = psi_promauth_new(&none, &st);
    assert_int_equal(psi_promauth_prepare(a, 0, &tok, &st), 0);
    assert_null(tok);
    assert_string_equal(psi_promauth_identity(a), "no token");
    psi_promauth_free(a);
}

/* A token file is read again when replaced; one holding the operator's own token (from its
 * token file or its static token) is refused and never returned. */
static void test_token_file_and_own_token(void **state)
{
    (void)state;
    put("own", "operator-token\n");
    put("token", "reader-1\n");
    struct psi_promauth_config cfg = {.token_file = path_of("token"),
                                      .own_token_file = path_of("own"),
                                      .own_token = "static-operator-token",
                                      .file_roots = roots};
    struct kube_err st;
    struct psi_promauth *a = psi_promauth_new(&cfg, &st);
    const char *tok = NULL;
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    assert_string_equal(tok, "reader-1");
    assert_non_null(strstr(psi_promauth_identity(a), path_of("token")));

    put("token", "reader-2");
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    assert_string_equal(tok, "reader-2");

    put("token", "  operator-token \n");
    tok = "x";
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), -1);
    assert_null(tok);
    assert_string_equal(st.reason, PSI_REASON_CONFIG);
    assert_non_null(strstr(st.msg, "operator's own"));

    put("token", "static-operator-token");
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), -1);
    assert_non_null(strstr(st.msg, "operator's own"));

    put("token", "");
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), -1);
    assert_non_null(strstr(st.msg, "empty"));
    unlink(path_of("token"));
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), -1);
    assert_non_null(strstr(st.msg, "bearerTokenFile must be a regular file of at most 64 KiB under "));
    psi_promauth_free(a);
}

/* Prepare with field's file at path under roots r: -1 at once with the one refusal, the same
 * message whatever the reason. */
static void assert_refused(const char *field, const char *path, const char *const *r)
{
    struct psi_promauth_config cfg = {.file_roots = r};
    if (strcmp(field, "caFile") == 0)
        cfg.ca_file = path;
    else
        cfg.token_file = path;
    struct kube_err st;
    struct psi_promauth *a = psi_promauth_new(&cfg, &st);
    assert_non_null(a);
    const char *tok = "x";
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), -1);
    assert_null(tok);
    assert_string_equal(st.reason, PSI_REASON_CONFIG);
    char want[512];
    assert_string_equal(
        st.msg,
        psi_specfile_refusal(field, r, strcmp(field, "caFile") == 0 ? 4 * 1024 * 1024 : 64 * 1024, want, sizeof(want)));
    psi_promauth_free(a);
}

/* A hostile bearerTokenFile or caFile never blocks and never says what the path is: the
 * operator's own pipe as /proc/self/fd/N (a read of it would wait forever), a FIFO under the
 * allowed roots and a link to that pipe there, /proc and /dev paths, a path out through
 * "..", and a file that does not exist all get the same refusal. */
static void test_hostile_files_refused(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    char self_fd[64];
    snprintf(self_fd, sizeof(self_fd), "/proc/self/fd/%d", p[0]);
    assert_int_equal(mkfifo(path_of("fifo"), 0600), 0);
    assert_int_equal(symlink(self_fd, path_of("to-pipe")), 0);
    char out[160];
    snprintf(out, sizeof(out), "%s/../../etc/hostname", dir);
    const char *hostile[] = {self_fd, path_of("fifo"),   path_of("to-pipe"), "/proc/self/environ", "/dev/zero",
                             out,     path_of("missing")};
    const char *fields[] = {"bearerTokenFile", "caFile"};
    for (size_t f = 0; f < 2; f++) {
        for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
            assert_refused(fields[f], hostile[i], roots);
            assert_refused(fields[f], hostile[i], NULL);
        }
    }
    close(p[0]);
    close(p[1]);
}

/* What a server answers reaches status through psi_fail: printable ASCII only. */
static void test_status_message_sanitised(void **state)
{
    (void)state;
    struct kube_err st;
    psi_fail(&st, PSI_REASON_QUERY, "refused: %s", "line\nbreak\x01\x1b[31m\xc3\xa9\x7f");
    assert_string_equal(st.msg, "refused: line?break??[31m???");
}

/* A Prometheus error of any length gives a short status message. */
static void test_query_error_is_short(void **state)
{
    (void)state;
    char body[8192];
    int n = snprintf(body, sizeof(body), "{\"status\":\"error\",\"errorType\":\"");
    for (int i = 0; i < 100; i++)
        body[n++] = 't';
    n += snprintf(body + n, sizeof(body) - (size_t)n, "\",\"error\":\"");
    for (int i = 0; i < 5000; i++)
        body[n++] = 'e';
    n += snprintf(body + n, sizeof(body) - (size_t)n, "\"}");
    struct psi_prom_vector v;
    struct kube_err st;
    assert_int_equal(psi_prom_parse_reply(body, (size_t)n, 422, "https://p/api/v1/query", &v, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_QUERY);
    assert_true(strlen(st.msg) < 420);
}

static void test_promtoken_renew_at(void **state)
{
    (void)state;
    assert_int_equal(psi_promtoken_renew_at(1000, 1000 + 3600000), 1000 + 2880000);
    assert_int_equal(psi_promtoken_renew_at(5000, 5000), 5000);
    assert_int_equal(psi_promtoken_renew_at(5000, 1000), 5000);
}

static void test_promtoken_parse(void **state)
{
    (void)state;
    char *tok = NULL, why[256];
    int64_t exp = 0;
    cJSON *ok = cJSON_Parse("{\"kind\":\"TokenRequest\",\"status\":{\"token\":\"eyJ.a.b\","
                            "\"expirationTimestamp\":\"2026-12-01T13:00:00Z\"}}");
    assert_int_equal(psi_promtoken_parse(ok, &tok, &exp, why, sizeof(why)), 0);
    assert_string_equal(tok, "eyJ.a.b");
    assert_int_equal(exp, (int64_t)1796130000 * 1000);
    free(tok);
    cJSON_Delete(ok);
    const char *bad[] = {
        "{}",
        "{\"status\":{\"token\":\"\",\"expirationTimestamp\":\"2026-12-01T13:00:00Z\"}}",
        "{\"status\":{\"token\":\"a b\",\"expirationTimestamp\":\"2026-12-01T13:00:00Z\"}}",
        "{\"status\":{\"token\":\"a\\nb\",\"expirationTimestamp\":\"2026-12-01T13:00:00Z\"}}",
        "{\"status\":{\"token\":\"ab\",\"expirationTimestamp\":\"tomorrow\"}}",
        "{\"status\":{\"token\":7,\"expirationTimestamp\":\"2026-12-01T13:00:00Z\"}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *j = cJSON_Parse(bad[i]);
        why[0] = '\0';
        assert_int_equal(psi_promtoken_parse(j, &tok, &exp, why, sizeof(why)), -1);
        assert_null(tok);
        assert_true(why[0] != '\0');
        cJSON_Delete(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_service_ca_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_file, setup, teardown),
        cmocka_unit_test(test_token_fn_and_plain_http),
        cmocka_unit_test_setup_teardown(test_token_file_and_own_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_files_refused, setup, teardown),
        cmocka_unit_test(test_status_message_sanitised),
        cmocka_unit_test(test_query_error_is_short),
        cmocka_unit_test(test_promtoken_renew_at),
        cmocka_unit_test(test_promtoken_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
