/* cert: issue a serving certificate signed by a CA we hold (see cert.h). */
#include "hack/sim/cert.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static int fail(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_get_error();
    char ossl[256] = "";
    if (e)
        ERR_error_string_n(e, ossl, sizeof(ossl));
    ERR_clear_error();
    snprintf(err, errlen, "%s%s%s", what, *ossl ? ": " : "", ossl);
    return -1;
}

/* The contents of a memory BIO as a NUL-terminated string (caller frees). */
static char *bio_string(BIO *b)
{
    char *data;
    long n = BIO_get_mem_data(b, &data);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        memcpy(s, data, (size_t)n);
        s[n] = '\0';
    }
    return s;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) {
            char *g = realloc(buf, cap + 8192);
            if (!g) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = g;
            cap += 8192;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0 && n < (1u << 20));
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return -1;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

int cert_issue(const char *ca_cert_path, const char *ca_key_path, const char *cn, const char *const *ips,
               const char *const *dns, int days, struct cert_bundle *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int rc = -1;
    X509 *ca = NULL, *cert = NULL;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    BIO *bio = NULL;
    char *ca_pem = read_file(ca_cert_path);
    if (!ca_pem) {
        snprintf(err, errlen, "reading the CA certificate %s failed", ca_cert_path);
        return -1;
    }
    bio = BIO_new_mem_buf(ca_pem, -1);
    ca = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    bio = NULL;
    if (!ca) {
        char what[512];
        snprintf(what, sizeof(what), "%s is not a PEM certificate", ca_cert_path);
        fail(err, errlen, what);
        goto out;
    }
    FILE *kf = fopen(ca_key_path, "rb");
    if (!kf) {
        snprintf(err, errlen, "reading the CA key %s failed", ca_key_path);
        goto out;
    }
    ca_key = PEM_read_PrivateKey(kf, NULL, NULL, NULL);
    fclose(kf);
    if (!ca_key) {
        char what[512];
        snprintf(what, sizeof(what), "%s is not a PEM private key", ca_key_path);
        fail(err, errlen, what);
        goto out;
    }
    if (X509_check_private_key(ca, ca_key) != 1) {
        snprintf(err, errlen, "the CA key %s does not belong to the certificate %s", ca_key_path, ca_cert_path);
        ERR_clear_error();
        goto out;
    }

    key = EVP_EC_gen("P-256");
    cert = X509_new();
    if (!key || !cert) {
        fail(err, errlen, "generating a key failed");
        goto out;
    }
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof(serial)) != 1) {
        fail(err, errlen, "random serial");
        goto out;
    }
    serial[0] &= 0x7f; /* positive */
    BIGNUM *bn = BN_bin2bn(serial, sizeof(serial), NULL);
    ASN1_INTEGER *sn = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
    BN_free(bn);
    int ok = sn && X509_set_version(cert, 2) && X509_set_serialNumber(cert, sn);
    ASN1_INTEGER_free(sn);
    /* valid from an hour ago: a clock slightly behind does not reject it */
    ok = ok && X509_gmtime_adj(X509_getm_notBefore(cert), -3600) &&
         X509_gmtime_adj(X509_getm_notAfter(cert), (long)days * 24 * 3600);
    X509_NAME *name = X509_get_subject_name(cert);
    ok = ok && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) &&
         X509_set_issuer_name(cert, X509_get_subject_name(ca)) && X509_set_pubkey(cert, key);
    if (!ok) {
        fail(err, errlen, "building the certificate failed");
        goto out;
    }
    char san[2048] = "";
    size_t used = 0;
    for (const char *const *p = ips; p && *p; p++)
        used += (size_t)snprintf(san + used, sizeof(san) - used, "%sIP:%s", used ? "," : "", *p);
    for (const char *const *p = dns; p && *p && used < sizeof(san); p++)
        used += (size_t)snprintf(san + used, sizeof(san) - used, "%sDNS:%s", used ? "," : "", *p);
    if (!used || used >= sizeof(san)) {
        snprintf(err, errlen, "a certificate needs between one and a few subject alternative names");
        goto out;
    }
    if (add_ext(cert, ca, NID_subject_alt_name, san) < 0 ||
        add_ext(cert, ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
        add_ext(cert, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment") < 0 ||
        add_ext(cert, ca, NID_ext_key_usage, "serverAuth") < 0 ||
        add_ext(cert, ca, NID_authority_key_identifier, "keyid:always") < 0) {
        fail(err, errlen, "adding the certificate extensions failed");
        goto out;
    }
    if (!X509_sign(cert, ca_key, EVP_sha256())) {
        fail(err, errlen, "signing the certificate failed");
        goto out;
    }

    bio = BIO_new(BIO_s_mem());
    if (!bio || !PEM_write_bio_X509(bio, cert) || !(out->cert_pem = bio_string(bio))) {
        fail(err, errlen, "writing the certificate failed");
        goto out;
    }
    BIO_free(bio);
    bio = BIO_new(BIO_s_mem());
    if (!bio || !PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) || !(out->key_pem = bio_string(bio))) {
        fail(err, errlen, "writing the key failed");
        goto out;
    }
    out->ca_pem = ca_pem;
    ca_pem = NULL;
    rc = 0;
out:
    if (rc < 0)
        cert_bundle_clear(out);
    BIO_free(bio);
    X509_free(cert);
    X509_free(ca);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    free(ca_pem);
    return rc;
}

void cert_bundle_clear(struct cert_bundle *b)
{
    free(b->cert_pem);
    if (b->key_pem) {
        OPENSSL_cleanse(b->key_pem, strlen(b->key_pem));
        free(b->key_pem);
    }
    free(b->ca_pem);
    memset(b, 0, sizeof(*b));
}
