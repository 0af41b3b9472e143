/* Unit tests for psi_tls and HTTPS in psi_serve: TLS version and cipher suite names, a
 * certificate from a directory served and verified against its CA, a rotated certificate
 * (a new pair written where the old was) served to new connections without a restart, a
 * broken pair leaving the previous one in use, TLS 1.1 refused by default and TLS 1.2 when
 * the minimum is 1.3, plain HTTP on the TLS port not answered, and the self-signed
 * certificate made when no directory is given, handshakes that stall keeping nobody out,
 * and connections handed to a server that listens nowhere, each served with its own
 * certificate (issued by cert.h) and asked for a client certificate. The client is OpenSSL's, set to offer the old
 * versions too (security level 0), so that a refusal is the server's. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "httpd/cert.h"
#include "httpd/serve.h"
#include "httpd/tls.h"
#include "tests/common/testcert.h"

static void test_versions_and_ciphers(void **state)
{
    (void)state;
    int v = 0;
    char err[256], out[512];
    assert_int_equal(psi_tls_parse_version(NULL, &v, err, sizeof(err)), 0);
    assert_int_equal(v, TLS1_2_VERSION);
    assert_int_equal(psi_tls_parse_version("VersionTLS13", &v, err, sizeof(err)), 0);
    assert_int_equal(v, TLS1_3_VERSION);
    assert_int_equal(psi_tls_parse_version("VersionTLS11", &v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "VersionTLS11"));
    assert_int_equal(psi_tls_parse_version("tls12", &v, err, sizeof(err)), -1);

    assert_int_equal(psi_tls_cipher_list("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, "
                                         "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                                         out, sizeof(out), err, sizeof(err)),
                     0);
    assert_string_equal(out, "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305");
    assert_int_equal(psi_tls_cipher_list("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_NO_SUCH_SUITE", out, sizeof(out),
                                         err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "TLS_NO_SUCH_SUITE"));
    assert_int_equal(psi_tls_cipher_list("TLS_AES_128_GCM_SHA256", out, sizeof(out), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "TLS 1.3"));
    assert_int_equal(psi_tls_cipher_list(" , ", out, sizeof(out), err, sizeof(err)), -1);
}

/* ---- certificates for the tests ---- */

/* Write tls.crt and tls.key into dir the way a Secret volume changes: new files renamed
 * over the old ones. key may be NULL for a key file that is not a key. */
static void write_pair(const char *dir, const struct pair *p, int broken_key)
{
    char tmp[512], path[512];
    snprintf(tmp, sizeof(tmp), "%s/.tls.crt", dir);
    write_cert(tmp, p->cert);
    snprintf(path, sizeof(path), "%s/tls.crt", dir);
    assert_int_equal(rename(tmp, path), 0);
    snprintf(tmp, sizeof(tmp), "%s/.tls.key", dir);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    if (broken_key)
        fputs("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n", f);
    else
        PEM_write_PrivateKey(f, p->key, NULL, NULL, 0, NULL, NULL);
    fclose(f);
    snprintf(path, sizeof(path), "%s/tls.key", dir);
    assert_int_equal(rename(tmp, path), 0);
}

/* ---- a client ---- */

static void on_x(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)ud;
    char out[256];
    snprintf(out, sizeof(out), "token=%s\n", req->bearer);
    psi_serve_reply_text(rep, 200, NULL, out);
}

/* GET /x over TLS on the connected socket fd (closed), between versions min and max, trusting
 * ca (NULL: trust anything), presenting client (NULL: no client certificate). 0 when the
 * reply was 200 with the token echoed, and its body in body when given; -1 when the
 * handshake or request failed. The peer certificate's common name goes to cn when given. */
