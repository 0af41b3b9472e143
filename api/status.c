/* api_status: PsiRebalance status types, codec, conditions and change detection. */
#include "api/status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "api/psirebalance.h"
#include "base/util.h"

static const char *const condition_status_names[] = {"True", "False", "Unknown"};
static const char *const node_state_names[] = {"Normal", "Pressured", "Tainted", "Cooling", "Unknown"};
/* The keys of summary.nodeStates, by enum api_node_state. */
static const char *const node_state_keys[] = {"normal", "pressured", "tainted", "cooling", "unknown", NULL};
static const char *const move_phase_names[API_MOVE_PHASES] = {"WouldMove", "Evicted",   "MigrationRequested",
                                                              "Migrating", "Succeeded", "Failed"};
static const char *const cost_basis_names[API_COST_BASES] = {"", "LastMigration", "ClusterRate", "DirtyRate"};
static const char *const demand_from_names[API_DEMAND_FROMS] = {"", "OwnPressure", "NodePressure"};
static const char *const role_names[API_WORKLOAD_ROLES] = {"", "Suffers", "Causes"};

const char *api_condition_status_name(enum api_condition_status v)
{
    return condition_status_names[v];
}

const char *api_node_state_name(enum api_node_state v)
{
    return node_state_names[v];
}

const char *api_move_phase_name(enum api_move_phase v)
{
    return move_phase_names[v];
}

const char *api_demand_from_name(enum api_demand_from v)
{
    return demand_from_names[v];
}

const char *api_workload_role_name(enum api_workload_role v)
{
    return role_names[v];
}

void api_move_free(struct api_move *m)
{
    if (!m)
        return;
    free(m->kind);
    free(m->ns);
    free(m->name);
    free(m->pod);
    free(m->source_node);
    free(m->destination_node);
    free(m->target_node);
    free(m->migration);
    memset(m, 0, sizeof(*m));
}

/* *dst = a copy of src (NULL stays NULL); -1 on no memory. */
static int dup_or_null(char **dst, const char *src)
{
    *dst = base_strdup_or_null(src);
    return src && !*dst ? -1 : 0;
}

int api_move_copy(struct api_move *dst, const struct api_move *src)
{
    *dst = *src;
    int rc = 0;
    rc |= dup_or_null(&dst->kind, src->kind);
    rc |= dup_or_null(&dst->ns, src->ns);
    rc |= dup_or_null(&dst->name, src->name);
    rc |= dup_or_null(&dst->pod, src->pod);
    rc |= dup_or_null(&dst->source_node, src->source_node);
    rc |= dup_or_null(&dst->destination_node, src->destination_node);
    rc |= dup_or_null(&dst->target_node, src->target_node);
    rc |= dup_or_null(&dst->migration, src->migration);
    if (rc) {
        api_move_free(dst);
        return -1;
    }
    return 0;
}

static void condition_free(struct api_condition *c)
{
    free(c->type);
    free(c->reason);
    free(c->message);
}

static void mc_free(struct api_machine_config_status *m)
{
    free(m->role);
    free(m->name);
    free(m->pool);
}

/* A copy of n elements of size sz at src, or NULL (also when n is 0). */
static void *copy_array(const void *src, size_t n, size_t sz)
{
    void *v = n ? malloc(n * sz) : NULL;
    if (v)
        memcpy(v, src, n * sz);
    return v;
}

int api_status_copy(struct api_status *dst, const struct api_status *src)
{
    *dst = *src;
    dst->conditions = copy_array(src->conditions, src->nconditions, sizeof(*src->conditions));
    dst->machine_configs = copy_array(src->machine_configs, src->nmachine_configs, sizeof(*src->machine_configs));
    dst->nodes = copy_array(src->nodes, src->nnodes, sizeof(*src->nodes));
    dst->moves = copy_array(src->moves, src->nmoves, sizeof(*src->moves));
    dst->taint_keys = NULL;
    dst->ntaint_keys = 0;
    memset(&dst->move_history, 0, sizeof(dst->move_history));
    /* Until every string is its own, counts say how many elements own theirs. */
    size_t nc = src->nconditions, nm = src->nmachine_configs, nn = src->nnodes, nv = src->nmoves;
    dst->nconditions = dst->nmachine_configs = dst->nnodes = dst->nmoves = 0;
    if ((nc && !dst->conditions) || (nm && !dst->machine_configs) || (nn && !dst->nodes) || (nv && !dst->moves))
        goto oom;
    for (; dst->nconditions < nc; dst->nconditions++) {
        struct api_condition *c = &dst->conditions[dst->nconditions];
        const struct api_condition *o = &src->conditions[dst->nconditions];
        if (dup_or_null(&c->type, o->type) | dup_or_null(&c->reason, o->reason) |
            dup_or_null(&c->message, o->message)) {
            condition_free(c);
            goto oom;
        }
    }
    for (; dst->nmachine_configs < nm; dst->nmachine_configs++) {
        struct api_machine_config_status *m = &dst->machine_configs[dst->nmachine_configs];
        const struct api_machine_config_status *o = &src->machine_configs[dst->nmachine_configs];
        if (dup_or_null(&m->role, o->role) | dup_or_null(&m->name, o->name) | dup_or_null(&m->pool, o->pool)) {
            mc_free(m);
            goto oom;
        }
    }
    for (; dst->nnodes < nn; dst->nnodes++)
        if (dup_or_null(&dst->nodes[dst->nnodes].name, src->nodes[dst->nnodes].name) < 0)
            goto oom;
    for (; dst->nmoves < nv; dst->nmoves++)
        if (api_move_copy(&dst->moves[dst->nmoves], &src->moves[dst->nmoves]) < 0)
            goto oom;
    if (src->ntaint_keys && api_json_strv_dup(src->taint_keys, src->ntaint_keys, &dst->taint_keys) < 0)
        goto oom;
    dst->ntaint_keys = src->ntaint_keys;
    if (api_move_history_copy(&dst->move_history, &src->move_history) < 0)
        goto oom;
    return 0;
oom:
    api_status_free(dst);
    return -1;
}

void api_status_free(struct api_status *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->nconditions; i++)
        condition_free(&st->conditions[i]);
    free(st->conditions);
    for (size_t i = 0; i < st->nmachine_configs; i++)
        mc_free(&st->machine_configs[i]);
    free(st->machine_configs);
    for (size_t i = 0; i < st->nnodes; i++)
        free(st->nodes[i].name);
    free(st->nodes);
    for (size_t i = 0; i < st->nmoves; i++)
        api_move_free(&st->moves[i]);
    free(st->moves);
    api_json_strv_free(st->taint_keys, st->ntaint_keys);
    api_move_history_release(&st->move_history);
    memset(st, 0, sizeof(*st));
}

