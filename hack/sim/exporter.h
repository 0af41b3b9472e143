/* sim_exporter: per-node pressure rates integrated over time into node_exporter's PSI
 * counters, rendered in the Prometheus text format. Pure: time is passed in (seconds on
 * any clock that does not go back), nothing is read from the system.
 *
 * A node exports six counters, named as node_exporter names them, in seconds:
 *   node_pressure_cpu_waiting_seconds_total     cpu "some"
 *   node_pressure_cpu_stalled_seconds_total     cpu "full" (node_exporter >= 1.8)
 *   node_pressure_memory_waiting_seconds_total  memory "some"
 *   node_pressure_memory_stalled_seconds_total  memory "full"
 *   node_pressure_io_waiting_seconds_total      io "some"
 *   node_pressure_io_stalled_seconds_total      io "full"
 * A pressure of p percent makes its counter grow by p/100 seconds per second, so
 * 100 * rate(counter[w]) reads p back. Counters start at 0 when a node is added. The
 * caller keeps "full" <= "some" if it wants the kernel's invariant; nothing enforces it.
 *
 * A node may also export CPU utilisation, once set (sim_exporter_set_utilization), as
 * node_exporter's node_cpu_seconds_total{cpu="0",mode="idle"} of a single CPU: idle seconds
 * grow by (100 - u)/100 per second, so 1 - rate(counter[w]) reads u/100 back; once its busy
 * cores are set (sim_exporter_set_cpu_busy), also node_cpu_seconds_total{cpu="0",mode="user"},
 * growing by that many seconds per second, so the sum of the non-idle modes' rates reads the
 * cores in use back (one CPU's counters carrying the whole node's use). And memory,
 * once set (sim_exporter_set_memory), as node_exporter's node_memory_MemTotal_bytes and
 * node_memory_MemAvailable_bytes gauges.
 *
 * Two renderings: every node with an instance="<node>" label (one scrape for all), or
 * one node without labels (a per-node scrape target whose target labels set instance,
 * as Prometheus does for a real node_exporter; a scraped instance label would otherwise
 * be renamed exported_instance by honor_labels: false). */
#ifndef PSI_SIM_EXPORTER_H
#define PSI_SIM_EXPORTER_H

#include <stddef.h>

#include "api/pressure.h"

struct sim_exporter;

/* A new exporter with no nodes; NULL when out of memory. Free with sim_exporter_free. */
struct sim_exporter *sim_exporter_new(void);

/* Free (NULL is fine). */
void sim_exporter_free(struct sim_exporter *e);

/* Start exporting node at time now with every pressure 0 (no-op when present). Returns 0,
 * -1 on an empty name or out of memory. */
int sim_exporter_add_node(struct sim_exporter *e, const char *node, double now);

/* Stop exporting node (its counters are forgotten). Returns 0, -1 when absent. */
int sim_exporter_remove_node(struct sim_exporter *e, const char *node);

/* Set node's pressure of r/kind to percent (0..100) from time now on; the counter first
 * integrates the previous rate up to now. The node is added when absent. Returns 0, -1 on
 * a percent outside 0..100 (or NaN), now before the node's last update, or ENOMEM. */
int sim_exporter_set(struct sim_exporter *e, const char *node, enum psi_resource r, enum psi_kind kind, double percent,
                     double now);

/* Set node's CPU utilisation to percent (0..100) from time now on, as sim_exporter_set
 * does for a pressure (same returns); from then on the node exports its idle counter. */
int sim_exporter_set_utilization(struct sim_exporter *e, const char *node, double percent, double now);

/* Set the CPU cores node uses (>= 0) from time now on (same returns as sim_exporter_set); from
 * then on the node exports its user-mode counter. */
int sim_exporter_set_cpu_busy(struct sim_exporter *e, const char *node, double cores, double now);

/* Set node's run queue from time now on: node_exporter's node_load1 gauge (runnable tasks)
 * and node_schedstat_waiting_seconds_total{cpu="0"}, growing by `waiting` seconds per second
 * (the tasks waiting for a CPU; one CPU's counter carrying the whole node's). Both >= 0; same
 * returns as sim_exporter_set. */
int sim_exporter_set_runqueue(struct sim_exporter *e, const char *node, double load1, double waiting, double now);

/* Set node's memory size and the bytes still available (0 <= available <= total); from then
 * on the node exports both gauges. Returns 0, -1 on values out of range or ENOMEM. */
int sim_exporter_set_memory(struct sim_exporter *e, const char *node, double total, double available, double now);

/* The pressure percent set for node r/kind, or NaN when the node is absent. */
double sim_exporter_pressure(const struct sim_exporter *e, const char *node, enum psi_resource r, enum psi_kind kind);

/* The counter value (seconds) of node r/kind at time now, or NaN when absent. */
double sim_exporter_counter(const struct sim_exporter *e, const char *node, enum psi_resource r, enum psi_kind kind,
                            double now);

/* Number of nodes, and the name of the i-th (in the order added; NULL past the end). */
size_t sim_exporter_count(const struct sim_exporter *e);
const char *sim_exporter_node(const struct sim_exporter *e, size_t i);

/* The counter's metric name for r/kind. */
const char *sim_exporter_metric_name(enum psi_resource r, enum psi_kind kind);

/* Render at time now: every node with an instance label when node is NULL, else only that
 * node without labels. Returns text the caller frees (*len set when non-NULL), or NULL when
 * node is absent or out of memory. */
char *sim_exporter_render(const struct sim_exporter *e, double now, const char *node, size_t *len);

#endif
