/* drain: take a node out and bring it back, as `oc adm drain` and a reboot do: cordon,
 * evict every launcher pod on it through the Eviction API (a 429, such as KubeVirt's
 * "Eviction triggered evacuation" or "Evacuation in progress", is retried every 5 s, as
 * kubectl drain does, until the pod is gone: migrated, or restarted elsewhere), wait
 * the reboot delay, uncordon. Stepped by the loop: drain_step moves it on and says where
 * it is. */
#ifndef PSI_SIM_DRAIN_H
#define PSI_SIM_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "hack/sim/sim.h"

enum drain_state {
    DRAIN_EVICTING,  /* cordoned; pods are being evicted */
    DRAIN_REBOOTING, /* empty; waiting the reboot delay */
    DRAIN_DONE,      /* uncordoned */
};

struct drain;

/* Start draining node (cordons it at the first step). reboot_delay_ms is the wait once it
 * is empty. NULL when out of memory. */
struct drain *drain_new(struct sim *s, const char *node, int64_t reboot_delay_ms);

/* Free; a drain not done leaves the node cordoned (NULL is fine). */
void drain_free(struct drain *d);

/* Move on; returns the state after the step. hold keeps the node cordoned after the reboot
 * delay (DRAIN_REBOOTING until called with hold 0), for a caller with work to do then. */
enum drain_state drain_step(struct drain *d, int hold);

/* Whether the node is empty and the reboot delay has passed (it may be uncordoned). */
bool drain_reboot_over(const struct drain *d);

/* The node being drained (owned by d). */
const char *drain_node(const struct drain *d);

/* Milliseconds since the drain started. */
uint64_t drain_elapsed_ms(const struct drain *d);

#endif
