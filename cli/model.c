/* cli_model: see model.h. */
#include "cli/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/util.h"

int cli_psir_decode(const cJSON *obj, struct cli_psir *out, char *err, size_t len)
{
    struct api_errors errs = {0}, warns = {0};
    out->raw = obj;
    api_psirebalance_decode(obj, &out->pr, &errs, &warns);
    bool oom = errs.oom || warns.oom;
    api_errors_free(&errs);
    api_errors_free(&warns);
    if (oom) {
        snprintf(err, len, "out of memory decoding a PsiRebalance");
        return -1;
    }
    if (!out->pr.name) {
        snprintf(err, len, "a PsiRebalance without metadata.name");
        return -1;
    }
    return 0;
}

void cli_psir_free(struct cli_psir *p)
{
    api_psirebalance_free(&p->pr);
    p->raw = NULL;
}

const struct api_node_status *cli_psir_node(const struct cli_psir *p, const char *node)
{
    for (size_t i = 0; i < p->pr.status.nnodes; i++)
        if (base_same(p->pr.status.nodes[i].name, node))
            return &p->pr.status.nodes[i];
    return NULL;
}

static const cJSON *status_list(const struct cli_psir *p, const char *key)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(p->raw, "status");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, key);
    return cJSON_IsArray(v) ? v : NULL;
}

const cJSON *cli_psir_raw_move(const struct cli_psir *p, size_t i)
{
    const cJSON *moves = status_list(p, "moves");
    if (!moves || (size_t)cJSON_GetArraySize(moves) != p->pr.status.nmoves || i >= p->pr.status.nmoves)
        return NULL;
    return cJSON_GetArrayItem(moves, (int)i);
}

const struct api_condition *cli_psir_condition(const struct cli_psir *p, const char *type)
{
    for (size_t i = 0; i < p->pr.status.nconditions; i++)
        if (base_same(p->pr.status.conditions[i].type, type))
            return &p->pr.status.conditions[i];
    return NULL;
}

double cli_psir_relief_target(const struct cli_psir *p)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(p->raw, "spec");
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "eviction"), "reliefTargetPercent");
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

bool cli_move_under_way(const struct api_move *m, int64_t now)
{
    return m->phase == API_MOVE_MIGRATING ||
           (m->phase == API_MOVE_REQUESTED && now - m->time < CLI_REQUESTED_UNDER_WAY_S);
}

const char *cli_move_method(const struct api_move *m, const cJSON *raw)
{
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(raw, "method");
    if (cJSON_IsString(method) && method->valuestring[0])
        return method->valuestring;
    if (m->phase == API_MOVE_WOULD_MOVE)
        return "DryRun";
    if (m->migration && strncmp(m->migration, CLI_OWN_MIGRATION_PREFIX, strlen(CLI_OWN_MIGRATION_PREFIX)) == 0)
        return "Migrate";
    return "Evict";
}

const char *cli_move_to(const struct api_move *m)
{
    return m->target_node ? m->target_node : m->destination_node;
}

void cli_move_counts(const struct cli_psir *p, const char *node, int64_t *in, int64_t *out)
{
    *in = *out = 0;
    for (size_t i = 0; i < p->pr.status.nmoves; i++) {
        const struct api_move *m = &p->pr.status.moves[i];
        *out += base_same(m->source_node, node);
        *in += base_same(cli_move_to(m), node);
    }
}

int cli_vms_add(struct cli_vms *v, const char *node)
{
    if (BASE_GROW(v->v, v->n + 1, v->cap) < 0)
        return -1;
    char *copy = strdup(node);
    if (!copy)
        return -1;
    v->v[v->n++] = (struct cli_vm_count){copy, 1};
    v->sorted = false;
    return 0;
}

static int by_node(const void *a, const void *b)
{
    return strcmp(((const struct cli_vm_count *)a)->node, ((const struct cli_vm_count *)b)->node);
}

void cli_vms_sort(struct cli_vms *v)
{
    if (v->n)
        qsort(v->v, v->n, sizeof(*v->v), by_node);
    size_t out = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (out && strcmp(v->v[out - 1].node, v->v[i].node) == 0) {
            v->v[out - 1].count += v->v[i].count;
            free(v->v[i].node);
        } else {
            v->v[out++] = v->v[i];
        }
    }
    v->n = out;
    v->sorted = true;
}

int cli_vms_from_list(struct cli_vms *v, const cJSON *list)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(list, "items")) {
        const cJSON *node =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "status"), "nodeName");
        if (cJSON_IsString(node) && node->valuestring[0] && cli_vms_add(v, node->valuestring) < 0)
            return -1;
    }
    cli_vms_sort(v);
    v->known = true;
    return 0;
}

int64_t cli_vms_on(const struct cli_vms *v, const char *node)
{
    if (!v || !v->known || !v->sorted)
        return -1;
    struct cli_vm_count key = {(char *)node, 0};
    const struct cli_vm_count *hit = v->n ? bsearch(&key, v->v, v->n, sizeof(*v->v), by_node) : NULL;
    return hit ? hit->count : 0;
}

void cli_vms_free(struct cli_vms *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->v[i].node);
    free(v->v);
    memset(v, 0, sizeof(*v));
}
