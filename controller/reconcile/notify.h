/* notify: the Events the reconcile records, in one place: a failure to record one is logged
 * and does not fail the cycle (an Event is a courtesy to the reader; the status is the
 * record). Not thread-safe. */
#ifndef PSI_RECONCILE_NOTIFY_H
#define PSI_RECONCILE_NOTIFY_H

#include <stdint.h>

#include "kube/events.h"

/* Record an Event about ref (type "Normal" or "Warning") at now_ms; ev NULL: none. */
void notify_event(struct kube_events *ev, const struct kube_event_ref *ref, const char *type, const char *reason,
                  const char *action, const char *note, int64_t now_ms);

#endif
