/* kube_linequeue: the lines of a watch stream waiting to be delivered, kept as their bytes.
 *
 * A watch reads events inside libcurl's write callback and delivers them later from the loop.
 * Kept as text until then (one contiguous buffer, each line behind its length), a burst of
 * events costs its size in bytes instead of a JSON tree per event (about three times the text);
 * the reader parses and drops one line at a time. When the queue drains, a buffer grown past
 * KUBE_LINEQUEUE_KEEP by a burst is given back. The struct is the caller's (zeroed to start);
 * not thread-safe. */
#ifndef PSI_KUBE_LINEQUEUE_H
#define PSI_KUBE_LINEQUEUE_H

#include <stddef.h>

/* Bytes of buffer kept once the queue is empty (a few Node events); a larger one is freed. */
#define KUBE_LINEQUEUE_KEEP ((size_t)64 << 10)

struct kube_linequeue {
    char *buf;
    size_t len; /* bytes queued */
    size_t pos; /* bytes already taken by kube_linequeue_next */
    size_t cap; /* bytes allocated */
};

/* Rewrites text[0..n) in place and returns its new length, at most n (e.g.
 * kube_jsonstrip_managed_fields). */
typedef size_t (*kube_linequeue_edit)(char *text, size_t n);

/* Append line[0..n) (any bytes), rewritten by edit when it is not NULL: the queue then holds
 * only what the reader will parse (a Node event less its managedFields is about half its
 * text). 0, or -1 when out of memory (the queue is unchanged). */
int kube_linequeue_push(struct kube_linequeue *q, const char *line, size_t n, kube_linequeue_edit edit);

/* The oldest line not yet taken (NUL-terminated, its length in *n), or NULL when none is left
 * (the queue is then emptied, see above). Valid until the next call on q. */
const char *kube_linequeue_next(struct kube_linequeue *q, size_t *n);

/* Drop every line (and a buffer larger than KUBE_LINEQUEUE_KEEP). */
void kube_linequeue_clear(struct kube_linequeue *q);

/* Drop every line and free the buffer; q is then empty and reusable. */
void kube_linequeue_free(struct kube_linequeue *q);

#endif