/* Grow *v (of *n elements of size sz) by one zeroed element; returns it or NULL. */
static void *append(void **v, size_t *n, size_t sz)
{
    char *p = realloc(*v, (*n + 1) * sz);
    if (!p)
        return NULL;
    *v = p;
    memset(p + *n * sz, 0, sz);
    return p + (*n)++ * sz;
}

struct api_node_status *api_status_add_node(struct api_status *st, const char *name)
{
    char *n = strdup(name);
    struct api_node_status *node = n ? append((void **)&st->nodes, &st->nnodes, sizeof(*node)) : NULL;
    if (!node) {
        free(n);
        return NULL;
    }
    node->name = n;
    for (int r = 0; r < API_RESOURCES; r++)
        node->pressure[r] = NAN;
    node->utilization = NAN;
    node->state = API_NODE_UNKNOWN;
    return node;
}

int api_status_add_taint_key(struct api_status *st, const char *key)
{
    for (size_t i = 0; i < st->ntaint_keys; i++)
        if (strcmp(st->taint_keys[i], key) == 0)
            return 0;
    char *dup = strdup(key);
    char **grown = dup ? realloc(st->taint_keys, (st->ntaint_keys + 1) * sizeof(*grown)) : NULL;
    if (!grown) {
        free(dup);
        return -1;
    }
    st->taint_keys = grown;
    st->taint_keys[st->ntaint_keys++] = dup;
    return 1;
}

int api_status_remove_taint_key(struct api_status *st, const char *key)
{
    for (size_t i = 0; i < st->ntaint_keys; i++) {
        if (strcmp(st->taint_keys[i], key) != 0)
            continue;
        free(st->taint_keys[i]);
        memmove(&st->taint_keys[i], &st->taint_keys[i + 1], (st->ntaint_keys - i - 1) * sizeof(*st->taint_keys));
        st->ntaint_keys--;
        return 1;
    }
    return 0;
}

struct api_move *api_status_add_move(struct api_status *st)
{
    return append((void **)&st->moves, &st->nmoves, sizeof(struct api_move));
}

struct api_machine_config_status *api_status_add_machine_config(struct api_status *st, const char *pool)
{
    char *r = strdup(pool);
    struct api_machine_config_status *m =
        r ? append((void **)&st->machine_configs, &st->nmachine_configs, sizeof(*m)) : NULL;
    if (!m) {
        free(r);
        return NULL;
    }
    m->pool = r;
    return m;
}

