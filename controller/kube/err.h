/* kube_err: the error every fallible kube_* call fills in, naming what failed and why (the
 * project's convention: base/failure.h). */
#ifndef PSI_KUBE_ERR_H
#define PSI_KUBE_ERR_H

/* An error. status is the HTTP status of an API reply (0 when none was received);
 * reason is metav1.Status.reason (e.g. "NotFound", "Conflict") or a short local
 * reason ("Transport", "Config", "Decode"); msg is a human sentence. */
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

#endif
