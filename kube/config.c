#include "kube/config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "base/base64.h"
#include "kube/yamljson.h"

#ifndef PSI_VERSION
#define PSI_VERSION "dev"
#endif

#define MAX_CONFIG_FILE (16 * 1024 * 1024)
#define MAX_TOKEN_FILE (1024 * 1024)

/* One loaded kubeconfig file. */
struct kc_file {
    char *path;
    cJSON *root;
};

/* A named entry of clusters/users/contexts, and where it came from (for messages). */
struct kc_entry {
    const char *name;
    const cJSON *item; /* the list element: {name, <inner>} */
    const struct kc_file *file;
    int index;
};

struct kc_section {
    struct kc_entry *v;
    int n;
    size_t cap;
};

/* Read a whole file (at most max bytes) into a NUL-terminated buffer; errno on failure. */
static char *read_file(const char *path, size_t max, size_t *len_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap > max) {
                free(buf);
                close(fd);
                errno = EFBIG;
                return NULL;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                close(fd);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = 0;
    if (len_out)
        *len_out = len;
    return buf;
}

/* Resolve a path in a kubeconfig relative to the kubeconfig's directory (as client-go does). */
static char *resolve_path(const char *kubeconfig, const char *p)
{
    if (p[0] == '/' || !kubeconfig)
        return strdup(p);
    const char *slash = strrchr(kubeconfig, '/');
    if (!slash)
        return strdup(p);
    char *out;
    if (asprintf(&out, "%.*s/%s", (int)(slash - kubeconfig), kubeconfig, p) < 0)
        return NULL;
    return out;
}

static void free_files(struct kc_file *files, int n)
{
    for (int i = 0; i < n; i++) {
        free(files[i].path);
        cJSON_Delete(files[i].root);
    }
    free(files);
}

/* Load and parse one file; the root is an object (an empty file gives {}). */
static int load_one(const char *path, struct kc_file *f, struct kube_err *err)
{
    size_t len;
    char *text = read_file(path, MAX_CONFIG_FILE, &len);
    if (!text)
        return kube_err_set(err, 0, "Config", "kubeconfig %s: cannot read: %s", path, strerror(errno));
    char ebuf[512] = "";
    cJSON *root = kube_yamljson_parse(text, len, ebuf, sizeof(ebuf));
    free(text);
    if (!root)
        return kube_err_set(err, 0, "Config", "kubeconfig %s: YAML syntax error: %s", path, ebuf);
    if (cJSON_IsNull(root)) {
        cJSON_Delete(root);
        root = cJSON_CreateObject();
    }
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return kube_err_set(err, 0, "Config", "kubeconfig %s: top level: not a mapping", path);
    }
    f->path = strdup(path);
    f->root = root;
    return 0;
}

/* Collect the entries of a section ("clusters", "users", "contexts") from all files; the first
 * file to define a name wins. */
static int collect(struct kc_file *files, int nfiles, const char *section, struct kc_section *out, struct kube_err *err)
{
    out->v = NULL;
    out->n = 0;
    for (int f = 0; f < nfiles; f++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(files[f].root, section);
        if (!list || cJSON_IsNull(list))
            continue;
        if (!cJSON_IsArray(list))
            return kube_err_set(err, 0, "Config", "kubeconfig %s: %s: not a list", files[f].path, section);
        int i = 0;
        const cJSON *item;
        cJSON_ArrayForEach (item, list) {
            if (!cJSON_IsObject(item))
                return kube_err_set(err, 0, "Config", "kubeconfig %s: %s[%d]: not a mapping", files[f].path, section,
                                    i);
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");
            if (!cJSON_IsString(name) || !name->valuestring[0])
                return kube_err_set(err, 0, "Config", "kubeconfig %s: %s[%d].name: %s", files[f].path, section, i,
                                    name && !cJSON_IsNull(name) ? "not a string" : "missing");
            int dup = 0;
            for (int k = 0; k < out->n; k++)
                if (!strcmp(out->v[k].name, name->valuestring))
                    dup = 1;
            if (!dup) {
                if (BASE_GROW(out->v, (size_t)out->n + 1, out->cap) < 0)
                    return kube_err_set(err, 0, "Config", "out of memory");
                out->v[out->n++] = (struct kc_entry){name->valuestring, item, &files[f], i};
            }
            i++;
        }
    }
    return 0;
}

