/* resources: resource amounts of objects (api_quantity parses them) and what pods request,
 * for the fit check of rebalancing. Pure.
 *
 * A pod's effective request of a resource is what the scheduler counts: the larger of
 *   - the sum over its containers plus its sidecars (init containers with restartPolicy
 *     Always, which run beside the containers), and
 *   - for each other init container, its own request plus the sidecars started before it,
 * plus spec.overhead (RuntimeClass overhead, which KubeVirt does not use but others do).
 * Requests are read as the API server stored them (it copies limits into absent requests). */
#ifndef PSI_RECONCILE_RESOURCES_H
#define PSI_RECONCILE_RESOURCES_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* The quantity at obj[key] (a string, or a plain number), or NAN when absent or invalid. */
double resources_get(const cJSON *obj, const char *key);

/* A pod's effective requests (rule above) of cpu (cores) and memory (bytes); 0 for what it
 * does not request. pod is a Pod object (or a projection keeping spec.containers,
 * spec.initContainers and spec.overhead). */
void resources_pod_requests(const cJSON *pod, double *cpu, double *memory);

#endif
