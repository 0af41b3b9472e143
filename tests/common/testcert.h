/* testcert: certificates for the TLS tests, made with OpenSSL on the spot: a CA, or a
 * certificate for 127.0.0.1 that a CA signed, for serverAuth or clientAuth. The product's own
 * maker (httpd/cert.h) issues serving certificates only, from a CA on disk; a test also needs
 * the CA itself and client certificates. cmocka's asserts: include after <cmocka.h>. */
#ifndef PSI_TESTS_TESTCERT_H
#define PSI_TESTS_TESTCERT_H

#include <stdio.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

struct pair {
    EVP_PKEY *key;
    X509 *cert;
};

static inline void testcert_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    assert_non_null(e);
    X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
}

/* A CA (issuer NULL: with a subject key identifier, which what it signs names) or a
 * certificate for 127.0.0.1 signed by issuer, for the extended key usage eku (serverAuth or
 * clientAuth). Valid from a minute ago for an hour. */
static inline struct pair make_cert_for(const char *cn, const struct pair *issuer, const char *eku)
{
    static long serial = 1;
    struct pair p = {EVP_EC_gen("P-256"), X509_new()};
    assert_non_null(p.key);
    X509_set_version(p.cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(p.cert), serial++);
    X509_time_adj_ex(X509_getm_notBefore(p.cert), 0, -60, NULL);
    X509_time_adj_ex(X509_getm_notAfter(p.cert), 0, 3600, NULL);
    X509_set_pubkey(p.cert, p.key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(p.cert), "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509 *iss = issuer ? issuer->cert : p.cert;
    X509_set_issuer_name(p.cert, X509_get_subject_name(iss));
    if (issuer) {
        testcert_ext(p.cert, iss, NID_basic_constraints, "critical,CA:FALSE");
        testcert_ext(p.cert, iss, NID_ext_key_usage, eku);
        testcert_ext(p.cert, iss, NID_subject_alt_name, "IP:127.0.0.1");
    } else {
        testcert_ext(p.cert, iss, NID_basic_constraints, "critical,CA:TRUE");
        testcert_ext(p.cert, iss, NID_key_usage, "critical,keyCertSign");
        testcert_ext(p.cert, iss, NID_subject_key_identifier, "hash");
    }
    assert_true(X509_sign(p.cert, issuer ? issuer->key : p.key, EVP_sha256()) > 0);
    return p;
}

/* A CA (issuer NULL) or a serving certificate for 127.0.0.1 signed by issuer. */
static inline struct pair make_cert(const char *cn, const struct pair *issuer)
{
    return make_cert_for(cn, issuer, "serverAuth");
}

static inline void free_pair(struct pair *p)
{
    EVP_PKEY_free(p->key);
    X509_free(p->cert);
}

/* x as PEM into the file at path. */
static inline void write_cert(const char *path, X509 *x)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    PEM_write_X509(f, x);
    fclose(f);
}

#endif
