/* proxy: direct or proxied connections (see proxy.h). */
#include "kube/proxy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* host without brackets into buf; false when it does not fit. */
static bool unbracket(const char *host, char *buf, size_t len)
{
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
        host++;
        n -= 2;
    }
    if (n >= len)
        return false;
    memcpy(buf, host, n);
    buf[n] = '\0';
    return true;
}

/* Parse an address: family and 16 bytes (IPv4 in the first 4). */
static int parse_ip(const char *s, unsigned char out[16])
{
    memset(out, 0, 16);
    if (inet_pton(AF_INET, s, out) == 1)
        return AF_INET;
    if (inet_pton(AF_INET6, s, out) == 1)
        return AF_INET6;
    return 0;
}

static bool prefix_equal(const unsigned char *a, const unsigned char *b, long bits)
{
    long full = bits / 8, rest = bits % 8;
    if (memcmp(a, b, (size_t)full) != 0)
        return false;
    if (rest == 0)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (a[full] & mask) == (b[full] & mask);
}

/* Whether one NO_PROXY entry (NUL-terminated, trimmed, non-empty) matches host. */
static bool entry_matches(char *entry, const char *host, int host_family, const unsigned char host_ip[16])
{
    if (strcmp(entry, "*") == 0)
        return true;
    char *slash = strchr(entry, '/');
    if (slash) {
        *slash = '\0';
        char *end = NULL;
        long bits = strtol(slash + 1, &end, 10);
        unsigned char net[16];
        int fam = parse_ip(entry, net);
        long max = fam == AF_INET ? 32 : 128;
        if (!fam || fam != host_family || !end || *end || end == slash + 1 || bits < 0 || bits > max)
            return false;
        return prefix_equal(net, host_ip, bits);
    }
    unsigned char ip[16];
    char bare[64];
    int fam = unbracket(entry, bare, sizeof(bare)) ? parse_ip(bare, ip) : 0;
    if (fam)
        return fam == host_family && memcmp(ip, host_ip, 16) == 0;
    if (host_family)
        return false;
    const char *dom = entry[0] == '.' ? entry + 1 : entry;
    size_t dl = strlen(dom), hl = strlen(host);
    if (dl == 0 || dl > hl)
        return false;
    if (strcasecmp(host + hl - dl, dom) != 0)
        return false;
    return dl == hl || host[hl - dl - 1] == '.';
}

bool kube_proxy_bypass(const char *no_proxy, const char *host)
{
    char h[256];
    if (!no_proxy || !host || !unbracket(host, h, sizeof(h)) || !*h)
        return false;
    size_t hl = strlen(h);
    if (hl > 1 && h[hl - 1] == '.')
        h[hl - 1] = '\0';
    unsigned char ip[16];
    int fam = parse_ip(h, ip);
    char *list = strdup(no_proxy);
    if (!list)
        return false;
    bool hit = false;
    char *p = list;
    while (!hit && *p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        char *start = p;
        while (*p && *p != ',' && !isspace((unsigned char)*p))
            p++;
        if (*p)
            *p++ = '\0';
        if (*start)
            hit = entry_matches(start, h, fam, ip);
    }
    free(list);
    return hit;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcasecmp(s + n - m, suffix) == 0;
}

bool kube_proxy_in_cluster_host(const char *host)
{
    if (!host)
        return false;
    char h[256];
    if (!unbracket(host, h, sizeof(h)))
        return false;
    size_t n = strlen(h);
    if (n > 1 && h[n - 1] == '.')
        h[n - 1] = '\0';
    return ends_with(h, ".svc") || ends_with(h, ".svc.cluster.local") || ends_with(h, ".cluster.local");
}

int kube_proxy_apply(CURL *easy, const char *url, struct kube_err *err)
{
    CURLU *u = curl_url();
    char *host = NULL;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        curl_url_cleanup(u);
        return kube_err_set(err, 0, "Config", "cannot read the host of the URL %s", url);
    }
    const char *no_proxy = getenv("NO_PROXY");
    if (!no_proxy || !*no_proxy)
        no_proxy = getenv("no_proxy");
    bool direct = kube_proxy_in_cluster_host(host) || kube_proxy_bypass(no_proxy, host);
    curl_free(host);
    curl_url_cleanup(u);
    if (direct && curl_easy_setopt(easy, CURLOPT_PROXY, "") != CURLE_OK)
        return kube_err_set(err, 0, "Config", "cannot turn the proxy off for %s", url);
    return 0;
}
