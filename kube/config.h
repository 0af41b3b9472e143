/* kube_config: where the API server is and how to talk to it (kubeconfig or in-cluster).
 *
 * Lookup order of kube_config_load (as controller-runtime does):
 *   1. the explicit path (the --kubeconfig flag);
 *   2. $KUBECONFIG, a colon-separated list: the files that exist are merged as client-go
 *      does (the first file to define a cluster/user/context name wins, the first
 *      non-empty current-context wins); it is an error when none of them exists;
 *   3. in-cluster: KUBERNETES_SERVICE_HOST/_PORT and the service-account directory
 *      (/var/run/secrets/kubernetes.io/serviceaccount, or $PSI_SERVICEACCOUNT_DIR);
 *   4. ~/.kube/config.
 * TLS verification is never turned off implicitly: only `insecure-skip-tls-verify: true`
 * in the kubeconfig does it. Not thread-safe: the token re-read in kube_config_prepare
 * updates the config, so use one config from one thread (or lock around prepare). */
#ifndef PSI_KUBE_CONFIG_H
#define PSI_KUBE_CONFIG_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <curl/curl.h>

#include "base/err.h"

/* Default service-account directory of an in-cluster pod. */
#define KUBE_SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* A byte buffer (decoded -data field); data is NUL-terminated for convenience. */
struct kube_blob {
    unsigned char *data;
    size_t len;
};

/* A resolved configuration. All strings are owned by the struct (NULL when absent). */
struct kube_config {
    char *source;       /* file the config came from ("a:b" when merged), or "in-cluster" */
    char *context;      /* context name used; NULL in-cluster */
    char *cluster_name; /* cluster entry name; NULL in-cluster */
    char *user_name;    /* user entry name; NULL in-cluster */
    char *namespace;    /* the context's namespace or the in-cluster namespace file; NULL if none */

    char *server;                  /* base URL as configured, no trailing slash */
    char *effective_server;        /* base URL requests use (host replaced by tls-server-name, if set) */
    char *tls_server_name;         /* name to verify the server certificate against (and send as SNI) */
    struct curl_slist *connect_to; /* CURLOPT_CONNECT_TO list mapping tls-server-name to the real host */
    char *host_header;             /* "Host: <original host[:port]>" when tls-server-name is set */
    int insecure;                  /* 1 only when insecure-skip-tls-verify is explicitly true */
    char *proxy_url;               /* cluster.proxy-url */
    const char *user_agent;        /* User-Agent (borrowed, set by the program); NULL: psi-rebalancer/<version> */

    char *ca_file;              /* certificate-authority */
    struct kube_blob ca_data;   /* certificate-authority-data, decoded */
    char *cert_file;            /* client-certificate */
    struct kube_blob cert_data; /* client-certificate-data, decoded */
    char *key_file;             /* client-key */
    struct kube_blob key_data;  /* client-key-data, decoded */

    char *token;      /* static bearer token (user.token) */
    char *token_file; /* user.tokenFile or the in-cluster token file; re-read on change */
    char *username;   /* basic auth, rarely used */
    char *password;

    /* token_file cache: the token read last, and the file's identity then */
    char *file_token;
    struct timespec token_mtime;
    off_t token_size;
    ino_t token_ino;
};

/* Load the configuration by the lookup order above. context (may be NULL) overrides
 * current-context. On success *out is a new config the caller frees with kube_config_free. */
int kube_config_load(const char *kubeconfig_path, const char *context, struct kube_config **out, struct kube_err *err);

/* Load one kubeconfig file, or a colon-separated list merged as for $KUBECONFIG. */
int kube_config_load_file(const char *paths, const char *context, struct kube_config **out, struct kube_err *err);

/* Load the in-cluster config from the environment and service-account directory sa_dir
 * (NULL: $PSI_SERVICEACCOUNT_DIR, else KUBE_SERVICEACCOUNT_DIR). */
int kube_config_in_cluster(const char *sa_dir, struct kube_config **out, struct kube_err *err);

/* The service-account directory of this process: $PSI_SERVICEACCOUNT_DIR when set and not
 * empty, else KUBE_SERVICEACCOUNT_DIR. */
const char *kube_config_serviceaccount_dir(void);

/* Free a config (NULL is fine). */
void kube_config_free(struct kube_config *cfg);

/* Set on easy everything that does not depend on the request: TLS material, the proxy
 * (proxy_url, or none: never one from the environment, see proxy.h), the Authorization header (token file re-read when
 * its mtime/size/inode changed), User-Agent (user_agent, or psi-rebalancer/<PSI_VERSION>) and Accept: application/json,
 * appended to *headers (the caller sets CURLOPT_HTTPHEADER after adding its own and frees with curl_slist_free_all). */
int kube_config_prepare(struct kube_config *cfg, CURL *easy, struct curl_slist **headers, struct kube_err *err);

/* The base URL to prefix API paths with (no trailing slash); owned by cfg. */
const char *kube_config_server(const struct kube_config *cfg);

/* The current bearer token (re-reading the token file when it changed), or NULL when the
 * config has no token; owned by cfg, valid until the next call. */
const char *kube_config_token(struct kube_config *cfg, struct kube_err *err);

#endif
