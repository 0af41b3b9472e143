/* predict: how much a workload wants, and how much pressure a node shows at a load. Pure
 * arithmetic on plain numbers.
 *
 * Pressure is predicted from load L (demand over capacity) with the shape of the kernel's CPU
 * "some", f(L) = 1 - exp(-(L / REBALANCE_CURVE_SCALE) ^ REBALANCE_CURVE_SHAPE), scaled per
 * node and resource by a calibrated k. Demand is inferred by inverting the curve: below
 * saturation the load is f^-1(reading / (100 k)) and a node's demand that load times its
 * capacity, never less than its usage; a workload's demand is its usage times the node's
 * demand over what it is served (max(1, L): the kernel serves every demand below capacity and
 * capacity / demand of each past it). Where the curve is flat (REBALANCE_FLAT and more) a
 * reading no longer tells the load: there the inference stops at the flat point's load, and
 * the edge takes a saturated node's demand from signals that do not saturate (demand.h). The
 * model and why it is shaped so: docs/architecture.md, "Rebalancing: the model". */
#ifndef PSI_RECONCILE_MOVE_PREDICT_H
#define PSI_RECONCILE_MOVE_PREDICT_H

#include <stdbool.h>

/* The kernel's CPU "some" curve, from bench/psi-kernel's measurement (kernel 6.18, 1 and 2
 * CPUs, tasks of 4 and 40 ms periods and two VMs of 4 and 2 vCPU threads, demand 0.1-2.5 x
 * capacity, 3 repetitions): the least-squares Weibull fit of bench/psi-kernel/fit.py over its
 * 180 quiet-run readings, bench/results/psi-kernel-2026-12-03-full.txt ("cpu, all sizes":
 * scale 0.922, shape 3.913, RMS error 8.6 points, worst 28.5). It reads 9 % at L = 0.5, 29 %
 * at 0.7, 60 % at 0.9, 75 % at 1.0, 90 % at 1.14 and 99 % at 1.4; the measurement read
 * 26-43 %, 34-63 %, 68-88 %, 90-95 % (1.2) and 97-100 % (1.5) there. */
#define REBALANCE_CURVE_SCALE 0.922
#define REBALANCE_CURVE_SHAPE 3.913
/* The share (0.9) from which the curve is flat: it is reached at L = 1.14, and a reading there
 * and above says the node is saturated but not by how much (the measurement's repetitions
 * spread 1-5 points from 1.1 x capacity on, which is 0.05-0.3 in load). */
#define REBALANCE_FLAT 0.9
/* The largest unserved share used to infer a saturated node's memory demand (twice its
 * memory at most): memory pressure read high, as when it is skewed against the unserved
 * share, must not make a node look beyond relief. */
#define REBALANCE_MAX_MEMORY_STALL 0.5
/* A node using this share of its memory or more is saturated (rebalance_node_memory_demand). */
#define REBALANCE_SATURATED 0.9
/* The scale of the curve of a destination that has no calibration: readings up to 1.5 times
 * the curve keep it below the taint level (the quiet measurement read up to 1.6 times the fit
 * at 0.7, 1.2 times from 0.9 on). */
#define REBALANCE_SAFETY 1.5
/* The same for memory, on its curve (rebalance_memory_curve): readings up to 2.5 times it. */
#define REBALANCE_MEMORY_SAFETY 2.5
/* The bounds of a scale calibrated from readings. */
#define REBALANCE_SCALE_MIN 0.2
#define REBALANCE_SCALE_MAX 10.0
/* A reading calibrates only where the curve is at least this (2 %, L = 0.34): below, noise rules. */
#define REBALANCE_INFORMATIVE 0.02
/* The weight of a new reading in a calibrated scale (rebalance_calibrate). */
#define REBALANCE_CALIBRATION_WEIGHT 0.3
/* Usage over capacity from which usage no longer tells the load (the kernel serves 0.91-0.98
 * of the capacity at full load): rebalance_load_from_served. */
#define REBALANCE_SERVED_FULL 0.97

/* The resources the planner balances on. */
enum rebalance_resource { REBALANCE_CPU = 0, REBALANCE_MEMORY = 1, REBALANCE_NRES = 2 };
#define REBALANCE_RES_CPU (1u << REBALANCE_CPU)
#define REBALANCE_RES_MEMORY (1u << REBALANCE_MEMORY)

/* The curve f(L) (a share, 0..1) at load L; 0 for NAN or L <= 0. Increasing in L. */
double rebalance_curve(double load);

/* The burstiness b of the memory curve (docs/architecture.md). */
#define REBALANCE_BURSTINESS 0.25

