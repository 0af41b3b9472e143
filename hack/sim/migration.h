/* migration: the migration controller (virt-controller's, with virt-handler's part played
 * along). Every VirtualMachineInstanceMigration of the namespace, whoever created it (the
 * evacuation controller, a user, the operator), runs through KubeVirt's phases:
 *
 *   ""            -> Pending, or Failed when the VMI does not exist or already migrates
 *   Pending       an evacuation migration marks the source pod
 *                 descheduler.alpha.kubernetes.io/eviction-in-progress; after a failed
 *                 evacuation of the same VMI it waits a backoff (20 s by default, doubling);
 *                 then, when the limits allow (see miglimits.h; the waiting ones in
 *                 KubeVirt's queue order, miglimits_queue_order: priority, then first
 *                 come), it creates the target launcher pod (required anti-affinity to
 *                 the VMI's pods by hostname, the migration's addedNodeSelector) for the
 *                 real scheduler to place -> Scheduling
 *   Scheduling    the target pod runs -> Scheduled, the VMI's status.migrationState is
 *                 handed off (source and target node and pod, the migration's UID); a target
 *                 pod unschedulable longer than the scenario's timeout is deleted -> Failed
 *   Scheduled -> PreparingTarget -> TargetReady -> Running, a phase delay apart; Running
 *                 sets migrationState.startTimestamp and lasts base + guest memory /
 *                 bandwidth (so it grows with the VM's memory)
 *   Running       -> Succeeded: the VMI moves (status.nodeName = target, same UID),
 *                 evacuationNodeName and the eviction-source annotation are cleared, the
 *                 source pod is deleted; or -> Failed when the scenario injects a failure
 *                 (failureRate, failVMs): the target pod is deleted, the VMI stays where it
 *                 was with migrationState.failed, the source pod loses eviction-in-progress.
 * A migration whose source or target pod disappears on the way fails. A deleted migration
 * loses its target pod. Every transition is logged and recorded. */
#ifndef PSI_SIM_MIGRATION_H
#define PSI_SIM_MIGRATION_H

#include <stddef.h>

#include "hack/sim/sim.h"

struct migration;

/* New controller over s (borrowed); NULL when out of memory. */
struct migration *migration_new(struct sim *s);

/* Free (NULL is fine). */
void migration_free(struct migration *m);

/* One pass over every migration of the namespace. */
void migration_sync(struct migration *m);

#endif
