/* proxy: which connections go through an HTTP proxy from the environment (HTTPS_PROXY,
 * HTTP_PROXY, NO_PROXY, as OLM injects a cluster-wide proxy into the Deployment).
 *
 * libcurl reads those variables itself, but the UBI 9 libcurl (7.76) does not understand
 * CIDR entries in NO_PROXY (7.86+ does), which is how a cluster proxy lists the service and
 * pod networks: calls to in-cluster IP addresses would go to the proxy. So:
 *   - the API server is never reached through an environment proxy (kube_config_prepare
 *     sets CURLOPT_PROXY to "" unless the kubeconfig names a proxy-url);
 *   - another URL (Prometheus) goes directly when its host is in-cluster (a name ending in
 *     .svc, .svc.cluster.local or .cluster.local) or matches NO_PROXY as this module reads
 *     it (CIDR entries included); else libcurl applies the environment's proxy as usual.
 * Pure apart from kube_proxy_apply, which reads the environment. */
#ifndef PSI_KUBE_PROXY_H
#define PSI_KUBE_PROXY_H

#include <stdbool.h>

#include <curl/curl.h>

#include "base/err.h"

/* Whether host (a name, an IPv4 address, or an IPv6 address with or without brackets)
 * matches the NO_PROXY list no_proxy (NULL: none): comma- or space-separated entries, each
 * "*" (everything), an IP address, an IPv4 or IPv6 CIDR block ("10.0.0.0/8"), or a domain
 * that matches itself and its subdomains (a leading dot is ignored); case-insensitive. */
bool kube_proxy_bypass(const char *no_proxy, const char *host);

/* Whether host is a cluster-internal name (ends in .svc, .svc.cluster.local or .cluster.local). */
bool kube_proxy_in_cluster_host(const char *host);

/* For a connection to url on easy: no proxy (CURLOPT_PROXY "") when its host is in-cluster
 * or NO_PROXY/no_proxy from the environment bypasses it; otherwise leaves libcurl's
 * environment proxy handling as it is. Returns 0, or -1 with err (url unparsable). */
int kube_proxy_apply(CURL *easy, const char *url, struct kube_err *err);

#endif
