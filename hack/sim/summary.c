/* summary: the Summary API reply and the PSI averages (see summary.h). */
#include "hack/sim/summary.h"

#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

void summary_psi_advance(struct summary_psi *p, double percent, double dt)
{
    if (!(dt > 0))
        return;
    static const double period[3] = {10, 60, 300};
    double *avg[3] = {&p->avg10, &p->avg60, &p->avg300};
    for (int k = 0; k < 3; k++) {
        double decay = exp(-dt / period[k]);
        *avg[k] = *avg[k] * decay + percent * (1 - decay);
    }
    p->total_us += percent / 100.0 * dt * 1e6;
}

/* {"avg10":..,"avg60":..,"avg300":..,"total":..} */
static void add_psi_data(cJSON *parent, const char *key, const struct summary_psi *p)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    cJSON_AddNumberToObject(o, "total", floor(p->total_us));
    cJSON_AddNumberToObject(o, "avg10", round(p->avg10 * 100) / 100);
    cJSON_AddNumberToObject(o, "avg60", round(p->avg60 * 100) / 100);
    cJSON_AddNumberToObject(o, "avg300", round(p->avg300 * 100) / 100);
}

/* "psi": {"full": .., "some": ..} of p, [PSI_SOME, PSI_FULL] */
static void add_psi_stats(cJSON *parent, const struct summary_psi p[2])
{
    cJSON *psi = cJSON_AddObjectToObject(parent, "psi");
    add_psi_data(psi, "full", &p[PSI_FULL]);
    add_psi_data(psi, "some", &p[PSI_SOME]);
}

static void add_psi(cJSON *parent, const struct summary_node *n, enum psi_resource r)
{
    if (n->psi)
        add_psi_stats(parent, n->pressure[r]);
}

static cJSON *cpu_stats(cJSON *parent, const char *time, double cores, double seconds)
{
    cJSON *cpu = cJSON_AddObjectToObject(parent, "cpu");
    cJSON_AddStringToObject(cpu, "time", time);
    cJSON_AddNumberToObject(cpu, "usageNanoCores", floor(cores * 1e9));
    cJSON_AddNumberToObject(cpu, "usageCoreNanoSeconds", floor(seconds * 1e9));
    return cpu;
}

static void add_pod(cJSON *pods, const struct summary_node *n, const struct summary_pod *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(pods, o);
    cJSON *ref = cJSON_AddObjectToObject(o, "podRef");
    cJSON_AddStringToObject(ref, "name", p->name);
    cJSON_AddStringToObject(ref, "namespace", p->ns);
    cJSON_AddStringToObject(ref, "uid", p->uid);
    cJSON_AddStringToObject(o, "startTime", n->start_time);
    cJSON *cpu = cpu_stats(o, n->time, p->cpu_cores, p->cpu_seconds);
    cJSON *mem = cJSON_AddObjectToObject(o, "memory");
    cJSON_AddStringToObject(mem, "time", n->time);
    cJSON_AddNumberToObject(mem, "workingSetBytes", floor(p->memory_bytes));
    if (n->psi && n->pod_psi) {
        add_psi_stats(cpu, p->pressure[PSI_CPU]);
        add_psi_stats(mem, p->pressure[PSI_MEMORY]);
    }
}

char *summary_render(const struct summary_node *n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *node = cJSON_AddObjectToObject(root, "node");
    cJSON_AddStringToObject(node, "nodeName", n->name);
    cJSON_AddStringToObject(node, "startTime", n->start_time);
    add_psi(cpu_stats(node, n->time, n->cpu_cores, n->cpu_seconds), n, PSI_CPU);
    cJSON *mem = cJSON_AddObjectToObject(node, "memory");
    cJSON_AddStringToObject(mem, "time", n->time);
    double avail = n->memory_capacity - n->memory_working_set;
    cJSON_AddNumberToObject(mem, "availableBytes", floor(avail > 0 ? avail : 0));
    cJSON_AddNumberToObject(mem, "usageBytes", floor(n->memory_working_set));
    cJSON_AddNumberToObject(mem, "workingSetBytes", floor(n->memory_working_set));
    add_psi(mem, n, PSI_MEMORY);
    cJSON *io = cJSON_AddObjectToObject(node, "io");
    cJSON_AddStringToObject(io, "time", n->time);
    add_psi(io, n, PSI_IO);
    cJSON *pods = cJSON_AddArrayToObject(root, "pods");
    for (size_t i = 0; pods && i < n->npods; i++)
        add_pod(pods, n, &n->pods[i]);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}
