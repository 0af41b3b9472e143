/* kubeletd: the nodes' Summary API servers (see kubeletd.h). */
#include "kubeletd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cert.h"
#include "httpsd.h"
#include "jx.h"
#include "logging.h"

/* A pod of a node (strings owned). */
struct kl_pod {
    char *name, *ns, *uid;
    double cpu_cores, cpu_seconds, memory_bytes;
};

/* One node's kubelet. */
struct kl_node {
    struct kubeletd *k;
    char *name;
    struct httpsd *srv;
    bool no_psi, slow;
    /* guarded by k->mu */
    bool psi;
    struct summary_psi pressure[PSI_NRESOURCES][2];
    double cpu_cores, cpu_seconds;
    double memory_capacity, memory_working_set;
    double at; /* last update, monotonic seconds; 0: none yet */
    struct kl_pod *pods;
    size_t npods;
};

struct kubeletd {
    struct sim *s;
    char *ca_cert, *ca_key;
    char start_time[32];
    pthread_mutex_t mu;
    bool stopping;            /* guarded by mu: a slow reply stops waiting */
    struct kl_node **nodes;   /* served nodes (the loop's thread only) */
    size_t n;
    char **skipped;           /* nodes that cannot be served, logged once */
    size_t nskipped;
};

static bool listed(char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

static struct kl_node *find(const struct kubeletd *k, const char *name)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->nodes[i]->name, name) == 0)
            return k->nodes[i];
    return NULL;
}

static void free_pods(struct kl_pod *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].name);
        free(p[i].ns);
        free(p[i].uid);
    }
    free(p);
}