struct api_condition *api_status_condition(const struct api_status *st, const char *type)
{
    for (size_t i = 0; type && i < st->nconditions; i++)
        if (st->conditions[i].type && strcmp(st->conditions[i].type, type) == 0)
            return &st->conditions[i];
    return NULL;
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Replace *dst by a copy of src when they differ; returns 1 when replaced, 0 when equal, -1 on no memory. */
static int set_str(char **dst, const char *src)
{
    if (str_eq(*dst, src))
        return 0;
    char *s = strdup(src ? src : "");
    if (!s)
        return -1;
    free(*dst);
    *dst = s;
    return 1;
}

int api_status_set_condition(struct api_status *st, const char *type, enum api_condition_status status,
                             const char *reason, const char *message, int64_t generation, int64_t now)
{
    struct api_condition *c = api_status_condition(st, type);
    int changed = 0;
    if (!c) {
        char *t = strdup(type);
        c = t ? append((void **)&st->conditions, &st->nconditions, sizeof(*c)) : NULL;
        if (!c) {
            free(t);
            return -1;
        }
        c->type = t;
        c->status = status;
        c->last_transition_time = now;
        changed = 1;
    } else if (c->status != status) {
        c->status = status;
        c->last_transition_time = now;
        changed = 1;
    }
    int r1 = set_str(&c->reason, reason), r2 = set_str(&c->message, message);
    if (r1 < 0 || r2 < 0)
        return -1;
    if (c->observed_generation != generation) {
        c->observed_generation = generation;
        changed = 1;
    }
    return changed || r1 || r2;
}

/* ---- decode ---- */

/* A decimal string such as "31.2" at obj[key], from 0 to max (also keeps 400 digits from reading
 * as Inf), into *out; absent leaves *out. what names it in the error ("percentage"). */
static int decode_decimal(const cJSON *obj, const char *path, const char *key, double max, const char *what,
                          double *out, struct api_errors *errs)
{
    char *s = NULL;
    if (api_json_string(obj, path, key, &s, errs) < 0)
        return -1;
    if (!s)
        return 0;
    const char *p = s;
    size_t intdigits = strspn(p, "0123456789");
    bool ok = intdigits > 0;
    p += intdigits;
    if (ok && *p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        ok = frac > 0;
        p += 1 + frac;
    }
    ok = ok && *p == '\0';
    double v = ok ? strtod(s, NULL) : 0;
    ok = ok && v <= max;
    int rc = 0;
    if (ok) {
        *out = v;
    } else {
        char fp[API_JSON_PATH_MAX];
        rc = api_errors_add(errs, api_json_path(fp, path, key),
                            "must be a decimal %s from 0 to %g such as \"31.2\", got '%.40s'", what, max, s);
    }
    free(s);
    return rc;
}

static int decode_reading(const cJSON *obj, const char *path, const char *key, double *out, struct api_errors *errs)
{
    return decode_decimal(obj, path, key, 100.0, "percentage", out, errs);
}

/* Most CPU cores a workload's usage or demand is written with. */
#define MAX_CORES 100000.0

static int decode_cores(const cJSON *obj, const char *path, const char *key, double *out, struct api_errors *errs)
{
    return decode_decimal(obj, path, key, MAX_CORES, "count of cores", out, errs);
}

static int decode_condition(const cJSON *j, const char *path, struct api_condition *c, struct api_errors *errs,
                            struct api_errors *warns)
{
    static const char *const known[] = {"type",    "status", "observedGeneration", "lastTransitionTime", "reason",
                                        "message", NULL};
    if (!cJSON_IsObject(j))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(j, path, known, warns);
    int rc = 0, status = API_CONDITION_UNKNOWN;
    c->status = API_CONDITION_UNKNOWN;
    rc |= api_json_string(j, path, "type", &c->type, errs);
    if (!c->type || !c->type[0]) {
        char p[API_JSON_PATH_MAX];
        rc |= api_errors_add(errs, api_json_path(p, path, "type"), "is required");
    }
    rc |= api_json_enum(j, path, "status", condition_status_names, 3, &status, errs);
    c->status = (enum api_condition_status)status;
    rc |= api_json_int(j, path, "observedGeneration", &c->observed_generation, errs);
    rc |= api_json_time(j, path, "lastTransitionTime", &c->last_transition_time, errs);
    rc |= api_json_string(j, path, "reason", &c->reason, errs);
    rc |= api_json_string(j, path, "message", &c->message, errs);
    return rc ? -1 : 0;
}

static int decode_mc(const cJSON *j, const char *path, struct api_machine_config_status *m, struct api_errors *errs,
                     struct api_errors *warns)
{
    static const char *const known[] = {"role", "name", "pool", "updated", "updatedMachines", "machines", NULL};
    if (!cJSON_IsObject(j))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(j, path, known, warns);
    int rc = 0;
    rc |= api_json_string(j, path, "role", &m->role, errs);
    rc |= api_json_string(j, path, "name", &m->name, errs);
    rc |= api_json_string(j, path, "pool", &m->pool, errs);
    rc |= api_json_bool(j, path, "updated", &m->updated, errs);
    rc |= api_json_int(j, path, "updatedMachines", &m->updated_machines, errs);
    rc |= api_json_int(j, path, "machines", &m->machines, errs);
    return rc ? -1 : 0;
}

/* The keys of an api_workload_pressure, in the object o at path (see encode_workload_pressure). */
static int decode_workload_pressure(const cJSON *o, const char *path, struct api_workload_pressure *w,
                                    struct api_errors *errs)
{
    *w = (struct api_workload_pressure){NAN, NAN, NAN, NAN, API_DEMAND_FROM_NONE};
    int rc = 0, from = API_DEMAND_FROM_NONE;
    rc |= decode_reading(o, path, "cpu", &w->cpu, errs);
    rc |= decode_reading(o, path, "memory", &w->memory, errs);
    rc |= decode_cores(o, path, "usageCores", &w->usage, errs);
    rc |= decode_cores(o, path, "demandCores", &w->demand, errs);
    rc |= api_json_enum(o, path, "demandFrom", demand_from_names, API_DEMAND_FROMS, &from, errs);
    w->from = (enum api_demand_from)from;
    return rc;
}

/* A string of at most size - 1 bytes at o[key] into buf (absent: ""). */
static int decode_fixed(const cJSON *o, const char *path, const char *key, char *buf, size_t size,
                        struct api_errors *errs)
{
    char *s = NULL;
    int rc = api_json_string(o, path, key, &s, errs);
    buf[0] = 0;
    if (s && strlen(s) >= size) {
        char p[API_JSON_PATH_MAX];
        rc |= api_errors_add(errs, api_json_path(p, path, key), "too long");
    } else if (s) {
        snprintf(buf, size, "%s", s);
    }
    free(s);
    return rc;
}

static int decode_node_workloads(const cJSON *j, const char *path, struct api_node_status *n, struct api_errors *errs,
                                 struct api_errors *warns)
{
    static const char *const known[] = {"kind",   "namespace",  "name",        "role",       "cpu",
                                        "memory", "usageCores", "demandCores", "demandFrom", NULL};
    const cJSON *arr, *it;
    int rc = api_json_array(j, path, "workloads", &arr, errs);
    char p[API_JSON_PATH_MAX], ip[API_JSON_PATH_MAX];
    api_json_path(p, path, "workloads");
    if (arr && cJSON_GetArraySize(arr) > API_NODE_WORKLOADS)
        return api_errors_add(errs, p, "more than 3 items");
    int i = 0;
    cJSON_ArrayForEach (it, arr) {
        struct api_node_workload *w = &n->workloads[n->nworkloads++];
        api_json_index(ip, p, i++);
        if (!cJSON_IsObject(it)) {
            rc |= api_errors_add(errs, ip, "must be of type object");
            continue;
        }
        api_json_unknown(it, ip, known, warns);
        int role = API_ROLE_NONE;
        rc |= decode_fixed(it, ip, "kind", w->kind, sizeof(w->kind), errs);
        rc |= decode_fixed(it, ip, "namespace", w->ns, sizeof(w->ns), errs);
        rc |= decode_fixed(it, ip, "name", w->name, sizeof(w->name), errs);
        rc |= api_json_enum(it, ip, "role", role_names, API_WORKLOAD_ROLES, &role, errs);
        w->role = (enum api_workload_role)role;
        rc |= decode_workload_pressure(it, ip, &w->p, errs);
    }
    return rc;
}

static int decode_node(const cJSON *j, const char *path, struct api_node_status *n, struct api_errors *errs,
                       struct api_errors *warns)
{
    static const char *const known[] = {"name",         "pressure",     "utilization", "state",
                                        "since",        "taintedSince", "evictions",   "migrations",
                                        "demandSource", "saturated",    "workloads",   NULL};
    static const char *const pressure_known[] = {"cpu", "memory", "io", NULL};
    static const char *const migrations_known[] = {"succeeded", "failed", "inFlight", NULL};
    for (int r = 0; r < API_RESOURCES; r++)
        n->pressure[r] = NAN;
    n->utilization = NAN;
    n->state = API_NODE_UNKNOWN;
    if (!cJSON_IsObject(j))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(j, path, known, warns);
    int rc = 0, state = API_NODE_UNKNOWN;
    char p[API_JSON_PATH_MAX];
    const cJSON *pressure, *migrations;
    rc |= api_json_string(j, path, "name", &n->name, errs);
    rc |= api_json_object(j, path, "pressure", &pressure, errs);
    if (pressure) {
        api_json_path(p, path, "pressure");
        api_json_unknown(pressure, p, pressure_known, warns);
        for (int r = 0; r < API_RESOURCES; r++)
            rc |= decode_reading(pressure, p, api_resource_name((enum api_resource)r), &n->pressure[r], errs);
    }
    rc |= decode_reading(j, path, "utilization", &n->utilization, errs);
    char *source = NULL;
    rc |= api_json_string(j, path, "demandSource", &source, errs);
    if (source && strlen(source) >= sizeof(n->demand_source))
        rc |= api_errors_add(errs, path, "demandSource: longer than 15 bytes");
    else if (source)
        snprintf(n->demand_source, sizeof(n->demand_source), "%s", source);
    free(source);
    const cJSON *sat = cJSON_GetObjectItemCaseSensitive(j, "saturated");
    if (sat && !cJSON_IsBool(sat))
        rc |= api_errors_add(errs, path, "saturated: must be a boolean");
    n->saturated = cJSON_IsTrue(sat);
    rc |= decode_node_workloads(j, path, n, errs, warns);
    rc |= api_json_enum(j, path, "state", node_state_names, 5, &state, errs);
    n->state = (enum api_node_state)state;
    rc |= api_json_time(j, path, "since", &n->since, errs);
    rc |= api_json_time(j, path, "taintedSince", &n->tainted_since, errs);
    rc |= api_json_int(j, path, "evictions", &n->evictions, errs);
    rc |= api_json_object(j, path, "migrations", &migrations, errs);
    if (migrations) {
        api_json_path(p, path, "migrations");
        api_json_unknown(migrations, p, migrations_known, warns);
        rc |= api_json_int(migrations, p, "succeeded", &n->migrations.succeeded, errs);
        rc |= api_json_int(migrations, p, "failed", &n->migrations.failed, errs);
        rc |= api_json_int(migrations, p, "inFlight", &n->migrations.in_flight, errs);
    }
    return rc ? -1 : 0;
}

/* A count of seconds or bytes: absent leaves *out, present must be 0 or more. */
static int decode_count(const cJSON *j, const char *path, const char *key, int64_t *out, struct api_errors *errs)
{
    if (api_json_int(j, path, key, out, errs) < 0)
        return -1;
    if (*out >= 0)
        return 0;
    char p[API_JSON_PATH_MAX];
    return api_errors_add(errs, api_json_path(p, path, key), "must be 0 or more");
}

static int decode_cost(const cJSON *j, const char *move_path, struct api_move_cost *c, struct api_errors *errs,
                       struct api_errors *warns)
{
    static const char *const known[] = {"memoryBytes", "expectedSeconds", "expectedFrom", "durationSeconds", NULL};
    char path[API_JSON_PATH_MAX];
    api_json_path(path, move_path, "cost");
    api_json_unknown(j, path, known, warns);
    int basis = API_COST_NONE, rc = 0;
    rc |= decode_count(j, path, "memoryBytes", &c->memory, errs);
    rc |= decode_count(j, path, "expectedSeconds", &c->expected_s, errs);
    rc |= api_json_enum(j, path, "expectedFrom", cost_basis_names, API_COST_BASES, &basis, errs);
    c->basis = (enum api_cost_basis)basis;
    if ((c->basis != API_COST_NONE) != (api_json_get(j, "expectedSeconds") != NULL)) {
        char p[API_JSON_PATH_MAX];
        rc |= api_errors_add(errs, api_json_path(p, path, "expectedFrom"), "goes with expectedSeconds");
    }
    c->timed = api_json_get(j, "durationSeconds") != NULL;
    rc |= decode_count(j, path, "durationSeconds", &c->duration_s, errs);
    return rc ? -1 : 0;
}

static int decode_move(const cJSON *j, const char *path, struct api_move *m, struct api_errors *errs,
                       struct api_errors *warns)
{
    static const char *const known[] = {
        "kind",       "namespace",     "name",       "pod",   "sourceNode",       "destinationNode",
        "targetNode", "time",          "endTime",    "phase", "migration",        "failures",
        "vmRestart",  "cooldownUntil", "prediction", "cost",  "workloadPressure", NULL};
    static const char *const prediction_known[] = {"source",         "destination",         "sourceBefore",
                                                   "observedSource", "observedDestination", NULL};
    if (!cJSON_IsObject(j))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(j, path, known, warns);
    int rc = 0, phase = API_MOVE_WOULD_MOVE;
    rc |= api_json_string(j, path, "kind", &m->kind, errs);
    rc |= api_json_string(j, path, "namespace", &m->ns, errs);
    rc |= api_json_string(j, path, "name", &m->name, errs);
    rc |= api_json_string(j, path, "pod", &m->pod, errs);
    rc |= api_json_string(j, path, "sourceNode", &m->source_node, errs);
    rc |= api_json_string(j, path, "destinationNode", &m->destination_node, errs);
    rc |= api_json_string(j, path, "targetNode", &m->target_node, errs);
    rc |= api_json_time(j, path, "time", &m->time, errs);
    rc |= api_json_time(j, path, "endTime", &m->end_time, errs);
    rc |= api_json_enum(j, path, "phase", move_phase_names, API_MOVE_PHASES, &phase, errs);
    m->phase = (enum api_move_phase)phase;
    rc |= api_json_string(j, path, "migration", &m->migration, errs);
    rc |= api_json_int(j, path, "failures", &m->failures, errs);
    rc |= api_json_bool(j, path, "vmRestart", &m->vm_restart, errs);
    rc |= api_json_time(j, path, "cooldownUntil", &m->cooldown_until, errs);
    const cJSON *pr = NULL;
    rc |= api_json_object(j, path, "prediction", &pr, errs);
    if (pr) {
        char p[API_JSON_PATH_MAX];
        api_json_path(p, path, "prediction");
        api_json_unknown(pr, p, prediction_known, warns);
        m->predicted_source = m->predicted_destination = m->observed_source = m->observed_destination = NAN;
        m->source_before = NAN;
        rc |= decode_reading(pr, p, "source", &m->predicted_source, errs);
        rc |= decode_reading(pr, p, "sourceBefore", &m->source_before, errs);
        rc |= decode_reading(pr, p, "destination", &m->predicted_destination, errs);
        rc |= decode_reading(pr, p, "observedSource", &m->observed_source, errs);
        rc |= decode_reading(pr, p, "observedDestination", &m->observed_destination, errs);
        m->predicted = !isnan(m->predicted_source) || !isnan(m->predicted_destination);
        m->observed = !isnan(m->observed_source) || !isnan(m->observed_destination);
    }
    const cJSON *cost = NULL;
    rc |= api_json_object(j, path, "cost", &cost, errs);
    if (cost)
        rc |= decode_cost(cost, path, &m->cost, errs, warns);
    const cJSON *wp = NULL;
    rc |= api_json_object(j, path, "workloadPressure", &wp, errs);
    m->pressure = (struct api_workload_pressure){NAN, NAN, NAN, NAN, API_DEMAND_FROM_NONE};
    if (wp) {
        static const char *const wp_known[] = {"cpu", "memory", "usageCores", "demandCores", "demandFrom", NULL};
        char p[API_JSON_PATH_MAX];
        api_json_path(p, path, "workloadPressure");
        api_json_unknown(wp, p, wp_known, warns);
        rc |= decode_workload_pressure(wp, p, &m->pressure, errs);
    }
    return rc ? -1 : 0;
}

typedef int (*elem_decoder)(const cJSON *, const char *, void *, struct api_errors *, struct api_errors *);

/* A list in the status: its key, the size of one element and the element decoder. */
struct list_kind {
    const char *key;
    size_t elem_size;
    elem_decoder dec;
};

/* Decode the array at json[k->key] with k's element decoder, appending to *out (*n elements). */
static int decode_list(const cJSON *json, const char *path, const struct list_kind *k, void **out, size_t *n,
                       struct api_errors *errs, struct api_errors *warns)
{
    const char *key = k->key;
    size_t elem_size = k->elem_size;
    const cJSON *arr, *it;
    if (api_json_array(json, path, key, &arr, errs) < 0)
        return -1;
    if (!arr)
        return 0;
    char p[API_JSON_PATH_MAX], ip[API_JSON_PATH_MAX];
    api_json_path(p, path, key);
    size_t count = (size_t)cJSON_GetArraySize(arr);
    char *v = count ? realloc(*out, (*n + count) * elem_size) : *out; /* one allocation, not one per element */
    if (count && !v)
        return api_errors_add(errs, p, "out of memory");
    *out = v;
    int rc = 0, i = 0;
    cJSON_ArrayForEach (it, arr) {
        void *elem = memset(v + (*n)++ * elem_size, 0, elem_size);
        rc |= k->dec(it, api_json_index(ip, p, i++), elem, errs, warns);
    }
    return rc ? -1 : 0;
}

static int dec_condition(const cJSON *j, const char *p, void *e, struct api_errors *errs, struct api_errors *warns)
{
    return decode_condition(j, p, e, errs, warns);
}

static int dec_mc(const cJSON *j, const char *p, void *e, struct api_errors *errs, struct api_errors *warns)
{
    return decode_mc(j, p, e, errs, warns);
}

static int dec_node(const cJSON *j, const char *p, void *e, struct api_errors *errs, struct api_errors *warns)
{
    return decode_node(j, p, e, errs, warns);
}

static int dec_move(const cJSON *j, const char *p, void *e, struct api_errors *errs, struct api_errors *warns)
{
    return decode_move(j, p, e, errs, warns);
}

static const struct list_kind conditions_list = {"conditions", sizeof(struct api_condition), dec_condition};
static const struct list_kind machine_configs_list = {"machineConfigs", sizeof(struct api_machine_config_status),
                                                      dec_mc};
static const struct list_kind nodes_list = {"nodes", sizeof(struct api_node_status), dec_node};
static const struct list_kind moves_list = {"moves", sizeof(struct api_move), dec_move};

/* A condition without a type names nothing: it is reported by decode_condition and left out,
 * so that every condition kept has a type to be found by. */
static void drop_untyped_conditions(struct api_status *st)
{
    size_t k = 0;
    for (size_t i = 0; i < st->nconditions; i++) {
        if (st->conditions[i].type && st->conditions[i].type[0])
            st->conditions[k++] = st->conditions[i];
        else
            condition_free(&st->conditions[i]);
    }
    st->nconditions = k;
}

int api_status_decode(const cJSON *json, struct api_status *st, struct api_errors *errs, struct api_errors *warns)
{
    static const char *const known[] = {"observedGeneration",
                                        "conditions",
                                        "lastSuccessfulCycleTime",
                                        "summary",
                                        "machineConfigs",
                                        "nodes",
                                        "moves",
                                        "taintKeys",
                                        "moveHistory",
                                        NULL};
    static const char *const summary_known[] = {"nodes",
                                                "pressured",
                                                "tainted",
                                                "evictions",
                                                "migrationsSucceeded",
                                                "migrationsFailed",
                                                "migrationsInFlight",
                                                "nodeStates",
                                                NULL};
    const char *path = "status";
    size_t before = errs ? errs->n : 0;
    api_status_free(st);
    if (!json)
        return 0;
    if (!cJSON_IsObject(json))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(json, path, known, warns);
    api_json_int(json, path, "observedGeneration", &st->observed_generation, errs);
    decode_list(json, path, &conditions_list, (void **)&st->conditions, &st->nconditions, errs, warns);
    drop_untyped_conditions(st);
    api_json_time(json, path, "lastSuccessfulCycleTime", &st->last_successful_cycle_time, errs);
    const cJSON *sum;
    if (api_json_object(json, path, "summary", &sum, errs) == 0 && sum) {
        const char *sp = "status.summary";
        struct api_summary *s = &st->summary;
        api_json_unknown(sum, sp, summary_known, warns);
        api_json_int(sum, sp, "nodes", &s->nodes, errs);
        api_json_int(sum, sp, "pressured", &s->pressured, errs);
        api_json_int(sum, sp, "tainted", &s->tainted, errs);
        api_json_int(sum, sp, "evictions", &s->evictions, errs);
        api_json_int(sum, sp, "migrationsSucceeded", &s->migrations_succeeded, errs);
        api_json_int(sum, sp, "migrationsFailed", &s->migrations_failed, errs);
        api_json_int(sum, sp, "migrationsInFlight", &s->migrations_in_flight, errs);
        const cJSON *by;
        if (api_json_object(sum, sp, "nodeStates", &by, errs) == 0 && by) {
            api_json_unknown(by, "status.summary.nodeStates", node_state_keys, warns);
            for (int k = 0; k < API_NODE_STATES; k++)
                api_json_int(by, "status.summary.nodeStates", node_state_keys[k], &s->node_states[k], errs);
        }
    }
    decode_list(json, path, &machine_configs_list, (void **)&st->machine_configs, &st->nmachine_configs, errs, warns);
    decode_list(json, path, &nodes_list, (void **)&st->nodes, &st->nnodes, errs, warns);
    decode_list(json, path, &moves_list, (void **)&st->moves, &st->nmoves, errs, warns);
    api_json_strv(json, path, "taintKeys", &st->taint_keys, &st->ntaint_keys, errs);
    api_move_history_decode(api_json_get(json, "moveHistory"), "status.moveHistory", &st->move_history, errs, warns);
    return errs && errs->n > before ? -1 : 0;
}

/* ---- encode ---- */

/* Round a reading to the 0.1 it is written with. */
static double round1(double v)
{
    return round(v * 10.0) / 10.0;
}

static bool add_reading(cJSON *obj, const char *key, double v)
{
    if (isnan(v))
        return true;
    char buf[32];
    snprintf(buf, sizeof(buf), "%.1f", v < 0 ? 0.0 : round1(v));
    return cJSON_AddStringToObject(obj, key, buf) != NULL;
}

/* Cores as status writes them (to 0.01), nothing for NAN. */
static bool add_cores(cJSON *obj, const char *key, double v)
{
    if (isnan(v))
        return true;
    char buf[32];
    snprintf(buf, sizeof(buf), "%.2f", v < 0 ? 0.0 : fmin(v, MAX_CORES));
    return cJSON_AddStringToObject(obj, key, buf) != NULL;
}

/* The keys of w into o: cpu, memory (its own stall), usageCores, demandCores, demandFrom. */
static bool encode_workload_pressure(cJSON *o, const struct api_workload_pressure *w)
{
    return add_reading(o, "cpu", w->cpu) && add_reading(o, "memory", w->memory) &&
           add_cores(o, "usageCores", w->usage) && add_cores(o, "demandCores", w->demand) &&
           (w->from == API_DEMAND_FROM_NONE || cJSON_AddStringToObject(o, "demandFrom", demand_from_names[w->from]));
}

static bool encode_node_workloads(cJSON *o, const struct api_node_status *n)
{
    if (!n->nworkloads)
        return true;
    cJSON *arr = cJSON_AddArrayToObject(o, "workloads");
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < n->nworkloads; i++) {
        const struct api_node_workload *w = &n->workloads[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(arr, e);
        if (!ok) {
            cJSON_Delete(e);
            break;
        }
        ok = (!w->kind[0] || cJSON_AddStringToObject(e, "kind", w->kind)) &&
             (!w->ns[0] || cJSON_AddStringToObject(e, "namespace", w->ns)) &&
             cJSON_AddStringToObject(e, "name", w->name) &&
             (w->role == API_ROLE_NONE || cJSON_AddStringToObject(e, "role", role_names[w->role])) &&
             encode_workload_pressure(e, &w->p);
    }
    return ok;
}

static bool add_time(cJSON *obj, const char *key, int64_t t)
{
    char buf[32];
    return !t || cJSON_AddStringToObject(obj, key, api_json_format_time(t, buf, sizeof(buf))) != NULL;
}

static bool add_int(cJSON *obj, const char *key, int64_t v)
{
    return cJSON_AddNumberToObject(obj, key, (double)v) != NULL;
}

static bool encode_node(cJSON *arr, const struct api_node_status *n)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return false;
    }
    bool ok = cJSON_AddStringToObject(o, "name", n->name ? n->name : "") != NULL;
    bool any = false;
    for (int r = 0; r < API_RESOURCES; r++)
        any = any || !isnan(n->pressure[r]);
    if (any) {
        cJSON *p = cJSON_AddObjectToObject(o, "pressure");
        ok = ok && p;
        for (int r = 0; ok && r < API_RESOURCES; r++)
            ok = add_reading(p, api_resource_name((enum api_resource)r), n->pressure[r]);
    }
    ok = ok && add_reading(o, "utilization", n->utilization);
    if (n->demand_source[0]) {
        ok = ok && cJSON_AddStringToObject(o, "demandSource", n->demand_source);
        ok = ok && cJSON_AddBoolToObject(o, "saturated", n->saturated);
    }
    ok = ok && encode_node_workloads(o, n);
    ok = ok && cJSON_AddStringToObject(o, "state", node_state_names[n->state]);
    ok = ok && add_time(o, "since", n->since);
    ok = ok && add_time(o, "taintedSince", n->tainted_since);
    ok = ok && add_int(o, "evictions", n->evictions);
    cJSON *m = ok ? cJSON_AddObjectToObject(o, "migrations") : NULL;
    ok = ok && m && add_int(m, "succeeded", n->migrations.succeeded) && add_int(m, "failed", n->migrations.failed) &&
         add_int(m, "inFlight", n->migrations.in_flight);
    return ok;
}