static const struct kc_entry *find_entry(const struct kc_section *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].name, name))
            return &s->v[i];
    return NULL;
}

/* Names of a section, comma-separated, for "not found" messages. */
static void list_names(const struct kc_section *s, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", s->v[i].name);
    if (!s->n)
        snprintf(buf, len, "none");
}

/* Context for field errors: "<file>: <section>[i].<inner>.<field>". */
struct field_ctx {
    const struct kc_entry *e;
    const char *section;
    const char *inner;
};

#define FIELD_FMT "kubeconfig %s: %s[%d].%s.%s"
#define FIELD_ARGS(fc, field) (fc)->e->file->path, (fc)->section, (fc)->e->index, (fc)->inner, field

/* Get an optional string field: 0 and *out (borrowed, NULL when absent/empty), or -1. */
static int get_str(const cJSON *obj, const struct field_ctx *fc, const char *field, const char **out,
                   struct kube_err *err)
{
    *out = NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v))
        return kube_err_set(err, 0, "Config", FIELD_FMT ": not a string", FIELD_ARGS(fc, field));
    if (v->valuestring[0])
        *out = v->valuestring;
    return 0;
}

/* Get an optional file path field, resolved and checked readable: *out is malloc'd or NULL. */
static int get_file(const cJSON *obj, const struct field_ctx *fc, const char *field, char **out, struct kube_err *err)
{
    const char *p;
    *out = NULL;
    if (get_str(obj, fc, field, &p, err))
        return -1;
    if (!p)
        return 0;
    char *full = resolve_path(fc->e->file->path, p);
    if (!full)
        return kube_err_set(err, 0, "Config", "out of memory");
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    char c;
    if (fd < 0 || read(fd, &c, 1) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        kube_err_set(err, 0, "Config", FIELD_FMT ": cannot read %s: %s", FIELD_ARGS(fc, field), full, strerror(e));
        free(full);
        return -1;
    }
    close(fd);
    *out = full;
    return 0;
}

/* Get an optional base64 field, decoded into *out. */
static int get_b64(const cJSON *obj, const struct field_ctx *fc, const char *field, struct kube_blob *out,
                   struct kube_err *err)
{
    const char *s;
    if (get_str(obj, fc, field, &s, err))
        return -1;
    if (!s)
        return 0;
    size_t bad = 0;
    if (kube_base64_decode(s, &out->data, &out->len, &bad))
        return kube_err_set(err, 0, "Config", FIELD_FMT ": not base64 (bad data at offset %zu)", FIELD_ARGS(fc, field),
                            bad);
    if (!out->len)
        return kube_err_set(err, 0, "Config", FIELD_FMT ": empty after base64 decoding", FIELD_ARGS(fc, field));
    return 0;
}

void kube_config_free(struct kube_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->source);
    free(cfg->context);
    free(cfg->cluster_name);
    free(cfg->user_name);
    free(cfg->namespace);
    free(cfg->server);
    free(cfg->effective_server);
    free(cfg->tls_server_name);
    curl_slist_free_all(cfg->connect_to);
    free(cfg->host_header);
    free(cfg->proxy_url);
    free(cfg->ca_file);
    free(cfg->ca_data.data);
    free(cfg->cert_file);
    free(cfg->cert_data.data);
    free(cfg->key_file);
    if (cfg->key_data.data)
        memset(cfg->key_data.data, 0, cfg->key_data.len);
    free(cfg->key_data.data);
    if (cfg->token)
        memset(cfg->token, 0, strlen(cfg->token));
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->username);
    if (cfg->password)
        memset(cfg->password, 0, strlen(cfg->password));
    free(cfg->password);
    if (cfg->file_token)
        memset(cfg->file_token, 0, strlen(cfg->file_token));
    free(cfg->file_token);
    free(cfg);
}

/* The pieces of a URL "scheme://host[:port]/path"; host keeps IPv6 brackets, port is the
 * scheme's default when the URL has none, rest points into the URL at the path. */
struct url_parts {
    char scheme[16];
    char host[256];
    char port[16];
    const char *rest;
};

