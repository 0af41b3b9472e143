/* Unit tests for kube_config (kubeconfig and in-cluster), kube_yamljson and kube_base64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base64.h"
#include "kube/config.h"
#include "kube/yamljson.h"

static char datadir[4096];

static const char *td(const char *name)
{
    static char buf[8][4096];
    static int i;
    i = (i + 1) % 8;
    snprintf(buf[i], sizeof(buf[i]), "%s/%s", datadir, name);
    return buf[i];
}

static int setup_env(void **state)
{
    (void)state;
    const char *base = getenv("PSI_TESTDATA");
    assert_non_null(base);
    snprintf(datadir, sizeof(datadir), "%s/kube", base);
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("PSI_SERVICEACCOUNT_DIR");
    return 0;
}

static struct kube_config *load_ok(const char *file, const char *ctx)
{
    struct kube_config *cfg = NULL;
    struct kube_err err;
    int rc = kube_config_load_file(td(file), ctx, &cfg, &err);
    if (rc)
        fail_msg("loading %s: %s", file, err.msg);
    assert_non_null(cfg);
    return cfg;
}

/* Load file (a testdata name, or an absolute path) expecting failure; returns the message. */
static const char *load_err(const char *file, const char *ctx)
{
    static struct kube_err err;
    struct kube_config *cfg = NULL;
    const char *path = file[0] == '/' ? file : td(file);
    assert_int_equal(kube_config_load_file(path, ctx, &cfg, &err), -1);
    assert_null(cfg);
    assert_string_equal(err.reason, "Config");
    return err.msg;
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static int has_header(const struct curl_slist *h, const char *want)
{
    for (; h; h = h->next)
        if (!strcmp(h->data, want))
            return 1;
    return 0;
}

static int has_header_prefix(const struct curl_slist *h, const char *prefix)
{
    for (; h; h = h->next)
        if (!strncmp(h->data, prefix, strlen(prefix)))
            return 1;
    return 0;
}

/* Run prepare on a fresh handle; returns the header list (caller frees). */
static struct curl_slist *prepare(struct kube_config *cfg)
{
    CURL *easy = curl_easy_init();
    assert_non_null(easy);
    struct curl_slist *h = NULL;
    struct kube_err err;
    if (kube_config_prepare(cfg, easy, &h, &err))
        fail_msg("prepare: %s", err.msg);
    curl_easy_cleanup(easy);
    return h;
}

static void read_whole(const char *path, char *buf, size_t len, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    *n = fread(buf, 1, len, f);
    fclose(f);
}

/* ---- good cases ---- */

static void test_token(void **state)
{
    (void)state;
    struct kube_config *cfg = load_ok("token.yaml", NULL);
    assert_string_equal(cfg->server, "https://127.0.0.1:6443"); /* trailing slash dropped */
    assert_string_equal(kube_config_server(cfg), "https://127.0.0.1:6443");
    assert_string_equal(cfg->ca_file, td("ca.crt")); /* relative to the kubeconfig */
    assert_string_equal(cfg->token, "sha256~abc.def");
    assert_string_equal(cfg->namespace, "team-a");
    assert_string_equal(cfg->context, "dev");
    assert_string_equal(cfg->user_name, "alice");
    assert_int_equal(cfg->insecure, 0); /* absent: verify */
    assert_null(cfg->connect_to);
    struct curl_slist *h = prepare(cfg);
    assert_true(has_header(h, "Authorization: Bearer sha256~abc.def"));
    assert_true(has_header(h, "Accept: application/json"));
    assert_false(has_header_prefix(h, "Host:"));
    curl_slist_free_all(h);
    kube_config_free(cfg);
}

static void test_token_file(void **state)
{
    (void)state;
    struct kube_config *cfg = load_ok("tokenfile.yaml", NULL);
    assert_null(cfg->token);
    assert_string_equal(cfg->token_file, td("token.txt"));
    struct curl_slist *h = prepare(cfg);
    assert_true(has_header(h, "Authorization: Bearer file-token-123")); /* newline trimmed */
    curl_slist_free_all(h);
    kube_config_free(cfg);
}

static void test_client_cert_files(void **state)
{
    (void)state;
    struct kube_config *cfg = load_ok("certfiles.yaml", NULL);
    assert_string_equal(cfg->cert_file, td("client.crt"));
    assert_string_equal(cfg->key_file, td("client.key"));
    assert_null(cfg->cert_data.data);
    assert_null(cfg->token);
    assert_string_equal(kube_config_server(cfg), "https://api.example.test:6443");
    struct curl_slist *h = prepare(cfg);
    assert_false(has_header_prefix(h, "Authorization:"));
    assert_true(has_header(h, "Accept: application/json"));
    curl_slist_free_all(h);
    kube_config_free(cfg);
}

static void test_cert_and_ca_data_tls_server_name(void **state)
{
    (void)state;
    struct kube_config *cfg = load_ok("certdata.yaml", NULL);
    char want[4096];
    size_t n;
    read_whole(td("ca.crt"), want, sizeof(want), &n);
    assert_int_equal(cfg->ca_data.len, n);
    assert_memory_equal(cfg->ca_data.data, want, n);
    read_whole(td("client.crt"), want, sizeof(want), &n);
    assert_int_equal(cfg->cert_data.len, n);
    assert_memory_equal(cfg->cert_data.data, want, n);
    read_whole(td("client.key"), want, sizeof(want), &n); /* split over lines in the file */
    assert_int_equal(cfg->key_data.len, n);
    assert_memory_equal(cfg->key_data.data, want, n);
    assert_null(cfg->ca_file);
    assert_string_equal(cfg->tls_server_name, "kubernetes.default.svc");
    /* requests name tls-server-name (SNI and verification) but connect to the real host */
    assert_string_equal(cfg->server, "https://127.0.0.1:6443");
    assert_string_equal(kube_config_server(cfg), "https://kubernetes.default.svc:6443");
    assert_non_null(cfg->connect_to);
    assert_string_equal(cfg->connect_to->data, "kubernetes.default.svc:6443:127.0.0.1:6443");
    struct curl_slist *h = prepare(cfg);
    assert_true(has_header(h, "Host: 127.0.0.1:6443"));
    curl_slist_free_all(h);
    kube_config_free(cfg);
}

static void test_insecure(void **state)
{
    (void)state;
    struct kube_config *cfg = load_ok("insecure-true.yaml", NULL);
    assert_int_equal(cfg->insecure, 1);
    kube_config_free(cfg);
    cfg = load_ok("insecure-false.yaml", NULL);
    assert_int_equal(cfg->insecure, 0);
    kube_config_free(cfg);
    cfg = load_ok("token.yaml", NULL);
    assert_int_equal(cfg->insecure, 0);
    kube_config_free(cfg);
}

static void test_context_override(void **state)
{
    (void)state;
    struct kube_config *cfg = load_ok("multi-context.yaml", NULL);
    assert_string_equal(cfg->context, "one");
    assert_string_equal(kube_config_server(cfg), "https://one.example.test:6443");
    assert_string_equal(cfg->token, "token-one");
    assert_null(cfg->namespace);
    kube_config_free(cfg);
    cfg = load_ok("multi-context.yaml", "two");
    assert_string_equal(cfg->context, "two");
    assert_string_equal(kube_config_server(cfg), "https://two.example.test");
    assert_string_equal(cfg->token, "token-two");
    assert_string_equal(cfg->namespace, "ns2");
    kube_config_free(cfg);
}

static void test_kubeconfig_env_list(void **state)
{
    (void)state;
    char list[8192];
    snprintf(list, sizeof(list), "%s:%s:%s", td("missing.yaml"), td("list-a.yaml"), td("list-b.yaml"));
    setenv("KUBECONFIG", list, 1);
    struct kube_config *cfg = NULL;
    struct kube_err err;
    if (kube_config_load(NULL, NULL, &cfg, &err))
        fail_msg("%s", err.msg);
    /* first current-context and first definition of a name win; missing files are skipped */
    assert_string_equal(cfg->context, "merged");
    assert_string_equal(kube_config_server(cfg), "https://from-a.example.test:6443");
    assert_string_equal(cfg->token, "token-from-b");
    char src[8192];
    snprintf(src, sizeof(src), "%s:%s", td("list-a.yaml"), td("list-b.yaml"));
    assert_string_equal(cfg->source, src);
    kube_config_free(cfg);

    /* --context picks a context defined in the second file */
    assert_int_equal(kube_config_load(NULL, "other", &cfg, &err), 0);
    assert_string_equal(cfg->context, "other");
    assert_null(cfg->user_name);
    kube_config_free(cfg);

    /* the explicit path beats $KUBECONFIG */
    assert_int_equal(kube_config_load(td("token.yaml"), NULL, &cfg, &err), 0);
    assert_string_equal(cfg->context, "dev");
    kube_config_free(cfg);

    /* a list where nothing exists */
    snprintf(list, sizeof(list), "%s:%s", td("missing1.yaml"), td("missing2.yaml"));
    setenv("KUBECONFIG", list, 1);
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), -1);
    assert_contains(err.msg, "none of the files exists");
    assert_contains(err.msg, "missing1.yaml");
    unsetenv("KUBECONFIG");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_in_cluster_and_token_rotation(void **state)
{
    (void)state;
    char dir[] = "/tmp/psi-sa-XXXXXX", home[] = "/tmp/psi-home-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_non_null(mkdtemp(home));
    char tok[256], ca[256], ns[256];
    snprintf(tok, sizeof(tok), "%s/token", dir);
    snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
    snprintf(ns, sizeof(ns), "%s/namespace", dir);
    write_file(tok, "first-token");
    write_file(ca, "-----BEGIN CERTIFICATE-----\n");
    write_file(ns, "operators\n");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("PSI_SERVICEACCOUNT_DIR", dir, 1);
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", home, 1); /* no ~/.kube/config: in-cluster must be what loads */
    struct kube_config *cfg = NULL;
    struct kube_err err;
    if (kube_config_load(NULL, NULL, &cfg, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(cfg->source, "in-cluster");
    assert_string_equal(kube_config_server(cfg), "https://10.96.0.1:443");
    assert_string_equal(cfg->ca_file, ca);
    assert_string_equal(cfg->namespace, "operators");
    struct curl_slist *h = prepare(cfg);
    assert_true(has_header(h, "Authorization: Bearer first-token"));
    curl_slist_free_all(h);

    /* the kubelet rotates the token: the next request carries the new one */
    write_file(tok, "second-token-longer\n");
    h = prepare(cfg);
    assert_true(has_header(h, "Authorization: Bearer second-token-longer"));
    curl_slist_free_all(h);
    /* the file disappears for a moment: keep the last good token */
    unlink(tok);
    h = prepare(cfg);
    assert_true(has_header(h, "Authorization: Bearer second-token-longer"));
    curl_slist_free_all(h);
    kube_config_free(cfg);

    /* IPv6 service host is bracketed */
    write_file(tok, "t");
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(kube_config_in_cluster(dir, &cfg, &err), 0);
    assert_string_equal(kube_config_server(cfg), "https://[fd00::1]:443");
    kube_config_free(cfg);

    /* no token: a clear error */
    unlink(tok);
    assert_int_equal(kube_config_in_cluster(dir, &cfg, &err), -1);
    assert_contains(err.msg, "in-cluster config: token file");
    assert_contains(err.msg, "No such file or directory");

    /* nothing at all */
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), -1);
    assert_contains(err.msg, "no configuration");
    assert_contains(err.msg, "/.kube/config does not exist");

    unsetenv("PSI_SERVICEACCOUNT_DIR");
    if (old_home)
        setenv("HOME", old_home, 1);
    free(old_home);
    unlink(ca);
    unlink(ns);
    rmdir(dir);
    rmdir(home);
}

