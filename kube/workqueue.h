/* workqueue: a coalescing work queue of reconcile requests, keyed by object name (one key per
 * PsiRebalance), with delayed adds and an injected clock. Single-threaded: the event loop
 * adds keys (watch events, the sampling timer, requeue-after) and takes them to reconcile.
 *
 * Rules:
 *   - A key is pending (with a due time) or not, and in process or not.
 *   - workqueue_add: the key is due now. Adding a key already pending keeps one entry, due at
 *     the earlier of the two times; a burst of events makes one reconcile.
 *   - workqueue_add_after(key, ms): due at now + ms; the earliest due time of all adds wins,
 *     so a later, longer requeue never postpones a sooner one.
 *   - workqueue_get hands out the pending key due soonest (ties: first made pending), never
 *     one in process: a key is reconciled by one caller at a time.
 *   - A key added while in process stays pending and is handed out again only after
 *     workqueue_done: changes seen during a reconcile cause exactly one more reconcile.
 *   - workqueue_forget drops a pending key (the object was deleted); one in process still
 *     needs workqueue_done.
 * Sized for a handful of keys (every operation scans them): one per PsiRebalance.
 */
#ifndef PSI_RECONCILE_WORKQUEUE_H
#define PSI_RECONCILE_WORKQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Milliseconds on a monotonic clock. */
typedef int64_t (*workqueue_clock_fn)(void *ud);

struct workqueue;

/* A new queue reading time from clock(ud) (NULL: CLOCK_MONOTONIC). Free with workqueue_free.
 * NULL on no memory. */
struct workqueue *workqueue_new(workqueue_clock_fn clock, void *ud);

/* Free q and every key. NULL is fine. */
void workqueue_free(struct workqueue *q);

/* Ask for key to be processed now. Returns 0, or -1 on no memory. */
int workqueue_add(struct workqueue *q, const char *key);

/* Ask for key to be processed delay_ms from now (<= 0: now). Returns 0, or -1 on no memory. */
int workqueue_add_after(struct workqueue *q, const char *key, int64_t delay_ms);

/* The next due key not in process, now marked in process; NULL when none is due. The string
 * belongs to the queue and stays valid until workqueue_done for it. */
const char *workqueue_get(struct workqueue *q);

/* Processing of key ended (key may be the pointer workqueue_get returned). */
void workqueue_done(struct workqueue *q, const char *key);

/* Drop key's pending request, if any. */
void workqueue_forget(struct workqueue *q, const char *key);

/* Milliseconds until a key not in process is due: 0 when one is due now, -1 when none is pending. */
int64_t workqueue_next_delay(const struct workqueue *q);

/* Keys pending (due or not), those in process included when also pending. */
size_t workqueue_pending(const struct workqueue *q);

/* True when key is in process. */
bool workqueue_processing(const struct workqueue *q, const char *key);

#endif