/* Split url into u; -1 when it is not of that form or a piece does not fit. */
static int split_url(const char *url, struct url_parts *u)
{
    char *scheme = u->scheme, *host = u->host, *port = u->port;
    size_t sl = sizeof(u->scheme), hl = sizeof(u->host), pl = sizeof(u->port);
    const char *p = strstr(url, "://");
    if (!p || (size_t)(p - url) >= sl)
        return -1;
    snprintf(scheme, sl, "%.*s", (int)(p - url), url);
    const char *h = p + 3;
    const char *end = h + strcspn(h, "/?#");
    const char *colon = NULL;
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(end - h));
        if (!rb)
            return -1;
        if (rb + 1 < end && rb[1] == ':')
            colon = rb + 1;
        else if (rb + 1 != end)
            return -1;
    } else {
        colon = memchr(h, ':', (size_t)(end - h));
    }
    const char *hend = colon ? colon : end;
    if (hend == h || (size_t)(hend - h) >= hl)
        return -1;
    snprintf(host, hl, "%.*s", (int)(hend - h), h);
    if (colon) {
        if ((size_t)(end - colon - 1) >= pl || end == colon + 1)
            return -1;
        snprintf(port, pl, "%.*s", (int)(end - colon - 1), colon + 1);
        for (const char *c = port; *c; c++)
            if (*c < '0' || *c > '9')
                return -1;
    } else {
        snprintf(port, pl, "%s", strcmp(scheme, "http") ? "443" : "80");
    }
    u->rest = end;
    return 0;
}

/* Set server, effective_server, and (with tls-server-name) connect_to and host_header.
 * where names the field for messages. */
static int set_server(struct kube_config *cfg, const char *server, const char *where, struct kube_err *err)
{
    char *s;
    if (strstr(server, "://"))
        s = strdup(server);
    else if (asprintf(&s, "https://%s", server) < 0)
        s = NULL;
    if (!s)
        return kube_err_set(err, 0, "Config", "out of memory");
    size_t n = strlen(s);
    while (n && s[n - 1] == '/')
        s[--n] = 0;
    cfg->server = s;
    struct url_parts u;
    if (split_url(s, &u))
        return kube_err_set(err, 0, "Config", "%s: not a valid URL: %s", where, server);
    if (strcmp(u.scheme, "https") && strcmp(u.scheme, "http"))
        return kube_err_set(err, 0, "Config", "%s: unsupported scheme %s in %s (want https)", where, u.scheme, server);
    if (*u.rest && *u.rest != '/')
        return kube_err_set(err, 0, "Config", "%s: query or fragment not allowed in %s", where, server);
    if (!cfg->tls_server_name) {
        cfg->effective_server = strdup(s);
        return cfg->effective_server ? 0 : kube_err_set(err, 0, "Config", "out of memory");
    }
    /* Send SNI and verify the certificate for tls-server-name while connecting to the real
     * host: the URL names tls-server-name and CONNECT_TO maps it to host:port. */
    const char *t = cfg->tls_server_name;
    int v6 = strchr(t, ':') != NULL;
    char *entry = NULL;
    if (asprintf(&cfg->effective_server, "%s://%s%s%s:%s%s", u.scheme, v6 ? "[" : "", t, v6 ? "]" : "", u.port,
                 u.rest) < 0 ||
        asprintf(&entry, "%s%s%s:%s:%s:%s", v6 ? "[" : "", t, v6 ? "]" : "", u.port, u.host, u.port) < 0 ||
        asprintf(&cfg->host_header, "Host: %s%s%s", u.host,
                 strcmp(u.port, strcmp(u.scheme, "http") ? "443" : "80") ? ":" : "",
                 strcmp(u.port, strcmp(u.scheme, "http") ? "443" : "80") ? u.port : "") < 0) {
        cfg->effective_server = NULL;
        free(entry);
        return kube_err_set(err, 0, "Config", "out of memory");
    }
    cfg->connect_to = curl_slist_append(NULL, entry);
    free(entry);
    return cfg->connect_to ? 0 : kube_err_set(err, 0, "Config", "out of memory");
}

