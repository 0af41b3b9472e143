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

#include "base/grow.h"
#include "base/jx.h"
#include "httpd/cert.h"
#include "httpd/serve.h"
#include "httpd/tls.h"
#include "base/logging.h"
#include "base/util.h"

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
    struct psi_tls *tls; /* its serving certificate, and the bed's CA for clients */
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

/* A tunnel whose CONNECT is being read; its socket goes to the server once answered. */
struct tunnel {
    struct kubeletd *k;
    int fd; /* -1 once the server took it */
    pthread_t thread;
    bool done; /* the thread has finished: join and free (guarded by k->mu) */
    struct tunnel *next;
};

/* How long past its delay a slow kubelet's request may stay parked: the server answers 503
 * after that (psi_serve_limits.later_timeout_ms), so a record still kept then names a request
 * that is gone (its client left, or it timed out). */
#define SLOW_GRACE_MS 10000

/* A slow kubelet's request, parked until due. */
struct slow_reply {
    unsigned long long ticket;
    int64_t due;  /* base_mono_ms */
    bool resumed; /* psi_serve_resume was called: answer when the handler runs again */
};

struct kubeletd {
    struct sim *s;
    struct psi_serve *srv; /* every node's kubelet: listens nowhere, takes the tunnels */
    char *ca_cert, *ca_key, *path;
    char start_time[32];
    int listen_fd;
    int wake[2]; /* a pipe that ends the accept loop */
    pthread_t accept_thread;
    bool accepting;
    pthread_mutex_t mu; /* guards what follows, and every node's numbers */
    bool stopping;      /* the accept loop ends */
    struct tunnel *tunnels;
    struct slow_reply *slow; /* requests parked by the slow kubelets */
    size_t nslow, slow_cap;
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

/* Whether the slow kubelet's request with this ticket may be answered now; false: it is
 * parked (or already due to be resumed) until the delay has passed (k->mu held). */
static bool slow_done(struct kubeletd *k, unsigned long long ticket)
{
    for (size_t i = 0; i < k->nslow; i++)
        if (k->slow[i].ticket == ticket) {
            if (!k->slow[i].resumed)
                return false;
            k->slow[i] = k->slow[--k->nslow];
            return true;
        }
    if (BASE_GROW(k->slow, k->nslow + 1, k->slow_cap) < 0)
        return true; /* out of memory: answer at once rather than never */
    k->slow[k->nslow++] = (struct slow_reply){ticket, base_mono_ms() + k->s->sc->kubelet_slow_delay_ms, false};
    return false;
}

/* Resume the slow kubelets' requests that are due, and forget those that are gone. */
static void resume_due(struct kubeletd *k)
{
    int64_t now = base_mono_ms();
    pthread_mutex_lock(&k->mu);
    for (size_t i = 0; i < k->nslow;) {
        struct slow_reply *r = &k->slow[i];
        if (now > r->due + SLOW_GRACE_MS) {
            *r = k->slow[--k->nslow];
            continue;
        }
        if (!r->resumed && now >= r->due) {
            r->resumed = true;
            psi_serve_resume(k->srv, r->ticket);
        }
        i++;
    }
    pthread_mutex_unlock(&k->mu);
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

static void on_healthz(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    (void)req, (void)ud;
    psi_serve_reply_text(reply, 200, "text/plain", "ok");
}

static void on_summary(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    struct kubeletd *k = ud;
    struct kl_node *n = req->conn_ud;
    pthread_mutex_lock(&k->mu);
    bool later = n->slow && !slow_done(k, req->ticket);
    reply->body = !later && n->at > 0 ? render(n) : NULL;
    pthread_mutex_unlock(&k->mu);
    if (later) {
        reply->status = PSI_SERVE_LATER;
        return;
    }
    if (!reply->body) {
        /* no tick yet: the kubelet's own answer while its stats provider warms up */
        psi_serve_reply_text(reply, 500, "text/plain",
                             "Internal Error: failed to get node info: the stats are not ready yet");
        return;
    }
    snprintf(reply->content_type, sizeof(reply->content_type), "application/json");
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
        /* the API server must present a client certificate the bed's CA signed */
        const struct psi_tls_options to = {.cert_pem = cb.cert_pem, .key_pem = cb.key_pem, .client_ca = k->ca_cert};
        n->tls = psi_tls_new(&to, err, sizeof(err));
        cert_bundle_clear(&cb);
    }
    pthread_mutex_lock(&k->mu);
    bool added = n->tls && BASE_GROW(k->nodes, k->n + 1, k->nodes_cap) == 0;
    if (added)
        k->nodes[k->n++] = n;
    pthread_mutex_unlock(&k->mu);
    if (!added) {
        skip(k, name, n->tls ? "out of memory" : err);
        psi_tls_free(n->tls);
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
    resume_due(k);
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
        else if (send_text(t->fd, "HTTP/1.1 200 Connection established\r\n\r\n") == 0) {
            pthread_mutex_lock(&k->mu);
            psi_serve_adopt(k->srv, t->fd, n->tls, n); /* the server's now, closed on failure too */
            t->fd = -1;
            pthread_mutex_unlock(&k->mu);
        }
    }
    pthread_mutex_lock(&k->mu);
    if (t->fd >= 0)
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
            if (t->fd >= 0)
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
    /* a slow kubelet's request stays parked for its delay */
    const struct psi_serve_limits lim = {.later_timeout_ms = (int)s->sc->kubelet_slow_delay_ms + SLOW_GRACE_MS};
    if (!(k->srv = psi_serve_new(NULL, err, errlen))) {
        kubeletd_free(k);
        return NULL;
    }
    if (psi_serve_set_limits(k->srv, &lim) < 0 || psi_serve_route(k->srv, "GET", "/healthz", on_healthz, k) < 0 ||
        psi_serve_route(k->srv, "GET", "/stats/summary", on_summary, k) < 0 ||
        psi_serve_route(k->srv, "GET", "/stats/summary/", on_summary, k) < 0) {
        snprintf(err, errlen, "setting up the kubelets' server: out of memory");
        kubeletd_free(k);
        return NULL;
    }
    if (psi_serve_start(k->srv, err, errlen) < 0) {
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
        if (t->fd >= 0)
            shutdown(t->fd, SHUT_RDWR);
    pthread_mutex_unlock(&k->mu);
    while (k->tunnels) {
        struct tunnel *t = k->tunnels;
        k->tunnels = t->next;
        pthread_join(t->thread, NULL);
        if (t->fd >= 0)
            close(t->fd);
        free(t);
    }
    psi_serve_free(k->srv); /* before the nodes its connections name */
    free(k->slow);
    for (size_t i = 0; i < k->n; i++) {
        psi_tls_free(k->nodes[i]->tls);
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
