#include "election.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/config.h"
#include "kube/lease.h"
#include "kube/rest.h"
#include "base/logging.h"

struct election {
    struct kube_config *cfg;
    struct kube_client *client;
    struct kube_lease *lease;
    struct kube_loop *loop;
    char name[256];
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    atomic_bool leading, lost;
};

static void free_parts(struct election *e)
{
    kube_lease_free(e->lease);
    kube_client_free(e->client);
    kube_config_free(e->cfg);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

/* Wait until delay_ms passed or a stop was asked; true when asked to stop. */
static bool wait_or_stop(struct election *e, int64_t delay_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += delay_ms / 1000;
    until.tv_nsec += (delay_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&e->mu);
    while (!e->stop && pthread_cond_timedwait(&e->cv, &e->mu, &until) != ETIMEDOUT)
        ;
    bool stop = e->stop;
    pthread_mutex_unlock(&e->mu);
    return stop;
}

/* The loop is stuck while we lead: release the Lease rather than renew it, and stop. */
static void give_up(struct election *e, uint64_t stalled_ms)
{
    char secs[32];
    snprintf(secs, sizeof(secs), "%llu", (unsigned long long)(stalled_ms / 1000));
    log_error("event loop stuck: giving up the lease so that another replica works", "lease", e->name,
              "stalled_seconds", secs);
    struct kube_err err;
    if (kube_lease_release(e->lease, &err) < 0)
        log_warn("lease not released", "lease", e->name, "error", err.msg);
    atomic_store(&e->leading, false);
    atomic_store(&e->lost, true);
    kube_loop_stop(e->loop);
}

static void *run(void *arg)
{
    struct election *e = arg;
    for (;;) {
        struct kube_err err = {0};
        int64_t now = (int64_t)kube_loop_now_ms(), next = now;
        uint64_t beat = kube_loop_last_beat_ms(e->loop);
        if (atomic_load(&e->leading) && kube_loop_stalled((uint64_t)now, beat, ELECTION_LOOP_STALL_MS)) {
            give_up(e, (uint64_t)now - beat);
            return NULL;
        }
        enum kube_lease_state st = kube_lease_tick(e->lease, now, &next, &err);
        if (err.msg[0])
            log_warn("leader election", "lease", e->name, "error", err.msg);
        if (st == KUBE_LEASE_LEADER && !atomic_load(&e->leading)) {
            atomic_store(&e->leading, true);
            log_info("became leader", "lease", e->name);
        } else if (st == KUBE_LEASE_LOST) {
            atomic_store(&e->leading, false);
            atomic_store(&e->lost, true);
            log_error("leadership lost: stopping so that the new leader works alone", "lease", e->name, "holder",
                      kube_lease_holder(e->lease));
            kube_loop_stop(e->loop);
            return NULL;
        }
        if (wait_or_stop(e, next > now ? next - now : 0))
            return NULL;
    }
}

struct election *election_start(const char *kubeconfig, const char *context, const char *ns, const char *name,
                                const char *identity, struct kube_loop *loop, struct kube_err *err)
{
    struct election *e = calloc(1, sizeof(*e));
    if (!e) {
        kube_err_set(err, 0, "NoMemory", "out of memory");
        return NULL;
    }
    pthread_mutex_init(&e->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &ca);
    pthread_condattr_destroy(&ca);
    e->loop = loop;
    snprintf(e->name, sizeof(e->name), "%s/%s", ns, name);
    if (kube_config_load(kubeconfig, context, &e->cfg, err) < 0 || !(e->client = kube_client_new(e->cfg, err)) ||
        !(e->lease = kube_lease_new(e->client, ns, name, identity, NULL, err))) {
        free_parts(e);
        return NULL;
    }
    if (pthread_create(&e->thread, NULL, run, e) != 0) {
        kube_err_set(err, 0, "Thread", "cannot start the leader election thread: %s", strerror(errno));
        free_parts(e);
        return NULL;
    }
    e->started = true;
    return e;
}

bool election_leading(const struct election *e)
{
    return atomic_load(&e->leading);
}

bool election_lost(const struct election *e)
{
    return atomic_load(&e->lost);
}

void election_stop(struct election *e)
{
    if (!e)
        return;
    if (e->started) {
        pthread_mutex_lock(&e->mu);
        e->stop = true;
        pthread_cond_signal(&e->cv);
        pthread_mutex_unlock(&e->mu);
        pthread_join(e->thread, NULL);
    }
    struct kube_err err;
    if (atomic_load(&e->leading)) {
        if (kube_lease_release(e->lease, &err) < 0)
            log_warn("lease not released", "lease", e->name, "error", err.msg);
        else
            log_info("lease released", "lease", e->name);
    }
    free_parts(e);
}