static int fill_cluster(struct kube_config *cfg, const struct kc_entry *e, struct kube_err *err)
{
    struct field_ctx fc = {e, "clusters", "cluster"};
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e->item, "cluster");
    if (!cJSON_IsObject(c))
        return kube_err_set(err, 0, "Config", "kubeconfig %s: clusters[%d].cluster: %s", e->file->path, e->index,
                            c && !cJSON_IsNull(c) ? "not a mapping" : "missing");
    const char *server, *tsn, *proxy;
    if (get_str(c, &fc, "server", &server, err) || get_str(c, &fc, "tls-server-name", &tsn, err) ||
        get_str(c, &fc, "proxy-url", &proxy, err))
        return -1;
    if (!server)
        return kube_err_set(err, 0, "Config", FIELD_FMT ": missing", FIELD_ARGS(&fc, "server"));
    const cJSON *ins = cJSON_GetObjectItemCaseSensitive(c, "insecure-skip-tls-verify");
    if (ins && !cJSON_IsNull(ins) && !cJSON_IsBool(ins))
        return kube_err_set(err, 0, "Config", FIELD_FMT ": not a boolean (want true or false)",
                            FIELD_ARGS(&fc, "insecure-skip-tls-verify"));
    cfg->insecure = cJSON_IsTrue(ins);
    if (get_file(c, &fc, "certificate-authority", &cfg->ca_file, err) ||
        get_b64(c, &fc, "certificate-authority-data", &cfg->ca_data, err))
        return -1;
    if (cfg->ca_file && cfg->ca_data.data)
        return kube_err_set(err, 0, "Config",
                            "kubeconfig %s: clusters[%d].cluster: certificate-authority and "
                            "certificate-authority-data are both set; keep one",
                            e->file->path, e->index);
    if (cfg->insecure && (cfg->ca_file || cfg->ca_data.data))
        return kube_err_set(err, 0, "Config",
                            "kubeconfig %s: clusters[%d].cluster: insecure-skip-tls-verify is true "
                            "together with a certificate authority; keep one",
                            e->file->path, e->index);
    cfg->tls_server_name = base_strdup_or_null(tsn);
    cfg->proxy_url = base_strdup_or_null(proxy);
    char where[512];
    snprintf(where, sizeof(where), FIELD_FMT, FIELD_ARGS(&fc, "server"));
    return set_server(cfg, server, where, err);
}

static int fill_user(struct kube_config *cfg, const struct kc_entry *e, struct kube_err *err)
{
    struct field_ctx fc = {e, "users", "user"};
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(e->item, "user");
    if (!u || cJSON_IsNull(u))
        return 0; /* a user with no credentials: anonymous */
    if (!cJSON_IsObject(u))
        return kube_err_set(err, 0, "Config", "kubeconfig %s: users[%d].user: not a mapping", e->file->path, e->index);
    const char *token, *user, *pass;
    if (get_str(u, &fc, "token", &token, err) || get_str(u, &fc, "username", &user, err) ||
        get_str(u, &fc, "password", &pass, err))
        return -1;
    cfg->token = base_strdup_or_null(token);
    cfg->username = base_strdup_or_null(user);
    cfg->password = base_strdup_or_null(pass);
    if (!token && get_file(u, &fc, "tokenFile", &cfg->token_file, err))
        return -1;
    if (get_file(u, &fc, "client-certificate", &cfg->cert_file, err) ||
        get_b64(u, &fc, "client-certificate-data", &cfg->cert_data, err) ||
        get_file(u, &fc, "client-key", &cfg->key_file, err) || get_b64(u, &fc, "client-key-data", &cfg->key_data, err))
        return -1;
    int has_cert = cfg->cert_file || cfg->cert_data.data, has_key = cfg->key_file || cfg->key_data.data;
    if (cfg->cert_file && cfg->cert_data.data)
        return kube_err_set(err, 0, "Config",
                            "kubeconfig %s: users[%d].user: client-certificate and client-certificate-data "
                            "are both set; keep one",
                            e->file->path, e->index);
    if (cfg->key_file && cfg->key_data.data)
        return kube_err_set(err, 0, "Config",
                            "kubeconfig %s: users[%d].user: client-key and client-key-data are both set; keep one",
                            e->file->path, e->index);
    if (has_cert && !has_key)
        return kube_err_set(err, 0, "Config", FIELD_FMT ": missing (client-certificate is set)",
                            FIELD_ARGS(&fc, "client-key"));
    if (has_key && !has_cert)
        return kube_err_set(err, 0, "Config", FIELD_FMT ": missing (client-key is set)",
                            FIELD_ARGS(&fc, "client-certificate"));
    if (!cfg->token && !cfg->token_file && !has_cert && !cfg->username) {
        if (cJSON_GetObjectItemCaseSensitive(u, "exec"))
            return kube_err_set(err, 0, "Config", FIELD_FMT ": exec credential plugins are not supported",
                                FIELD_ARGS(&fc, "exec"));
        if (cJSON_GetObjectItemCaseSensitive(u, "auth-provider"))
            return kube_err_set(err, 0, "Config", FIELD_FMT ": auth providers are not supported",
                                FIELD_ARGS(&fc, "auth-provider"));
    }
    if (cfg->token_file) {
        struct kube_err e2;
        if (!kube_config_token(cfg, &e2))
            return kube_err_set(err, 0, "Config", FIELD_FMT ": %s", FIELD_ARGS(&fc, "tokenFile"), e2.msg);
    }
    return 0;
}

