/* sim: the controllers' shared context and helpers (see sim.h). */
#include "hack/sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/jx.h"
#include "hack/sim/miglimits.h"
#include "base/logging.h"

double sim_random(struct sim *s)
{
    /* xorshift64*: small, good enough for failure injection, and reproducible */
    if (!s->rng)
        s->rng = 0x9E3779B97F4A7C15ull;
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return (double)((s->rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

uint64_t sim_elapsed_ms(const struct sim *s)
{
    return kube_loop_now_ms() - s->started_ms;
}

char *sim_timestamp(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

cJSON *sim_phase_history(const cJSON *old, const char *phase)
{
    char ts[32];
    cJSON *hist = cJSON_IsArray(old) ? cJSON_Duplicate(old, 1) : cJSON_CreateArray();
    int last = cJSON_GetArraySize(hist) - 1;
    if (last < 0 || !jx_eq(jx_str(cJSON_GetArrayItem(hist, last), "phase"), phase)) {
        cJSON *h = cJSON_CreateObject();
        cJSON_AddStringToObject(h, "phase", phase);
        cJSON_AddStringToObject(h, "phaseTransitionTimestamp", sim_timestamp(ts, sizeof(ts)));
        cJSON_AddItemToArray(hist, h);
    }
    return hist;
}

void sim_suffix(const char *seed, char out[6])
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)seed; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    for (int i = 0; i < 5; i++) {
        out[i] = alphabet[h % (sizeof(alphabet) - 1)];
        h /= sizeof(alphabet) - 1;
    }
    out[5] = '\0';
}

bool sim_synced(const struct sim *s)
{
    struct kube_informer *all[] = {s->nodes, s->pods, s->vms, s->vmis, s->vmims, s->kubevirts, s->mcs, s->mcps};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (all[i] && !kube_informer_synced(all[i]))
            return false;
    return true;
}

static int index_cb(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    struct sim *s = ud;
    const char *uid = jx_label(obj, SIM_CREATED_BY_LABEL);
    if (!uid)
        return 0;
    s->pod_index[s->n_pod_index].vmi_uid = uid;
    s->pod_index[s->n_pod_index++].pod = obj;
    return 0;
}

static int by_uid(const void *a, const void *b)
{
    return strcmp(((const struct sim_pod_ref *)a)->vmi_uid, ((const struct sim_pod_ref *)b)->vmi_uid);
}

void sim_index_pods(struct sim *s)
{
    size_t n = kube_informer_len(s->pods);
    free(s->pod_index);
    s->n_pod_index = 0;
    s->pod_index = calloc(n ? n : 1, sizeof(*s->pod_index));
    if (!s->pod_index)
        return;
    kube_informer_foreach(s->pods, index_cb, s);
    qsort(s->pod_index, s->n_pod_index, sizeof(*s->pod_index), by_uid);
}

int sim_foreach_pod_of(const struct sim *s, const char *vmi_uid, int (*fn)(const cJSON *pod, void *ud), void *ud)
{
    if (!vmi_uid || !*vmi_uid || !s->pod_index)
        return 0;
    /* the first entry with this UID (lower bound), then the run of them */
    size_t lo = 0, hi = s->n_pod_index;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->pod_index[mid].vmi_uid, vmi_uid) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < s->n_pod_index && strcmp(s->pod_index[i].vmi_uid, vmi_uid) == 0; i++) {
        int rc = fn(s->pod_index[i].pod, ud);
        if (rc)
            return rc;
    }
    return 0;
}

bool sim_pod_live(const cJSON *pod)
{
    const char *phase = jx_str(pod, "status.phase");
    return pod && !jx_get(pod, "metadata.deletionTimestamp") && !jx_eq(phase, "Succeeded") && !jx_eq(phase, "Failed");
}

bool sim_pod_ready(const cJSON *pod)
{
    return sim_pod_live(pod) && jx_str(pod, "spec.nodeName") && jx_eq(jx_str(pod, "status.phase"), "Running") &&
           jx_condition_true(pod, "Ready");
}

const cJSON *sim_node(const struct sim *s, const char *name)
{
    return name && *name ? kube_informer_get(s->nodes, NULL, name) : NULL;
}

static void log_failure(const char *verb, const char *what, const struct kube_err *err)
{
    char status[16];
    snprintf(status, sizeof(status), "%ld", err->status);
    log_warn("api call failed", "verb", verb, "object", what, "status", status, "reason", err->reason, "error",
             err->msg);
}

int sim_create(struct sim *s, const char *path, const cJSON *body, cJSON **created, const char *what)
{
    struct kube_err err = {0};
    cJSON *obj = kube_rest_create(s->client, path, body, NULL, &err);
    if (!obj) {
        log_failure("create", what, &err);
        return -1;
    }
    if (created)
        *created = obj;
    else
        cJSON_Delete(obj);
    return 0;
}

