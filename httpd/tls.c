#include "httpd/tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>

#include "httpd/cert.h"

/* TLS 1.2 suites of the intermediate profile (ECDHE, AEAD), in OpenSSL's names. */
#define DEFAULT_CIPHERS                                                                        \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:" \
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

/* A file's identity: a change of any field means new content. */
struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct psi_tls {
    char cert_path[4096], key_path[4096]; /* "" when the pair is in memory */
    char client_ca[4096];                 /* "" when clients need no certificate */
    int min_version;
    char ciphers[2048];
    SSL_CTX *ctx;
    struct file_id cert_id, key_id;
    time_t checked;
    unsigned reloads;
    void (*log)(const char *msg, void *ud);
    void *log_ud;
};

static int set_err(char *err, size_t errlen, const char *what, const char *detail)
{
    if (err && errlen)
        snprintf(err, errlen, "%s%s%s", what, detail && *detail ? ": " : "", detail ? detail : "");
    return -1;
}

/* The last OpenSSL error as text ("" when none); clears the queue. */
static const char *ssl_error(char *buf, size_t len)
{
    unsigned long e = ERR_peek_last_error();
    buf[0] = '\0';
    if (e)
        ERR_error_string_n(e, buf, len);
    ERR_clear_error();
    return buf;
}

int psi_tls_parse_version(const char *name, int *version, char *err, size_t errlen)
{
    if (!name || strcmp(name, "VersionTLS12") == 0) {
        *version = TLS1_2_VERSION;
        return 0;
    }
    if (strcmp(name, "VersionTLS13") == 0) {
        *version = TLS1_3_VERSION;
        return 0;
    }
    if (strcmp(name, "VersionTLS10") == 0 || strcmp(name, "VersionTLS11") == 0)
        return set_err(err, errlen, name, "TLS 1.0 and 1.1 are not served; use VersionTLS12 or VersionTLS13");
    return set_err(err, errlen, name, "not a TLS version (VersionTLS12 or VersionTLS13)");
}

/* Append the OpenSSL name of the TLS 1.2 suite whose IANA name is iana (n bytes). */
static int add_cipher(STACK_OF(SSL_CIPHER) * all, const char *iana, size_t n, char *out, size_t outlen, char *err,
                      size_t errlen)
{
    char name[128];
    if (n == 0 || n >= sizeof(name))
        return set_err(err, errlen, "cipher suites", "an empty or overlong name in the list");
    memcpy(name, iana, n);
    name[n] = '\0';
    for (int i = 0; i < sk_SSL_CIPHER_num(all); i++) {
        const SSL_CIPHER *c = sk_SSL_CIPHER_value(all, i);
        const char *std = SSL_CIPHER_standard_name(c);
        if (!std || strcmp(std, name) != 0)
            continue;
        if (strcmp(SSL_CIPHER_get_version(c), "TLSv1.3") == 0)
            return set_err(err, errlen, name, "a TLS 1.3 suite: those are not configurable");
        size_t used = strlen(out);
        if (used + strlen(SSL_CIPHER_get_name(c)) + 2 > outlen)
            return set_err(err, errlen, "cipher suites", "list too long");
        snprintf(out + used, outlen - used, "%s%s", used ? ":" : "", SSL_CIPHER_get_name(c));
        return 0;
    }
    return set_err(err, errlen, name, "not a cipher suite this OpenSSL offers");
}

int psi_tls_cipher_list(const char *iana, char *out, size_t outlen, char *err, size_t errlen)
{
    if (!iana || !out || outlen == 0)
        return set_err(err, errlen, "cipher suites", "no list");
    out[0] = '\0';
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_set_cipher_list(ctx, "ALL:COMPLEMENTOFALL") != 1) {
        SSL_CTX_free(ctx);
        return set_err(err, errlen, "cipher suites", "OpenSSL has no cipher table");
    }
    STACK_OF(SSL_CIPHER) *all = SSL_CTX_get_ciphers(ctx);
    int rc = 0;
    for (const char *p = iana; *p && rc == 0;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, ", ");
        rc = add_cipher(all, p, n, out, outlen, err, errlen);
        p += n;
    }
    SSL_CTX_free(ctx);
    if (rc == 0 && !out[0])
        return set_err(err, errlen, "cipher suites", "the list is empty");
    return rc;
}