/* ---- bad cases: each message names the file, the field and the reason ---- */

static void test_bad_missing_file(void **state)
{
    (void)state;
    const char *m = load_err("no-such.yaml", NULL);
    char want[4200];
    snprintf(want, sizeof(want), "kubeconfig %s: cannot read: No such file or directory", td("no-such.yaml"));
    assert_string_equal(m, want);
}

static void test_bad_syntax(void **state)
{
    (void)state;
    const char *m = load_err("bad-syntax.yaml", NULL);
    assert_contains(m, td("bad-syntax.yaml"));
    assert_contains(m, "YAML syntax error: line 7 column 4:");
}

static void test_bad_no_current_context(void **state)
{
    (void)state;
    const char *m = load_err("bad-no-current-context.yaml", NULL);
    char want[4200];
    snprintf(want, sizeof(want), "kubeconfig %s: current-context: missing (and no --context given)",
             td("bad-no-current-context.yaml"));
    assert_string_equal(m, want);
}

static void test_bad_context_not_found(void **state)
{
    (void)state;
    const char *m = load_err("bad-context-not-found.yaml", NULL);
    assert_contains(m, td("bad-context-not-found.yaml"));
    assert_contains(m, ": current-context: context \"nope\" not found (contexts: ctx)");
    m = load_err("multi-context.yaml", "three");
    assert_contains(m, ": --context: context \"three\" not found (contexts: one, two)");
}