int sim_create_once(struct sim *s, const char *path, const cJSON *body, cJSON **created, const char *what)
{
    struct kube_err err = {0};
    if (created)
        *created = NULL;
    cJSON *obj = kube_rest_create(s->client, path, body, NULL, &err);
    if (!obj) {
        if (err.status == 409)
            return 0;
        log_failure("create", what, &err);
        return -1;
    }
    if (created)
        *created = obj;
    else
        cJSON_Delete(obj);
    return 0;
}

int sim_merge_patch(struct sim *s, const char *path, const cJSON *patch, const char *what)
{
    struct kube_err err = {0};
    cJSON *obj = kube_rest_patch(s->client, path, KUBE_PATCH_MERGE, patch, NULL, &err);
    if (!obj) {
        log_failure("patch", what, &err);
        return -1;
    }
    cJSON_Delete(obj);
    return 0;
}

int sim_json_patch(struct sim *s, const char *path, const char *ops, const char *what)
{
    struct kube_err err = {0};
    cJSON *obj =
        kube_rest_request(s->client, "PATCH", path, "application/json-patch+json", ops, KUBE_REQUEST_WRITE, &err);
    if (!obj) {
        log_failure("patch", what, &err);
        return -1;
    }
    cJSON_Delete(obj);
    return 0;
}

int sim_delete(struct sim *s, const char *path, const char *what)
{
    struct kube_err err = {0};
    cJSON *opts = cJSON_CreateObject();
    cJSON_AddStringToObject(opts, "propagationPolicy", "Background");
    cJSON *obj = kube_rest_delete(s->client, path, opts, NULL, &err);
    cJSON_Delete(opts);
    if (!obj) {
        if (err.status == 404)
            return 0;
        log_failure("delete", what, &err);
        return -1;
    }
    cJSON_Delete(obj);
    return 0;
}

char *sim_path(const struct sim *s, const char *gv, const char *resource, const char *name, int status)
{
    return kube_path(gv, s->sc->namespace, resource, name, status ? "status" : NULL);
}

int sim_publish_kubevirt(struct sim *s, char *err, size_t errlen)
{
    cJSON *kv = cJSON_CreateObject();
    cJSON_AddStringToObject(kv, "apiVersion", SIM_KUBEVIRT_GV);
    cJSON_AddStringToObject(kv, "kind", "KubeVirt");
    cJSON *md = cJSON_AddObjectToObject(kv, "metadata");
    cJSON_AddStringToObject(md, "name", SIM_KUBEVIRT_NAME);
    cJSON_AddStringToObject(md, "namespace", s->sc->namespace);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "labels"), SIM_MANAGED_LABEL, s->sc->name);
    cJSON *conf = cJSON_AddObjectToObject(cJSON_AddObjectToObject(kv, "spec"), "configuration");
    if (s->sc->cluster_strategy != SCENARIO_STRATEGY_UNSET)
        cJSON_AddStringToObject(conf, "evictionStrategy", scenario_strategy_name(s->sc->cluster_strategy));
    cJSON *mig = cJSON_AddObjectToObject(conf, "migrations");
    cJSON_AddNumberToObject(mig, "parallelMigrationsPerCluster", s->sc->parallel_per_cluster);
    cJSON_AddNumberToObject(mig, "parallelOutboundMigrationsPerNode", s->sc->parallel_outbound_per_node);
    char *path = kube_path(SIM_KUBEVIRT_GV, s->sc->namespace, "kubevirts", NULL, NULL);
    struct kube_err kerr = {0};
    cJSON *created = kube_rest_create(s->client, path, kv, NULL, &kerr);
    free(path);
    cJSON_Delete(kv);
    if (!created && kerr.status != 409) {
        snprintf(err, errlen, "creating the KubeVirt CR %s failed: %s", SIM_KUBEVIRT_NAME, kerr.msg);
        return -1;
    }
    cJSON_Delete(created);
    return 0;
}

static int first_kubevirt(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key;
    (void)rv;
    *(const cJSON **)ud = obj;
    return 1;
}

void sim_migration_limits(const struct sim *s, int *per_cluster, int *per_node)
{
    const cJSON *kv = NULL;
    if (s->kubevirts)
        kube_informer_foreach(s->kubevirts, first_kubevirt, &kv);
    if (kv) {
        miglimits_from_kubevirt(kv, per_cluster, per_node);
        return;
    }
    *per_cluster = s->sc->parallel_per_cluster;
    *per_node = s->sc->parallel_outbound_per_node;
}
