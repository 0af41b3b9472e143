/* leader_probe: contends for a Lease through kube_lease and says so on stdout.
 *
 *   leader_probe --namespace NS --name LEASE --identity ID
 *                [--duration-ms N --renew-ms N --retry-ms N] [--kubeconfig PATH]
 *
 * Lines (flushed): "FOLLOWING <id> <ms>" at start, "LEADING <id> <ms>" when it starts
 * leading, "LOST <id> <ms>" when leadership ends, "RELEASED <id> <ms>" after SIGTERM/SIGINT
 * released the Lease (then it exits 0), "ERROR <id> <message>" on API errors.
 * <ms> is the wall clock in ms since the epoch. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "e2e_util.h"
#include "kube/config.h"
#include "kube/lease.h"
#include "kube/rest.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const char *what, const char *id)
{
    printf("%s %s %lld\n", what, id, (long long)clock_ms(CLOCK_REALTIME));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *ns = NULL, *name = NULL, *id = NULL, *kubeconfig = NULL;
    struct kube_lease_timing t = {0};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--namespace"))
            ns = argv[i + 1];
        else if (!strcmp(argv[i], "--name"))
            name = argv[i + 1];
        else if (!strcmp(argv[i], "--identity"))
            id = argv[i + 1];
        else if (!strcmp(argv[i], "--kubeconfig"))
            kubeconfig = argv[i + 1];
        else if (!strcmp(argv[i], "--duration-ms"))
            t.lease_duration_ms = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--renew-ms"))
            t.renew_deadline_ms = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--retry-ms"))
            t.retry_period_ms = atoll(argv[i + 1]);
        else {
            fprintf(stderr, "leader_probe: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!ns || !name || !id) {
        fprintf(stderr, "usage: leader_probe --namespace NS --name LEASE --identity ID [...]\n");
        return 2;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    struct kube_config *cfg = NULL;
    struct kube_client *c = e2e_kube_client("leader_probe", kubeconfig, &cfg);
    if (!c)
        return 2;
    struct kube_err err;
    struct kube_lease *l = kube_lease_new(c, ns, name, id, &t, &err);
    if (!l) {
        fprintf(stderr, "leader_probe: %s\n", err.msg);
        kube_client_free(c);
        kube_config_free(cfg);
        return 2;
    }
    say("FOLLOWING", id);
    enum kube_lease_state last = KUBE_LEASE_FOLLOWER;
    while (!stop) {
        int64_t now = clock_ms(CLOCK_MONOTONIC), next = now;
        enum kube_lease_state st = kube_lease_tick(l, now, &next, &err);
        if (err.msg[0]) {
            printf("ERROR %s %s\n", id, err.msg);
            fflush(stdout);
        }
        if (st == KUBE_LEASE_LEADER && last != KUBE_LEASE_LEADER)
            say("LEADING", id);
        else if (st == KUBE_LEASE_LOST)
            say("LOST", id);
        last = st == KUBE_LEASE_LOST ? KUBE_LEASE_FOLLOWER : st;
        int64_t wait = next - clock_ms(CLOCK_MONOTONIC);
        if (wait > 0 && !stop) {
            struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000L};
            nanosleep(&ts, NULL); /* a signal ends the sleep early */
        }
    }
    int rc = 0;
    if (last == KUBE_LEASE_LEADER) {
        if (kube_lease_release(l, &err)) {
            printf("ERROR %s release: %s\n", id, err.msg);
            rc = 1;
        } else {
            say("RELEASED", id);
        }
    }
    kube_lease_free(l);
    kube_client_free(c);
    kube_config_free(cfg);
    return rc;
}