/* Resolve the merged files into cfg. */
static int resolve(struct kc_file *files, int nfiles, const char *source, const char *context_override,
                   struct kube_config *cfg, struct kube_err *err)
{
    struct kc_section clusters = {0}, users = {0}, contexts = {0};
    int rc = -1;
    if (collect(files, nfiles, "clusters", &clusters, err) || collect(files, nfiles, "users", &users, err) ||
        collect(files, nfiles, "contexts", &contexts, err))
        goto out;
    const char *ctxname = context_override && *context_override ? context_override : NULL;
    const char *ctx_from = "--context";
    if (!ctxname) {
        for (int f = 0; f < nfiles && !ctxname; f++) {
            const cJSON *cc = cJSON_GetObjectItemCaseSensitive(files[f].root, "current-context");
            if (cc && !cJSON_IsNull(cc) && !cJSON_IsString(cc)) {
                kube_err_set(err, 0, "Config", "kubeconfig %s: current-context: not a string", files[f].path);
                goto out;
            }
            if (cJSON_IsString(cc) && cc->valuestring[0]) {
                ctxname = cc->valuestring;
                ctx_from = "current-context";
            }
        }
    }
    if (!ctxname) {
        kube_err_set(err, 0, "Config", "kubeconfig %s: current-context: missing (and no --context given)", source);
        goto out;
    }
    const struct kc_entry *ce = find_entry(&contexts, ctxname);
    if (!ce) {
        char names[512];
        list_names(&contexts, names, sizeof(names));
        kube_err_set(err, 0, "Config", "kubeconfig %s: %s: context \"%s\" not found (contexts: %s)", source, ctx_from,
                     ctxname, names);
        goto out;
    }
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(ce->item, "context");
    if (!cJSON_IsObject(ctx)) {
        kube_err_set(err, 0, "Config", "kubeconfig %s: contexts[%d].context: %s", ce->file->path, ce->index,
                     ctx && !cJSON_IsNull(ctx) ? "not a mapping" : "missing");
        goto out;
    }
    struct field_ctx fc = {ce, "contexts", "context"};
    const char *cluster_name, *user_name, *ns;
    if (get_str(ctx, &fc, "cluster", &cluster_name, err) || get_str(ctx, &fc, "user", &user_name, err) ||
        get_str(ctx, &fc, "namespace", &ns, err))
        goto out;
    if (!cluster_name) {
        kube_err_set(err, 0, "Config", FIELD_FMT ": missing", FIELD_ARGS(&fc, "cluster"));
        goto out;
    }
    const struct kc_entry *cl = find_entry(&clusters, cluster_name);
    if (!cl) {
        char names[512];
        list_names(&clusters, names, sizeof(names));
        kube_err_set(err, 0, "Config", FIELD_FMT ": cluster \"%s\" not found (clusters: %s)",
                     FIELD_ARGS(&fc, "cluster"), cluster_name, names);
        goto out;
    }
    const struct kc_entry *us = NULL;
    if (user_name) {
        us = find_entry(&users, user_name);
        if (!us) {
            char names[512];
            list_names(&users, names, sizeof(names));
            kube_err_set(err, 0, "Config", FIELD_FMT ": user \"%s\" not found (users: %s)", FIELD_ARGS(&fc, "user"),
                         user_name, names);
            goto out;
        }
    }
    cfg->source = strdup(source);
    cfg->context = strdup(ctxname);
    cfg->cluster_name = strdup(cluster_name);
    cfg->user_name = base_strdup_or_null(user_name);
    cfg->namespace = base_strdup_or_null(ns);
    if (fill_cluster(cfg, cl, err) || (us && fill_user(cfg, us, err)))
        goto out;
    rc = 0;
out:
    free(clusters.v);
    free(users.v);
    free(contexts.v);
    return rc;
}

