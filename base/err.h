/* kube_err: the project's error record (base/failure.h), naming what failed and why: filled by
 * every fallible kube_* call, and by the pressure sources (psi/source.h, psi_fail). */
#ifndef PSI_KUBE_ERR_H
#define PSI_KUBE_ERR_H

#include <stdbool.h>

/* An error. status is the HTTP status of an API reply (0 when none was received);
 * reason is metav1.Status.reason (e.g. "NotFound", "Conflict"), a short local reason
 * ("Transport", "Config", "Decode") or, from a pressure source, the condition reason
 * (a PSI_REASON_*); msg is a human sentence. All empty: no error. */
struct kube_err {
    long status;
    char reason[64];
    char msg[1024];
};

/* Fill err (when not NULL) with status, reason and a printf-formatted message; returns -1. */
int kube_err_set(struct kube_err *err, long status, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prefix err->msg with a printf-formatted context ("listing nodes: ..."); returns -1. */
int kube_err_wrap(struct kube_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear err (when not NULL) to "no error". */
void kube_err_clear(struct kube_err *err);

/* Whether err holds an error (a reason or a message was set). */
bool kube_err_failed(const struct kube_err *err);

#endif