static int tls_get_on(int fd, int min, int max, const X509 *ca, const struct pair *client, char *cn, size_t cnlen,
                      char *body, size_t bodylen)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_security_level(ctx, 0);
    SSL_CTX_set_cipher_list(ctx, "ALL:@SECLEVEL=0");
    SSL_CTX_set_min_proto_version(ctx, min);
    SSL_CTX_set_max_proto_version(ctx, max);
    if (ca) {
        X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), (X509 *)ca);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    }
    if (client) {
        assert_int_equal(SSL_CTX_use_certificate(ctx, client->cert), 1);
        assert_int_equal(SSL_CTX_use_PrivateKey(ctx, client->key), 1);
    }
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set1_host(ssl, "127.0.0.1");
    int rc = -1;
    if (SSL_connect(ssl) == 1) {
        if (cn) {
            X509 *peer = SSL_get1_peer_certificate(ssl);
            X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, (int)cnlen);
            X509_free(peer);
        }
        static const char req[] =
            "GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t0k\r\nConnection: close\r\n\r\n";
        char buf[1024];
        int n = 0, r;
        SSL_write(ssl, req, sizeof(req) - 1);
        while (n < (int)sizeof(buf) - 1 && (r = SSL_read(ssl, buf + n, (int)sizeof(buf) - 1 - n)) > 0)
            n += r;
        buf[n] = '\0';
        if (strncmp(buf, "HTTP/1.1 200 ", 13) == 0 && strstr(buf, "\r\n\r\ntoken=t0k\n"))
            rc = 0;
        if (body)
            snprintf(body, bodylen, "%s", strstr(buf, "\r\n\r\n") ? strstr(buf, "\r\n\r\n") + 4 : "");
    }
    SSL_free(ssl);
    close(fd);
    SSL_CTX_free(ctx);
    return rc;
}

/* GET /x over TLS to 127.0.0.1:port (see tls_get_on). */
static int tls_get(int port, int min, int max, const X509 *ca, char *cn, size_t cnlen)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return tls_get_on(fd, min, max, ca, NULL, cn, cnlen, NULL, 0);
}

