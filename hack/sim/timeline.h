/* timeline: the scenario's events, applied when their time comes (counted from the end of
 * the start, when every VM first runs): demand changes, a node drain, a rolling drain of
 * every simulated node in name order (one at a time: the next starts when the previous
 * node is back), and MachineConfigs created as an admin would. */
#ifndef PSI_SIM_TIMELINE_H
#define PSI_SIM_TIMELINE_H

#include <stdbool.h>

#include "hack/sim/mco.h"
#include "hack/sim/sim.h"
#include "hack/sim/workload.h"

struct timeline;

/* New timeline over s, w and m (borrowed; m may be NULL without the MCO). NULL when out of
 * memory. */
struct timeline *timeline_new(struct sim *s, struct workload *w, struct mco *m);

/* Free; drains in progress stop where they are (NULL is fine). */
void timeline_free(struct timeline *t);

/* Start the clock (call once, when the start is over). */
void timeline_begin(struct timeline *t);

/* Apply the events that are due and move the drains on. */
void timeline_step(struct timeline *t);

/* Whether every event was applied and every drain is over. */
bool timeline_done(const struct timeline *t);

#endif