int kube_config_load_file(const char *paths, const char *context, struct kube_config **out, struct kube_err *err)
{
    *out = NULL;
    kube_err_clear(err);
    struct kc_file *files = NULL;
    int nfiles = 0, rc = -1;
    size_t files_cap = 0;
    char *list = strdup(paths);
    if (!list)
        return kube_err_set(err, 0, "Config", "out of memory");
    int multi = strchr(paths, ':') != NULL;
    for (char *p = list, *next; p; p = next) {
        next = strchr(p, ':');
        if (next)
            *next++ = '\0';
        if (!*p)
            continue; /* empty entries of the list, as strtok skipped them */
        if (multi && access(p, F_OK) != 0)
            continue; /* as client-go: missing files in a list are skipped */
        if (BASE_GROW(files, (size_t)nfiles + 1, files_cap) < 0) {
            kube_err_set(err, 0, "Config", "out of memory");
            goto out;
        }
        if (load_one(p, &files[nfiles], err))
            goto out;
        nfiles++;
    }
    if (!nfiles) {
        kube_err_set(err, 0, "Config", "kubeconfig %s: none of the files exists", paths);
        goto out;
    }
    struct kube_config *cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        kube_err_set(err, 0, "Config", "out of memory");
        goto out;
    }
    /* the source names the files actually used */
    struct strbuf names = STRBUF_INIT;
    for (int i = 0; i < nfiles; i++)
        strbuf_addf(&names, "%s%s", i ? ":" : "", files[i].path);
    char *source = strbuf_take(&names);
    if (!source) {
        free(cfg);
        kube_err_set(err, 0, "Config", "out of memory");
        goto out;
    }
    if (resolve(files, nfiles, source, context, cfg, err)) {
        free(source);
        kube_config_free(cfg);
        goto out;
    }
    free(source);
    *out = cfg;
    rc = 0;
out:
    free(list);
    free_files(files, nfiles);
    return rc;
}

const char *kube_config_serviceaccount_dir(void)
{
    const char *dir = getenv("PSI_SERVICEACCOUNT_DIR");
    return dir && *dir ? dir : KUBE_SERVICEACCOUNT_DIR;
}

int kube_config_in_cluster(const char *sa_dir, struct kube_config **out, struct kube_err *err)
{
    *out = NULL;
    kube_err_clear(err);
    if (!sa_dir || !*sa_dir)
        sa_dir = kube_config_serviceaccount_dir();
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return kube_err_set(err, 0, "Config",
                            "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
    struct kube_config *cfg = calloc(1, sizeof(*cfg));
    if (!cfg)
        return kube_err_set(err, 0, "Config", "out of memory");
    cfg->source = strdup("in-cluster");
    char *server = NULL;
    int v6 = strchr(host, ':') != NULL;
    if (asprintf(&server, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port) < 0)
        server = NULL;
    if (!server || set_server(cfg, server, "in-cluster config: KUBERNETES_SERVICE_HOST/PORT", err)) {
        if (!server)
            kube_err_set(err, 0, "Config", "out of memory");
        free(server);
        kube_config_free(cfg);
        return -1;
    }
    free(server);
    if (asprintf(&cfg->token_file, "%s/token", sa_dir) < 0 || asprintf(&cfg->ca_file, "%s/ca.crt", sa_dir) < 0) {
        kube_config_free(cfg);
        return kube_err_set(err, 0, "Config", "out of memory");
    }
    if (access(cfg->ca_file, R_OK) != 0) {
        kube_err_set(err, 0, "Config", "in-cluster config: cannot read %s: %s", cfg->ca_file, strerror(errno));
        kube_config_free(cfg);
        return -1;
    }
    if (!kube_config_token(cfg, err)) {
        kube_err_wrap(err, "in-cluster config");
        kube_config_free(cfg);
        return -1;
    }
    char *nsfile = NULL;
    if (asprintf(&nsfile, "%s/namespace", sa_dir) >= 0) {
        char *ns = read_file(nsfile, 4096, NULL);
        if (ns) {
            ns[strcspn(ns, " \t\r\n")] = 0;
            if (*ns)
                cfg->namespace = ns;
            else
                free(ns);
        }
        free(nsfile);
    }
    *out = cfg;
    return 0;
}

static char *home_kubeconfig(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home)
        return NULL;
    char *p;
    if (asprintf(&p, "%s/.kube/config", home) < 0)
        return NULL;
    return p;
}

