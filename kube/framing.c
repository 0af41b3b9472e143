#include "kube/framing.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A buffer above this size is released after its line is delivered, so that one large object
 * does not pin its size for the life of a watch (a PsiRebalance whose status lists 200 nodes
 * grew the buffer to 128 KiB at 1,000 nodes); a Node's event (a few KB) fits. */
#define FRAMING_KEEP_CAP ((size_t)64 << 10)

struct kube_framing {
    char *buf; /* the incomplete line, NUL-terminated room kept at buf[len] */
    size_t len;
    size_t cap;
    size_t max; /* maximum line length, line ending excluded */
    bool failed;
};

struct kube_framing *kube_framing_new(size_t max_line)
{
    struct kube_framing *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->max = max_line ? max_line : KUBE_FRAMING_DEFAULT_MAX;
    if (f->max > SIZE_MAX / 4)
        f->max = SIZE_MAX / 4; /* keeps the capacity arithmetic below from overflowing */
    return f;
}

void kube_framing_free(struct kube_framing *f)
{
    if (!f)
        return;
    free(f->buf);
    free(f);
}

size_t kube_framing_pending(const struct kube_framing *f)
{
    return f->len;
}

void kube_framing_reset(struct kube_framing *f)
{
    f->len = 0;
    f->failed = false;
}

/* Make room for need bytes plus a NUL. */
static int framing_reserve(struct kube_framing *f, size_t need)
{
    if (need + 1 <= f->cap)
        return 0;
    size_t cap = f->cap ? f->cap : 4096;
    while (cap < need + 1)
        cap *= 2;
    if (cap > f->max + 2)
        cap = f->max + 2; /* the line, a possible '\r', the NUL */
    if (cap < need + 1)
        return -1;
    char *nb = realloc(f->buf, cap);
    if (!nb)
        return -1;
    f->buf = nb;
    f->cap = cap;
    return 0;
}

static bool framing_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

static int framing_too_long(struct kube_framing *f, struct kube_err *err)
{
    f->failed = true;
    f->len = 0;
    return kube_err_set(err, 0, "Decode", "watch stream framing: a line exceeds the %zu byte limit", f->max);
}

/* Deliver the buffered line and start a new one. */
static int framing_emit(struct kube_framing *f, kube_framing_line_fn cb, void *ud)
{
    size_t n = f->len;
    f->len = 0;
    if (n > 0 && f->buf[n - 1] == '\r')
        n--;
    int rc = 0;
    if (n > 0 && !framing_blank(f->buf, n)) {
        f->buf[n] = '\0';
        rc = cb(f->buf, n, ud);
    }
    if (f->cap > FRAMING_KEEP_CAP) {
        free(f->buf);
        f->buf = NULL;
        f->cap = 0;
    }
    return rc;
}

int kube_framing_feed(struct kube_framing *f, const char *data, size_t len, kube_framing_line_fn cb, void *ud,
                      struct kube_err *err)
{
    if (f->failed)
        return kube_err_set(err, 0, "Decode", "watch stream framing: stream already failed");
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) : len;
        /* Room for the line plus a '\r' that may precede its '\n'; checked exactly at emit. */
        if (f->len + n > f->max + 1)
            return framing_too_long(f, err);
        if (n > 0) {
            if (framing_reserve(f, f->len + n) < 0) {
                f->failed = true;
                return kube_err_set(err, 0, "Decode", "watch stream framing: out of memory for a %zu byte line",
                                    f->len + n);
            }
            memcpy(f->buf + f->len, data, n);
            f->len += n;
        }
        if (!nl)
            break;
        data += n + 1;
        len -= n + 1;
        if (f->len - (f->len > 0 && f->buf[f->len - 1] == '\r') > f->max)
            return framing_too_long(f, err);
        int rc = framing_emit(f, cb, ud);
        if (rc != 0)
            return rc;
    }
    return 0;
}
