/* Unit test of the trust psi_promauth hands to libcurl, through real TLS handshakes on
 * loopback: with caFile set, only caFile verifies the server. A server whose certificate is
 * signed by a CA that only libcurl's default CA directory holds (CURLOPT_CAPATH, which
 * curl_easy_reset puts back: /etc/ssl/certs on Debian, the system trust store) must be
 * refused. The test cannot add a CA to the real system store, so it points CURLOPT_CAPATH at
 * a directory of its own, hashed as OpenSSL reads it, before psi_promauth_apply, the way
 * libcurl's build-time default stands there on every request; the control, caFile holding
 * that same CA, shows the server and the client otherwise work. */
#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "psi/promauth.h"
#include "tests/common/testcert.h"

/* ---- a one-connection-at-a-time HTTPS server ---- */

struct server {
    SSL_CTX *ctx;
    int listener, port;
    pthread_t thread;
};

/* Serve connections until the listener is shut down: a handshake, then a 200 with no body. */
static void *serve(void *ud)
{
    struct server *s = ud;
    for (;;) {
        int fd = accept(s->listener, NULL, NULL);
        if (fd < 0)
            return NULL;
        SSL *ssl = SSL_new(s->ctx);
        SSL_set_fd(ssl, fd);
        if (SSL_accept(ssl) == 1) {
            char buf[2048];
            SSL_read(ssl, buf, sizeof(buf));
            static const char rep[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            SSL_write(ssl, rep, sizeof(rep) - 1);
            SSL_shutdown(ssl);
        }
        SSL_free(ssl);
        close(fd);
    }
}

static void server_start(struct server *s, const struct pair *leaf)
{
    s->ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_use_certificate(s->ctx, leaf->cert), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(s->ctx, leaf->key), 1);
    s->listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->listener, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(s->listener, 4), 0);
    socklen_t len = sizeof(sa);
    getsockname(s->listener, (struct sockaddr *)&sa, &len);
    s->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
    shutdown(s->listener, SHUT_RDWR);
    pthread_join(s->thread, NULL);
    close(s->listener);
    SSL_CTX_free(s->ctx);
}

/* ---- the client as psi_prom runs it ---- */

static char dir[64], root[80];

static const char *path_of(const char *name)
{
    static char p[4][160];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
    return p[i];
}

/* GET / on port trusting what psi_promauth sets for ca_file, with CURLOPT_CAPATH at capath
 * first (where libcurl's default CA directory would be). The transfer's result. */
static CURLcode get_with(int port, const char *ca_file, const char *capath)
{
    const char *roots[] = {root, NULL};
    struct psi_promauth_config cfg = {.ca_file = ca_file, .file_roots = roots};
    struct kube_err st;
    struct psi_promauth *a = psi_promauth_new(&cfg, &st);
    assert_non_null(a);
    const char *tok = NULL;
    assert_int_equal(psi_promauth_prepare(a, 1, &tok, &st), 0);
    CURL *e = curl_easy_init();
    char url[64];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/", port);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_CAPATH, capath);
    psi_promauth_apply(a, e);
    CURLcode rc = curl_easy_perform(e);
    curl_easy_cleanup(e);
    psi_promauth_free(a);
    return rc;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* caFile names CA "mine"; the server's certificate is signed by CA "system", which only the
 * CA directory holds: refused. With caFile naming "system", the same server is accepted. */
static void test_ca_file_excludes_ca_directory(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/psi-promauth-tls-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(root, sizeof(root), "%s/", dir);
    assert_int_equal(mkdir(path_of("capath"), 0700), 0);

    struct pair system_ca = make_cert("system-store-ca", NULL), mine = make_cert("my-ca", NULL);
    struct pair leaf = make_cert("127.0.0.1", &system_ca);
    char hashed[64];
    snprintf(hashed, sizeof(hashed), "capath/%08lx.0", X509_subject_name_hash(system_ca.cert));
    write_cert(path_of(hashed), system_ca.cert);
    write_cert(path_of("mine.pem"), mine.cert);
    write_cert(path_of("system.pem"), system_ca.cert);

    struct server s;
    server_start(&s, &leaf);
    /* the directory alone verifies the server: it is a real stand-in for the system store */
    CURL *e = curl_easy_init();
    char url[64];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/", s.port);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_CAINFO, path_of("mine.pem"));
    curl_easy_setopt(e, CURLOPT_CAPATH, path_of("capath"));
    assert_int_equal(curl_easy_perform(e), CURLE_OK);
    curl_easy_cleanup(e);

    assert_int_equal(get_with(s.port, path_of("mine.pem"), path_of("capath")), CURLE_PEER_FAILED_VERIFICATION);
    assert_int_equal(get_with(s.port, path_of("system.pem"), path_of("capath")), CURLE_OK);
    server_stop(&s);
    free_pair(&leaf);
    free_pair(&mine);
    free_pair(&system_ca);
    assert_int_equal(nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ca_file_excludes_ca_directory),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
