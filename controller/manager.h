/* manager: the running operator once it leads. It discovers which APIs exist, keeps
 * informers on PsiRebalance, Node and (on OpenShift) MachineConfig and MachineConfigPool,
 * turns their events and each PsiRebalance's sampling interval into reconciles through a
 * coalescing work queue (one reconcile per PsiRebalance at a time, no hot loop), and keeps
 * the operator's own metrics current. Everything runs in the caller's kube_loop. */
#ifndef PSI_MANAGER_H
#define PSI_MANAGER_H

#include <stdbool.h>

#include "kube/events.h"
#include "kube/loop.h"
#include "kube/rest.h"
#include "httpd/metrics.h"

struct manager;

/* A new manager working through client and loop, recording Events with events (may be
 * NULL) and publishing into metrics (may be NULL); all borrowed. NULL with err. */
struct manager *manager_new(struct kube_client *client, struct kube_loop *loop, struct kube_events *events,
                            struct psi_metrics *metrics, struct kube_err *err);

/* Discover the APIs and start the informers and the queue. Returns 0 or -1 with err (the
 * discovery request failed: the caller retries). */
int manager_start(struct manager *m, struct kube_err *err);

/* True once every informer has completed its first list. */
bool manager_synced(const struct manager *m);

/* Stop the informers and free (NULL is fine). */
void manager_free(struct manager *m);

#endif
