/* evictor: may this pod go? (see evictor.h) */
#include "evictor.h"

#include <stdio.h>
#include <string.h>

#include "glob.h"

#define ANN_PREFER_NO_EVICTION "descheduler.alpha.kubernetes.io/prefer-no-eviction"
#define ANN_EVICTION_IN_PROGRESS "descheduler.alpha.kubernetes.io/eviction-in-progress"
#define ANN_MIRROR "kubernetes.io/config.mirror"
#define ANN_CONFIG_SOURCE "kubernetes.io/config.source"
#define ANN_DOMAIN "kubevirt.io/domain"
#define LABEL_MIGRATION_JOB "kubevirt.io/migrationJobUID"
#define SYSTEM_CRITICAL_PRIORITY 2000000000.0

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static const cJSON *controller_ref(const cJSON *pod)
{
    const cJSON *ref;
    cJSON_ArrayForEach(ref, get(get(pod, "metadata"), "ownerReferences"))
        if (cJSON_IsTrue(get(ref, "controller")))
            return ref;
    return NULL;
}

/* What the kubelet and the pod's owners say: whether it can go anywhere at all. */
static const char *kind_check(const cJSON *pod)
{
    const cJSON *meta = get(pod, "metadata"), *spec = get(pod, "spec");
    const cJSON *ann = get(meta, "annotations");
    if (get(meta, "deletionTimestamp") && !cJSON_IsNull(get(meta, "deletionTimestamp")))
        return "being deleted";
    if (!eq(str(get(pod, "status"), "phase"), "Running") || !str(spec, "nodeName"))
        return "not running";
    if (get(ann, ANN_MIRROR))
        return "mirror pod";
    const char *source = str(ann, ANN_CONFIG_SOURCE);
    if (source && strcmp(source, "api") != 0)
        return "static pod";
    const cJSON *ref = controller_ref(pod);
    if (ref && eq(str(ref, "kind"), "DaemonSet"))
        return "DaemonSet pod";
    if (!ref)
        return "no controller";
    const char *pc = str(spec, "priorityClassName");
    const cJSON *prio = get(spec, "priority");
    if (eq(pc, "system-cluster-critical") || eq(pc, "system-node-critical") ||
        (cJSON_IsNumber(prio) && prio->valuedouble >= SYSTEM_CRITICAL_PRIORITY))
        return "system-critical";
    return NULL;
}

const char *evictor_pod_check(const cJSON *pod, const struct evictor_filter *f)
{
    const char *why = kind_check(pod);
    if (why)
        return why;
    const cJSON *meta = get(pod, "metadata");
    const cJSON *ann = get(meta, "annotations"), *labels = get(meta, "labels");
    const char *ns = str(meta, "namespace");
    for (size_t i = 0; f && i < f->nexcluded; i++)
        if (ns && api_glob_match(f->excluded[i], ns))
            return "excluded namespace";
    if (f && f->selector && !api_selector_matches(f->selector, labels))
        return "not selected";
    if (get(ann, ANN_PREFER_NO_EVICTION))
        return "prefer-no-eviction";
    if (eq(str(ann, ANN_EVICTION_IN_PROGRESS), "true"))
        return "eviction in progress";
    if (get(labels, LABEL_MIGRATION_JOB))
        return "migration target";
    return NULL;
}

void evictor_pod_workload(const cJSON *pod, const char **kind, const char **name)
{
    const cJSON *ref = controller_ref(pod);
    *kind = ref ? str(ref, "kind") : NULL;
    *name = ref ? str(ref, "name") : NULL;
    if (!ref || !*kind || !*name) {
        *kind = *name = NULL;
        return;
    }
    if (strcmp(*kind, "VirtualMachineInstance") != 0) {
        const char *domain = str(get(get(pod, "metadata"), "annotations"), ANN_DOMAIN);
        if (domain && *domain && eq(str(get(get(pod, "metadata"), "labels"), "kubevirt.io"), "virt-launcher")) {
            *kind = "VirtualMachineInstance";
            *name = domain;
        }
    }
}

const char *evictor_vmi_busy(const cJSON *vmi, const struct moves_migration *migs, size_t nmigs, const char *ns,
                             const char *name)
{
    const char *evac = str(get(vmi, "status"), "evacuationNodeName");
    if (evac && evac[0])
        return "in evacuation";
    for (size_t k = 0; k < nmigs; k++)
        if (eq(migs[k].vmi, name) && eq(migs[k].ns, ns) && !moves_phase_final(migs[k].phase))
            return "migrating";
    return NULL;
}

const char *evictor_vm_strategy(const cJSON *vmi, const cJSON *kubevirt)
{
    const char *s = str(get(vmi, "spec"), "evictionStrategy");
    if (!s || !s[0])
        s = str(get(get(kubevirt, "spec"), "configuration"), "evictionStrategy");
    return s && s[0] ? s : "None";
}

const char *evictor_vm_restarts(const char *strategy, bool migratable)
{
    if (eq(strategy, "None"))
        return "VM would restart (eviction strategy None)";
    if (eq(strategy, "LiveMigrateIfPossible") && !migratable)
        return "VM would restart (LiveMigrateIfPossible, not migratable)";
    return NULL;
}

bool evictor_vmi_migratable(const cJSON *vmi)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, get(get(vmi, "status"), "conditions"))
        if (eq(str(c, "type"), "LiveMigratable"))
            return eq(str(c, "status"), "True");
    return false;
}

const char *evictor_check(const struct evictor_facts *x, const struct evictor_filter *f)
{
    const char *why = evictor_pod_check(x->pod, f);
    if (why)
        return why;
    if (!x->controller)
        return "no controller";
    if (x->vmi_busy)
        return x->vmi_busy;
    if (x->move_running)
        return "move in progress";
    if (x->cooling)
        return "cooling down";
    if (x->refused)
        return "eviction refused recently";
    return NULL;
}

const char *evictor_room(const struct evictor_limits *l, const struct evictor_tally *t, bool vm, char *why,
                         size_t len)
{
    if (t->total >= l->max_total) {
        snprintf(why, len, "maxTotal (%d) reached", l->max_total);
        return why;
    }
    if (t->from_node >= l->max_per_node) {
        snprintf(why, len, "maxPerNode (%d) reached for %s", l->max_per_node, t->node);
        return why;
    }
    if (t->in_namespace >= l->max_per_namespace) {
        snprintf(why, len, "maxPerNamespace (%d) reached for namespace %s", l->max_per_namespace, t->ns);
        return why;
    }
    if (!vm)
        return NULL;
    if (l->in_flight + t->vm_moves >= l->max_in_flight) {
        snprintf(why, len, "%d live migrations in flight, maxInFlightMigrations is %d", l->in_flight + t->vm_moves,
                 l->max_in_flight);
        return why;
    }
    if (l->running + t->vm_moves >= l->per_cluster) {
        snprintf(why, len, "%d live migrations running, KubeVirt runs at most %d in the cluster",
                 l->running + t->vm_moves, l->per_cluster);
        return why;
    }
    if (t->outbound >= l->per_node) {
        snprintf(why, len, "%d live migrations running from %s, KubeVirt runs at most %d per node", t->outbound,
                 t->node, l->per_node);
        return why;
    }
    return NULL;
}