static void test_bad_cluster_user_not_found(void **state)
{
    (void)state;
    const char *m = load_err("bad-cluster-not-found.yaml", NULL);
    assert_contains(m, td("bad-cluster-not-found.yaml"));
    assert_contains(m, ": contexts[0].context.cluster: cluster \"missing-cluster\" not found (clusters: c)");
    m = load_err("bad-user-not-found.yaml", NULL);
    assert_contains(m, ": contexts[0].context.user: user \"missing-user\" not found (users: u)");
}

static void test_bad_base64(void **state)
{
    (void)state;
    const char *m = load_err("bad-base64.yaml", NULL);
    char want[4200];
    snprintf(want, sizeof(want),
             "kubeconfig %s: users[0].user.client-certificate-data: not base64 (bad data at offset 4)",
             td("bad-base64.yaml"));
    assert_string_equal(m, want);
}

static void test_bad_missing_server(void **state)
{
    (void)state;
    const char *m = load_err("bad-missing-server.yaml", NULL);
    char want[4200];
    snprintf(want, sizeof(want), "kubeconfig %s: clusters[1].cluster.server: missing", td("bad-missing-server.yaml"));
    assert_string_equal(m, want);
}

static void test_bad_unreadable_cert(void **state)
{
    (void)state;
    const char *m = load_err("bad-unreadable-cert.yaml", NULL);
    char want[8400];
    snprintf(want, sizeof(want),
             "kubeconfig %s: users[0].user.client-certificate: cannot read %s: No such file or directory",
             td("bad-unreadable-cert.yaml"), td("does-not-exist.crt"));
    assert_string_equal(m, want);
}

