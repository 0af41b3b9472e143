/* miglimits: KubeVirt's parallel migration limits (see miglimits.h). */
#include "hack/sim/miglimits.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"

static int setting(const cJSON *migrations, const char *key, int fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(migrations, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1e6 ||
        v->valuedouble != (double)(int)v->valuedouble)
        return fallback;
    return (int)v->valuedouble;
}

void miglimits_from_kubevirt(const cJSON *kubevirt, int *per_cluster, int *per_node)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(kubevirt, "spec");
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive(spec, "configuration");
    const cJSON *mig = cJSON_GetObjectItemCaseSensitive(conf, "migrations");
    *per_cluster = setting(mig, "parallelMigrationsPerCluster", MIGLIMITS_DEFAULT_PER_CLUSTER);
    *per_node = setting(mig, "parallelOutboundMigrationsPerNode", MIGLIMITS_DEFAULT_PER_NODE);
}

bool miglimits_phase_final(const char *phase)
{
    return phase && (strcmp(phase, MIGLIMITS_SUCCEEDED) == 0 || strcmp(phase, MIGLIMITS_FAILED) == 0);
}

int miglimits_queue_priority(const char *priority)
{
    if (!priority)
        return 0;
    if (strcmp(priority, MIGLIMITS_SYSTEM_CRITICAL) == 0)
        return 100;
    if (strcmp(priority, MIGLIMITS_USER_TRIGGERED) == 0)
        return 50;
    if (strcmp(priority, MIGLIMITS_SYSTEM_MAINTENANCE) == 0)
        return 20;
    return 0;
}

int miglimits_queue_order(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    int px = miglimits_queue_priority(jx_str(x, "spec.priority")),
        py = miglimits_queue_priority(jx_str(y, "spec.priority"));
    if (px != py)
        return px > py ? -1 : 1;
    int cmp = strcmp(jx_str0(x, "metadata.creationTimestamp"), jx_str0(y, "metadata.creationTimestamp"));
    return cmp ? cmp : strcmp(jx_str0(x, "metadata.name"), jx_str0(y, "metadata.name"));
}

bool miglimits_phase_running(const char *phase)
{
    return phase && *phase && strcmp(phase, MIGLIMITS_PENDING) != 0 && !miglimits_phase_final(phase);
}

void miglimits_init(struct miglimits *l, int per_cluster, int per_node)
{
    memset(l, 0, sizeof(*l));
    l->per_cluster = per_cluster;
    l->per_node = per_node;
}

void miglimits_clear(struct miglimits *l)
{
    for (size_t i = 0; i < l->n_nodes; i++)
        free(l->nodes[i].node);
    free(l->nodes);
    l->nodes = NULL;
    l->n_nodes = l->nodes_cap = 0;
    l->total = 0;
}

int miglimits_add(struct miglimits *l, const char *source)
{
    l->total++;
    if (!source || !*source)
        return 0;
    for (size_t i = 0; i < l->n_nodes; i++) {
        if (strcmp(l->nodes[i].node, source) == 0) {
            l->nodes[i].running++;
            return 0;
        }
    }
    if (BASE_GROW(l->nodes, l->n_nodes + 1, l->nodes_cap) < 0)
        return -1;
    l->nodes[l->n_nodes].node = strdup(source);
    if (!l->nodes[l->n_nodes].node)
        return -1;
    l->nodes[l->n_nodes++].running = 1;
    return 0;
}

int miglimits_running_from(const struct miglimits *l, const char *source)
{
    for (size_t i = 0; source && i < l->n_nodes; i++)
        if (strcmp(l->nodes[i].node, source) == 0)
            return l->nodes[i].running;
    return 0;
}

int miglimits_room(const struct miglimits *l, const char *source)
{
    int cluster = l->per_cluster - l->total;
    int node = l->per_node - miglimits_running_from(l, source);
    int room = cluster < node ? cluster : node;
    return room > 0 ? room : 0;
}