static bool add_opt_str(cJSON *obj, const char *key, const char *v)
{
    return !v || cJSON_AddStringToObject(obj, key, v) != NULL;
}

static bool encode_prediction(cJSON *o, const struct api_move *m)
{
    if (!m->predicted && !m->observed)
        return true;
    cJSON *p = cJSON_AddObjectToObject(o, "prediction");
    return p &&
           (!m->predicted ||
            (add_reading(p, "source", m->predicted_source) && add_reading(p, "destination", m->predicted_destination) &&
             add_reading(p, "sourceBefore", m->source_before))) &&
           (!m->observed || (add_reading(p, "observedSource", m->observed_source) &&
                             add_reading(p, "observedDestination", m->observed_destination)));
}

static bool encode_cost(cJSON *o, const struct api_move_cost *c)
{
    if (!c->memory && c->basis == API_COST_NONE && !c->timed)
        return true;
    cJSON *co = cJSON_AddObjectToObject(o, "cost");
    return co && (!c->memory || add_int(co, "memoryBytes", c->memory)) &&
           (c->basis == API_COST_NONE || (add_int(co, "expectedSeconds", c->expected_s) &&
                                          cJSON_AddStringToObject(co, "expectedFrom", cost_basis_names[c->basis]))) &&
           (!c->timed || add_int(co, "durationSeconds", c->duration_s));
}

