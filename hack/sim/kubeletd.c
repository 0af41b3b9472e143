/* kubeletd: the nodes' Summary API servers (see kubeletd.h). */
#include "hack/sim/kubeletd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "base/grow.h"
#include "base/jx.h"
#include "hack/sim/cert.h"
#include "hack/sim/httpsd.h"
#include "base/logging.h"

/* A pod of a node (strings owned). */
struct kl_pod {
    char *name, *ns, *uid;
    double cpu_cores, cpu_seconds, memory_bytes;
    struct summary_psi pressure[2][2]; /* as summary_pod's */
};

/* One node's kubelet. */
struct kl_node {
    struct kubeletd *k;
    char *name;
    char ip[64]; /* its InternalIP and kubelet port: the CONNECT target */
    int port;
    SSL_CTX *ctx; /* its serving certificate */
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

/* A tunnel being served. */
struct tunnel {
    struct kubeletd *k;
    int fd;
    pthread_t thread;
    bool done; /* the thread has finished: join and free (guarded by k->mu) */
    struct tunnel *next;
};

struct kubeletd {
    struct sim *s;
    char *ca_cert, *ca_key, *path;
    char start_time[32];
    int listen_fd;
    int wake[2]; /* a pipe that ends the accept loop */
    pthread_t accept_thread;
    bool accepting;
    pthread_mutex_t mu; /* guards what follows, and every node's numbers */
    bool stopping;      /* a slow reply stops waiting */
    struct tunnel *tunnels;
    struct kl_node **nodes; /* served nodes; appended by the loop's thread only */
    size_t n, nodes_cap;
    char **skipped; /* nodes that cannot be served, logged once (loop's thread) */
    size_t nskipped, skipped_cap;
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
    for (size_t i = 0; i < n->npods; i++) {
        const struct kl_pod *kp = &n->pods[i];
        pods[i] = (struct summary_pod){.name = kp->name,
                                       .ns = kp->ns,
                                       .uid = kp->uid,
                                       .cpu_cores = kp->cpu_cores,
                                       .cpu_seconds = kp->cpu_seconds,
                                       .memory_bytes = kp->memory_bytes};
        memcpy(pods[i].pressure, kp->pressure, sizeof(pods[i].pressure));
    }
    char now[32];
    struct summary_node sn = {
        .name = n->name,
        .start_time = n->k->start_time,
        .time = sim_timestamp(now, sizeof(now)),
        .psi = n->psi && !n->no_psi,
        .pod_psi = n->k->s->sc->kubelet_pod_psi,
        .cpu_cores = n->cpu_cores,
        .cpu_seconds = n->cpu_seconds,
        .memory_capacity = n->memory_capacity,
        .memory_working_set = n->memory_working_set,
        .pods = pods,
        .npods = n->npods,
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

/* The node's InternalIP and kubelet port; false when it has either not. */
static bool endpoint(const cJSON *node, char *ip, size_t iplen, int *port)
{
    const cJSON *a;
    ip[0] = '\0';
    cJSON_ArrayForEach (a, jx_get(node, "status.addresses")) {
        if (strcmp(jx_str0(a, "type"), "InternalIP") == 0) {
            snprintf(ip, iplen, "%s", jx_str0(a, "address"));
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
    if (BASE_GROW(k->skipped, k->nskipped + 1, k->skipped_cap) < 0)
        return;
    if ((k->skipped[k->nskipped] = strdup(name)) != NULL)
        k->nskipped++;
    log_warn("no kubelet for the node", "node", name, "why", why);
}

/* Serve node (name) for CONNECTs to ip:port; added to k->nodes. */
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
    snprintf(n->ip, sizeof(n->ip), "%s", ip);
    n->port = port;
    n->no_psi = listed(k->s->sc->kubelet_no_psi, k->s->sc->n_kubelet_no_psi, name);
    n->slow = listed(k->s->sc->kubelet_slow, k->s->sc->n_kubelet_slow, name);
    const struct cert_request req = {k->ca_cert, k->ca_key, name, ips, dns, 30};
    if (cert_issue(&req, &cb, err, sizeof(err)) == 0) {
        n->ctx = httpsd_ctx_new(cb.cert_pem, cb.key_pem, err, sizeof(err));
        cert_bundle_clear(&cb);
    }
    /* the API server must present a client certificate the bed's CA signed */
    if (n->ctx && SSL_CTX_load_verify_locations(n->ctx, k->ca_cert, NULL) != 1) {
        snprintf(err, sizeof(err), "loading the client CA %s failed", k->ca_cert);
        SSL_CTX_free(n->ctx);
        n->ctx = NULL;
    }
    if (n->ctx)
        SSL_CTX_set_verify(n->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    pthread_mutex_lock(&k->mu);
    bool added = n->ctx && BASE_GROW(k->nodes, k->n + 1, k->nodes_cap) == 0;
    if (added)
        k->nodes[k->n++] = n;
    pthread_mutex_unlock(&k->mu);
    if (!added) {
        skip(k, name, n->ctx ? "out of memory" : err);
        SSL_CTX_free(n->ctx);
        free(n->name);
        free(n);
        return;
    }
    char p[16];
    snprintf(p, sizeof(p), "%d", port);
    log_info("kubelet serving", "node", name, "address", ip, "port", p, "psi", n->no_psi ? "off" : "on", "slow",
             n->slow ? "yes" : "no");
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
        skip(k, key, "no InternalIP and status.daemonEndpoints.kubeletEndpoint.Port");
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
        copy[i] = (struct kl_pod){.name = strdup(pods[i].name),
                                  .ns = strdup(pods[i].ns),
                                  .uid = strdup(pods[i].uid),
                                  .cpu_cores = pods[i].cpu_cores,
                                  .cpu_seconds = pods[i].cpu_seconds,
                                  .memory_bytes = pods[i].memory_bytes};
        memcpy(copy[i].pressure, pods[i].pressure, sizeof(copy[i].pressure));
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

/* ---- the CONNECT tunnels ---- */

/* The node served at host:port, or NULL. */
static struct kl_node *node_at(struct kubeletd *k, const char *hostport)
{
    const char *colon = strrchr(hostport, ':');
    if (!colon)
        return NULL;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1)
        return NULL;
    struct kl_node *found = NULL;
    pthread_mutex_lock(&k->mu);
    for (size_t i = 0; i < k->n && !found; i++)
        if (k->nodes[i]->port == port && strlen(k->nodes[i]->ip) == (size_t)(colon - hostport) &&
            strncmp(k->nodes[i]->ip, hostport, (size_t)(colon - hostport)) == 0)
            found = k->nodes[i];
    pthread_mutex_unlock(&k->mu);
    return found;
}

static int send_text(int fd, const char *s)
{
    size_t len = strlen(s);
    while (len > 0) {
        ssize_t w = send(fd, s, len, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        s += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Read the CONNECT request head; its target into hostport. Returns 0 or -1 (answered). */
static int read_connect(int fd, char *hostport, size_t len)
{
    char buf[4096];
    size_t have = 0;
    while (have < sizeof(buf) - 1) {
        ssize_t r = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
        if (r <= 0)
            return -1;
        have += (size_t)r;
        buf[have] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            break;
    }
    char method[16] = "", target[300] = "", version[16] = "";
    if (!strstr(buf, "\r\n\r\n") || sscanf(buf, "%15s %299s %15s", method, target, version) != 3 ||
        strcmp(method, "CONNECT") != 0 || strncmp(version, "HTTP/1.", 7) != 0) {
        send_text(fd, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
        return -1;
    }
    snprintf(hostport, len, "%s", target);
    return 0;
}

static void *tunnel_main(void *arg)
{
    struct tunnel *t = arg;
    struct kubeletd *k = t->k;
    struct timeval tv = {10, 0};
    setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char hostport[300];
    if (read_connect(t->fd, hostport, sizeof(hostport)) == 0) {
        struct kl_node *n = node_at(k, hostport);
        if (!n)
            send_text(t->fd, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        else if (send_text(t->fd, "HTTP/1.1 200 Connection established\r\n\r\n") == 0)
            httpsd_serve_fd(n->ctx, t->fd, handle, n);
    }
    pthread_mutex_lock(&k->mu);
    shutdown(t->fd, SHUT_RDWR);
    t->done = true;
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* Join and free finished tunnels (mu held). */
static void reap(struct kubeletd *k)
{
    struct tunnel **pp = &k->tunnels;
    while (*pp) {
        struct tunnel *t = *pp;
        if (t->done) {
            pthread_join(t->thread, NULL);
            close(t->fd);
            *pp = t->next;
            free(t);
        } else {
            pp = &t->next;
        }
    }
}

static void *accept_main(void *arg)
{
    struct kubeletd *k = arg;
    for (;;) {
        struct pollfd p[2] = {{k->listen_fd, POLLIN, 0}, {k->wake[0], POLLIN, 0}};
        if (poll(p, 2, 5000) < 0 && errno != EINTR)
            break;
        pthread_mutex_lock(&k->mu);
        reap(k);
        bool stop = k->stopping;
        pthread_mutex_unlock(&k->mu);
        if (stop || (p[1].revents & POLLIN))
            break;
        if (!(p[0].revents & POLLIN))
            continue;
        int fd = accept4(k->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        struct tunnel *t = fd >= 0 ? calloc(1, sizeof(*t)) : NULL;
        if (!t) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        t->k = k;
        t->fd = fd;
        pthread_mutex_lock(&k->mu);
        if (pthread_create(&t->thread, NULL, tunnel_main, t) != 0) {
            close(fd);
            free(t);
        } else {
            t->next = k->tunnels;
            k->tunnels = t;
        }
        pthread_mutex_unlock(&k->mu);
    }
    return NULL;
}

/* Listen on the Unix socket path, replacing a stale socket file (nobody accepts on it). */
static int listen_unix(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path)) {
        snprintf(err, errlen, "the socket path %s is longer than %zu bytes", path, sizeof(a.sun_path) - 1);
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == EADDRINUSE) {
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0;
        if (probe >= 0)
            close(probe);
        if (live) {
            snprintf(err, errlen, "%s: another process serves the kubelets already", path);
            close(fd);
            return -1;
        }
        unlink(path);
        close(fd);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0 || listen(fd, 128) < 0) {
        snprintf(err, errlen, "listening on %s failed: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

struct kubeletd *kubeletd_new(struct sim *s, const char *path, const char *ca_cert, const char *ca_key, char *err,
                              size_t errlen)
{
    struct kubeletd *k = calloc(1, sizeof(*k));
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    k->s = s;
    k->listen_fd = -1;
    k->wake[0] = k->wake[1] = -1;
    pthread_mutex_init(&k->mu, NULL);
    sim_timestamp(k->start_time, sizeof(k->start_time));
    k->ca_cert = strdup(ca_cert);
    k->ca_key = strdup(ca_key);
    k->path = strdup(path);
    if (!k->ca_cert || !k->ca_key || !k->path) {
        snprintf(err, errlen, "out of memory");
        kubeletd_free(k);
        return NULL;
    }
    if ((k->listen_fd = listen_unix(path, err, errlen)) < 0) {
        kubeletd_free(k);
        return NULL;
    }
    if (pipe2(k->wake, O_CLOEXEC) < 0 || pthread_create(&k->accept_thread, NULL, accept_main, k) != 0) {
        snprintf(err, errlen, "starting the kubelets' thread failed: %s", strerror(errno));
        kubeletd_free(k);
        return NULL;
    }
    k->accepting = true;
    return k;
}

void kubeletd_free(struct kubeletd *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stopping = true;
    pthread_mutex_unlock(&k->mu);
    if (k->accepting) {
        ssize_t w = write(k->wake[1], "x", 1);
        (void)w;
        pthread_join(k->accept_thread, NULL);
    }
    if (k->listen_fd >= 0) {
        close(k->listen_fd);
        unlink(k->path);
    }
    /* unblock every tunnel, then join them all */
    pthread_mutex_lock(&k->mu);
    for (struct tunnel *t = k->tunnels; t; t = t->next)
        shutdown(t->fd, SHUT_RDWR);
    pthread_mutex_unlock(&k->mu);
    while (k->tunnels) {
        struct tunnel *t = k->tunnels;
        k->tunnels = t->next;
        pthread_join(t->thread, NULL);
        close(t->fd);
        free(t);
    }
    for (size_t i = 0; i < k->n; i++) {
        SSL_CTX_free(k->nodes[i]->ctx);
        free_pods(k->nodes[i]->pods, k->nodes[i]->npods);
        free(k->nodes[i]->name);
        free(k->nodes[i]);
    }
    free(k->nodes);
    for (size_t i = 0; i < k->nskipped; i++)
        free(k->skipped[i]);
    free(k->skipped);
    if (k->wake[0] >= 0) {
        close(k->wake[0]);
        close(k->wake[1]);
    }
    free(k->ca_cert);
    free(k->ca_key);
    free(k->path);
    pthread_mutex_destroy(&k->mu);
    free(k);
}
