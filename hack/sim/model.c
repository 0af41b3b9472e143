/* model: the simulator's PSI model (see model.h for the formula and why). */
#include "hack/sim/model.h"

#include <math.h>
#include <string.h>

void model_params_default(struct model_params *p)
{
    struct model_curve c = {MODEL_SHAPE_QUEUEING, MODEL_DEFAULT_BURSTINESS, MODEL_DEFAULT_FULL_RATIO};
    p->cpu = c;
    p->cpu.shape = MODEL_SHAPE_KERNEL;
    p->memory = c;
    p->io = c;
}

static double clamp01(double v)
{
    if (!(v > 0))
        return 0;
    return v > 1 ? 1 : v;
}

double model_pressure(double demand, double capacity, double burstiness)
{
    if (isnan(demand) || isnan(capacity) || isnan(burstiness) || demand <= 0)
        return 0;
    if (capacity <= 0)
        return 1;
    double deficit = 1.0 - capacity / demand; /* share of the mean demand above capacity */
    if (burstiness <= 0)
        return clamp01(deficit);
    /* E[(X - C)+] / D for X ~ Normal(D, (s D)^2): with z = (D - C) / (s D) this is
     * deficit * Phi(z) + s * phi(z). */
    double z = deficit / burstiness;
    double Phi = 0.5 * erfc(-z / sqrt(2.0));
    double phi = exp(-0.5 * z * z) / sqrt(2.0 * M_PI);
    return clamp01(deficit * Phi + burstiness * phi);
}

double model_kernel_cpu_some(double demand, double capacity)
{
    if (isnan(demand) || isnan(capacity) || demand <= 0)
        return 0;
    if (capacity <= 0)
        return 1;
    return clamp01(1.0 - exp(-pow(demand / capacity / MODEL_KERNEL_CPU_SCALE, MODEL_KERNEL_CPU_SHAPE)));
}

int model_shape_parse(const char *s, enum model_shape *out)
{
    if (strcmp(s, "kernel") == 0)
        *out = MODEL_SHAPE_KERNEL;
    else if (strcmp(s, "queueing") == 0)
        *out = MODEL_SHAPE_QUEUEING;
    else
        return -1;
    return 0;
}

static double curve_some(const struct model_curve *c, double demand, double capacity)
{
    if (c->shape == MODEL_SHAPE_KERNEL)
        return model_kernel_cpu_some(demand, capacity);
    return model_pressure(demand, capacity, c->burstiness);
}

void model_node(const struct model_params *p, const struct model_node_in *in, struct model_node_out *out)
{
    out->cpu_some = curve_some(&p->cpu, in->cpu_demand, in->cpus);
    out->memory_some = curve_some(&p->memory, in->memory_demand, in->memory);
    out->memory_full = out->memory_some * clamp01(p->memory.full_ratio);
    out->io_some = curve_some(&p->io, in->io_demand, in->io);
    out->io_full = out->io_some * clamp01(p->io.full_ratio);
    if (p->cpu.shape == MODEL_SHAPE_KERNEL)
        out->cpu_served = in->cpu_demand > in->cpus && in->cpu_demand > 0 ? clamp01(in->cpus / in->cpu_demand) : 1.0;
    else
        out->cpu_served = 1.0 - out->cpu_some;
}

double model_pod_cpu_some(double node_some, double pod_demand, double capacity)
{
    if (!(pod_demand > 0) || !(capacity > 0) || isinf(pod_demand))
        return 0;
    return clamp01(node_some) * (1.0 - exp(-pod_demand / (MODEL_POD_CPU_SCALE * capacity)));
}

double model_pod_memory_pressure(double node_pressure, double pod_working_set, double node_working_sets)
{
    if (!(pod_working_set > 0) || !(node_working_sets > 0))
        return 0;
    return clamp01(node_pressure) * clamp01(pod_working_set / node_working_sets);
}

void model_pod(const struct model_node_in *in, const struct model_node_out *node, double cpu_demand,
               double memory_demand, struct model_pod_out *out)
{
    out->cpu_some = model_pod_cpu_some(node->cpu_some, cpu_demand, in->cpus);
    out->cpu_full = out->cpu_some * MODEL_POD_CPU_FULL_RATIO;
    out->memory_some = model_pod_memory_pressure(node->memory_some, memory_demand, in->memory_demand);
    out->memory_full = model_pod_memory_pressure(node->memory_full, memory_demand, in->memory_demand);
}
