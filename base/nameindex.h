/* nameindex: names to indexes, in constant time on average (open addressing, FNV-1a), for
 * matching many objects to a set of named ones (pods to their nodes) without a scan per
 * object.
 *
 *     struct base_nameindex ix;
 *     if (base_nameindex_init(&ix, n) < 0)
 *         return -1;                          // no memory
 *     for (size_t i = 0; i < n; i++)
 *         base_nameindex_put(&ix, names[i], i);
 *     long i = base_nameindex_get(&ix, name); // -1: not there
 *     base_nameindex_release(&ix);
 *
 * Ownership: the names are borrowed and must outlive the index; it copies nothing. A name put
 * twice keeps its first index, as a scan from the first would find. */
#ifndef PSI_BASE_NAMEINDEX_H
#define PSI_BASE_NAMEINDEX_H

#include <stddef.h>

struct base_nameindex {
    const char **names; /* the slots (NULL: free) */
    size_t *values;
    size_t cap; /* a power of two, at least twice the names it was made for */
};

/* An empty index with room for n names. Returns 0, or -1 on no memory or overflow (*ix then
 * holds nothing to release). */
int base_nameindex_init(struct base_nameindex *ix, size_t n);

/* Map name (not NULL) to value unless it is there already. At most the n names of init. */
void base_nameindex_put(struct base_nameindex *ix, const char *name, size_t value);

/* The value of name, or -1 when it is not there (or name is NULL). */
long base_nameindex_get(const struct base_nameindex *ix, const char *name);

/* Release what the index owns (its slots, not the names). */
void base_nameindex_release(struct base_nameindex *ix);

#endif
