/* grow: growable arrays (see grow.h). */
#include "base/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int base_grow(void *array, size_t need, size_t *cap, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (size && c > SIZE_MAX / size)
        return -1;
    void *old;
    memcpy(&old, array, sizeof(old)); /* the caller's T *, as a void * */
    void *v = realloc(old, c * size);
    if (!v)
        return -1;
    memcpy(array, &v, sizeof(v));
    *cap = c;
    return 0;
}
