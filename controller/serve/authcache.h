/* psi_authcache: the recent answers to "may this token read this path", so that a scrape
 * costs no API call in steady state. Pure: the caller passes the time.
 *
 * Entries are keyed by a SHA-256 digest (of the token and what it asks; the token itself
 * is never kept) and hold an HTTP status (200, 401, 403) until they expire. The cache has
 * a fixed number of entries: a new one takes the place of an expired entry, or else of the
 * entry that expires first, so a flood of unknown tokens cannot grow it. A refusal (any
 * status but 200) never takes the place of a live allowance (200): when every entry is
 * one, the refusal is not kept, so a flood of unknown tokens cannot push out the scrapers
 * that are allowed. */
#ifndef PSI_SERVE_AUTHCACHE_H
#define PSI_SERVE_AUTHCACHE_H

#include <stddef.h>
#include <stdint.h>

#define PSI_AUTHCACHE_KEY 32

struct psi_authcache;

/* A cache of capacity entries (at least 1); NULL when out of memory. */
struct psi_authcache *psi_authcache_new(size_t capacity);

/* Free (NULL is fine). */
void psi_authcache_free(struct psi_authcache *c);

/* The status cached for key at now_ms, or 0 when there is none (or it expired). */
int psi_authcache_get(const struct psi_authcache *c, const unsigned char key[PSI_AUTHCACHE_KEY], int64_t now_ms);

/* Cache status for key until expires_ms (replacing an entry of the same key; a refusal
 * is dropped when only live allowances could make room for it). */
void psi_authcache_put(struct psi_authcache *c, const unsigned char key[PSI_AUTHCACHE_KEY], int status, int64_t now_ms,
                       int64_t expires_ms);

/* Entries not yet expired at now_ms. */
size_t psi_authcache_live(const struct psi_authcache *c, int64_t now_ms);

#endif