static struct psi_serve *https_server(struct psi_tls *tls, int *port)
{
    char err[256];
    struct psi_serve *s = psi_serve_new("127.0.0.1:0", err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(psi_serve_set_tls(s, tls), 0);
    assert_int_equal(psi_serve_route(s, "GET", "/x", on_x, NULL), 0);
    if (psi_serve_start(s, err, sizeof(err)) != 0)
        fail_msg("start: %s", err);
    *port = psi_serve_port(s);
    return s;
}

static int logged;
static void count_log(const char *msg, void *ud)
{
    (void)ud;
    fprintf(stderr, "tls: %s\n", msg);
    logged++;
}

static void test_cert_dir_and_rotation(void **state)
{
    (void)state;
    char dir[] = "/tmp/psi-tls-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct pair ca1 = make_cert("ca-one", NULL), ca2 = make_cert("ca-two", NULL);
    struct pair leaf1 = make_cert("leaf-one", &ca1), leaf2 = make_cert("leaf-two", &ca2);
    write_pair(dir, &leaf1, 0);
    char err[256];
    struct psi_tls_options o = {.cert_dir = dir, .log = count_log};
    struct psi_tls *tls = psi_tls_new(&o, err, sizeof(err));
    if (!tls)
        fail_msg("psi_tls_new: %s", err);
    int port;
    struct psi_serve *s = https_server(tls, &port);
    char cn[64] = "";
    assert_int_equal(tls_get(port, TLS1_2_VERSION, TLS1_3_VERSION, ca1.cert, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "leaf-one");
    assert_int_equal(tls_get(port, TLS1_2_VERSION, TLS1_2_VERSION, ca1.cert, NULL, 0), 0);
    /* TLS 1.1 and 1.0 are refused, and another CA does not verify */
    assert_int_equal(tls_get(port, TLS1_1_VERSION, TLS1_1_VERSION, NULL, NULL, 0), -1);
    assert_int_equal(tls_get(port, TLS1_VERSION, TLS1_VERSION, NULL, NULL, 0), -1);
    assert_int_equal(tls_get(port, TLS1_2_VERSION, TLS1_3_VERSION, ca2.cert, NULL, 0), -1);

    /* rotation: new connections get the new pair within a few seconds, no restart */
    write_pair(dir, &leaf2, 0);
    int served = -1;
    for (int i = 0; i < 50 && served != 0; i++) {
        served = tls_get(port, TLS1_2_VERSION, TLS1_3_VERSION, ca2.cert, cn, sizeof(cn));
        if (served != 0)
            usleep(100000);
    }
    assert_int_equal(served, 0);
    assert_string_equal(cn, "leaf-two");
    assert_int_equal(psi_tls_reloads(tls), 1); /* read after the new certificate was seen */

    /* a pair that does not load is reported and the previous one stays in use */
    write_pair(dir, &leaf1, 1);
    logged = 0;
    for (int i = 0; i < 30 && !logged; i++) {
        assert_int_equal(tls_get(port, TLS1_2_VERSION, TLS1_3_VERSION, ca2.cert, NULL, 0), 0);
        usleep(100000);
    }
    assert_true(logged > 0);
    assert_int_equal(tls_get(port, TLS1_2_VERSION, TLS1_3_VERSION, ca2.cert, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "leaf-two");

    /* plain HTTP on the TLS port gets no HTTP answer */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    send(fd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n", 28, MSG_NOSIGNAL);
    char buf[64] = "";
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    assert_true(n <= 0 || strncmp(buf, "HTTP/", 5) != 0);
    close(fd);

    psi_serve_free(s);
    psi_tls_free(tls);
    free_pair(&ca1), free_pair(&ca2), free_pair(&leaf1), free_pair(&leaf2);
    char path[512];
    snprintf(path, sizeof(path), "%s/tls.crt", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/tls.key", dir);
    unlink(path);
    rmdir(dir);
}

static void test_self_signed_and_min_version(void **state)
{
    (void)state;
    char err[256];
    struct psi_tls_options o = {.min_version = "VersionTLS13"};
    struct psi_tls *tls = psi_tls_new(&o, err, sizeof(err));
    if (!tls)
        fail_msg("psi_tls_new: %s", err);
    int port;
    struct psi_serve *s = https_server(tls, &port);
    char cn[64] = "";
    assert_int_equal(tls_get(port, TLS1_3_VERSION, TLS1_3_VERSION, NULL, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "psi-rebalancer");
    assert_int_equal(tls_get(port, TLS1_2_VERSION, TLS1_2_VERSION, NULL, NULL, 0), -1);
    psi_serve_free(s);
    psi_tls_free(tls);

    /* a directory without the pair is an error naming it */
    struct psi_tls_options bad = {.cert_dir = "/nonexistent-psi-dir"};
    assert_null(psi_tls_new(&bad, err, sizeof(err)));
    assert_non_null(strstr(err, "/nonexistent-psi-dir"));
}

/* Clients that never finish a handshake (a ClientHello cut short, bytes that are not TLS,
 * a bare connect) do not keep others out: HTTPS requests are answered meanwhile, and the
 * stalled connections are closed when the head timeout passes. */
static void test_stalled_handshakes(void **state)
{
    (void)state;
    char err[256];
    struct psi_tls_options o = {0};
    struct psi_tls *tls = psi_tls_new(&o, err, sizeof(err));
    assert_non_null(tls);
    struct psi_serve *s = psi_serve_new("127.0.0.1:0", err, sizeof(err));
    struct psi_serve_limits lim = {.max_connections = 32, .head_timeout_ms = 1000};
    assert_int_equal(psi_serve_set_limits(s, &lim), 0);
    assert_int_equal(psi_serve_set_tls(s, tls), 0);
    assert_int_equal(psi_serve_route(s, "GET", "/x", on_x, NULL), 0);
    assert_int_equal(psi_serve_start(s, err, sizeof(err)), 0);
    int port = psi_serve_port(s);
    /* the first bytes of a TLS 1.2 ClientHello record, promising more than is sent */
    static const unsigned char hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03};
    int fds[60];
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < 60; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
        if (i % 3 == 0)
            send(fds[i], hello, sizeof(hello), MSG_NOSIGNAL);
        else if (i % 3 == 1)
            send(fds[i], "GET / HTTP/1.1\r\n", 16, MSG_NOSIGNAL);
    }
    for (int i = 0; i < 5; i++)
        assert_int_equal(tls_get(port, TLS1_2_VERSION, TLS1_3_VERSION, NULL, NULL, 0), 0);
    /* the last bare connect (nothing sent, not pushed out by newer ones) is closed at the
     * head timeout: end of stream well within the 5 s the client waits */
    struct timeval tv = {5, 0};
    setsockopt(fds[59], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char b[64];
    ssize_t n = recv(fds[59], b, sizeof(b), 0);
    assert_int_equal(n, 0);
    for (int i = 0; i < 60; i++)
        close(fds[i]);
    psi_serve_free(s);
    psi_tls_free(tls);
}

/* /x as an adopted connection's handler sees it: the token and the connection's value. */
static void on_x_who(const struct psi_serve_request *req, struct psi_serve_reply *rep, void *ud)
{
    (void)ud;
    char out[256];
    snprintf(out, sizeof(out), "token=%s\nconn=%s\n", req->bearer, req->conn_ud ? (const char *)req->conn_ud : "");
    psi_serve_reply_text(rep, 200, NULL, out);
}

/* A connected pair of loopback sockets: *client and *server. */
static void tcp_pair(int *client, int *server)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
    *client = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(*client, (struct sockaddr *)&sa, sizeof(sa)), 0);
    *server = accept(l, NULL, NULL);
    assert_true(*server >= 0);
    close(l);
}

/* A server that listens nowhere serves the sockets handed to it, each over the TLS it came
 * with (two nodes' certificates, issued by cert.h from one CA) and with its own value, and
 * only to a client whose certificate that CA signed. */
static void test_adopted_connections(void **state)
{
    (void)state;
    char err[256], dir[] = "/tmp/psi-tls-adopt-XXXXXX", ca_crt[600], ca_key[600];
    assert_non_null(mkdtemp(dir));
    struct pair ca = make_cert("bed-ca", NULL), client = make_cert_for("apiserver", &ca, "clientAuth");
    snprintf(ca_crt, sizeof(ca_crt), "%s/ca.crt", dir);
    snprintf(ca_key, sizeof(ca_key), "%s/ca.key", dir);
    write_cert(ca_crt, ca.cert);
    FILE *f = fopen(ca_key, "w");
    assert_non_null(f);
    PEM_write_PrivateKey(f, ca.key, NULL, NULL, 0, NULL, NULL);
    fclose(f);

    static const char *const names[] = {"node-a", "node-b"};
    struct psi_tls *tls[2];
    for (int i = 0; i < 2; i++) {
        const char *ips[] = {"127.0.0.1", NULL}, *dns[] = {names[i], NULL};
        struct cert_bundle b;
        const struct cert_request req = {ca_crt, ca_key, names[i], ips, dns, 1};
        if (cert_issue(&req, &b, err, sizeof(err)) < 0)
            fail_msg("cert_issue: %s", err);
        assert_non_null(b.ca_pem);
        const struct psi_tls_options o = {.cert_pem = b.cert_pem, .key_pem = b.key_pem, .client_ca = ca_crt};
        tls[i] = psi_tls_new(&o, err, sizeof(err));
        if (!tls[i])
            fail_msg("psi_tls_new: %s", err);
        cert_bundle_clear(&b);
    }

    struct psi_serve *s = psi_serve_new(NULL, err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(psi_serve_route(s, "GET", "/x", on_x_who, NULL), 0);
    assert_int_equal(psi_serve_adopt(s, dup(1), NULL, NULL), -1); /* not started: refused (and closed) */
    assert_int_equal(psi_serve_start(s, err, sizeof(err)), 0);
    assert_int_equal(psi_serve_port(s), -1);
    for (int i = 0; i < 2; i++) {
        int c, sv;
        char cn[64] = "", body[256] = "", want[64];
        tcp_pair(&c, &sv);
        assert_int_equal(psi_serve_adopt(s, sv, tls[i], (void *)names[i]), 0);
        assert_int_equal(
            tls_get_on(c, TLS1_2_VERSION, TLS1_3_VERSION, ca.cert, &client, cn, sizeof(cn), body, sizeof(body)), 0);
        assert_string_equal(cn, names[i]);
        snprintf(want, sizeof(want), "token=t0k\nconn=%s\n", names[i]);
        assert_string_equal(body, want);
        /* without a client certificate the handshake fails */
        tcp_pair(&c, &sv);
        assert_int_equal(psi_serve_adopt(s, sv, tls[i], (void *)names[i]), 0);
        assert_int_equal(tls_get_on(c, TLS1_2_VERSION, TLS1_3_VERSION, ca.cert, NULL, NULL, 0, NULL, 0), -1);
    }
    psi_serve_free(s);
    for (int i = 0; i < 2; i++)
        psi_tls_free(tls[i]);

    /* a pair in memory needs both halves, and not beside a directory */
    const struct psi_tls_options half = {.cert_pem = "x"};
    assert_null(psi_tls_new(&half, err, sizeof(err)));
    assert_non_null(strstr(err, "needs its key"));
    const struct psi_tls_options junk = {.cert_pem = "not a certificate", .key_pem = "not a key"};
    assert_null(psi_tls_new(&junk, err, sizeof(err)));
    assert_non_null(strstr(err, "in memory"));
    /* a CA given by half is refused with why */
    const char *ips[] = {"127.0.0.1", NULL};
    struct cert_bundle b;
    const struct cert_request half_ca = {.ca_cert = ca_crt, .cn = "x", .ips = ips, .days = 1};
    assert_int_equal(cert_issue(&half_ca, &b, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "both its certificate and its key"));
    free_pair(&ca);
    free_pair(&client);
    unlink(ca_crt);
    unlink(ca_key);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions_and_ciphers),        cmocka_unit_test(test_cert_dir_and_rotation),
        cmocka_unit_test(test_self_signed_and_min_version), cmocka_unit_test(test_stalled_handshakes),
        cmocka_unit_test(test_adopted_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
