/* predict: how much a workload wants, and how much pressure a node shows at a load. Pure
 * arithmetic on plain numbers.
 *
 * Usage becomes demand with the node's unserved share u (demand = usage / (1 - u)); a
 * node's load on a resource is its demand over its capacity; pressure is predicted from load
 * with a queueing-like curve f(L), scaled per node and resource by a calibrated k. The model
 * and why it is shaped so: docs/architecture.md, "Rebalancing: the model". */
#ifndef PSI_RECONCILE_MOVE_PREDICT_H
#define PSI_RECONCILE_MOVE_PREDICT_H

/* The largest unserved share used to turn usage into demand (a factor of 50 at most). */
#define REBALANCE_MAX_STALL 0.98
/* The largest unserved share used to infer a saturated node's memory demand (twice its
 * memory at most): memory pressure read high, as when it is skewed against the unserved
 * share, must not make a node look beyond relief. */
#define REBALANCE_MAX_MEMORY_STALL 0.5
/* A node using this share of its CPUs or more is saturated (rebalance_node_demand). */
#define REBALANCE_SATURATED 0.9
/* The burstiness b of the prediction curve (docs/architecture.md). */
#define REBALANCE_BURSTINESS 0.25
/* The scale of the curve of a destination that has no calibration: readings up to 2.5 times
 * the curve keep it below the taint level. */
#define REBALANCE_SAFETY 2.5
/* The bounds of a scale calibrated from readings. */
#define REBALANCE_SCALE_MIN 0.2
#define REBALANCE_SCALE_MAX 10.0
/* A reading calibrates only where the curve is at least this (2 %): below, noise rules. */
#define REBALANCE_INFORMATIVE 0.02
/* The weight of a new reading in a calibrated scale (rebalance_calibrate). */
#define REBALANCE_CALIBRATION_WEIGHT 0.3

/* The resources the planner balances on. */
enum rebalance_resource { REBALANCE_CPU = 0, REBALANCE_MEMORY = 1, REBALANCE_NRES = 2 };
#define REBALANCE_RES_CPU (1u << REBALANCE_CPU)
#define REBALANCE_RES_MEMORY (1u << REBALANCE_MEMORY)

/* Demand (cores) from usage (cores) and the CPU "some" pressure (percent; NAN as 0) of the
 * node it runs on: rebalance_demand_scaled with scale 1. */
double rebalance_demand(double usage, double cpu_pressure);

/* Demand from usage and the pressure of the node it runs on, read with the node's scale (<= 0
 * or NAN: 1): usage / (1 - min(pressure / (100 scale), REBALANCE_MAX_STALL)). */
double rebalance_demand_scaled(double usage, double pressure, double scale);

/* Demand (cores) of a node from its usage, CPUs and CPU "some" pressure: rebalance_demand,
 * except that a node using at least REBALANCE_SATURATED of its CPUs counts as using all of
 * them (it is saturated; what usage misses there, such as system load outside the measured
 * workloads, waits too). NAN when usage or cpus is unknown. */
double rebalance_node_demand(double usage, double cpus, double cpu_pressure);

/* Memory demand (bytes) of a node from its memory in use, its memory and its memory "some"
 * pressure. A node cannot hold more than its memory: one using at least REBALANCE_SATURATED
 * of it is saturated, and what waits shows only as pressure, so its demand is its memory /
 * (1 - min(pressure / 100, REBALANCE_MAX_MEMORY_STALL)), as for CPU. In use beyond the
 * memory (the workloads' working sets summed) is the demand itself; below saturation, in
 * use. NAN when in use or the memory is unknown. */
double rebalance_node_memory_demand(double used, double memory, double mem_pressure);

/* rebalance_node_demand with the pressure read with the node's scale (rebalance_demand_scaled). */
double rebalance_node_demand_scaled(double usage, double cpus, double cpu_pressure, double scale);

/* The curve f(L) (a share, 0..1) at load L; 0 for NAN or L <= 0. */
double rebalance_curve(double load);

/* Predicted pressure (percent) of a node at load L with scale k: 100 * min(1, k * f(L)). */
double rebalance_predict(double load, double scale);

/* Predicted pressure (percent) at load L with scale 1. */
double rebalance_predicted_pressure(double load);

/* The load L at which a node uses the share `served` of its capacity (usage over capacity):
 * the L with L * (1 - f(L)) = served. NAN when served is unknown, negative, or too close to
 * saturation (0.97 and more) to tell the load from it. */
double rebalance_load_from_served(double served);

/* k clamped to REBALANCE_SCALE_MIN..REBALANCE_SCALE_MAX. */
double rebalance_clamp_scale(double k);

/* A node's scale for one resource after one more reading: served is its usage over capacity,
 * pressure the reading (percent). The reading calibrates when the load it implies
 * (rebalance_load_from_served) has f(L) >= REBALANCE_INFORMATIVE: its own scale
 * P / (100 f(L)), clamped to the bounds, weighted REBALANCE_CALIBRATION_WEIGHT against prev
 * (<= 0: none yet, the reading's scale is taken as is). Otherwise prev is returned. */
double rebalance_calibrate(double prev, double served, double pressure);

#endif