static bool encode_move_pressure(cJSON *o, const struct api_workload_pressure *w)
{
    if (w->from == API_DEMAND_FROM_NONE)
        return true;
    cJSON *p = cJSON_AddObjectToObject(o, "workloadPressure");
    return p && encode_workload_pressure(p, w);
}

static bool encode_move(cJSON *arr, const struct api_move *m)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return false;
    }
    return add_opt_str(o, "kind", m->kind) && add_opt_str(o, "namespace", m->ns) &&
           cJSON_AddStringToObject(o, "name", m->name ? m->name : "") && add_opt_str(o, "pod", m->pod) &&
           cJSON_AddStringToObject(o, "sourceNode", m->source_node ? m->source_node : "") &&
           add_opt_str(o, "destinationNode", m->destination_node) && add_opt_str(o, "targetNode", m->target_node) &&
           add_time(o, "time", m->time) && add_time(o, "endTime", m->end_time) &&
           cJSON_AddStringToObject(o, "phase", move_phase_names[m->phase]) &&
           add_opt_str(o, "migration", m->migration) && (!m->failures || add_int(o, "failures", m->failures)) &&
           (!m->vm_restart || cJSON_AddTrueToObject(o, "vmRestart")) &&
           add_time(o, "cooldownUntil", m->cooldown_until) && encode_prediction(o, m) && encode_cost(o, &m->cost) &&
           encode_move_pressure(o, &m->pressure);
}

