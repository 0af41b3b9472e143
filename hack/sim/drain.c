/* drain: cordon, evict, reboot, uncordon (see drain.h). */
#include "hack/sim/drain.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"
#include "hack/sim/nodes.h"
#include "base/logging.h"

#define DRAIN_RETRY_MS 5000

/* A pod asked to leave, and when to ask again. */
struct asked {
    char *pod;
    uint64_t again_ms;
};

struct drain {
    struct sim *s;
    char *node;
    int64_t reboot_delay_ms;
    enum drain_state state;
    int cordoned;
    uint64_t started_ms;
    uint64_t empty_ms;
    struct asked *asked;
    size_t n_asked, asked_cap;
};

struct drain *drain_new(struct sim *s, const char *node, int64_t reboot_delay_ms)
{
    struct drain *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->s = s;
    d->node = strdup(node);
    d->reboot_delay_ms = reboot_delay_ms;
    d->state = DRAIN_EVICTING;
    d->started_ms = kube_loop_now_ms();
    return d;
}

void drain_free(struct drain *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_asked; i++)
        free(d->asked[i].pod);
    free(d->asked);
    free(d->node);
    free(d);
}

bool drain_reboot_over(const struct drain *d)
{
    return d->state == DRAIN_DONE ||
           (d->state == DRAIN_REBOOTING && kube_loop_now_ms() >= d->empty_ms + (uint64_t)d->reboot_delay_ms);
}

const char *drain_node(const struct drain *d)
{
    return d->node;
}

uint64_t drain_elapsed_ms(const struct drain *d)
{
    return kube_loop_now_ms() - d->started_ms;
}

static struct asked *asked_for(struct drain *d, const char *pod)
{
    for (size_t i = 0; i < d->n_asked; i++)
        if (strcmp(d->asked[i].pod, pod) == 0)
            return &d->asked[i];
    if (BASE_GROW(d->asked, d->n_asked + 1, d->asked_cap) < 0)
        return NULL;
    d->asked[d->n_asked].pod = strdup(pod);
    d->asked[d->n_asked].again_ms = 0;
    return &d->asked[d->n_asked++];
}

struct evict_pass {
    struct drain *d;
    int left;
};

static int evict_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct evict_pass *p = ud;
    struct drain *d = p->d;
    const cJSON *pod = obj;
    if (!jx_eq(jx_str(pod, "spec.nodeName"), d->node) || !sim_pod_live(pod))
        return 0;
    p->left++;
    const char *name = jx_str0(pod, "metadata.name");
    struct asked *a = asked_for(d, name);
    uint64_t now = kube_loop_now_ms();
    if (!a || now < a->again_ms)
        return 0;
    a->again_ms = now + DRAIN_RETRY_MS;
    struct kube_err err = {0};
    if (kube_rest_evict(d->s->client, d->s->sc->namespace, name, 0, NULL, &err) == 0) {
        log_info("drain: pod evicted", "node", d->node, "pod", name);
        record_add(d->s->rec, "drain-evict", "node", d->node, "pod", name, "result", "evicted", NULL);
    } else {
        char status[16];
        snprintf(status, sizeof(status), "%ld", err.status);
        log_debug("drain: eviction refused, will retry", "node", d->node, "pod", name, "status", status, "message",
                  err.msg);
        record_add(d->s->rec, "drain-evict", "node", d->node, "pod", name, "result", status, "message", err.msg, NULL);
    }
    return 0;
}

enum drain_state drain_step(struct drain *d, int hold)
{
    struct sim *s = d->s;
    if (!d->cordoned) {
        if (nodes_cordon(s, d->node, true) < 0)
            return d->state;
        d->cordoned = 1;
        log_info("drain started", "node", d->node);
        record_add(s->rec, "drain", "node", d->node, "phase", "started", NULL);
    }
    uint64_t now = kube_loop_now_ms();
    if (d->state == DRAIN_EVICTING) {
        struct evict_pass p = {d, 0};
        kube_informer_foreach(s->pods, evict_cb, &p);
        if (p.left == 0) {
            d->state = DRAIN_REBOOTING;
            d->empty_ms = now;
            log_info("drain: node empty, rebooting", "node", d->node);
            record_add(s->rec, "drain", "node", d->node, "phase", "drained", NULL);
        }
    }
    if (d->state == DRAIN_REBOOTING && !hold && now >= d->empty_ms + (uint64_t)d->reboot_delay_ms) {
        if (nodes_cordon(s, d->node, false) == 0) {
            d->state = DRAIN_DONE;
            log_info("drain done: node back", "node", d->node);
            record_add(s->rec, "drain", "node", d->node, "phase", "done", NULL);
        }
    }
    return d->state;
}