static void test_bad_insecure_not_bool(void **state)
{
    (void)state;
    /* "true" in quotes is a string: never taken as a request to skip verification */
    const char *m = load_err("bad-insecure-string.yaml", NULL);
    assert_contains(m, td("bad-insecure-string.yaml"));
    assert_contains(m, ": clusters[0].cluster.insecure-skip-tls-verify: not a boolean (want true or false)");
}

/* Write text to a temp kubeconfig and return its load error. */
static const char *inline_err(const char *text)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/psi-kc-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    const char *m = load_err(path, NULL);
    unlink(path);
    return m;
}

static void test_bad_structure(void **state)
{
    (void)state;
    assert_contains(inline_err("- a\n- b\n"), ": top level: not a mapping");
    assert_contains(inline_err("clusters: {a: b}\n"), ": clusters: not a list");
    assert_contains(inline_err("current-context: x\ncontexts:\n- context: {cluster: c}\n"),
                    ": contexts[0].name: missing");
    assert_contains(inline_err("current-context: x\ncontexts:\n- name: x\n"), ": contexts[0].context: missing");
    assert_contains(inline_err("current-context: x\ncontexts:\n- name: x\n  context: {user: u}\n"),
                    ": contexts[0].context.cluster: missing");
    assert_contains(inline_err("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                               "clusters:\n- name: c\n  cluster: {server: 'ftp://h'}\n"),
                    ": clusters[0].cluster.server: unsupported scheme ftp");
    assert_contains(inline_err("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                               "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
                               "users:\n- name: u\n  user: {token: 12345}\n"),
                    ": users[0].user.token: not a string");
    assert_contains(inline_err("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                               "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
                               "users:\n- name: u\n  user: {client-certificate-data: QUJD}\n"),
                    ": users[0].user.client-key: missing (client-certificate is set)");
    assert_contains(inline_err("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                               "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
                               "users:\n- name: u\n  user: {exec: {command: aws}}\n"),
                    ": users[0].user.exec: exec credential plugins are not supported");
    assert_contains(inline_err("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                               "clusters:\n- name: c\n  cluster: {server: 'https://h', insecure-skip-tls-verify: true,"
                               " certificate-authority-data: QUJD}\n"),
                    ": clusters[0].cluster: insecure-skip-tls-verify is true together with a certificate authority");
}

/* ---- yamljson and base64 ---- */

static void test_yamljson(void **state)
{
    (void)state;
    const char *y = "a: 1\nb: '1'\nc: true\nd: ~\ne: hello\nf: [x, 2.5, null]\n"
                    "g: &anchor {k: v}\nh: *anchor\na: 2\ni: !!str 12\nj: 0x1F\nk: yes\n";
    char eb[256];
    cJSON *j = kube_yamljson_parse(y, strlen(y), eb, sizeof(eb));
    if (!j)
        fail_msg("%s", eb);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(j, "a")));
    assert_int_equal(cJSON_GetObjectItem(j, "a")->valueint, 2); /* later duplicate wins */
    assert_string_equal(cJSON_GetObjectItem(j, "b")->valuestring, "1");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "c")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "d")));
    assert_string_equal(cJSON_GetObjectItem(j, "e")->valuestring, "hello");
    cJSON *f = cJSON_GetObjectItem(j, "f");
    assert_int_equal(cJSON_GetArraySize(f), 3);
    assert_true(cJSON_GetArrayItem(f, 1)->valuedouble == 2.5);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "h"), "k")->valuestring, "v");
    assert_string_equal(cJSON_GetObjectItem(j, "i")->valuestring, "12");
    assert_int_equal(cJSON_GetObjectItem(j, "j")->valueint, 31);
    assert_string_equal(cJSON_GetObjectItem(j, "k")->valuestring, "yes"); /* YAML 1.2: not a boolean */
    cJSON_Delete(j);

    /* anchors inside a replaced value or a key stay usable */
    const char *y2 = "a: {x: &inner [1, 2]}\na: 3\n&k key: v\nb: *inner\nc: *k\n";
    j = kube_yamljson_parse(y2, strlen(y2), eb, sizeof(eb));
    if (!j)
        fail_msg("%s", eb);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "b")), 2);
    assert_string_equal(cJSON_GetObjectItem(j, "c")->valuestring, "key");
    cJSON_Delete(j);
    const char *rec = "a: &r [1, *r]\n";
    assert_null(kube_yamljson_parse(rec, strlen(rec), eb, sizeof(eb)));
    assert_contains(eb, "recursive alias");

    j = kube_yamljson_parse("", 0, eb, sizeof(eb));
    assert_true(cJSON_IsNull(j));
    cJSON_Delete(j);

    const char *bad = "a: [1, 2\nb: c\n";
    assert_null(kube_yamljson_parse(bad, strlen(bad), eb, sizeof(eb)));
    assert_contains(eb, "line 2 column");
}

