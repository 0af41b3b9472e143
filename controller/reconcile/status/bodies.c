/* bodies: the bodies of the reconciler's writes to its PsiRebalance (see bodies.h). */
#include "reconcile/status/bodies.h"

#include <string.h>

#include "base/jx.h"

static bool ours(const cJSON *f)
{
    return cJSON_IsString(f) && strcmp(f->valuestring, BODIES_FINALIZER) == 0;
}

bool bodies_has_finalizer(const cJSON *obj)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, jx_get(obj, "metadata.finalizers"))
        if (ours(f))
            return true;
    return false;
}

/* The patch operation {"op": op, "path": path} with value (taken over; NULL: none). */
static cJSON *operation(const char *op, const char *path, cJSON *value)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !value || !cJSON_AddStringToObject(o, "op", op) || !cJSON_AddStringToObject(o, "path", path) ||
        !cJSON_AddItemToObject(o, "value", value)) {
        cJSON_Delete(o);
        cJSON_Delete(value);
        return NULL;
    }
    return o;
}

/* The finalizers of meta with ours added (present) or dropped; NULL on no memory. */
static cJSON *finalizers(const cJSON *list, bool present)
{
    cJSON *next = cJSON_CreateArray();
    const cJSON *f;
    bool ok = next != NULL;
    cJSON_ArrayForEach (f, list)
        if (ok && !ours(f))
            ok = cJSON_AddItemToArray(next, cJSON_Duplicate(f, 1));
    if (ok && present)
        ok = cJSON_AddItemToArray(next, cJSON_CreateString(BODIES_FINALIZER));
    if (!ok) {
        cJSON_Delete(next);
        return NULL;
    }
    return next;
}

cJSON *bodies_finalizer_patch(const cJSON *obj, bool present)
{
    const cJSON *meta = jx_at(obj, "metadata");
    const cJSON *list = jx_at(meta, "finalizers"), *rv = jx_at(meta, "resourceVersion");
    cJSON *next = finalizers(list, present);
    cJSON *test =
        operation("test", "/metadata/resourceVersion", cJSON_CreateString(cJSON_IsString(rv) ? rv->valuestring : ""));
    cJSON *set = next ? operation(list ? "replace" : "add", "/metadata/finalizers", next) : NULL;
    cJSON *patch = cJSON_CreateArray();
    if (patch && test && cJSON_AddItemToArray(patch, test)) {
        test = NULL;
        if (set && cJSON_AddItemToArray(patch, set))
            return patch;
    }
    cJSON_Delete(patch);
    cJSON_Delete(test);
    cJSON_Delete(set);
    return NULL;
}

cJSON *bodies_status(const cJSON *obj)
{
    cJSON *body = cJSON_CreateObject();
    static const char *const keep[] = {"apiVersion", "kind", "metadata"};
    for (size_t i = 0; body && i < sizeof(keep) / sizeof(keep[0]); i++) {
        const cJSON *v = jx_at(obj, keep[i]);
        if (v && !cJSON_AddItemToObject(body, keep[i], cJSON_Duplicate(v, 1))) {
            cJSON_Delete(body);
            return NULL;
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "metadata"), "managedFields");
    return body;
}
