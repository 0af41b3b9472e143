/* evacuation: marked VMIs become evacuation migrations (see evacuation.h). */
#include "hack/sim/evacuation.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jx.h"
#include "hack/sim/admission.h"
#include "hack/sim/miglimits.h"
#include "hack/sim/objects.h"
#include "base/logging.h"

/* A migration we created and the cache may not show yet (KubeVirt's expectations). */
struct expect {
    char *vmi;
    uint64_t until_ms;
};

struct evacuation {
    struct sim *s;
    struct expect *expects;
    size_t n_expects, expects_cap;
};

struct evacuation *evacuation_new(struct sim *s)
{
    struct evacuation *e = calloc(1, sizeof(*e));
    if (e)
        e->s = s;
    return e;
}

void evacuation_free(struct evacuation *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n_expects; i++)
        free(e->expects[i].vmi);
    free(e->expects);
    free(e);
}

static bool expected(struct evacuation *e, const char *vmi)
{
    uint64_t now = kube_loop_now_ms();
    for (size_t i = 0; i < e->n_expects;) {
        if (e->expects[i].until_ms <= now) {
            free(e->expects[i].vmi);
            e->expects[i] = e->expects[--e->n_expects];
            continue;
        }
        if (strcmp(e->expects[i].vmi, vmi) == 0)
            return true;
        i++;
    }
    return false;
}

static void expect(struct evacuation *e, const char *vmi)
{
    if (BASE_GROW(e->expects, e->n_expects + 1, e->expects_cap) < 0)
        return;
    e->expects[e->n_expects].vmi = strdup(vmi);
    e->expects[e->n_expects++].until_ms = kube_loop_now_ms() + 10000;
}

struct scan {
    struct sim *s;
    struct miglimits lim;
    const char **busy; /* VMIs with an unfinished migration */
    size_t n_busy, cap_busy;
};

static int scan_migrations(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct scan *sc = ud;
    const cJSON *mig = obj;
    const char *phase = jx_str(mig, "status.phase");
    if (miglimits_phase_final(phase))
        return 0;
    if (sc->n_busy == sc->cap_busy) {
        size_t cap = sc->cap_busy ? sc->cap_busy * 2 : 16;
        const char **grown = realloc(sc->busy, cap * sizeof(*grown));
        if (!grown)
            return 1;
        sc->busy = grown;
        sc->cap_busy = cap;
    }
    sc->busy[sc->n_busy++] = jx_str0(mig, "spec.vmiName");
    if (miglimits_phase_running(phase)) {
        const char *src = jx_str(mig, "status.migrationState.sourceNode");
        if (!src || !*src) {
            const cJSON *vmi = kube_informer_get(sc->s->vmis, sc->s->sc->namespace, jx_str0(mig, "spec.vmiName"));
            src = jx_str(vmi, "status.nodeName");
        }
        miglimits_add(&sc->lim, src);
    }
    return 0;
}

static bool busy(const struct scan *sc, const char *vmi)
{
    for (size_t i = 0; i < sc->n_busy; i++)
        if (strcmp(sc->busy[i], vmi) == 0)
            return true;
    return false;
}

struct live_count {
    int n;
};

static int count_live(const cJSON *pod, void *ud)
{
    struct live_count *c = ud;
    c->n += sim_pod_live(pod);
    return 0;
}

/* The mark stays until the VMI runs elsewhere; then it is cleared. */
static void clear_mark(struct sim *s, const char *name)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddNullToObject(cJSON_AddObjectToObject(patch, "status"), "evacuationNodeName");
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstances", name, 1);
    sim_merge_patch(s, path, patch, name);
    free(path);
    cJSON_Delete(patch);
}

/* Per source node: migrations created in this pass. */
struct created {
    const char *node;
    int n;
};

struct vmi_pass {
    struct evacuation *e;
    struct scan *sc;
    struct created *created;
    size_t n_created, created_cap;
};

static int *created_on(struct vmi_pass *p, const char *node)
{
    for (size_t i = 0; i < p->n_created; i++)
        if (strcmp(p->created[i].node, node) == 0)
            return &p->created[i].n;
    if (BASE_GROW(p->created, p->n_created + 1, p->created_cap) < 0)
        return NULL;
    p->created[p->n_created].node = node;
    p->created[p->n_created].n = 0;
    return &p->created[p->n_created++].n;
}

static int vmi_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct vmi_pass *p = ud;
    struct sim *s = p->e->s;
    const cJSON *vmi = obj;
    const char *evac = jx_str(vmi, "status.evacuationNodeName");
    const char *name = jx_str0(vmi, "metadata.name");
    const char *node = jx_str(vmi, "status.nodeName");
    if (!evac || !*evac || jx_get(vmi, "metadata.deletionTimestamp"))
        return 0;
    if (!jx_eq(node, evac)) {
        if (!busy(p->sc, name)) /* it left the node: the evacuation is over */
            clear_mark(s, name);
        return 0;
    }
    if (!jx_eq(jx_str(vmi, "status.phase"), "Running") || busy(p->sc, name) || expected(p->e, name))
        return 0;
    enum scenario_strategy st = admission_strategy(vmi, s->sc->cluster_strategy);
    bool migratable = admission_migratable(vmi);
    if (!migratable || (st != SCENARIO_STRATEGY_LIVE_MIGRATE && st != SCENARIO_STRATEGY_LIVE_MIGRATE_IF_POSSIBLE))
        return 0;
    struct live_count lc = {0};
    sim_foreach_pod_of(s, jx_str(vmi, "metadata.uid"), count_live, &lc);
    if (lc.n > 1)
        return 0; /* the pods of an earlier migration are still ending */
    int *made = created_on(p, node);
    if (!made || *made >= miglimits_room(&p->sc->lim, node))
        return 0; /* no free slot now: a later pass creates it */
    cJSON *mig = objects_evacuation(s->sc->namespace, name, node, jx_annotation(vmi, SIM_EVICTION_SOURCE));
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstancemigrations", NULL, 0);
    cJSON *created = NULL;
    if (sim_create(s, path, mig, &created, name) == 0) {
        (*made)++;
        expect(p->e, name);
        log_info("evacuation migration created", "vmi", name, "node", node, "migration",
                 jx_str0(created, "metadata.name"));
        record_add(s->rec, "evacuation", "vmi", name, "node", node, "migration", jx_str0(created, "metadata.name"),
                   "priority", jx_str0(created, "spec.priority"), NULL);
    }
    cJSON_Delete(created);
    free(path);
    cJSON_Delete(mig);
    return 0;
}

void evacuation_sync(struct evacuation *e)
{
    struct sim *s = e->s;
    struct scan sc = {.s = s};
    int per_cluster, per_node;
    sim_migration_limits(s, &per_cluster, &per_node);
    miglimits_init(&sc.lim, per_cluster, per_node);
    kube_informer_foreach(s->vmims, scan_migrations, &sc);
    struct vmi_pass p = {.e = e, .sc = &sc};
    kube_informer_foreach(s->vmis, vmi_cb, &p);
    free(p.created);
    free(sc.busy);
    miglimits_clear(&sc.lim);
}
