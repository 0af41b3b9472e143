/* nodeproj: what the operator keeps of a Node, compact. The node informer stores one per node
 * (nodeproj_project, nodeproj_free) in place of a JSON tree: the name, resourceVersion and
 * creationTimestamp inline, the first InternalIP, the resources rebalancing reads as numbers,
 * metadata.labels as shared strings (nodelabels.h), spec.taints as JSON (verbatim: a taint
 * patch tests against it; NULL when the node has none), and the MachineConfig daemon's three
 * annotations a rollout is followed by (rollout.h). Not thread-safe (nodelabels.h). */
#ifndef PSI_RECONCILE_NODEPROJ_H
#define PSI_RECONCILE_NODEPROJ_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "reconcile/status/nodelabels.h"

/* The MachineConfig operator's node annotations (CurrentMachineConfigAnnotationKey,
 * DesiredMachineConfigAnnotationKey, MachineConfigDaemonStateAnnotationKey in the
 * machine-config-operator's pkg/daemon/constants/constants.go). */
#define NODEPROJ_MC_CURRENT "machineconfiguration.openshift.io/currentConfig"
#define NODEPROJ_MC_DESIRED "machineconfiguration.openshift.io/desiredConfig"
#define NODEPROJ_MC_STATE "machineconfiguration.openshift.io/state"

/* A Node as kept. */
struct nodeproj {
    char rv[24];      /* metadata.resourceVersion ("" when longer or absent) */
    char created[24]; /* metadata.creationTimestamp (RFC 3339, "" when absent) */
    char ip[48];      /* the first status.addresses entry of type InternalIP, "" none */
    bool unschedulable;
    double cpus;                                /* status.capacity.cpu (cores); NAN absent */
    double memory;                              /* status.capacity.memory (bytes); NAN absent */
    double alloc_cpu, alloc_memory, alloc_pods; /* status.allocatable; NAN absent */
    struct nodelabels *labels;                  /* metadata.labels (nodelabels.h); NULL none */
    cJSON *taints;                              /* spec.taints; NULL when none */
    char *mc_current, *mc_desired, *mc_state;   /* NODEPROJ_MC_* annotations (owned); NULL absent */
    char name[];                                /* metadata.name */
};

/* kube_informer_project_fn: a new nodeproj of node (a Node object), or NULL (no name, or no
 * memory). */
void *nodeproj_project(const cJSON *node, void *ud);

/* Free what nodeproj_project made (NULL is fine); the informer's free_value. */
void nodeproj_free(void *p);

/* Whether a and b (either may be NULL) differ in more than their resourceVersion: a heartbeat
 * changes nothing kept, and costs no reconcile. */
bool nodeproj_changed(const struct nodeproj *a, const struct nodeproj *b);

#endif
