/* notify: Events, logged when not recorded (see notify.h). */
#include "reconcile/notify.h"

#include "base/logging.h"

void notify_event(struct kube_events *ev, const struct kube_event_ref *ref, const char *type, const char *reason,
                  const char *action, const char *note, int64_t now_ms)
{
    if (!ev)
        return;
    struct kube_err err;
    kube_err_clear(&err);
    struct kube_event_occurrence what = {type, reason, action, note};
    if (kube_events_record(ev, ref, &what, now_ms, &err) < 0)
        log_warn("event not recorded", "reason", reason, "error", err.msg);
}
