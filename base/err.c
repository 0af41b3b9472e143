#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int kube_err_set(struct kube_err *err, long status, const char *reason, const char *fmt, ...)
{
    if (!err)
        return -1;
    err->status = status;
    snprintf(err->reason, sizeof(err->reason), "%s", reason ? reason : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

int kube_err_wrap(struct kube_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    char old[sizeof(err->msg)];
    memcpy(old, err->msg, sizeof(old));
    snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
    return -1;
}

bool kube_err_failed(const struct kube_err *err)
{
    return err && (err->reason[0] || err->msg[0]);
}

void kube_err_clear(struct kube_err *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
}
