/* psi_authqueue: the token reviews that wait for the reviewer thread (psi_authz), and
 * their answers until the request that asked takes them. Pure: the caller holds its lock
 * and passes the time.
 *
 * A fixed number of slots: a review that finds none free is refused (the caller answers
 * 503), so a crowd of made-up tokens holds at most capacity tokens in memory. Each slot
 * holds the asking request's ticket (psi_serve_request.ticket), the cache key of what it
 * asks, a copy of its token (freed as soon as the review is taken: the reviewer owns it
 * then), the verb and path, and its state: waiting, being reviewed, answered. Reviews are
 * taken oldest first, one at a time. A waiting or answered slot older than the age given
 * to psi_authqueue_expire is dropped: its client has been answered 503 by then, or is
 * gone, and nobody will take the answer. */
#ifndef PSI_SERVE_AUTHQUEUE_H
#define PSI_SERVE_AUTHQUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "serve/authcache.h"

#define PSI_AUTHQUEUE_VERB 16
#define PSI_AUTHQUEUE_PATH 256

/* A review as the reviewer takes it: the token is the reviewer's to free. */
struct psi_authreview {
    unsigned long long ticket;
    unsigned char key[PSI_AUTHCACHE_KEY];
    char *token;
    char verb[PSI_AUTHQUEUE_VERB];
    char path[PSI_AUTHQUEUE_PATH];
};

struct psi_authqueue;

/* A queue of capacity slots (at least 1); NULL when out of memory. */
struct psi_authqueue *psi_authqueue_new(size_t capacity);

/* Free, the tokens still held included (NULL is fine). */
void psi_authqueue_free(struct psi_authqueue *q);

/* Queue the review of token for verb on path, asked by ticket (not 0, not already queued).
 * Returns 0, or -1 when every slot is taken, a field does not fit, or out of memory. */
int psi_authqueue_push(struct psi_authqueue *q, unsigned long long ticket, const unsigned char key[PSI_AUTHCACHE_KEY],
                       const char *token, const char *verb, const char *path, int64_t now_ms);

/* Take the oldest waiting review into *out (it is being reviewed from now on). Returns 1,
 * or 0 when none waits. */
int psi_authqueue_next(struct psi_authqueue *q, struct psi_authreview *out);

/* Record status (an HTTP status) as the answer to the review of ticket (no-op when the
 * queue no longer holds it). */
void psi_authqueue_answer(struct psi_authqueue *q, unsigned long long ticket, int status, int64_t now_ms);

/* The answer for ticket: its status, the slot then freed; 0 while it waits or is being
 * reviewed; -1 when the queue holds no review of ticket. */
int psi_authqueue_take(struct psi_authqueue *q, unsigned long long ticket);

/* Drop the waiting and answered slots last changed before now_ms - max_age_ms (never the
 * one being reviewed). Returns how many were dropped. */
size_t psi_authqueue_expire(struct psi_authqueue *q, int64_t now_ms, int64_t max_age_ms);

/* Slots in use. */
size_t psi_authqueue_len(const struct psi_authqueue *q);

#endif