int kube_config_load(const char *kubeconfig_path, const char *context, struct kube_config **out, struct kube_err *err)
{
    *out = NULL;
    if (kubeconfig_path && *kubeconfig_path) {
        if (strchr(kubeconfig_path, ':'))
            return kube_err_set(err, 0, "Config", "--kubeconfig %s: one file expected (use $KUBECONFIG for a list)",
                                kubeconfig_path);
        return kube_config_load_file(kubeconfig_path, context, out, err);
    }
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        if (!strchr(env, ':') && access(env, F_OK) != 0)
            return kube_err_set(err, 0, "Config", "kubeconfig %s (from $KUBECONFIG): none of the files exists", env);
        if (kube_config_load_file(env, context, out, err))
            return kube_err_wrap(err, "$KUBECONFIG");
        return 0;
    }
    char *home = home_kubeconfig();
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    if (host && *host) {
        if (kube_config_in_cluster(NULL, out, err) == 0) {
            free(home);
            return 0;
        }
        if (!home || access(home, F_OK) != 0) {
            free(home);
            return -1; /* the in-cluster error */
        }
    }
    if (!home || access(home, F_OK) != 0) {
        kube_err_set(err, 0, "Config",
                     "no configuration: no --kubeconfig, $KUBECONFIG unset, not in a cluster "
                     "(KUBERNETES_SERVICE_HOST unset) and %s does not exist",
                     home ? home : "~/.kube/config");
        free(home);
        return -1;
    }
    int rc = kube_config_load_file(home, context, out, err);
    free(home);
    return rc;
}

const char *kube_config_token(struct kube_config *cfg, struct kube_err *err)
{
    if (cfg->token)
        return cfg->token;
    if (!cfg->token_file)
        return NULL;
    struct stat st;
    if (stat(cfg->token_file, &st) != 0) {
        if (cfg->file_token)
            return cfg->file_token; /* keep the last good token, as client-go does */
        kube_err_set(err, 0, "Config", "token file %s: %s", cfg->token_file, strerror(errno));
        return NULL;
    }
    if (cfg->file_token && st.st_mtim.tv_sec == cfg->token_mtime.tv_sec &&
        st.st_mtim.tv_nsec == cfg->token_mtime.tv_nsec && st.st_size == cfg->token_size && st.st_ino == cfg->token_ino)
        return cfg->file_token;
    char *t = read_file(cfg->token_file, MAX_TOKEN_FILE, NULL);
    if (!t) {
        if (cfg->file_token)
            return cfg->file_token;
        kube_err_set(err, 0, "Config", "token file %s: cannot read: %s", cfg->token_file, strerror(errno));
        return NULL;
    }
    /* trim surrounding whitespace */
    char *b = t;
    while (*b == ' ' || *b == '\t' || *b == '\r' || *b == '\n')
        b++;
    size_t n = strlen(b);
    while (n && (b[n - 1] == ' ' || b[n - 1] == '\t' || b[n - 1] == '\r' || b[n - 1] == '\n'))
        b[--n] = 0;
    if (!n || strpbrk(b, "\r\n")) {
        free(t);
        if (cfg->file_token)
            return cfg->file_token;
        kube_err_set(err, 0, "Config", "token file %s: %s", cfg->token_file, n ? "token spans several lines" : "empty");
        return NULL;
    }
    memmove(t, b, n + 1);
    if (cfg->file_token) {
        memset(cfg->file_token, 0, strlen(cfg->file_token));
        free(cfg->file_token);
    }
    cfg->file_token = t;
    cfg->token_mtime = st.st_mtim;
    cfg->token_size = st.st_size;
    cfg->token_ino = st.st_ino;
    return t;
}

