/* tainter: the taint writes of one PsiRebalance and what goes with them. One cycle runs the
 * state machine (taintfsm.h) over the owned nodes and those that still carry our taint, makes
 * its writes (JSON patches from taintpatch.h that test the taints they were built from), all
 * at once (kube_multirequest: TAINTER_IN_FLIGHT in flight, at the write budget's pace; a
 * patch that meets a conflict is then rebuilt from a fresh read of the node and sent once
 * more), adds a taint only once the caller stored the key's record (before_adds, taintstate.h),
 * records the Events of the taint changes after all writes (one per node, or one summary past
 * a count: taintevents.h), keeps the result (taintstate.h) and fills the status's per-node
 * entries (nodestatus.h). Deletion takes our taint off every node. Not thread-safe. */
#ifndef PSI_RECONCILE_TAINTER_H
#define PSI_RECONCILE_TAINTER_H

#include <stdint.h>

#include "api/status.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/rest.h"
#include "reconcile/status/ownership.h"
#include "reconcile/reconciler.h"
#include "reconcile/sampling.h"
#include "reconcile/taint/taintpatch.h"
#include "reconcile/taint/taintstate.h"

/* What the writes work with; all borrowed. */
struct tainter {
    struct kube_client *client;
    struct kube_events *events;           /* may be NULL */
    struct reconciler_counters *counters; /* taints added, removed, failed writes */
};

/* One cycle's input. */
struct tainter_cycle {
    const struct api_spec *spec;
    const struct ownership_nodes *nodes;
    const struct taintpatch_taint *t;
    const struct kube_event_ref *owner; /* the PsiRebalance: what a summary Event is about */
    const struct sampling *sampling;    /* this cycle's readings */
    struct taintstate *state;           /* updated */
    int64_t now_ms;
    /* Called once before the cycle's adds (adds of them; NULL: not called): stores the record
     * of t's key when it must be stored first (taintstate.h). Returns 0 when the adds may go,
     * -1 when they wait for a later cycle (each counted as a failed write). */
    int (*before_adds)(size_t adds, void *ud);
    void *before_adds_ud;
    /* The status as stored (NULL: none): the taintedSince of a node carrying the taint that
     * this process has no record of yet (after a restart or failover). */
    const struct api_status *stored;
};

/* Add or remove taint t on the node cached shows, keeping every other taint (on a conflict the
 * node is read again and the patch rebuilt once). Returns 1 when it was written (rv, rvlen
 * bytes, gets the node's resourceVersion after the write), 0 when the node already was as
 * asked, -1 with err on failure. */
int tainter_write(const struct tainter *tw, const struct nodeproj *cached, const struct taintpatch_taint *t,
                  enum taintpatch_op op, char *rv, size_t rvlen, struct kube_err *err);

/* Take taint t (its key and owner, any effect) off every node of the informer that carries it;
 * why (a sentence) is the note of each node's Untainted Event. Returns the failures. */
int tainter_remove_all(const struct tainter *tw, const struct kube_informer *nodes, const struct taintpatch_taint *t,
                       const char *why, int64_t now_ms);

/* One cycle (see above) into next. Returns the number of failed writes, or -1 on no memory. */
int tainter_step(const struct tainter *tw, const struct tainter_cycle *c, struct api_status *next);

#endif