/* The memory curve (a share, 0..1) at load L: the share of demand that waits when it
 * fluctuates normally around its mean with a coefficient of variation REBALANCE_BURSTINESS,
 * f(L) = (1 - 1/L) Phi(z) + b phi(z), z = (1 - 1/L) / b; 0 for NAN or L <= 0. The kernel's
 * memory pressure was not measured on a known demand (bench/README.md), so memory keeps this
 * curve, as the simulator's memory does. */
double rebalance_memory_curve(double load);

/* The curve of resource r (enum rebalance_resource) at load L: rebalance_curve for CPU,
 * rebalance_memory_curve for memory. */
double rebalance_resource_curve(int r, double load);

/* The inverse of the curve: the load L with f(L) = some (a share), for 0 <= some <
 * REBALANCE_FLAT; the flat point's load (1.14) for some >= REBALANCE_FLAT (the least load the
 * reading says, never more: the curve cannot tell it); 0 for some <= 0; NAN for NAN. */
double rebalance_load_from_some(double some);

/* The load a CPU reading (percent; NAN or negative: 0) says, read with the node's scale (<= 0
 * or NAN: 1): rebalance_load_from_some(pressure / (100 scale)). */
double rebalance_load_from_pressure(double pressure, double scale);

/* Demand (cores) from usage (cores) and the CPU "some" pressure (percent; NAN as 0) of the
 * node it runs on: rebalance_demand_scaled with scale 1. */
double rebalance_demand(double usage, double cpu_pressure);

/* A workload's demand from its usage and the pressure of the node it runs on, read with the
 * node's scale: usage * max(1, L), L = rebalance_load_from_pressure (what the node's demand is
 * over what it serves; at most REBALANCE_FLAT's load, 1.14 x the usage). */
double rebalance_demand_scaled(double usage, double pressure, double scale);

/* Demand (cores) of a node from its usage, CPUs and CPU "some" pressure: rebalance_node_demand_scaled
 * with scale 1. */
double rebalance_node_demand(double usage, double cpus, double cpu_pressure);

/* A node's CPU demand: max(usage, L * cpus), L = rebalance_load_from_pressure(cpu_pressure,
 * scale): at most 1.14 x its CPUs or its usage, whichever is more, however high the reading
 * (a saturated node's demand comes from the signals of demand.h). NAN when usage or cpus is
 * unknown. */
double rebalance_node_demand_scaled(double usage, double cpus, double cpu_pressure, double scale);

/* Memory demand (bytes) of a node from its memory in use, its memory and its memory "some"
 * pressure. A node cannot hold more than its memory: one using at least REBALANCE_SATURATED
 * of it is saturated, and what waits shows only as pressure, so its demand is its memory /
 * (1 - min(pressure / 100, REBALANCE_MAX_MEMORY_STALL)). In use beyond the memory (the
 * workloads' working sets summed) is the demand itself; below saturation, in use. NAN when in
 * use or the memory is unknown. */
double rebalance_node_memory_demand(double used, double memory, double mem_pressure);

/* Predicted pressure (percent) of a node at load L with scale k: 100 * min(1, k * f(L)). */
double rebalance_predict(double load, double scale);

/* Predicted pressure (percent) at load L with scale 1. */
double rebalance_predicted_pressure(double load);

/* The load L at which a node uses the share `served` of its capacity (usage over capacity):
 * the kernel serves every demand below capacity, so L = served. NAN when served is unknown,
 * negative, or REBALANCE_SERVED_FULL and more (saturated: the load cannot be told from it). */
double rebalance_load_from_served(double served);

/* k clamped to REBALANCE_SCALE_MIN..REBALANCE_SCALE_MAX. */
double rebalance_clamp_scale(double k);

/* A node's scale for one resource after one more reading: served is its usage over capacity,
 * pressure the reading (percent). The reading calibrates when the load it implies
 * (rebalance_load_from_served) has f(L) >= REBALANCE_INFORMATIVE: its own scale
 * P / (100 f(L)), clamped to the bounds, weighted REBALANCE_CALIBRATION_WEIGHT against prev
 * (<= 0: none yet, the reading's scale is taken as is). Otherwise prev is returned. */
double rebalance_calibrate(double prev, double served, double pressure);

/* The scale a plan predicts a node with on resource r, from its reading P (percent; NAN: none),
 * f = the curve at its load, and its calibrated scale cal (<= 0 or NAN: none). The reading is
 * informative when f >= REBALANCE_INFORMATIVE; its own scale is then P / (100 f), clamped. A
 * source takes its own scale, else cal, else 1: what it reads is what must come off. Any other
 * node takes cal (else REBALANCE_SAFETY, REBALANCE_MEMORY_SAFETY for memory), raised to its own
 * scale when that is higher: a destination is never predicted cooler than it reads. */
double rebalance_plan_scale(int r, bool source, double P, double f, double cal);

#endif
