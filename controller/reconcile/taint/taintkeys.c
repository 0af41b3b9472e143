/* taintkeys: status.taintKeys kept crash-safe (see taintkeys.h). */
#include "reconcile/taint/taintkeys.h"

#include <string.h>

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

bool taintkeys_record_first(const struct api_status *stored, const char *stored_by_us, const char *key, size_t adds)
{
    if (adds == 0 || same(stored_by_us, key))
        return false;
    for (size_t i = 0; stored && i < stored->ntaint_keys; i++)
        if (same(stored->taint_keys[i], key))
            return false;
    return true;
}

bool taintkeys_forget(const char *key, const char *current, int failures)
{
    return !same(key, current) && failures == 0;
}