/* YAML that is no document we read, each with the reason named in the error. */
static void test_yamljson_bad_input(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *why;
    } cases[] = {
        {"a: [1, 2\nb: c\n", "line 2 column"},
        {"{a: 1\n", "line 2"},
        {"a: *nowhere\n", "unknown alias"},
        {"a: &r [1, *r]\n", "recursive alias"},
        {"a: &r {b: *r}\n", "recursive alias"},
        {"? [a, b]\n: c\n", "mapping key is not a scalar"},
        {"? {a: b}\n: c\n", "mapping key is not a scalar"},
        {"a:\n\t- b\n", "cannot start any token"},
        {"a: b: c\n", "mapping values are not allowed"},
        {"- a\nb: c\n", "line 2"},
        {"'unterminated\n", "unexpected end of stream"},
        {"a: \"\\q\"\n", "unknown escape"},
        {"a: 1\n\x01\n", "control characters"},
        {"a: \xff\xfe\n", "invalid"},
        {"[a, b\n", "line 2"},
        {"a: 'x\n", "unexpected end of stream"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char eb[256] = "";
        cJSON *j = kube_yamljson_parse(cases[i].yaml, strlen(cases[i].yaml), eb, sizeof(eb));
        if (j)
            fail_msg("case %zu parsed: %s", i, cases[i].yaml);
        if (!strstr(eb, cases[i].why))
            fail_msg("case %zu: want \"%s\" in \"%s\"", i, cases[i].why, eb);
    }
}

/* Bounds: nesting, alias expansion ("billion laughs") and aliases that nest deeper than the
 * document's own nesting are refused with an error, not built. */
static void test_yamljson_bounds(void **state)
{
    (void)state;
    char eb[256] = "";
    char deep[102];
    memset(deep, '[', 101);
    deep[101] = '\0';
    assert_null(kube_yamljson_parse(deep, strlen(deep), eb, sizeof(eb)));
    assert_contains(eb, "nesting too deep");

    const char *laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                         "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                         "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                         "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                         "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                         "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                         "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
    assert_null(kube_yamljson_parse(laughs, strlen(laughs), eb, sizeof(eb)));
    assert_contains(eb, "document too large (alias expansion)");

    /* each anchor wraps an alias of the one before: a chain 150 levels deep in 150 lines */
    size_t cap = 150 * 32, n = 0;
    char *chain = malloc(cap);
    assert_non_null(chain);
    n += (size_t)snprintf(chain + n, cap - n, "a0: &a0 [x]\n");
    for (int i = 1; i < 150; i++)
        n += (size_t)snprintf(chain + n, cap - n, "a%d: &a%d [*a%d]\n", i, i, i - 1);
    assert_null(kube_yamljson_parse(chain, n, eb, sizeof(eb)));
    assert_contains(eb, "nesting too deep (alias expansion)");
    free(chain);
}

