/* nameindex: names to indexes by open addressing (see nameindex.h). */
#include "base/nameindex.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_of(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

int base_nameindex_init(struct base_nameindex *ix, size_t n)
{
    *ix = (struct base_nameindex){0};
    size_t cap = 16;
    while (cap / 2 < n) {
        if (cap > SIZE_MAX / 4 / sizeof(size_t))
            return -1;
        cap *= 2;
    }
    ix->names = calloc(cap, sizeof(*ix->names));
    ix->values = calloc(cap, sizeof(*ix->values));
    if (!ix->names || !ix->values) {
        base_nameindex_release(ix);
        return -1;
    }
    ix->cap = cap;
    return 0;
}

void base_nameindex_put(struct base_nameindex *ix, const char *name, size_t value)
{
    size_t i = (size_t)hash_of(name) & (ix->cap - 1);
    while (ix->names[i]) {
        if (strcmp(ix->names[i], name) == 0)
            return; /* the first one put stays */
        i = (i + 1) & (ix->cap - 1);
    }
    ix->names[i] = name;
    ix->values[i] = value;
}

long base_nameindex_get(const struct base_nameindex *ix, const char *name)
{
    if (!name || !ix->cap)
        return -1;
    size_t i = (size_t)hash_of(name) & (ix->cap - 1);
    while (ix->names[i]) {
        if (strcmp(ix->names[i], name) == 0)
            return (long)ix->values[i];
        i = (i + 1) & (ix->cap - 1);
    }
    return -1;
}

void base_nameindex_release(struct base_nameindex *ix)
{
    free(ix->names);
    free(ix->values);
    *ix = (struct base_nameindex){0};
}