/* Wait ms, or less when the server stops. */
static void slow_wait(struct kubeletd *k, int64_t ms)
{
    for (int64_t waited = 0; waited < ms; waited += 100) {
        pthread_mutex_lock(&k->mu);
        bool stop = k->stopping;
        pthread_mutex_unlock(&k->mu);
        if (stop)
            return;
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* The Summary of n (k->mu held). */
static char *render(struct kl_node *n)
{
    struct summary_pod *pods = calloc(n->npods ? n->npods : 1, sizeof(*pods));
    if (!pods)
        return NULL;
    for (size_t i = 0; i < n->npods; i++)
        pods[i] = (struct summary_pod){n->pods[i].name, n->pods[i].ns, n->pods[i].uid, n->pods[i].cpu_cores,
                                       n->pods[i].cpu_seconds, n->pods[i].memory_bytes};
    char now[32];
    struct summary_node sn = {
        .name = n->name, .start_time = n->k->start_time, .time = sim_timestamp(now, sizeof(now)),
        .psi = n->psi && !n->no_psi, .cpu_cores = n->cpu_cores, .cpu_seconds = n->cpu_seconds,
        .memory_capacity = n->memory_capacity, .memory_working_set = n->memory_working_set,
        .pods = pods, .npods = n->npods,
    };
    memcpy(sn.pressure, n->pressure, sizeof(sn.pressure));
    char *text = summary_render(&sn);
    free(pods);
    return text;
}

static void handle(const char *method, const char *path, const char *body, size_t len, struct httpsd_reply *reply,
                   void *ud)
{
    (void)body;
    (void)len;
    struct kl_node *n = ud;
    struct kubeletd *k = n->k;
    if (strcmp(method, "GET") != 0) {
        reply->status = 405;
        return;
    }
    if (strcmp(path, "/healthz") == 0) {
        snprintf(reply->content_type, sizeof(reply->content_type), "text/plain");
        reply->body = strdup("ok");
        reply->len = reply->body ? 2 : 0;
        return;
    }
    if (strcmp(path, "/stats/summary") != 0 && strcmp(path, "/stats/summary/") != 0) {
        reply->status = 404;
        return;
    }
    if (n->slow)
        slow_wait(k, k->s->sc->kubelet_slow_delay_ms);
    pthread_mutex_lock(&k->mu);
    reply->body = n->at > 0 ? render(n) : NULL;
    pthread_mutex_unlock(&k->mu);
    if (!reply->body) {
        /* no tick yet: the kubelet's own answer while its stats provider warms up */
        static const char msg[] = "Internal Error: failed to get node info: the stats are not ready yet";
        snprintf(reply->content_type, sizeof(reply->content_type), "text/plain");
        reply->status = 500;
        reply->body = strdup(msg);
        reply->len = reply->body ? sizeof(msg) - 1 : 0;
        return;
    }
    reply->len = strlen(reply->body);
}

/* The node's InternalIP when on loopback, and its kubelet port; false when it has none. */
static bool endpoint(const cJSON *node, char *ip, size_t iplen, int *port)
{
    const cJSON *a;
    ip[0] = '\0';
    cJSON_ArrayForEach(a, jx_get(node, "status.addresses")) {
        struct in_addr in;
        const char *addr = jx_str0(a, "address");
        if (strcmp(jx_str0(a, "type"), "InternalIP") == 0 && inet_pton(AF_INET, addr, &in) == 1 &&
            (ntohl(in.s_addr) >> 24) == 127) {
            snprintf(ip, iplen, "%s", addr);
            break;
        }
    }
    *port = (int)jx_num(node, "status.daemonEndpoints.kubeletEndpoint.Port", 0);
    return ip[0] && *port > 0 && *port < 65536;
}

static void skip(struct kubeletd *k, const char *name, const char *why)
{
    if (listed(k->skipped, k->nskipped, name))
        return;
    char **grown = realloc(k->skipped, (k->nskipped + 1) * sizeof(*grown));
    if (!grown)
        return;
    k->skipped = grown;
    if ((k->skipped[k->nskipped] = strdup(name)) != NULL)
        k->nskipped++;
    log_warn("no kubelet for the node", "node", name, "why", why);
}

/* Start the server of node (name) at ip:port; added to k->nodes. */
static void serve(struct kubeletd *k, const char *name, const char *ip, int port)
{
    char err[512];
    const char *ips[] = {ip, NULL};
    const char *dns[] = {name, NULL};
    struct cert_bundle cb;
    struct kl_node *n = calloc(1, sizeof(*n));
    if (!n || !(n->name = strdup(name))) {
        if (n)
            free(n->name);
        free(n);
        return;
    }
    n->k = k;
    n->no_psi = listed(k->s->sc->kubelet_no_psi, k->s->sc->n_kubelet_no_psi, name);
    n->slow = listed(k->s->sc->kubelet_slow, k->s->sc->n_kubelet_slow, name);
    if (cert_issue(k->ca_cert, k->ca_key, name, ips, dns, 30, &cb, err, sizeof(err)) < 0) {
        free(n->name);
        free(n);
        skip(k, name, err);
        return;
    }
    n->srv = httpsd_start(ip, port, cb.cert_pem, cb.key_pem, handle, n, err, sizeof(err));
    cert_bundle_clear(&cb);
    struct kl_node **grown = n->srv ? realloc(k->nodes, (k->n + 1) * sizeof(*grown)) : NULL;
    if (!grown) {
        skip(k, name, n->srv ? "out of memory" : err);
        httpsd_free(n->srv);
        free(n->name);
        free(n);
        return;
    }
    k->nodes = grown;
    pthread_mutex_lock(&k->mu);
    k->nodes[k->n++] = n;
    pthread_mutex_unlock(&k->mu);
    char p[16];
    snprintf(p, sizeof(p), "%d", port);
    log_info("kubelet serving", "node", name, "address", ip, "port", p, "psi", n->no_psi ? "off" : "on",
             "slow", n->slow ? "yes" : "no");
}

static int sync_node(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)rv;
    struct kubeletd *k = ud;
    if (find(k, key) || listed(k->skipped, k->nskipped, key))
        return 0;
    char ip[64];
    int port;
    if (!endpoint(obj, ip, sizeof(ip), &port)) {
        skip(k, key, "no InternalIP in 127.0.0.0/8 with status.daemonEndpoints.kubeletEndpoint.Port");
        return 0;
    }
    serve(k, key, ip, port);
    return 0;
}

void kubeletd_sync(struct kubeletd *k)
{
    kube_informer_foreach(k->s->nodes, sync_node, k);
}

void kubeletd_update(struct kubeletd *k, const char *node, const struct kubeletd_update *u, double now)
{
    pthread_mutex_lock(&k->mu);
    struct kl_node *n = find(k, node);
    if (n) {
        double dt = n->at > 0 ? now - n->at : 0;
        for (int r = 0; r < PSI_NRESOURCES; r++)
            for (int kind = 0; kind < 2; kind++)
                summary_psi_advance(&n->pressure[r][kind], u->pressure[r][kind], dt);
        n->cpu_seconds += n->cpu_cores * dt;
        n->cpu_cores = u->cpu_cores;
        n->psi = u->psi;
        n->memory_capacity = u->memory_capacity;
        n->memory_working_set = u->memory_working_set;
        n->at = now;
    }
    pthread_mutex_unlock(&k->mu);
}

void kubeletd_set_pods(struct kubeletd *k, const char *node, const struct summary_pod *pods, size_t np)
{
    struct kl_pod *copy = calloc(np ? np : 1, sizeof(*copy));
    if (!copy)
        return;
    for (size_t i = 0; i < np; i++) {
        copy[i] = (struct kl_pod){strdup(pods[i].name), strdup(pods[i].ns), strdup(pods[i].uid), pods[i].cpu_cores,
                                  pods[i].cpu_seconds, pods[i].memory_bytes};
        if (!copy[i].name || !copy[i].ns || !copy[i].uid) {
            free_pods(copy, i + 1);
            return;
        }
    }
    pthread_mutex_lock(&k->mu);
    struct kl_node *n = find(k, node);
    if (n) {
        struct kl_pod *old = n->pods;
        size_t nold = n->npods;
        n->pods = copy;
        n->npods = np;
        copy = old;
        np = nold;
    }
    pthread_mutex_unlock(&k->mu);
    free_pods(copy, np);
}

size_t kubeletd_count(const struct kubeletd *k)
{
    return k ? k->n : 0;
}

struct kubeletd *kubeletd_new(struct sim *s, const char *ca_cert, const char *ca_key)
{
    struct kubeletd *k = calloc(1, sizeof(*k));
    if (!k)
        return NULL;
    k->s = s;
    k->ca_cert = strdup(ca_cert);
    k->ca_key = strdup(ca_key);
    pthread_mutex_init(&k->mu, NULL);
    sim_timestamp(k->start_time, sizeof(k->start_time));
    if (!k->ca_cert || !k->ca_key) {
        kubeletd_free(k);
        return NULL;
    }
    return k;
}

void kubeletd_free(struct kubeletd *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stopping = true;
    pthread_mutex_unlock(&k->mu);
    for (size_t i = 0; i < k->n; i++) {
        httpsd_free(k->nodes[i]->srv);
        free_pods(k->nodes[i]->pods, k->nodes[i]->npods);
        free(k->nodes[i]->name);
        free(k->nodes[i]);
    }
    free(k->nodes);
    for (size_t i = 0; i < k->nskipped; i++)
        free(k->skipped[i]);
    free(k->skipped);
    free(k->ca_cert);
    free(k->ca_key);
    pthread_mutex_destroy(&k->mu);
    free(k);
}
