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
    const char **busy; /* VMIs with an unfinished migration */
    size_t n_busy, cap_busy;
};

static int scan_migrations(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct scan *sc = ud;
    const cJSON *mig = obj;
    if (miglimits_phase_final(jx_str(mig, "status.phase")))
        return 0;
    if (BASE_GROW(sc->busy, sc->n_busy + 1, sc->cap_busy) < 0)
        return 1;
    sc->busy[sc->n_busy++] = jx_str0(mig, "spec.vmiName");
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

struct vmi_pass {
    struct evacuation *e;
    const struct scan *sc;
};

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
    cJSON *mig = objects_evacuation(s->sc->namespace, name, node, jx_annotation(vmi, SIM_EVICTION_SOURCE));
    char *path = sim_path(s, SIM_KUBEVIRT_GV, "virtualmachineinstancemigrations", NULL, 0);
    cJSON *created = NULL;
    if (sim_create(s, path, mig, &created, name) == 0) {
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
    struct scan sc = {0};
    kube_informer_foreach(e->s->vmims, scan_migrations, &sc);
    struct vmi_pass p = {.e = e, .sc = &sc};
    kube_informer_foreach(e->s->vmis, vmi_cb, &p);
    free(sc.busy);
}
