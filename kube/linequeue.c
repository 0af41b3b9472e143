/* kube_linequeue: watch lines waiting for delivery, as bytes (see linequeue.h). */
#include "kube/linequeue.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A line is stored as its length (a size_t, copied byte-wise), its bytes and a NUL. */
#define ENTRY(n) (sizeof(size_t) + (n) + 1)

int kube_linequeue_push(struct kube_linequeue *q, const char *line, size_t n, kube_linequeue_edit edit)
{
    if (q->pos == q->len)
        q->pos = q->len = 0;
    if (n > SIZE_MAX / 2 - sizeof(size_t) - 1 || q->len > SIZE_MAX / 2 - ENTRY(n))
        return -1;
    size_t need = q->len + ENTRY(n);
    if (need > q->cap) {
        size_t cap = q->cap ? q->cap : 4096;
        while (cap < need)
            cap *= 2;
        char *nb = realloc(q->buf, cap);
        if (!nb)
            return -1;
        q->buf = nb;
        q->cap = cap;
    }
    char *text = q->buf + q->len + sizeof(n);
    memcpy(text, line, n);
    text[n] = '\0';
    if (edit) {
        size_t edited = edit(text, n);
        if (edited < n)
            n = edited;
    }
    memcpy(q->buf + q->len, &n, sizeof(n));
    text[n] = '\0';
    q->len += ENTRY(n);
    return 0;
}

const char *kube_linequeue_next(struct kube_linequeue *q, size_t *n)
{
    if (q->pos >= q->len) {
        kube_linequeue_clear(q);
        return NULL;
    }
    memcpy(n, q->buf + q->pos, sizeof(*n));
    const char *line = q->buf + q->pos + sizeof(*n);
    q->pos += ENTRY(*n);
    return line;
}

void kube_linequeue_clear(struct kube_linequeue *q)
{
    q->pos = q->len = 0;
    if (q->cap > KUBE_LINEQUEUE_KEEP)
        kube_linequeue_free(q);
}

void kube_linequeue_free(struct kube_linequeue *q)
{
    free(q->buf);
    q->buf = NULL;
    q->pos = q->len = q->cap = 0;
}
