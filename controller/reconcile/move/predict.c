/* predict: demand from usage and pressure, and pressure from load (see predict.h). */
#include "reconcile/move/predict.h"

#include <math.h>

double rebalance_curve(double load)
{
    if (isnan(load) || load <= 0)
        return 0;
    double f = -expm1(-pow(load / REBALANCE_CURVE_SCALE, REBALANCE_CURVE_SHAPE));
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

#define SQRT_2PI 2.5066282746310002

double rebalance_memory_curve(double load)
{
    if (isnan(load) || load <= 0)
        return 0;
    const double b = REBALANCE_BURSTINESS;
    double deficit = 1.0 - 1.0 / load, z = deficit / b;
    double Phi = 0.5 * erfc(-z / sqrt(2.0)), phi = exp(-0.5 * z * z) / SQRT_2PI;
    double f = deficit * Phi + b * phi;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

double rebalance_resource_curve(int r, double load)
{
    return r == REBALANCE_MEMORY ? rebalance_memory_curve(load) : rebalance_curve(load);
}

double rebalance_load_from_some(double some)
{
    if (isnan(some))
        return NAN;
    if (some <= 0)
        return 0;
    if (some > REBALANCE_FLAT)
        some = REBALANCE_FLAT;
    return REBALANCE_CURVE_SCALE * pow(-log1p(-some), 1.0 / REBALANCE_CURVE_SHAPE);
}

double rebalance_load_from_pressure(double pressure, double scale)
{
    if (isnan(scale) || scale <= 0)
        scale = 1;
    return rebalance_load_from_some(isnan(pressure) || pressure < 0 ? 0 : pressure / (100.0 * scale));
}

double rebalance_demand_scaled(double usage, double pressure, double scale)
{
    double L = rebalance_load_from_pressure(pressure, scale);
    return usage * (L > 1 ? L : 1);
}

double rebalance_demand(double usage, double cpu_pressure)
{
    return rebalance_demand_scaled(usage, cpu_pressure, 1);
}

double rebalance_node_demand_scaled(double usage, double cpus, double cpu_pressure, double scale)
{
    if (isnan(usage) || isnan(cpus) || cpus <= 0)
        return NAN;
    double d = rebalance_load_from_pressure(cpu_pressure, scale) * cpus;
    return d > usage ? d : usage;
}

double rebalance_node_demand(double usage, double cpus, double cpu_pressure)
{
    return rebalance_node_demand_scaled(usage, cpus, cpu_pressure, 1);
}

double rebalance_node_memory_demand(double used, double memory, double mem_pressure)
{
    if (isnan(used) || isnan(memory) || memory <= 0)
        return NAN;
    if (used > memory || used < REBALANCE_SATURATED * memory)
        return used;
    double stall = isnan(mem_pressure) || mem_pressure < 0 ? 0 : mem_pressure / 100;
    return memory / (1 - (stall > REBALANCE_MAX_MEMORY_STALL ? REBALANCE_MAX_MEMORY_STALL : stall));
}

double rebalance_predict(double load, double scale)
{
    double v = scale * rebalance_curve(load);
    return 100.0 * (v > 1 ? 1 : v);
}

double rebalance_predicted_pressure(double load)
{
    return rebalance_predict(load, 1);
}

double rebalance_load_from_served(double served)
{
    if (isnan(served) || served < 0 || served >= REBALANCE_SERVED_FULL)
        return NAN;
    return served;
}

double rebalance_clamp_scale(double k)
{
    return k < REBALANCE_SCALE_MIN ? REBALANCE_SCALE_MIN : k > REBALANCE_SCALE_MAX ? REBALANCE_SCALE_MAX : k;
}

double rebalance_calibrate(double prev, double served, double pressure)
{
    double f = rebalance_curve(rebalance_load_from_served(served));
    if (isnan(pressure) || pressure < 0 || f < REBALANCE_INFORMATIVE)
        return prev;
    double k = rebalance_clamp_scale(pressure / (100.0 * f));
    if (isnan(prev) || prev <= 0)
        return k;
    return (1 - REBALANCE_CALIBRATION_WEIGHT) * prev + REBALANCE_CALIBRATION_WEIGHT * k;
}

double rebalance_plan_scale(int r, bool source, double P, double f, double cal)
{
    bool informative = !isnan(P) && !isnan(f) && f >= REBALANCE_INFORMATIVE;
    double own = informative ? rebalance_clamp_scale(P / (100.0 * f)) : NAN;
    bool calibrated = !isnan(cal) && cal > 0;
    if (source)
        return informative ? own : calibrated ? cal : 1;
    double k = calibrated ? cal : r == REBALANCE_MEMORY ? REBALANCE_MEMORY_SAFETY : REBALANCE_SAFETY;
    return informative && own > k ? own : k;
}
