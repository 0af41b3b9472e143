/* deployment: the scenario's Deployments and their pods' use (see deployment.h). */
#include "hack/sim/deployment.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/jx.h"
#include "hack/sim/podusage.h"
#include "hack/sim/quantity_format.h"
#include "hack/sim/scenario_deployments.h"
#include "base/logging.h"

/* kwok runs no container: the image is never pulled (.invalid never resolves). */
#define DEPLOYMENT_IMAGE "registry.invalid/psi-sim/app:0"

struct deployments {
    struct sim *s;
    struct kube_informer *pods;
    bool *created; /* per scenario Deployment */
    struct podusage *usage;
};

struct deployments *deployments_new(struct sim *s, struct kube_informer *pods)
{
    struct deployments *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->s = s;
    d->pods = pods;
    d->created = calloc(s->sc->n_deployments ? s->sc->n_deployments : 1, sizeof(bool));
    d->usage = podusage_new();
    if (!d->created || !d->usage) {
        deployments_free(d);
        return NULL;
    }
    return d;
}

void deployments_free(struct deployments *d)
{
    if (!d)
        return;
    free(d->created);
    podusage_free(d->usage);
    free(d);
}

/* The pod template's spec: one container with the requests, on the simulated nodes. */
static cJSON *pod_spec(const struct scenario_deployment *dep)
{
    cJSON *spec = cJSON_CreateObject();
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", "app");
    cJSON_AddStringToObject(c, "image", DEPLOYMENT_IMAGE);
    char cpu[32], mem[32];
    cJSON *req = cJSON_AddObjectToObject(cJSON_AddObjectToObject(c, "resources"), "requests");
    cJSON_AddStringToObject(req, "cpu", quantity_format_cpu(dep->cpu_request, cpu, sizeof(cpu)));
    cJSON_AddStringToObject(req, "memory", quantity_format_bytes(dep->memory_request, mem, sizeof(mem)));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "containers"), c);
    cJSON_AddNumberToObject(spec, "terminationGracePeriodSeconds", 5);
    cJSON_AddBoolToObject(spec, "automountServiceAccountToken", 0);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "nodeSelector"), SIM_SCHEDULABLE_LABEL, "true");
    /* tolerate kwok's fake-node taint should a bed set one, as the launcher pods do */
    cJSON *tol = cJSON_CreateObject();
    cJSON_AddStringToObject(tol, "key", "kwok.x-k8s.io/node");
    cJSON_AddStringToObject(tol, "operator", "Exists");
    cJSON_AddStringToObject(tol, "effect", "NoSchedule");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "tolerations"), tol);
    return spec;
}

/* The Deployment of dep in namespace ns. */
static cJSON *deployment_object(const char *ns, const char *scenario, const struct scenario_deployment *dep)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", "apps/v1");
    cJSON_AddStringToObject(o, "kind", "Deployment");
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(md, "name", dep->name);
    cJSON_AddStringToObject(md, "namespace", ns);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "labels"), SIM_MANAGED_LABEL, scenario);
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    cJSON_AddNumberToObject(spec, "replicas", dep->replicas);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "selector"), "matchLabels"),
                            DEPLOYMENT_LABEL, dep->name);
    cJSON *tmpl = cJSON_AddObjectToObject(spec, "template");
    cJSON *labels = cJSON_AddObjectToObject(cJSON_AddObjectToObject(tmpl, "metadata"), "labels");
    for (size_t i = 0; i < dep->n_labels; i++)
        cJSON_AddStringToObject(labels, dep->labels[i].key, dep->labels[i].value);
    cJSON_DeleteItemFromObjectCaseSensitive(labels, DEPLOYMENT_LABEL);
    cJSON_DeleteItemFromObjectCaseSensitive(labels, SIM_MANAGED_LABEL);
    cJSON_AddStringToObject(labels, DEPLOYMENT_LABEL, dep->name);
    cJSON_AddStringToObject(labels, SIM_MANAGED_LABEL, scenario);
    cJSON_AddItemToObject(tmpl, "spec", pod_spec(dep));
    return o;
}

void deployments_sync(struct deployments *d)
{
    const struct scenario *sc = d->s->sc;
    for (size_t i = 0; i < sc->n_deployments; i++) {
        if (d->created[i])
            continue;
        cJSON *o = deployment_object(sc->namespace, sc->name, &sc->deployments[i]);
        char *path = kube_path("apps/v1", sc->namespace, "deployments", NULL, NULL);
        if (o && path && sim_create_once(d->s, path, o, NULL, sc->deployments[i].name) == 0) {
            d->created[i] = true;
            char replicas[16];
            snprintf(replicas, sizeof(replicas), "%d", sc->deployments[i].replicas);
            log_info("deployment created", "deployment", sc->deployments[i].name, "replicas", replicas);
            record_add(d->s->rec, "deployment-created", "deployment", sc->deployments[i].name, "replicas", replicas,
                       NULL);
        }
        free(path);
        cJSON_Delete(o);
    }
}

