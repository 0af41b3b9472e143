/* inflight: how many VMs count against spec.eviction.maxInFlightMigrations. Pure.
 *
 * A live migration is in flight from the moment it is asked for until KubeVirt ends it, and
 * between those moments it is not always a running VirtualMachineInstanceMigration:
 *   - the evacuation controller marks a VMI (status.evacuationNodeName, the node it must
 *     leave) and creates a kubevirt-evacuation-* migration for it; until the target takes
 *     over, virt-handler keeps the mark (pkg/virt-handler/migration-target.go clears it), so
 *     a marked VMI still on the marked node is waiting to be migrated
 *     (hasMigratedOnEviction and getMarkedForEvictionVMIs,
 *     pkg/virt-controller/watch/drain/evacuation/evacuation.go);
 *   - when one of its migrations failed, the controller creates the next one, which waits in
 *     phase Pending for a backoff of 20 s, doubling with each failure
 *     (handleMigrationBackoff, pkg/virt-controller/watch/migration/migration.go); between the
 *     failure and the next migration the VMI is marked and no migration is unfinished;
 *   - virt-controller annotates the launcher pod of a marked VMI
 *     descheduler.alpha.kubernetes.io/eviction-in-progress (evictor.h);
 *   - a move the operator asked for has no migration object for a moment (history.h).
 * A VMI with eviction strategy External is marked too, but nothing migrates it (KubeVirt's
 * API: the mark is a signal to another controller), so its mark does not count.
 *
 * Each VM counts once, whatever says it is moving: an unfinished migration of it (any phase
 * but Succeeded and Failed, Pending included), its mark, its pod's annotation, or a move of
 * ours that has no migration yet. */
#ifndef PSI_RECONCILE_MOVE_INFLIGHT_H
#define PSI_RECONCILE_MOVE_INFLIGHT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "reconcile/move/moves.h"

/* A VM said to be moving: its VMI's namespace and name (borrowed). */
struct inflight_vm {
    const char *ns, *name;
};

/* Whether vmi (a VirtualMachineInstance, or gather_vmi_projection's projection: metadata,
 * spec.evictionStrategy, status.{nodeName, evacuationNodeName, phase}) is marked for
 * evacuation and not migrated yet: evacuationNodeName set and equal to nodeName, the VMI not
 * Succeeded or Failed, its eviction strategy (kubevirt: the KubeVirt CR for the cluster-wide
 * default, may be NULL) not External. */
bool inflight_vmi_waiting(const cJSON *vmi, const cJSON *kubevirt);

/* Whether pod (a Pod, or a projection keeping metadata.{namespace, annotations,
 * ownerReferences}, status.phase) is the launcher of a VM under an eviction in progress
 * (evictor_eviction_in_progress) and not Succeeded or Failed; its VMI to *vm (pointing into
 * pod) when it is. */
bool inflight_pod_vm(const cJSON *pod, struct inflight_vm *vm);

/* The number of distinct VMs in flight: those of the unfinished migrations of migs (nmigs,
 * every migration seen) and those of more (nmore: marked VMIs, annotated pods, moves of ours
 * without a migration; entries without a name are skipped). Returns the count, or -1 on no
 * memory. */
int inflight_count(const struct moves_migration *migs, size_t nmigs, const struct inflight_vm *more, size_t nmore);

#endif
