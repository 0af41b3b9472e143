/* bodies: the bodies of the reconciler's writes to its own PsiRebalance. Pure: the object as
 * the informer keeps it in, JSON out (the caller frees with cJSON_Delete; NULL on no memory). */
#ifndef PSI_RECONCILE_BODIES_H
#define PSI_RECONCILE_BODIES_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* The finalizer that makes a deletion wait until our taints are off the nodes. */
#define BODIES_FINALIZER "rebalance.psi.dev/taint-cleanup"

/* Whether obj's metadata.finalizers holds BODIES_FINALIZER. */
bool bodies_has_finalizer(const cJSON *obj);

/* A JSON patch adding (present) or dropping BODIES_FINALIZER, keeping the other finalizers,
 * that tests the resourceVersion the list was computed from. */
cJSON *bodies_finalizer_patch(const cJSON *obj, bool present);

/* The body of a status write for obj: its identity (apiVersion, kind, metadata without
 * managedFields, whose resourceVersion guards the write) without its spec and old status,
 * which the status subresource takes from the stored object and which grow with the cluster. */
cJSON *bodies_status(const cJSON *obj);

#endif