/* Many anchors, aliases and keys: every alias finds the latest anchor of its name, every
 * duplicate key replaces the earlier value (the lookups are hashed: this document took
 * 1.7 s with a linear scan per alias, and a mapping of 200,000 keys took 231 s). */
static void test_yamljson_many(void **state)
{
    (void)state;
    enum { N = 20000 };
    size_t cap = (size_t)N * 64, n = 0;
    char *y = malloc(cap);
    assert_non_null(y);
    n += (size_t)snprintf(y + n, cap - n, "anchors:\n");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(y + n, cap - n, "  - &a%d {v: %d}\n", i, i);
    n += (size_t)snprintf(y + n, cap - n, "redefined: &a7 seven\naliases:\n");
    for (int i = N - 1; i >= 0; i--)
        n += (size_t)snprintf(y + n, cap - n, "  - *a%d\n", i);
    n += (size_t)snprintf(y + n, cap - n, "keys:\n");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(y + n, cap - n, "  k%d: %d\n", i % (N / 2), i);
    char eb[256] = "";
    cJSON *j = kube_yamljson_parse(y, n, eb, sizeof(eb));
    if (!j)
        fail_msg("%s", eb);
    const cJSON *aliases = cJSON_GetObjectItem(j, "aliases");
    assert_int_equal(cJSON_GetArraySize(aliases), N);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(aliases, 0), "v")->valueint, N - 1);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(aliases, N - 1), "v")->valueint, 0);
    assert_string_equal(cJSON_GetArrayItem(aliases, N - 1 - 7)->valuestring, "seven");
    const cJSON *keys = cJSON_GetObjectItem(j, "keys");
    assert_int_equal(cJSON_GetArraySize(keys), N / 2);
    assert_int_equal(cJSON_GetObjectItem(keys, "k0")->valueint, N / 2);
    assert_int_equal(cJSON_GetObjectItem(keys, "k9999")->valueint, N - 1);
    cJSON_Delete(j);
    free(y);
}

static void test_base64(void **state)
{
    (void)state;
    unsigned char *out;
    size_t len, bad;
    assert_int_equal(kube_base64_decode("aGVsbG8=", &out, &len, &bad), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(out, "hello", 5);
    free(out);
    assert_int_equal(kube_base64_decode("aGVs\nbG8", &out, &len, &bad), 0); /* newline, no padding */
    assert_memory_equal(out, "hello", 5);
    free(out);
    assert_int_equal(kube_base64_decode("aGVsbG8h", &out, &len, &bad), 0);
    assert_int_equal(len, 6);
    free(out);
    assert_int_equal(kube_base64_decode("aGV*bG8=", &out, &len, &bad), -1);
    assert_int_equal(bad, 3);
    assert_int_equal(kube_base64_decode("aGVsbG8=x", &out, &len, &bad), -1); /* data after padding */
    assert_int_equal(kube_base64_decode("a", &out, &len, &bad), -1);
    assert_int_equal(kube_base64_decode("aGVsbA===", &out, &len, &bad), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test(test_client_cert_files),
        cmocka_unit_test(test_cert_and_ca_data_tls_server_name),
        cmocka_unit_test(test_insecure),
        cmocka_unit_test(test_context_override),
        cmocka_unit_test(test_kubeconfig_env_list),
        cmocka_unit_test(test_in_cluster_and_token_rotation),
        cmocka_unit_test(test_bad_missing_file),
        cmocka_unit_test(test_bad_syntax),
        cmocka_unit_test(test_bad_no_current_context),
        cmocka_unit_test(test_bad_context_not_found),
        cmocka_unit_test(test_bad_cluster_user_not_found),
        cmocka_unit_test(test_bad_base64),
        cmocka_unit_test(test_bad_missing_server),
        cmocka_unit_test(test_bad_unreadable_cert),
        cmocka_unit_test(test_bad_insecure_not_bool),
        cmocka_unit_test(test_bad_structure),
        cmocka_unit_test(test_yamljson),
        cmocka_unit_test(test_yamljson_bad_input),
        cmocka_unit_test(test_yamljson_bounds),
        cmocka_unit_test(test_yamljson_many),
        cmocka_unit_test(test_base64),
    };
    return cmocka_run_group_tests(tests, setup_env, NULL);
}
