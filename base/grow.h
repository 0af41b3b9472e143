/* grow: growable arrays that grow by a factor (amortised constant time per element, instead
 * of a realloc per element). An array is a pointer variable, a count and a capacity:
 *
 *     struct item *v = NULL;
 *     size_t n = 0, cap = 0;
 *     if (BASE_GROW(v, n + 1, cap) < 0)
 *         return -1;            // no memory: v, n and cap are as they were
 *     v[n++] = item;
 */
#ifndef PSI_BASE_GROW_H
#define PSI_BASE_GROW_H

#include <stddef.h>

/* Make room for at least need elements of size bytes in the array whose pointer variable is at
 * array (a T **, passed as void *) with capacity *cap: the capacity doubles (from 8) until it
 * holds need. Returns 0, or -1 on no memory or overflow (nothing changed). */
int base_grow(void *array, size_t need, size_t *cap, size_t size);

/* base_grow for pointer variable v of capacity variable cap (both lvalues). */
#define BASE_GROW(v, need, cap) base_grow(&(v), (need), &(cap), sizeof(*(v)))

#endif
