/* moves: following moves through KubeVirt's migrations (see moves.h). */
#include "reconcile/move/moves.h"

#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "base/grow.h"
#include "base/jx.h"
#include "base/util.h"

bool moves_phase_final(const char *phase)
{
    return base_same(phase, "Succeeded") || base_same(phase, "Failed");
}

bool moves_phase_running(const char *phase)
{
    return phase && *phase && !base_same(phase, "Pending") && !moves_phase_final(phase);
}

int moves_migration_read(const cJSON *vmim, struct moves_migration *m)
{
    memset(m, 0, sizeof(*m));
    const cJSON *meta = jx_at(vmim, "metadata"), *st = jx_at(vmim, "status");
    const cJSON *ms = jx_at(st, "migrationState");
    m->ns = jx_nonempty(meta, "namespace");
    m->name = jx_nonempty(meta, "name");
    m->vmi = jx_nonempty(vmim, "spec.vmiName");
    const cJSON *phase = jx_at(st, "phase");
    m->phase = cJSON_IsString(phase) ? phase->valuestring : "";
    const char *annotated = base_nonempty(jx_annotation(vmim, MOVES_EVACUATION_ANNOTATION));
    m->evacuation = jx_at(jx_at(meta, "annotations"), MOVES_EVACUATION_ANNOTATION) != NULL;
    m->source = annotated ? annotated : jx_nonempty(ms, "sourceNode");
    const cJSON *labels = jx_at(meta, "labels");
    if (base_same(jx_at_str(labels, MOVES_MANAGED_BY_LABEL), MOVES_MANAGED_BY))
        m->owner = base_nonempty(jx_at_str(labels, MOVES_OWNER_LABEL));
    m->target = jx_nonempty(ms, "targetNode");
    m->reason = jx_nonempty(ms, "failureReason");
    m->priority = jx_nonempty(vmim, "spec.priority");
    m->created = api_json_time_or(jx_nonempty(meta, "creationTimestamp"), 0);
    m->start = api_json_time_or(jx_nonempty(ms, "startTimestamp"), 0);
    m->end = api_json_time_or(jx_nonempty(ms, "endTimestamp"), 0);
    if (!m->end && moves_phase_final(m->phase)) {
        const cJSON *h;
        cJSON_ArrayForEach (h, jx_at(st, "phaseTransitionTimestamps"))
            if (base_same(jx_nonempty(h, "phase"), m->phase))
                m->end = api_json_time_or(jx_nonempty(h, "phaseTransitionTimestamp"), 0);
    }
    return m->vmi && m->name ? 0 : -1;
}

void moves_count(const struct moves_migration *migs, size_t nm, const char *const *nodes, size_t nnodes,
                 struct moves_counts *c, int *outbound)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < nnodes; i++)
        outbound[i] = 0;
    for (size_t k = 0; k < nm; k++) {
        if (!moves_phase_running(migs[k].phase))
            continue;
        c->running++;
        for (size_t i = 0; i < nnodes; i++)
            if (base_same(nodes[i], migs[k].source))
                outbound[i]++;
    }
}

bool moves_followed(const struct api_move *m)
{
    return m->phase == API_MOVE_REQUESTED || m->phase == API_MOVE_MIGRATING || m->phase == API_MOVE_FAILED;
}

static int set(char **dst, const char *src)
{
    if (!src || base_same(*dst, src))
        return 0;
    char *s = strdup(src);
    if (!s)
        return -1;
    free(*dst);
    *dst = s;
    return 0;
}

/* The caller's event vector. */
struct emitter {
    struct moves_event **v;
    size_t *n;
    size_t cap;
};

static int emit(struct emitter *e, size_t move, enum moves_event_kind kind, const char *migration, const char *reason)
{
    if (BASE_GROW(*e->v, *e->n + 1, e->cap) < 0)
        return -1;
    (*e->v)[(*e->n)++] = (struct moves_event){move, kind, migration, reason};
    return 0;
}

/* Whether migration g belongs to move m. */
static bool matches(const struct api_move *m, const struct moves_migration *g)
{
    if (m->migration && strncmp(m->migration, MOVES_TARGETED_PREFIX, strlen(MOVES_TARGETED_PREFIX)) == 0)
        return base_same(g->name, m->migration) && base_same(g->ns, m->ns);
    return g->evacuation && base_same(g->vmi, m->name) && base_same(g->ns, m->ns) &&
           (!m->kind || strcmp(m->kind, "VirtualMachineInstance") == 0) &&
           (g->created == 0 || g->created >= m->time - MOVES_SKEW_S);
}

