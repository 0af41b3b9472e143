/* cost: what a VM's live migration costs in time, from what KubeVirt reports. Pure.
 *
 *   - its guest memory: the VMI's spec.domain.memory.guest, else its memory request
 *     (spec.domain.resources.requests.memory): what a live migration copies at least once;
 *   - the time expected, when the move is decided: the VM's last live migration, when its
 *     VMI's status.migrationState says it completed (endTimestamp - startTimestamp); else
 *     its guest memory at the median seconds per GiB of the moves in status.moves that were
 *     timed; else none (the move says so: no basis). Where the rate its memory is dirtied at
 *     is known and above 0 (KubeVirt 1.6 and later: virt-handler's kubevirt_vmi_dirty_rate_bytes_per_second,
 *     pkg/monitoring/metrics/virt-handler/domainstats/dirty_rate_metrics.go, for VMs that are
 *     not migrating), the copy rate B = 1 GiB per that median is lessened by it, D: pre-copy
 *     sends the memory, then what was dirtied meanwhile, and so on, M / (B - D) in all. From
 *     D >= B the pre-copy never catches up: KubeVirt, without auto-converge or post-copy (both
 *     off by default in its MigrationConfiguration), aborts it at completionTimeoutPerGiB, and
 *     the VM is not picked (cost_dirty_hold);
 *   - the time it took: its migration's status.migrationState, start to end (moves.c);
 *   - whether its last migration converged at all (cost_convergence_hold).
 * The planner breaks ties of equal relief with the time expected (plan.c, ranked_before).
 * KubeVirt writes those timestamps in whole seconds (metav1.Time), so are the figures. */
#ifndef PSI_RECONCILE_MOVE_COST_H
#define PSI_RECONCILE_MOVE_COST_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/status.h"

/* Guest memory of a VMI (bytes), or 0 when it states none. */
int64_t cost_vmi_memory(const cJSON *vmi);

/* Whether the VMI's last live migration completed and how long it took (*seconds). */
bool cost_vmi_last_migration(const cJSON *vmi, int64_t *seconds);

/* Why a VM is not moved: its last live migration did not converge. */
#define COST_NOT_CONVERGED "VM whose last live migration did not converge (KubeVirt aborted it)"

/* COST_NOT_CONVERGED while the VMI's last live migration did not converge and ended less than
 * hold_ms before now_ms (the spec's cooldown.initial, the hold of a move of ours that failed),
 * else NULL. KubeVirt's virt-launcher aborts a migration that makes no progress within
 * progressTimeout or has not completed within completionTimeoutPerGiB per GiB
 * (virtwrap/live-migration-source.go, cancelMigration): migrationState then says failed,
 * abortStatus Succeeded, and abortRequested is not set, as it is when someone cancels the
 * migration (virt-controller's markMigrationAbortInVmiStatus). Such a VM dirties memory faster
 * than it is copied; asked again soon, it would run to the timeout again and move nothing. */
const char *cost_convergence_hold(const cJSON *vmi, int64_t hold_ms, int64_t now_ms);

/* The median seconds per GiB of guest memory over the timed moves of moves[0..n) with a
 * known memory; NAN when there is none (or no memory to sort them in). */
double cost_cluster_rate(const struct api_move *moves, size_t n);

/* Why a VM is not moved: its memory is dirtied faster than the cluster's migrations copy it. */
#define COST_DIRTIES_FASTER \
    "VM whose memory is dirtied faster than live migrations copy it here (it would not converge)"

/* The cost of moving vmi, decided now, with the cluster's rate (cost_cluster_rate; NAN: none)
 * and the rate its memory is dirtied at (bytes per second; NAN: not known). */
struct api_move_cost cost_estimate(const cJSON *vmi, double s_per_gib, double dirty_bps);

/* COST_DIRTIES_FASTER when dirty_bps (NAN: unknown) is the cluster's copy rate (1 GiB per
 * s_per_gib seconds; NAN: none measured) or more, else NULL. */
const char *cost_dirty_hold(double s_per_gib, double dirty_bps);

#endif