/* The scenario Deployment of a running pod, or NULL (not running, or not one of ours). */
static const struct scenario_deployment *running_pod(const struct deployments *d, const cJSON *pod)
{
    if (!sim_pod_ready(pod))
        return NULL;
    return scenario_deployment_find(d->s->sc, jx_label(pod, DEPLOYMENT_LABEL));
}

/* A callback over the running pods. */
struct walk {
    const struct deployments *d;
    void (*fn)(const cJSON *pod, const struct scenario_deployment *dep, void *ud);
    void *ud;
};

static int walk_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct walk *w = ud;
    const struct scenario_deployment *dep = running_pod(w->d, obj);
    if (dep)
        w->fn(obj, dep, w->ud);
    return 0;
}

static void walk(const struct deployments *d, void (*fn)(const cJSON *, const struct scenario_deployment *, void *),
                 void *ud)
{
    struct walk w = {d, fn, ud};
    if (d->pods && kube_informer_synced(d->pods))
        kube_informer_foreach(d->pods, walk_cb, &w);
}

/* deployments_running: running pods per scenario Deployment. */
struct count_ctx {
    const struct scenario *sc;
    size_t *counts;
};

static void count_cb(const cJSON *pod, const struct scenario_deployment *dep, void *ud)
{
    (void)pod;
    struct count_ctx *c = ud;
    c->counts[dep - c->sc->deployments]++;
}

bool deployments_running(void *ud)
{
    const struct deployments *d = ud;
    const struct scenario *sc = d->s->sc;
    size_t *counts = calloc(sc->n_deployments ? sc->n_deployments : 1, sizeof(size_t));
    if (!counts)
        return false;
    struct count_ctx c = {sc, counts};
    walk(d, count_cb, &c);
    bool all = d->pods && kube_informer_synced(d->pods);
    for (size_t i = 0; i < sc->n_deployments; i++)
        all = all && d->created[i] && counts[i] >= (size_t)sc->deployments[i].replicas;
    free(counts);
    return all;
}

/* deployments_demand: each running pod's demand to the caller. */
struct demand_ctx {
    void (*add)(const char *node, double cpu, double memory, double io, void *ud);
    void *ud;
};

static void demand_cb(const cJSON *pod, const struct scenario_deployment *dep, void *ud)
{
    struct demand_ctx *c = ud;
    c->add(jx_str(pod, "spec.nodeName"), dep->cpu_demand, dep->memory_demand, dep->io_demand, c->ud);
}

void deployments_demand(const struct deployments *d,
                        void (*add)(const char *node, double cpu, double memory, double io, void *ud), void *ud)
{
    struct demand_ctx c = {add, ud};
    walk(d, demand_cb, &c);
}

/* deployments_account: each running pod's use into podusage. */
struct account_ctx {
    struct podusage *usage;
    deployments_use_fn use;
    void *ud;
    double now;
};

static void account_cb(const cJSON *pod, const struct scenario_deployment *dep, void *ud)
{
    struct account_ctx *c = ud;
    const char *node = jx_str(pod, "spec.nodeName");
    struct podusage_pod p = {.uid = jx_str(pod, "metadata.uid"),
                             .ns = jx_str(pod, "metadata.namespace"),
                             .name = jx_str(pod, "metadata.name"),
                             .node = node,
                             .memory = dep->memory_demand};
    c->use(node, dep->cpu_demand, dep->memory_demand, &p, c->ud);
    if (podusage_set(c->usage, &p, c->now) < 0)
        log_warn("pod use not recorded", "pod", jx_str0(pod, "metadata.name"));
}

void deployments_account(struct deployments *d, deployments_use_fn use, void *ud, double now)
{
    struct account_ctx c = {d->usage, use, ud, now};
    podusage_begin(d->usage);
    walk(d, account_cb, &c);
    podusage_end(d->usage);
}

char *deployments_render(const struct deployments *d, const char *node, double now, char *text, size_t *len)
{
    return podusage_render(d->usage, node, now, text, len);
}

size_t deployments_summary(const struct deployments *d, const char *node, double now, struct summary_pod *out,
                           size_t max)
{
    return podusage_summary(d->usage, node, now, out, max);
}
