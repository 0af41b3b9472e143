#include "serve/authqueue.h"

#include <stdlib.h>
#include <string.h>

enum slot_state { FREE = 0, WAITING, REVIEWING, ANSWERED };

struct slot {
    enum slot_state st;
    unsigned long long ticket;
    unsigned char key[PSI_AUTHCACHE_KEY];
    char *token; /* while WAITING */
    char verb[PSI_AUTHQUEUE_VERB];
    char path[PSI_AUTHQUEUE_PATH];
    int status;       /* once ANSWERED */
    int64_t since_ms; /* when it was queued, or answered */
    uint64_t order;   /* push order: oldest first */
};

struct psi_authqueue {
    struct slot *s;
    size_t cap;
    uint64_t pushes;
};

struct psi_authqueue *psi_authqueue_new(size_t capacity)
{
    struct psi_authqueue *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->cap = capacity ? capacity : 1;
    q->s = calloc(q->cap, sizeof(*q->s));
    if (!q->s) {
        free(q);
        return NULL;
    }
    return q;
}

static void clear(struct slot *sl)
{
    free(sl->token);
    memset(sl, 0, sizeof(*sl));
}

void psi_authqueue_free(struct psi_authqueue *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->cap; i++)
        clear(&q->s[i]);
    free(q->s);
    free(q);
}

static struct slot *find(struct psi_authqueue *q, unsigned long long ticket)
{
    for (size_t i = 0; i < q->cap; i++)
        if (q->s[i].st != FREE && q->s[i].ticket == ticket)
            return &q->s[i];
    return NULL;
}

int psi_authqueue_push(struct psi_authqueue *q, unsigned long long ticket, const unsigned char key[PSI_AUTHCACHE_KEY],
                       const char *token, const char *verb, const char *path, int64_t now_ms)
{
    if (!ticket || find(q, ticket) || strlen(verb) >= PSI_AUTHQUEUE_VERB || strlen(path) >= PSI_AUTHQUEUE_PATH)
        return -1;
    struct slot *sl = NULL;
    for (size_t i = 0; i < q->cap && !sl; i++)
        if (q->s[i].st == FREE)
            sl = &q->s[i];
    if (!sl || !(sl->token = strdup(token)))
        return -1;
    sl->st = WAITING;
    sl->ticket = ticket;
    memcpy(sl->key, key, PSI_AUTHCACHE_KEY);
    memcpy(sl->verb, verb, strlen(verb) + 1);
    memcpy(sl->path, path, strlen(path) + 1);
    sl->since_ms = now_ms;
    sl->order = ++q->pushes;
    return 0;
}

int psi_authqueue_next(struct psi_authqueue *q, struct psi_authreview *out)
{
    struct slot *oldest = NULL;
    for (size_t i = 0; i < q->cap; i++)
        if (q->s[i].st == WAITING && (!oldest || q->s[i].order < oldest->order))
            oldest = &q->s[i];
    if (!oldest)
        return 0;
    out->ticket = oldest->ticket;
    memcpy(out->key, oldest->key, PSI_AUTHCACHE_KEY);
    out->token = oldest->token;
    memcpy(out->verb, oldest->verb, sizeof(out->verb));
    memcpy(out->path, oldest->path, sizeof(out->path));
    oldest->token = NULL;
    oldest->st = REVIEWING;
    return 1;
}

void psi_authqueue_answer(struct psi_authqueue *q, unsigned long long ticket, int status, int64_t now_ms)
{
    struct slot *sl = find(q, ticket);
    if (!sl)
        return;
    free(sl->token);
    sl->token = NULL;
    sl->st = ANSWERED;
    sl->status = status;
    sl->since_ms = now_ms;
}

int psi_authqueue_take(struct psi_authqueue *q, unsigned long long ticket)
{
    struct slot *sl = find(q, ticket);
    if (!sl)
        return -1;
    if (sl->st != ANSWERED)
        return 0;
    int status = sl->status;
    clear(sl);
    return status;
}

size_t psi_authqueue_expire(struct psi_authqueue *q, int64_t now_ms, int64_t max_age_ms)
{
    size_t n = 0;
    for (size_t i = 0; i < q->cap; i++) {
        struct slot *sl = &q->s[i];
        if ((sl->st == WAITING || sl->st == ANSWERED) && sl->since_ms < now_ms - max_age_ms) {
            clear(sl);
            n++;
        }
    }
    return n;
}

size_t psi_authqueue_len(const struct psi_authqueue *q)
{
    size_t n = 0;
    for (size_t i = 0; i < q->cap; i++)
        n += q->s[i].st != FREE;
    return n;
}