const char *kube_config_server(const struct kube_config *cfg)
{
    return cfg->effective_server;
}

#define SETOPT(opt, val)                                                                            \
    do {                                                                                            \
        CURLcode rc_ = curl_easy_setopt(easy, opt, val);                                            \
        if (rc_ != CURLE_OK)                                                                        \
            return kube_err_set(err, 0, "Config", "setting %s: %s", #opt, curl_easy_strerror(rc_)); \
    } while (0)

static int add_header(struct curl_slist **headers, const char *h, struct kube_err *err)
{
    struct curl_slist *n = curl_slist_append(*headers, h);
    if (!n)
        return kube_err_set(err, 0, "Config", "out of memory");
    *headers = n;
    return 0;
}

int kube_config_prepare(struct kube_config *cfg, CURL *easy, struct curl_slist **headers, struct kube_err *err)
{
    SETOPT(CURLOPT_PROTOCOLS_STR, "https,http");
    SETOPT(CURLOPT_SSL_VERIFYPEER, cfg->insecure ? 0L : 1L);
    SETOPT(CURLOPT_SSL_VERIFYHOST, cfg->insecure ? 0L : 2L);
    if (cfg->ca_data.data) {
        struct curl_blob b = {cfg->ca_data.data, cfg->ca_data.len, CURL_BLOB_COPY};
        SETOPT(CURLOPT_CAINFO_BLOB, &b);
    } else if (cfg->ca_file) {
        SETOPT(CURLOPT_CAINFO, cfg->ca_file);
    }
    if (cfg->cert_data.data) {
        struct curl_blob b = {cfg->cert_data.data, cfg->cert_data.len, CURL_BLOB_COPY};
        SETOPT(CURLOPT_SSLCERT_BLOB, &b);
        SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
    } else if (cfg->cert_file) {
        SETOPT(CURLOPT_SSLCERT, cfg->cert_file);
        SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (cfg->key_data.data) {
        struct curl_blob b = {cfg->key_data.data, cfg->key_data.len, CURL_BLOB_COPY};
        SETOPT(CURLOPT_SSLKEY_BLOB, &b);
        SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
    } else if (cfg->key_file) {
        SETOPT(CURLOPT_SSLKEY, cfg->key_file);
        SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (cfg->connect_to)
        SETOPT(CURLOPT_CONNECT_TO, cfg->connect_to);
    /* the API server is never reached through a proxy from the environment (proxy.h): only
     * through the kubeconfig's proxy-url, when it names one */
    SETOPT(CURLOPT_PROXY, cfg->proxy_url ? cfg->proxy_url : "");
    SETOPT(CURLOPT_USERAGENT, cfg->user_agent ? cfg->user_agent : "psi-rebalancer/" PSI_VERSION);
    /* Request bodies here are small (a patch; a status of at most about 100 KB goes out in a few
     * rounds): libcurl's smallest upload buffer, 16 KiB, instead of its default 64 KiB, which it
     * allocates per transfer (0.375 MiB less with 8 taint patches in flight). */
    SETOPT(CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
    const char *token = kube_config_token(cfg, err);
    if (!token && cfg->token_file)
        return -1;
    if (token) {
        char *h;
        if (asprintf(&h, "Authorization: Bearer %s", token) < 0)
            return kube_err_set(err, 0, "Config", "out of memory");
        int rc = add_header(headers, h, err);
        memset(h, 0, strlen(h));
        free(h);
        if (rc)
            return -1;
    } else if (cfg->username) {
        SETOPT(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        SETOPT(CURLOPT_USERNAME, cfg->username);
        SETOPT(CURLOPT_PASSWORD, cfg->password ? cfg->password : "");
    }
    if (cfg->host_header && add_header(headers, cfg->host_header, err))
        return -1;
    return add_header(headers, "Accept: application/json", err);
}
