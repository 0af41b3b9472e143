/* cost: what a VM's live migration costs in time, from what KubeVirt reports. Pure.
 *
 *   - its guest memory: the VMI's spec.domain.memory.guest, else its memory request
 *     (spec.domain.resources.requests.memory): what a live migration copies at least once;
 *   - the time expected, when the move is decided: the VM's last live migration, when its
 *     VMI's status.migrationState says it completed (endTimestamp - startTimestamp); else
 *     its guest memory at the median seconds per GiB of the moves in status.moves that were
 *     timed; else none (the move says so: no basis);
 *   - the time it took: its migration's status.migrationState, start to end (moves.c).
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

/* The median seconds per GiB of guest memory over the timed moves of moves[0..n) with a
 * known memory; NAN when there is none (or no memory to sort them in). */
double cost_cluster_rate(const struct api_move *moves, size_t n);

/* The cost of moving vmi, decided now, with the cluster's rate (cost_cluster_rate; NAN: none). */
struct api_move_cost cost_estimate(const cJSON *vmi, double s_per_gib);

#endif
