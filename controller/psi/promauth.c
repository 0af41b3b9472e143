/* psi_promauth: TLS trust and bearer token of the Prometheus client. */
#include "psi/promauth.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "psi/specfile.h"

#define MAX_TOKEN (64 * 1024)
#define MAX_CA (4L * 1024 * 1024)
#define PEM_CERT "-----BEGIN CERTIFICATE-----"

/* The system trust store: libcurl's default bundle where this libcurl tells it, else the
 * first of the distributions' usual places that exists. */
static const char *const system_bundles[] = {
    "/etc/pki/tls/certs/ca-bundle.crt",   /* RHEL, UBI, Fedora */
    "/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine */
    "/etc/ssl/ca-bundle.pem",             /* SUSE */
    NULL,
};

/* A file as last read: its identity, to see when it is replaced. */
struct filestamp {
    int present;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct psi_promauth {
    struct psi_prom_token_fn token_fn;
    int has_token_fn;
    char *token_file, *own_token_file, *own_token;
    char *ca_file, *service_ca_file, *system_ca_file;
    const char *const *file_roots; /* where token_file and ca_file may be */
    int plain_http_token;
    /* trust: the PEM bundle libcurl reads, through a memory file */
    struct filestamp ca_stamp, sca_stamp, sys_stamp;
    int trust_loaded, trust_changed, memfd;
    char memfd_path[64];
    char trust_desc[1024];
    /* token file cache */
    struct filestamp tok_stamp;
    char *token;
    char identity[512];
};

static void wipe_free(char *s)
{
    if (s) {
        memset(s, 0, strlen(s));
        free(s);
    }
}

static void stamp_of(const struct stat *sb, struct filestamp *out)
{
    out->present = 1;
    out->dev = sb->st_dev;
    out->ino = sb->st_ino;
    out->size = sb->st_size;
    out->mtime = sb->st_mtim;
}

static int stamp_same(const struct filestamp *a, const struct filestamp *b)
{
    return a->present == b->present &&
           (!a->present || (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
                            a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec));
}

/* Stamp of path now: present 0 when it does not exist. Returns -1 with errno on another error. */
static int stamp_now(const char *path, struct filestamp *out)
{
    struct stat sb;
    memset(out, 0, sizeof(*out));
    if (stat(path, &sb) == 0) {
        stamp_of(&sb, out);
        return 0;
    }
    return errno == ENOENT ? 0 : -1;
}

/* Read at most max bytes of path into a NUL-terminated buffer (*len bytes). NULL with errno
 * set (EFBIG when larger). */
static char *slurp(const char *path, long max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc((size_t)max + 1);
    if (!buf) {
        fclose(f);
        errno = ENOMEM;
        return NULL;
    }
    size_t n = fread(buf, 1, (size_t)max + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > (size_t)max) {
        free(buf);
        errno = bad ? EIO : EFBIG;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static const char *find_system_bundle(void)
{
    for (size_t i = 0; system_bundles[i]; i++)
        if (access(system_bundles[i], R_OK) == 0)
            return system_bundles[i];
    return NULL;
}

static void set_identity(struct psi_promauth *a)
{
    if (a->has_token_fn)
        snprintf(a->identity, sizeof(a->identity), "the token of %s", a->token_fn.identity);
    else if (a->token_file)
        snprintf(a->identity, sizeof(a->identity), "the token in %s", a->token_file);
    else
        snprintf(a->identity, sizeof(a->identity), "no token");
}

struct psi_promauth *psi_promauth_new(const struct psi_promauth_config *cfg, struct kube_err *st)
{
    kube_err_clear(st);
    struct psi_promauth *a = calloc(1, sizeof(*a));
    if (!a) {
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
        return NULL;
    }
    a->memfd = -1;
    if (cfg->token_fn) {
        a->token_fn = *cfg->token_fn;
        a->has_token_fn = 1;
    }
    a->token_file = base_strdup_or_null(cfg->token_fn ? NULL : cfg->token_file);
    a->own_token_file = base_strdup_or_null(cfg->own_token_file);
    a->own_token = base_strdup_or_null(cfg->own_token);
    a->ca_file = base_strdup_or_null(cfg->ca_file);
    a->service_ca_file = base_strdup_or_null(cfg->ca_file ? NULL : cfg->service_ca_file);
    a->system_ca_file = base_strdup_or_null(cfg->ca_file ? NULL : find_system_bundle());
    a->plain_http_token = cfg->plain_http_token;
    a->file_roots = cfg->file_roots ? cfg->file_roots : psi_specfile_roots;
    if ((!cfg->token_fn && cfg->token_file && !a->token_file) || (cfg->own_token_file && !a->own_token_file) ||
        (cfg->own_token && !a->own_token) || (cfg->ca_file && !a->ca_file) ||
        (!cfg->ca_file && cfg->service_ca_file && !a->service_ca_file)) {
        psi_promauth_free(a);
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
        return NULL;
    }
    set_identity(a);
    return a;
}

void psi_promauth_free(struct psi_promauth *a)
{
    if (!a)
        return;
    if (a->memfd >= 0)
        close(a->memfd);
    wipe_free(a->token);
    wipe_free(a->own_token);
    free(a->token_file);
    free(a->own_token_file);
    free(a->ca_file);
    free(a->service_ca_file);
    free(a->system_ca_file);
    free(a);
}

const char *psi_promauth_trust(const struct psi_promauth *a)
{
    return a->trust_desc;
}

const char *psi_promauth_identity(const struct psi_promauth *a)
{
    return a->identity;
}

/* ---- trust ---- */

static void describe_trust(struct psi_promauth *a)
{
    const char *sys = a->system_ca_file ? a->system_ca_file : "(none found)";
    if (a->ca_file)
        snprintf(a->trust_desc, sizeof(a->trust_desc), "CA file %s", a->ca_file);
    else if (a->sca_stamp.present)
        snprintf(a->trust_desc, sizeof(a->trust_desc), "service CA %s and the system trust store %s",
                 a->service_ca_file, sys);
    else if (a->service_ca_file)
        snprintf(a->trust_desc, sizeof(a->trust_desc), "the system trust store %s (no service CA at %s)", sys,
                 a->service_ca_file);
    else
        snprintf(a->trust_desc, sizeof(a->trust_desc), "the system trust store %s", sys);
}

/* Append pem (len bytes, which must hold a certificate; freed here) read from path to the
 * memory file. */
static int append_pem_text(struct psi_promauth *a, char *pem, size_t len, const char *path, const char *what,
                           struct kube_err *st)
{
    int rc = 0;
    if (!strstr(pem, PEM_CERT))
        rc = psi_fail(st, PSI_REASON_TLS, "%s %s holds no PEM certificate (\"" PEM_CERT "\")", what, path);
    else if (write(a->memfd, pem, len) != (ssize_t)len || write(a->memfd, "\n", 1) != 1)
        rc = psi_fail(st, PSI_REASON_CONFIG, "writing the CA bundle in memory failed: %s", strerror(errno));
    free(pem);
    return rc;
}

/* Append the PEM of path, a file the operator chose (the service CA, the system store). */
static int append_pem(struct psi_promauth *a, const char *path, const char *what, struct kube_err *st)
{
    size_t len = 0;
    char *pem = slurp(path, MAX_CA, &len);
    if (!pem)
        return psi_fail(st, PSI_REASON_CONFIG, "%s %s cannot be read: %s", what, path,
                        errno == EFBIG ? "larger than 4 MiB" : strerror(errno));
    return append_pem_text(a, pem, len, path, what, st);
}

static int refuse_file(const struct psi_promauth *a, const char *field, size_t max, struct kube_err *st)
{
    char why[512];
    return psi_fail(st, PSI_REASON_CONFIG, "%s", psi_specfile_refusal(field, a->file_roots, max, why, sizeof(why)));
}

/* Rebuild the bundle from the files (ca_fd: caFile, opened by psi_specfile_open, or -1). */
static int load_trust(struct psi_promauth *a, int ca_fd, struct kube_err *st)
{
    if (a->memfd < 0) {
        a->memfd = memfd_create("psi-prometheus-ca", MFD_CLOEXEC);
        if (a->memfd < 0)
            return psi_fail(st, PSI_REASON_CONFIG, "memfd_create for the CA bundle failed: %s", strerror(errno));
        snprintf(a->memfd_path, sizeof(a->memfd_path), "/proc/self/fd/%d", a->memfd);
    }
    if (ftruncate(a->memfd, 0) < 0 || lseek(a->memfd, 0, SEEK_SET) < 0)
        return psi_fail(st, PSI_REASON_CONFIG, "resetting the CA bundle in memory failed: %s", strerror(errno));
    if (a->ca_file) {
        size_t len = 0;
        char *pem = psi_specfile_read(ca_fd, MAX_CA, &len);
        if (!pem)
            return refuse_file(a, "caFile", MAX_CA, st);
        return append_pem_text(a, pem, len, a->ca_file, "caFile", st);
    }
    if (a->sca_stamp.present && append_pem(a, a->service_ca_file, "service CA", st) < 0)
        return -1;
    if (a->system_ca_file && append_pem(a, a->system_ca_file, "system trust store", st) < 0)
        return -1;
    return 0;
}

/* Re-read the trust when a file changed (or was never read). */
static int refresh_trust(struct psi_promauth *a, struct kube_err *st)
{
    struct filestamp ca = {0}, sca = {0}, sys = {0};
    const char *bad = NULL;
    if (a->service_ca_file && stamp_now(a->service_ca_file, &sca) < 0)
        bad = a->service_ca_file;
    if (a->system_ca_file && stamp_now(a->system_ca_file, &sys) < 0)
        bad = a->system_ca_file;
    if (bad)
        return psi_fail(st, PSI_REASON_CONFIG, "CA file %s: %s", bad, strerror(errno));
    int ca_fd = -1;
    if (a->ca_file) {
        struct stat sb;
        ca_fd = psi_specfile_open(a->ca_file, a->file_roots, MAX_CA, &sb);
        if (ca_fd < 0)
            return refuse_file(a, "caFile", MAX_CA, st);
        stamp_of(&sb, &ca);
    }
    if (a->trust_loaded && stamp_same(&ca, &a->ca_stamp) && stamp_same(&sca, &a->sca_stamp) &&
        stamp_same(&sys, &a->sys_stamp)) {
        if (ca_fd >= 0)
            close(ca_fd);
        return 0;
    }
    a->ca_stamp = ca;
    a->sca_stamp = sca;
    a->sys_stamp = sys;
    describe_trust(a);
    int rc = load_trust(a, ca_fd, st);
    if (ca_fd >= 0)
        close(ca_fd);
    if (rc < 0) {
        a->trust_loaded = 0; /* read it all again next time */
        return -1;
    }
    a->trust_changed = a->trust_loaded; /* the first load needs no fresh connection */
    a->trust_loaded = 1;
    return 0;
}

void psi_promauth_apply(struct psi_promauth *a, CURL *easy)
{
    if (!a->trust_loaded)
        return;
    curl_easy_setopt(easy, CURLOPT_CAINFO, a->memfd_path);
    /* the bundle is all the trust: libcurl's build-time CA directory (/etc/ssl/certs on
     * Debian), which curl_easy_reset puts back, would add the whole system store to a caFile */
    curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
#if LIBCURL_VERSION_NUM >= 0x075700
    curl_easy_setopt(easy, CURLOPT_CA_CACHE_TIMEOUT, 0L); /* the bundle's path stays, its contents change */
#endif
    if (a->trust_changed) {
        curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
        a->trust_changed = 0;
    }
}

/* ---- token ---- */

/* Trim the token in buf (n bytes, freed here on failure) into *out: surrounding whitespace
 * removed, none inside, not empty. */
static int trim_token(char *buf, size_t n, const char *what, const char *path, char **out, struct kube_err *st)
{
    size_t s = 0;
    while (s < n && isspace((unsigned char)buf[s]))
        s++;
    while (n > s && isspace((unsigned char)buf[n - 1]))
        buf[--n] = '\0';
    for (size_t i = s; i < n; i++) {
        if (!isgraph((unsigned char)buf[i])) {
            wipe_free(buf);
            return psi_fail(st, PSI_REASON_CONFIG, "%s %s holds whitespace or control characters inside the token",
                            what, path);
        }
    }
    if (n == s) {
        free(buf);
        return psi_fail(st, PSI_REASON_CONFIG, "%s %s is empty", what, path);
    }
    memmove(buf, buf + s, n - s + 1);
    *out = buf;
    return 0;
}

/* The token in path, a file the operator chose, into *out (caller frees). */
static int read_token(const char *path, const char *what, char **out, struct kube_err *st)
{
    size_t n = 0;
    char *buf = slurp(path, MAX_TOKEN, &n);
    if (!buf)
        return psi_fail(st, PSI_REASON_CONFIG, "%s %s: %s", what, path,
                        errno == EFBIG ? "larger than 64 KiB" : strerror(errno));
    return trim_token(buf, n, what, path, out, st);
}

/* True when tok is the operator's own API token. */
static int is_own_token(const struct psi_promauth *a, const char *tok)
{
    if (a->own_token && strcmp(a->own_token, tok) == 0)
        return 1;
    char *own = NULL;
    struct kube_err ignored;
    if (!a->own_token_file || read_token(a->own_token_file, "token file", &own, &ignored) < 0)
        return 0;
    int same = strcmp(own, tok) == 0;
    wipe_free(own);
    return same;
}

static int refresh_token_file(struct psi_promauth *a, struct kube_err *st)
{
    struct filestamp now;
    struct stat sb;
    int fd = psi_specfile_open(a->token_file, a->file_roots, MAX_TOKEN, &sb);
    if (fd < 0)
        return refuse_file(a, "bearerTokenFile", MAX_TOKEN, st);
    stamp_of(&sb, &now);
    if (a->token && stamp_same(&now, &a->tok_stamp)) {
        close(fd);
        return 0;
    }
    size_t n = 0;
    char *buf = psi_specfile_read(fd, MAX_TOKEN, &n);
    close(fd);
    if (!buf)
        return refuse_file(a, "bearerTokenFile", MAX_TOKEN, st);
    char *tok = NULL;
    if (trim_token(buf, n, "bearerTokenFile", a->token_file, &tok, st) < 0)
        return -1;
    if (is_own_token(a, tok)) {
        wipe_free(tok);
        return psi_fail(st, PSI_REASON_CONFIG,
                        "bearerTokenFile %s holds the operator's own ServiceAccount token, which may taint "
                        "nodes and write MachineConfigs: it is never sent to Prometheus (leave bearerTokenFile "
                        "unset to send the token of the pressure-reading ServiceAccount)",
                        a->token_file);
    }
    wipe_free(a->token);
    a->token = tok;
    a->tok_stamp = now;
    return 0;
}

int psi_promauth_prepare(struct psi_promauth *a, int https, const char **token, struct kube_err *st)
{
    kube_err_clear(st);
    *token = NULL;
    if (https && refresh_trust(a, st) < 0)
        return -1;
    if (!a->has_token_fn && !a->token_file)
        return 0;
    if (!https && !a->plain_http_token)
        return psi_fail(st, PSI_REASON_CONFIG,
                        "refusing to send %s over plain http://: use an https:// URL, set bearerTokenFile to "
                        "\"\" to send none, or set sendTokenOverPlainHTTP: true",
                        a->identity);
    if (a->has_token_fn) {
        *token = a->token_fn.get(a->token_fn.ud, st);
        return *token ? 0 : -1;
    }
    if (refresh_token_file(a, st) < 0)
        return -1;
    *token = a->token;
    return 0;
}