cJSON *api_status_encode(const struct api_status *st)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && add_int(o, "observedGeneration", st->observed_generation);
    if (ok && st->nconditions) {
        cJSON *arr = cJSON_AddArrayToObject(o, "conditions");
        ok = arr != NULL;
        for (size_t i = 0; ok && i < st->nconditions; i++) {
            const struct api_condition *c = &st->conditions[i];
            cJSON *co = cJSON_CreateObject();
            ok = co && cJSON_AddItemToArray(arr, co);
            if (!ok) {
                cJSON_Delete(co);
                break;
            }
            ok = cJSON_AddStringToObject(co, "type", c->type ? c->type : "") &&
                 cJSON_AddStringToObject(co, "status", condition_status_names[c->status]) &&
                 add_int(co, "observedGeneration", c->observed_generation) &&
                 add_time(co, "lastTransitionTime", c->last_transition_time) &&
                 cJSON_AddStringToObject(co, "reason", c->reason && *c->reason ? c->reason : "Unknown") &&
                 cJSON_AddStringToObject(co, "message", c->message ? c->message : "");
        }
    }
    ok = ok && add_time(o, "lastSuccessfulCycleTime", st->last_successful_cycle_time);
    cJSON *s = ok ? cJSON_AddObjectToObject(o, "summary") : NULL;
    ok = ok && s && add_int(s, "nodes", st->summary.nodes) && add_int(s, "pressured", st->summary.pressured) &&
         add_int(s, "tainted", st->summary.tainted) && add_int(s, "evictions", st->summary.evictions) &&
         add_int(s, "migrationsSucceeded", st->summary.migrations_succeeded) &&
         add_int(s, "migrationsFailed", st->summary.migrations_failed) &&
         add_int(s, "migrationsInFlight", st->summary.migrations_in_flight);
    bool by_state = false;
    for (int k = 0; k < API_NODE_STATES; k++)
        by_state = by_state || st->summary.node_states[k] != 0;
    cJSON *by = ok && by_state ? cJSON_AddObjectToObject(s, "nodeStates") : NULL;
    ok = ok && (!by_state || by);
    for (int k = 0; ok && by && k < API_NODE_STATES; k++)
        ok = add_int(by, node_state_keys[k], st->summary.node_states[k]);
    if (ok && st->nmachine_configs) {
        cJSON *arr = cJSON_AddArrayToObject(o, "machineConfigs");
        ok = arr != NULL;
        for (size_t i = 0; ok && i < st->nmachine_configs; i++) {
            const struct api_machine_config_status *m = &st->machine_configs[i];
            cJSON *mo = cJSON_CreateObject();
            ok = mo && cJSON_AddItemToArray(arr, mo);
            if (!ok) {
                cJSON_Delete(mo);
                break;
            }
            ok = cJSON_AddStringToObject(mo, "pool", m->pool ? m->pool : "") &&
                 (!m->role || cJSON_AddStringToObject(mo, "role", m->role)) &&
                 (!m->name || cJSON_AddStringToObject(mo, "name", m->name)) &&
                 cJSON_AddBoolToObject(mo, "updated", m->updated) &&
                 add_int(mo, "updatedMachines", m->updated_machines) && add_int(mo, "machines", m->machines);
        }
    }
    if (ok && st->nnodes) {
        cJSON *arr = cJSON_AddArrayToObject(o, "nodes");
        ok = arr != NULL;
        for (size_t i = 0; ok && i < st->nnodes; i++)
            ok = encode_node(arr, &st->nodes[i]);
    }
    if (ok && st->nmoves) {
        cJSON *arr = cJSON_AddArrayToObject(o, "moves");
        ok = arr != NULL;
        for (size_t i = 0; ok && i < st->nmoves; i++)
            ok = encode_move(arr, &st->moves[i]);
    }
    if (ok && st->ntaint_keys) {
        cJSON *arr = cJSON_AddArrayToObject(o, "taintKeys");
        ok = arr != NULL;
        for (size_t i = 0; ok && i < st->ntaint_keys; i++) {
            cJSON *k = cJSON_CreateString(st->taint_keys[i]);
            ok = k && cJSON_AddItemToArray(arr, k);
            if (!ok)
                cJSON_Delete(k);
        }
    }
    if (ok && !api_move_history_empty(&st->move_history)) {
        cJSON *mh = api_move_history_encode(&st->move_history);
        ok = mh && cJSON_AddItemToObject(o, "moveHistory", mh);
        if (!ok)
            cJSON_Delete(mh);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- compare ---- */

static bool reading_changed(double a, double b, double tol)
{
    if (isnan(a) || isnan(b))
        return isnan(a) != isnan(b);
    /* Compare at the resolution written; the epsilon absorbs binary rounding of 0.1 steps. */
    return fabs(round1(a) - round1(b)) > tol + 1e-9;
}

static bool condition_equal(const struct api_condition *a, const struct api_condition *b)
{
    return a->status == b->status && a->observed_generation == b->observed_generation && str_eq(a->reason, b->reason) &&
           str_eq(a->message, b->message);
}

static bool mc_equal(const struct api_machine_config_status *a, const struct api_machine_config_status *b)
{
    return str_eq(a->name, b->name) && str_eq(a->role, b->role) && a->updated == b->updated &&
           a->updated_machines == b->updated_machines && a->machines == b->machines;
}

static bool pressure_equal(const struct api_workload_pressure *a, const struct api_workload_pressure *b, double tol)
{
    if (a->from != b->from)
        return false;
    return a->from == API_DEMAND_FROM_NONE ||
           (!reading_changed(a->cpu, b->cpu, tol) && !reading_changed(a->memory, b->memory, tol) &&
            !reading_changed(a->usage, b->usage, 0) && !reading_changed(a->demand, b->demand, 0));
}

static bool workloads_equal(const struct api_node_status *a, const struct api_node_status *b, double tol)
{
    if (a->nworkloads != b->nworkloads)
        return false;
    for (size_t i = 0; i < a->nworkloads; i++) {
        const struct api_node_workload *x = &a->workloads[i], *y = &b->workloads[i];
        if (strcmp(x->kind, y->kind) || strcmp(x->ns, y->ns) || strcmp(x->name, y->name) || x->role != y->role ||
            !pressure_equal(&x->p, &y->p, tol))
            return false;
    }
    return true;
}

static bool node_equal(const struct api_node_status *a, const struct api_node_status *b, double tol)
{
    for (int r = 0; r < API_RESOURCES; r++)
        if (reading_changed(a->pressure[r], b->pressure[r], tol))
            return false;
    return !reading_changed(a->utilization, b->utilization, tol) && a->state == b->state &&
           strcmp(a->demand_source, b->demand_source) == 0 && a->saturated == b->saturated &&
           a->tainted_since == b->tainted_since && a->evictions == b->evictions &&
           a->migrations.succeeded == b->migrations.succeeded && a->migrations.failed == b->migrations.failed &&
           a->migrations.in_flight == b->migrations.in_flight && workloads_equal(a, b, tol);
}

static int cmp_node_ptr(const void *x, const void *y)
{
    const struct api_node_status *a = *(const struct api_node_status *const *)x;
    const struct api_node_status *b = *(const struct api_node_status *const *)y;
    return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* Nodes compared by name, whatever their order. Sorting pointer copies keeps it n log n for
 * the thousands of nodes a large cluster has. */
static bool nodes_equal(const struct api_status *a, const struct api_status *b, double tol)
{
    if (a->nnodes != b->nnodes)
        return false;
    if (!a->nnodes)
        return true;
    const struct api_node_status **pa = malloc(a->nnodes * sizeof(*pa)), **pb = malloc(b->nnodes * sizeof(*pb));
    bool eq = pa && pb;
    for (size_t i = 0; eq && i < a->nnodes; i++) {
        pa[i] = &a->nodes[i];
        pb[i] = &b->nodes[i];
    }
    if (eq) {
        qsort(pa, a->nnodes, sizeof(*pa), cmp_node_ptr);
        qsort(pb, b->nnodes, sizeof(*pb), cmp_node_ptr);
    }
    for (size_t i = 0; eq && i < a->nnodes; i++)
        eq = str_eq(pa[i]->name, pb[i]->name) && node_equal(pa[i], pb[i], tol);
    free(pa);
    free(pb);
    return eq; /* on no memory: "changed", the safe answer */
}

/* Two readings as status writes them (to 0.1), NAN equal to NAN. */
static bool reading_eq(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) < 0.05;
}

static bool cost_equal(const struct api_move_cost *a, const struct api_move_cost *b)
{
    return a->memory == b->memory && a->basis == b->basis &&
           (a->basis == API_COST_NONE || a->expected_s == b->expected_s) && a->timed == b->timed &&
           (!a->timed || a->duration_s == b->duration_s);
}

static bool move_equal(const struct api_move *a, const struct api_move *b)
{
    return str_eq(a->kind, b->kind) && str_eq(a->ns, b->ns) && str_eq(a->name, b->name) && str_eq(a->pod, b->pod) &&
           str_eq(a->source_node, b->source_node) && str_eq(a->destination_node, b->destination_node) &&
           str_eq(a->target_node, b->target_node) && a->time == b->time && a->end_time == b->end_time &&
           a->phase == b->phase && str_eq(a->migration, b->migration) && a->failures == b->failures &&
           a->vm_restart == b->vm_restart && a->cooldown_until == b->cooldown_until && a->predicted == b->predicted &&
           a->observed == b->observed &&
           (!a->predicted || (reading_eq(a->predicted_source, b->predicted_source) &&
                              reading_eq(a->predicted_destination, b->predicted_destination) &&
                              reading_eq(a->source_before, b->source_before))) &&
           (!a->observed || (reading_eq(a->observed_source, b->observed_source) &&
                             reading_eq(a->observed_destination, b->observed_destination))) &&
           cost_equal(&a->cost, &b->cost) && pressure_equal(&a->pressure, &b->pressure, 0);
}

bool api_status_changed(const struct api_status *cur, const struct api_status *next,
                        const struct api_status_compare *opts)
{
    int64_t heartbeat = opts ? opts->heartbeat_s : 0;
    double tol = opts ? opts->pressure_tolerance : 0.0;
    if (cur->observed_generation != next->observed_generation)
        return true;
    if (memcmp(&cur->summary, &next->summary, sizeof(cur->summary)) != 0)
        return true;
    int64_t t0 = cur->last_successful_cycle_time, t1 = next->last_successful_cycle_time;
    if ((t0 == 0) != (t1 == 0) || t1 < t0 || (t1 > t0 && (heartbeat <= 0 || t1 - t0 >= heartbeat)))
        return true;
    if (cur->nconditions != next->nconditions)
        return true;
    for (size_t i = 0; i < next->nconditions; i++) {
        const struct api_condition *c = api_status_condition(cur, next->conditions[i].type);
        if (!c || !condition_equal(c, &next->conditions[i]))
            return true;
    }
    if (cur->nmachine_configs != next->nmachine_configs)
        return true;
    for (size_t i = 0; i < next->nmachine_configs; i++) {
        const struct api_machine_config_status *m = NULL;
        for (size_t k = 0; k < cur->nmachine_configs && !m; k++)
            if (str_eq(cur->machine_configs[k].pool, next->machine_configs[i].pool))
                m = &cur->machine_configs[k];
        if (!m || !mc_equal(m, &next->machine_configs[i]))
            return true;
    }
    if (cur->ntaint_keys != next->ntaint_keys)
        return true;
    for (size_t i = 0; i < next->ntaint_keys; i++)
        if (strcmp(cur->taint_keys[i], next->taint_keys[i]) != 0)
            return true;
    if (cur->nmoves != next->nmoves)
        return true;
    for (size_t i = 0; i < next->nmoves; i++) /* in order: the list is a history */
        if (!move_equal(&cur->moves[i], &next->moves[i]))
            return true;
    if (!api_move_history_equal(&cur->move_history, &next->move_history))
        return true;
    return !nodes_equal(cur, next, tol);
}