/* ---- contexts ---- */

static SSL_CTX *new_context(const struct psi_tls *t, char *err, size_t errlen)
{
    char ebuf[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return set_err(err, errlen, "TLS", ssl_error(ebuf, sizeof(ebuf))), NULL;
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx,
                     SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (SSL_CTX_set_min_proto_version(ctx, t->min_version) != 1 || SSL_CTX_set_cipher_list(ctx, t->ciphers) != 1) {
        SSL_CTX_free(ctx);
        return set_err(err, errlen, "TLS settings", ssl_error(ebuf, sizeof(ebuf))), NULL;
    }
    if (t->client_ca[0]) {
        if (SSL_CTX_load_verify_locations(ctx, t->client_ca, NULL) != 1) {
            SSL_CTX_free(ctx);
            return set_err(err, errlen, t->client_ca, ssl_error(ebuf, sizeof(ebuf))), NULL;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    return ctx;
}

static int file_id_of(const char *path, struct file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->size = st.st_size;
    id->mtime = st.st_mtim;
    return 0;
}

static int same_id(const struct file_id *a, const struct file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* A context with the pair on disk, or NULL with why. */
static SSL_CTX *load_files(const struct psi_tls *t, char *err, size_t errlen)
{
    char ebuf[256];
    SSL_CTX *ctx = new_context(t, err, errlen);
    if (!ctx)
        return NULL;
    if (SSL_CTX_use_certificate_chain_file(ctx, t->cert_path) != 1) {
        set_err(err, errlen, t->cert_path, ssl_error(ebuf, sizeof(ebuf)));
    } else if (SSL_CTX_use_PrivateKey_file(ctx, t->key_path, SSL_FILETYPE_PEM) != 1) {
        set_err(err, errlen, t->key_path, ssl_error(ebuf, sizeof(ebuf)));
    } else if (SSL_CTX_check_private_key(ctx) != 1) {
        set_err(err, errlen, t->key_path, "the key does not match the certificate");
        ERR_clear_error();
    } else {
        return ctx;
    }
    SSL_CTX_free(ctx);
    return NULL;
}

/* Use the PEM pair in memory in ctx. Returns 0, or -1 with why in err. */
static int use_pems(SSL_CTX *ctx, const char *cert_pem, const char *key_pem, char *err, size_t errlen)
{
    char ebuf[256];
    BIO *cb = BIO_new_mem_buf(cert_pem, -1), *kb = BIO_new_mem_buf(key_pem, -1);
    X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    EVP_PKEY *key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
    int ok = x && key && SSL_CTX_use_certificate(ctx, x) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1 &&
             SSL_CTX_check_private_key(ctx) == 1;
    X509_free(x);
    EVP_PKEY_free(key);
    BIO_free(cb);
    BIO_free(kb);
    if (!ok)
        return set_err(err, errlen, "the serving certificate in memory", ssl_error(ebuf, sizeof(ebuf)));
    ERR_clear_error();
    return 0;
}

/* A context with the pair in memory, or a self-signed one (EC P-256, a year, for localhost,
 * 127.0.0.1 and the host name) when there is none; NULL with why. */
static SSL_CTX *load_memory(const struct psi_tls *t, const char *cert_pem, const char *key_pem, char *err,
                            size_t errlen)
{
    SSL_CTX *ctx = new_context(t, err, errlen);
    if (!ctx)
        return NULL;
    struct cert_bundle self = {0};
    if (!cert_pem) {
        char host[256] = "";
        if (gethostname(host, sizeof(host) - 1) != 0 ||
            strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(host))
            host[0] = '\0';
        const char *ips[] = {"127.0.0.1", NULL}, *dns[] = {"localhost", host[0] ? host : NULL, NULL};
        const struct cert_request req = {.cn = "psi-rebalancer", .ips = ips, .dns = dns, .days = 365};
        char why[256];
        if (cert_issue(&req, &self, why, sizeof(why)) < 0) {
            SSL_CTX_free(ctx);
            set_err(err, errlen, "making a self-signed certificate", why);
            return NULL;
        }
        cert_pem = self.cert_pem, key_pem = self.key_pem;
    }
    int rc = use_pems(ctx, cert_pem, key_pem, err, errlen);
    cert_bundle_clear(&self);
    if (rc < 0) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

struct psi_tls *psi_tls_new(const struct psi_tls_options *o, char *err, size_t errlen)
{
    if (o->cert_dir && *o->cert_dir && o->cert_pem)
        return set_err(err, errlen, "TLS", "a certificate directory and one in memory both given"), NULL;
    if (!o->cert_pem != !o->key_pem)
        return set_err(err, errlen, "TLS", "a certificate in memory needs its key, and a key its certificate"), NULL;
    struct psi_tls *t = calloc(1, sizeof(*t));
    if (!t)
        return set_err(err, errlen, "TLS", "out of memory"), NULL;
    t->log = o->log;
    t->log_ud = o->log_ud;
    if (psi_tls_parse_version(o->min_version, &t->min_version, err, errlen) < 0 ||
        (o->ciphers && psi_tls_cipher_list(o->ciphers, t->ciphers, sizeof(t->ciphers), err, errlen) < 0)) {
        free(t);
        return NULL;
    }
    if (!o->ciphers)
        snprintf(t->ciphers, sizeof(t->ciphers), "%s", DEFAULT_CIPHERS);
    if (o->client_ca)
        snprintf(t->client_ca, sizeof(t->client_ca), "%s", o->client_ca);
    if (o->cert_dir && *o->cert_dir) {
        snprintf(t->cert_path, sizeof(t->cert_path), "%s/tls.crt", o->cert_dir);
        snprintf(t->key_path, sizeof(t->key_path), "%s/tls.key", o->cert_dir);
        if (file_id_of(t->cert_path, &t->cert_id) < 0 || file_id_of(t->key_path, &t->key_id) < 0) {
            set_err(err, errlen, o->cert_dir, "no readable tls.crt and tls.key in it");
            free(t);
            return NULL;
        }
        t->ctx = load_files(t, err, errlen);
    } else {
        t->ctx = load_memory(t, o->cert_pem, o->key_pem, err, errlen);
    }
    if (!t->ctx) {
        free(t);
        return NULL;
    }
    t->checked = time(NULL);
    return t;
}

/* Reload when the files changed; a pair that fails to load is tried again next time. */
static void check_files(struct psi_tls *t)
{
    struct file_id c, k;
    if (file_id_of(t->cert_path, &c) < 0 || file_id_of(t->key_path, &k) < 0 ||
        (same_id(&c, &t->cert_id) && same_id(&k, &t->key_id)))
        return;
    char err[512], msg[640];
    SSL_CTX *ctx = load_files(t, err, sizeof(err));
    if (!ctx) {
        snprintf(msg, sizeof(msg), "serving certificate changed but not loaded, keeping the previous one: %s", err);
        if (t->log)
            t->log(msg, t->log_ud);
        return;
    }
    SSL_CTX_free(t->ctx);
    t->ctx = ctx;
    t->cert_id = c;
    t->key_id = k;
    t->reloads++;
    snprintf(msg, sizeof(msg), "serving certificate reloaded from %s", t->cert_path);
    if (t->log)
        t->log(msg, t->log_ud);
}

SSL_CTX *psi_tls_context(struct psi_tls *t)
{
    time_t now = time(NULL);
    if (t->cert_path[0] && now != t->checked) {
        t->checked = now;
        check_files(t);
    }
    return t->ctx;
}

unsigned psi_tls_reloads(const struct psi_tls *t)
{
    return t ? t->reloads : 0;
}

void psi_tls_free(struct psi_tls *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    free(t);
}
