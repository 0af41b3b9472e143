#include "serve/authcache.h"

#include <stdlib.h>
#include <string.h>

struct entry {
    unsigned char key[PSI_AUTHCACHE_KEY];
    int status; /* 0: empty */
    int64_t expires_ms;
};

struct psi_authcache {
    struct entry *e;
    size_t cap;
};

struct psi_authcache *psi_authcache_new(size_t capacity)
{
    struct psi_authcache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cap = capacity ? capacity : 1;
    c->e = calloc(c->cap, sizeof(*c->e));
    if (!c->e) {
        free(c);
        return NULL;
    }
    return c;
}

void psi_authcache_free(struct psi_authcache *c)
{
    if (!c)
        return;
    free(c->e);
    free(c);
}

int psi_authcache_get(const struct psi_authcache *c, const unsigned char key[PSI_AUTHCACHE_KEY], int64_t now_ms)
{
    for (size_t i = 0; i < c->cap; i++)
        if (c->e[i].status && now_ms < c->e[i].expires_ms && memcmp(c->e[i].key, key, PSI_AUTHCACHE_KEY) == 0)
            return c->e[i].status;
    return 0;
}

void psi_authcache_put(struct psi_authcache *c, const unsigned char key[PSI_AUTHCACHE_KEY], int status, int64_t now_ms,
                       int64_t expires_ms)
{
    size_t slot = c->cap;
    for (size_t i = 0; i < c->cap && slot == c->cap; i++)
        if (c->e[i].status && memcmp(c->e[i].key, key, PSI_AUTHCACHE_KEY) == 0)
            slot = i;
    if (slot == c->cap) {
        /* a new key: a free or expired slot, or else the entry that expires first among
         * those it may displace (a refusal never displaces a live allowance) */
        int64_t soonest = INT64_MAX;
        for (size_t i = 0; i < c->cap; i++) {
            const struct entry *e = &c->e[i];
            int live = e->status && now_ms < e->expires_ms;
            if (live && status != 200 && e->status == 200)
                continue;
            int64_t t = live ? e->expires_ms : INT64_MIN;
            if (slot == c->cap || t < soonest) {
                soonest = t;
                slot = i;
            }
        }
        if (slot == c->cap)
            return; /* every entry a live allowance: the refusal is not kept */
    }
    memcpy(c->e[slot].key, key, PSI_AUTHCACHE_KEY);
    c->e[slot].status = status;
    c->e[slot].expires_ms = expires_ms;
}

size_t psi_authcache_live(const struct psi_authcache *c, int64_t now_ms)
{
    size_t n = 0;
    for (size_t i = 0; i < c->cap; i++)
        n += c->e[i].status && now_ms < c->e[i].expires_ms;
    return n;
}
