/* cert: issue a serving certificate, signed by a CA we hold or self-signed (see cert.h). */
#include "httpd/cert.h"

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

/* The issuing CA: its certificate, key and PEM text. */
struct ca {
    X509 *cert;
    EVP_PKEY *key;
    char *pem;
};

static void ca_free(struct ca *ca)
{
    X509_free(ca->cert);
    EVP_PKEY_free(ca->key);
    free(ca->pem);
}

/* Read the CA of req into *ca (free with ca_free, also on failure). Returns 0, or -1 with why
 * in err. */
static int load_ca(const struct cert_request *req, struct ca *ca, char *err, size_t errlen)
{
    char what[512];
    if (!req->ca_cert || !req->ca_key) {
        snprintf(err, errlen, "a CA needs both its certificate and its key");
        return -1;
    }
    BIO *in = BIO_new_file(req->ca_cert, "rb");
    if (!in) {
        snprintf(err, errlen, "reading the CA certificate %s failed", req->ca_cert);
        ERR_clear_error();
        return -1;
    }
    ca->cert = PEM_read_bio_X509(in, NULL, NULL, NULL);
    BIO_free(in);
    if (!ca->cert) {
        snprintf(what, sizeof(what), "%s is not a PEM certificate", req->ca_cert);
        return fail(err, errlen, what);
    }
    BIO *out = BIO_new(BIO_s_mem());
    int ok = out && PEM_write_bio_X509(out, ca->cert) && (ca->pem = bio_string(out));
    BIO_free(out);
    if (!ok)
        return fail(err, errlen, "writing the CA certificate failed");
    FILE *kf = fopen(req->ca_key, "rb");
    if (!kf) {
        snprintf(err, errlen, "reading the CA key %s failed", req->ca_key);
        return -1;
    }
    ca->key = PEM_read_PrivateKey(kf, NULL, NULL, NULL);
    fclose(kf);
    if (!ca->key) {
        snprintf(what, sizeof(what), "%s is not a PEM private key", req->ca_key);
        return fail(err, errlen, what);
    }
    if (X509_check_private_key(ca->cert, ca->key) != 1) {
        snprintf(err, errlen, "the CA key %s does not belong to the certificate %s", req->ca_key, req->ca_cert);
        ERR_clear_error();
        return -1;
    }
    return 0;
}

/* Serial, validity, subject, issuer (ca's subject, or cert's own when ca has none) and public
 * key of cert. Returns 0, or -1 with why in err. */
static int set_fields(X509 *cert, const struct ca *ca, EVP_PKEY *key, const struct cert_request *req, char *err,
                      size_t errlen)
{
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof(serial)) != 1)
        return fail(err, errlen, "random serial");
    serial[0] &= 0x7f; /* positive */
    BIGNUM *bn = BN_bin2bn(serial, sizeof(serial), NULL);
    ASN1_INTEGER *sn = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
    BN_free(bn);
    int ok = sn && X509_set_version(cert, 2) && X509_set_serialNumber(cert, sn);
    ASN1_INTEGER_free(sn);
    /* valid from an hour ago: a clock slightly behind does not reject it */
    ok = ok && X509_gmtime_adj(X509_getm_notBefore(cert), -3600) &&
         X509_gmtime_adj(X509_getm_notAfter(cert), (long)req->days * 24 * 3600);
    X509_NAME *name = X509_get_subject_name(cert);
    ok = ok && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)req->cn, -1, -1, 0) &&
         X509_set_issuer_name(cert, X509_get_subject_name(ca->cert ? ca->cert : cert)) && X509_set_pubkey(cert, key);
    return ok ? 0 : fail(err, errlen, "building the certificate failed");
}

/* The subject alternative names and the serving extensions of cert (the authority key
 * identifier only when a CA issues it). Returns 0, or -1 with why in err. */
static int set_extensions(X509 *cert, const struct ca *ca, const struct cert_request *req, char *err, size_t errlen)
{
    char san[2048] = "";
    size_t used = 0;
    for (const char *const *p = req->ips; p && *p; p++)
        used += (size_t)snprintf(san + used, sizeof(san) - used, "%sIP:%s", used ? "," : "", *p);
    for (const char *const *p = req->dns; p && *p && used < sizeof(san); p++)
        used += (size_t)snprintf(san + used, sizeof(san) - used, "%sDNS:%s", used ? "," : "", *p);
    if (!used || used >= sizeof(san)) {
        snprintf(err, errlen, "a certificate needs between one and a few subject alternative names");
        return -1;
    }
    X509 *issuer = ca->cert ? ca->cert : cert;
    if (add_ext(cert, issuer, NID_subject_alt_name, san) < 0 ||
        add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
        add_ext(cert, issuer, NID_key_usage, "critical,digitalSignature") < 0 ||
        add_ext(cert, issuer, NID_ext_key_usage, "serverAuth") < 0 ||
        (ca->cert && add_ext(cert, issuer, NID_authority_key_identifier, "keyid:always") < 0))
        return fail(err, errlen, "adding the certificate extensions failed");
    return 0;
}

/* The PEM text of cert and key into out. Returns 0, or -1 with why in err. */
static int write_pems(X509 *cert, EVP_PKEY *key, struct cert_bundle *out, char *err, size_t errlen)
{
    BIO *bio = BIO_new(BIO_s_mem());
    int ok = bio && PEM_write_bio_X509(bio, cert) && (out->cert_pem = bio_string(bio));
    BIO_free(bio);
    if (!ok)
        return fail(err, errlen, "writing the certificate failed");
    bio = BIO_new(BIO_s_mem());
    ok = bio && PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) && (out->key_pem = bio_string(bio));
    BIO_free(bio);
    return ok ? 0 : fail(err, errlen, "writing the key failed");
}

int cert_issue(const struct cert_request *req, struct cert_bundle *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    struct ca ca = {0};
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    int rc = req->ca_cert || req->ca_key ? load_ca(req, &ca, err, errlen) : 0;
    if (rc == 0) {
        key = EVP_EC_gen("P-256");
        cert = X509_new();
        rc = key && cert ? 0 : fail(err, errlen, "generating a key failed");
    }
    if (rc == 0 &&
        (set_fields(cert, &ca, key, req, err, errlen) < 0 || set_extensions(cert, &ca, req, err, errlen) < 0))
        rc = -1;
    if (rc == 0 && !X509_sign(cert, ca.key ? ca.key : key, EVP_sha256()))
        rc = fail(err, errlen, "signing the certificate failed");
    if (rc == 0)
        rc = write_pems(cert, key, out, err, errlen);
    if (rc == 0) {
        out->ca_pem = ca.pem;
        ca.pem = NULL;
    } else {
        cert_bundle_clear(out);
    }
    X509_free(cert);
    EVP_PKEY_free(key);
    ca_free(&ca);
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
