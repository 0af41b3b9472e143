/* evictor: may this pod go? (see evictor.h) */
#include "reconcile/move/evictor.h"

#include <stdio.h>
#include <string.h>

#include "api/wildcard.h"
#include "base/jx.h"
#include "base/util.h"

#define ANN_PREFER_NO_EVICTION "descheduler.alpha.kubernetes.io/prefer-no-eviction"
#define ANN_EVICTION_IN_PROGRESS "descheduler.alpha.kubernetes.io/eviction-in-progress"
#define ANN_MIRROR "kubernetes.io/config.mirror"
#define ANN_CONFIG_SOURCE "kubernetes.io/config.source"
#define ANN_DOMAIN "kubevirt.io/domain"
#define LABEL_MIGRATION_JOB "kubevirt.io/migrationJobUID"
#define SYSTEM_CRITICAL_PRIORITY 2000000000.0

static const cJSON *controller_ref(const cJSON *pod)
{
    const cJSON *ref;
    cJSON_ArrayForEach (ref, jx_get(pod, "metadata.ownerReferences"))
        if (cJSON_IsTrue(jx_at(ref, "controller")))
            return ref;
    return NULL;
}

/* What the kubelet and the pod's owners say: whether it can go anywhere at all. */
static const char *kind_check(const cJSON *pod)
{
    const cJSON *meta = jx_at(pod, "metadata"), *spec = jx_at(pod, "spec");
    const cJSON *ann = jx_at(meta, "annotations");
    if (jx_at(meta, "deletionTimestamp") && !cJSON_IsNull(jx_at(meta, "deletionTimestamp")))
        return "being deleted";
    if (!base_same(jx_str(pod, "status.phase"), "Running") || !jx_str(spec, "nodeName"))
        return "not running";
    if (jx_at(ann, ANN_MIRROR))
        return "mirror pod";
    const char *source = jx_at_str(ann, ANN_CONFIG_SOURCE);
    if (source && strcmp(source, "api") != 0)
        return "static pod";
    const cJSON *ref = controller_ref(pod);
    if (ref && base_same(jx_str(ref, "kind"), "DaemonSet"))
        return "DaemonSet pod";
    if (!ref)
        return "no controller";
    const char *pc = jx_str(spec, "priorityClassName");
    const cJSON *prio = jx_at(spec, "priority");
    if (base_same(pc, "system-cluster-critical") || base_same(pc, "system-node-critical") ||
        (cJSON_IsNumber(prio) && prio->valuedouble >= SYSTEM_CRITICAL_PRIORITY))
        return "system-critical";
    return NULL;
}

const char *evictor_pod_check(const cJSON *pod, const struct evictor_filter *f)
{
    const char *why = kind_check(pod);
    if (why)
        return why;
    const cJSON *meta = jx_at(pod, "metadata");
    const cJSON *ann = jx_at(meta, "annotations"), *labels = jx_at(meta, "labels");
    const char *ns = jx_str(meta, "namespace");
    for (size_t i = 0; f && i < f->nexcluded; i++)
        if (ns && api_wildcard_match(f->excluded[i], ns))
            return "excluded namespace";
    if (f && f->selector && !api_selector_matches(f->selector, labels))
        return "not selected";
    if (jx_at(ann, ANN_PREFER_NO_EVICTION))
        return "prefer-no-eviction";
    if (evictor_eviction_in_progress(pod))
        return "eviction in progress";
    return NULL;
}

bool evictor_eviction_in_progress(const cJSON *pod)
{
    return jx_at(jx_get(pod, "metadata.annotations"), ANN_EVICTION_IN_PROGRESS) != NULL;
}

const char *evictor_migration_target(const cJSON *pod, const cJSON *vmi)
{
    if (!jx_label(pod, LABEL_MIGRATION_JOB))
        return NULL;
    /* KubeVirt keeps the label on the target pod after the migration: once the VMI runs on
     * the pod's node, the pod is the VM's own and may move again */
    const char *runs_on = jx_str(vmi, "status.nodeName");
    if (runs_on && runs_on[0] && base_same(runs_on, jx_str(pod, "spec.nodeName")))
        return NULL;
    return "migration target";
}

void evictor_pod_workload(const cJSON *pod, const char **kind, const char **name)
{
    const cJSON *ref = controller_ref(pod);
    *kind = ref ? jx_str(ref, "kind") : NULL;
    *name = ref ? jx_str(ref, "name") : NULL;
    if (!ref || !*kind || !*name) {
        *kind = *name = NULL;
        return;
    }
    if (strcmp(*kind, "VirtualMachineInstance") != 0) {
        const char *domain = jx_annotation(pod, ANN_DOMAIN);
        if (domain && *domain && base_same(jx_label(pod, "kubevirt.io"), "virt-launcher")) {
            *kind = "VirtualMachineInstance";
            *name = domain;
        }
    }
}

const char *evictor_vmi_busy(const cJSON *vmi, const struct moves_migration *migs, size_t nmigs, const char *ns,
                             const char *name)
{
    const char *evac = jx_str(vmi, "status.evacuationNodeName");
    if (evac && evac[0])
        return "in evacuation";
    for (size_t k = 0; k < nmigs; k++)
        if (base_same(migs[k].vmi, name) && base_same(migs[k].ns, ns) && !moves_phase_final(migs[k].phase))
            return "migrating";
    return NULL;
}

const char *evictor_vm_strategy(const cJSON *vmi, const cJSON *kubevirt)
{
    const char *s = jx_str(vmi, "spec.evictionStrategy");
    if (!s || !s[0])
        s = jx_str(kubevirt, "spec.configuration.evictionStrategy");
    return s && s[0] ? s : "None";
}

const char *evictor_vm_restarts(const char *strategy, bool migratable)
{
    if (base_same(strategy, "None"))
        return "VM would restart (eviction strategy None)";
    if (base_same(strategy, "LiveMigrateIfPossible") && !migratable)
        return "VM would restart (LiveMigrateIfPossible, not migratable)";
    return NULL;
}

const char *evictor_vm_migration_overrides(const char *strategy)
{
    return base_same(strategy, "None") ? "eviction strategy None (not migrated without allowVMRestart)" : NULL;
}

bool evictor_vmi_migratable(const cJSON *vmi)
{
    const cJSON *c;
    cJSON_ArrayForEach (c, jx_get(vmi, "status.conditions"))
        if (base_same(jx_str(c, "type"), "LiveMigratable"))
            return base_same(jx_str(c, "status"), "True");
    return false;
}

const char *evictor_check(const struct evictor_facts *x, const struct evictor_filter *f)
{
    const char *why = evictor_pod_check(x->pod, f);
    if (!why)
        why = evictor_migration_target(x->pod, x->vmi);
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

const char *evictor_room(const struct evictor_limits *l, const struct evictor_tally *t, bool vm, char *why, size_t len)
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

/* ---- the Eviction API's answer ---- */

enum evictor_outcome evictor_outcome(long http_status, const char *message)
{
    if (http_status == 0 || http_status == 200 || http_status == 201)
        return EVICTOR_EVICTED;
    if (http_status == 404)
        return EVICTOR_GONE;
    if (http_status == 429) {
        if (message && (strstr(message, "Eviction triggered evacuation") || strstr(message, "Evacuation in progress")))
            return EVICTOR_MIGRATING;
        return EVICTOR_REFUSED;
    }
    return EVICTOR_ERROR;
}