static bool before(const struct moves_migration *a, const struct moves_migration *b)
{
    if (a->created != b->created)
        return a->created < b->created;
    return strcmp(a->name, b->name) < 0;
}

int moves_follow(struct api_move *moves, size_t n, const struct moves_migration *migs, size_t nm,
                 struct moves_event **events, size_t *nevents)
{
    const struct moves_migration **mine = calloc(nm ? nm : 1, sizeof(*mine));
    if (!mine)
        return -1;
    struct emitter em = {events, nevents, *nevents};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct api_move *m = &moves[i];
        if (!moves_followed(m))
            continue;
        size_t k = 0;
        for (size_t j = 0; j < nm; j++) {
            if (!matches(m, &migs[j]))
                continue;
            size_t at = k++;
            while (at > 0 && before(&migs[j], mine[at - 1])) {
                mine[at] = mine[at - 1];
                at--;
            }
            mine[at] = &migs[j];
        }
        if (k == 0)
            continue;
        int64_t failed = 0;
        for (size_t j = 0; j < k && rc == 0; j++) {
            if (!base_same(mine[j]->phase, "Failed"))
                continue;
            failed++;
            if (failed > m->failures)
                rc = emit(&em, i, MOVES_FAILED, mine[j]->name, mine[j]->reason);
        }
        if (failed > m->failures)
            m->failures = failed;
        const struct moves_migration *last = mine[k - 1];
        enum api_move_phase was = m->phase;
        if (set(&m->migration, last->name) < 0 || set(&m->target_node, last->target) < 0) {
            rc = -1;
            break;
        }
        if (!moves_phase_final(last->phase)) {
            m->phase = API_MOVE_MIGRATING;
            m->end_time = 0;
            if (was != API_MOVE_MIGRATING && rc == 0)
                rc = emit(&em, i, MOVES_STARTED, last->name, NULL);
        } else if (base_same(last->phase, "Succeeded")) {
            m->phase = API_MOVE_SUCCEEDED;
            m->end_time = last->end ? last->end : m->end_time;
            /* the live migration's own time, from its start (not the queue before it) */
            if (last->start && last->end >= last->start)
                m->cost.timed = true, m->cost.duration_s = last->end - last->start;
            if (rc == 0)
                rc = emit(&em, i, MOVES_SUCCEEDED, last->name, NULL);
        } else {
            m->phase = API_MOVE_FAILED;
            m->end_time = last->end ? last->end : m->end_time;
        }
    }
    free(mine);
    return rc;
}

void moves_prune(struct api_status *st, int64_t now_s, int64_t history_s)
{
    size_t w = 0;
    for (size_t i = 0; i < st->nmoves; i++) {
        struct api_move *m = &st->moves[i];
        int64_t last = m->end_time > m->time ? m->end_time : m->time;
        if (m->phase != API_MOVE_MIGRATING && last < now_s - history_s) {
            api_move_free(m);
            continue;
        }
        st->moves[w++] = *m;
    }
    st->nmoves = w;
    if (st->nmoves > API_STATUS_MAX_MOVES) {
        size_t drop = st->nmoves - API_STATUS_MAX_MOVES;
        for (size_t i = 0; i < drop; i++)
            api_move_free(&st->moves[i]);
        memmove(st->moves, st->moves + drop, API_STATUS_MAX_MOVES * sizeof(*st->moves));
        st->nmoves = API_STATUS_MAX_MOVES;
    }
}

static int kubevirt_setting(const cJSON *migrations, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(migrations, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1e6 ||
        v->valuedouble != (double)(int)v->valuedouble)
        return 0;
    return (int)v->valuedouble;
}

void moves_kubevirt_limits(const cJSON *kubevirt, int *per_cluster, int *per_node)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(kubevirt, "spec");
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive(spec, "configuration");
    const cJSON *mig = cJSON_GetObjectItemCaseSensitive(conf, "migrations");
    *per_cluster = kubevirt_setting(mig, "parallelMigrationsPerCluster");
    *per_node = kubevirt_setting(mig, "parallelOutboundMigrationsPerNode");
}
