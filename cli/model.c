/* cli_model: see model.h. */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

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
        if (eq(p->pr.status.nodes[i].name, node))
            return &p->pr.status.nodes[i];
    return NULL;
}

static const cJSON *status_list(const struct cli_psir *p, const char *key)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(p->raw, "status");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, key);
    return cJSON_IsArray(v) ? v : NULL;
}

const cJSON *cli_psir_raw_node(const struct cli_psir *p, const char *node)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, status_list(p, "nodes")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (cJSON_IsString(n) && eq(n->valuestring, node))
            return it;
    }
    return NULL;
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
        if (eq(p->pr.status.conditions[i].type, type))
            return &p->pr.status.conditions[i];
    return NULL;
}

double cli_psir_relief_target(const struct cli_psir *p)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(p->raw, "spec");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "eviction"),
                                                      "reliefTargetPercent");
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
        *out += eq(m->source_node, node);
        *in += eq(cli_move_to(m), node);
    }
}

int cli_vms_add(struct cli_vms *v, const char *node)
{
    for (size_t i = 0; i < v->n; i++)
        if (eq(v->nodes[i], node)) {
            v->counts[i]++;
            return 0;
        }
    char **nodes = realloc(v->nodes, (v->n + 1) * sizeof(*nodes));
    if (!nodes)
        return -1;
    v->nodes = nodes;
    int64_t *counts = realloc(v->counts, (v->n + 1) * sizeof(*counts));
    if (!counts)
        return -1;
    v->counts = counts;
    if (!(v->nodes[v->n] = strdup(node)))
        return -1;
    v->counts[v->n++] = 1;
    return 0;
}

int cli_vms_from_list(struct cli_vms *v, const cJSON *list)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items")) {
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "status"), "nodeName");
        if (cJSON_IsString(node) && node->valuestring[0] && cli_vms_add(v, node->valuestring) < 0)
            return -1;
    }
    v->known = true;
    return 0;
}

int64_t cli_vms_on(const struct cli_vms *v, const char *node)
{
    if (!v || !v->known)
        return -1;
    for (size_t i = 0; i < v->n; i++)
        if (eq(v->nodes[i], node))
            return v->counts[i];
    return 0;
}

void cli_vms_free(struct cli_vms *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->nodes[i]);
    free(v->nodes);
    free(v->counts);
    memset(v, 0, sizeof(*v));
}
