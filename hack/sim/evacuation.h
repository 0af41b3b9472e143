/* evacuation: virt-controller's evacuation controller. A VMI marked for evacuation (its
 * status.evacuationNodeName is the node it runs on: the eviction webhook marked it) whose
 * strategy wants a live migration (LiveMigrate, or LiveMigrateIfPossible and migratable)
 * gets a VirtualMachineInstanceMigration named kubevirt-evacuation-<suffix>, annotated
 * kubevirt.io/evacuationMigration: <node>, with spec.priority system-critical, or
 * system-maintenance when the webhook annotated the VMI kubevirt.io/eviction-source:
 * descheduler (objects_evacuation), unless it already has an unfinished migration
 * or a second launcher pod. It creates them all at once, as KubeVirt does since the
 * MigrationPriorityQueue feature gate (GA in v1.9; pkg/virt-controller/watch/drain/evacuation/
 * evacuation.go, sync: selectedCandidates is every candidate): the migration controller's
 * queue (migration.h) holds them to the slots, by priority. A failed evacuation is retried
 * the same way (the migration controller applies the backoff). Once the VMI runs elsewhere, the mark
 * (evacuationNodeName and the kubevirt.io/eviction-source annotation) is cleared, as
 * virt-handler does. */
#ifndef PSI_SIM_EVACUATION_H
#define PSI_SIM_EVACUATION_H

#include "hack/sim/sim.h"

struct evacuation;

/* New controller over s (borrowed); NULL when out of memory. */
struct evacuation *evacuation_new(struct sim *s);

/* Free (NULL is fine). */
void evacuation_free(struct evacuation *e);

/* One pass over the marked VMIs. */
void evacuation_sync(struct evacuation *e);

#endif
