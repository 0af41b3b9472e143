/* migrate: targeted live migration (see migrate.h). */
#include "reconcile/move/migrate.h"

#include <stdio.h>
#include <string.h>

#include "base/jx.h"
#include "base/util.h"

const char *migrate_hostname(const struct nodelabels *labels, const char *name)
{
    const char *h = base_nonempty(nodelabels_get(labels, MIGRATE_HOSTNAME_LABEL));
    return h ? h : name;
}

/* "53% -> 33%" */
static void load_pair(char *buf, size_t len, double before, double after)
{
    snprintf(buf, len, "%.0f%% -> %.0f%%", 100 * before, 100 * after);
}

cJSON *migrate_vmim_new(const struct migrate_request *r)
{
    if (!r->ns || !r->vmi || !r->owner || !r->source || !r->destination)
        return NULL;
    const char *host = r->hostname ? r->hostname : r->destination;
    /* generateName: a readable prefix (the VMI's name, cut so the name stays a short DNS
     * subdomain) and the API server's unique suffix */
    char gen[128], pred[256], s1[32], s2[32];
    snprintf(gen, sizeof(gen), "%s%.40s-", MIGRATE_NAME_PREFIX, r->vmi);
    load_pair(s1, sizeof(s1), r->src_load, r->src_load_after);
    load_pair(s2, sizeof(s2), r->dst_load, r->dst_load_after);
    snprintf(pred, sizeof(pred), "%s %s, %s %s", r->source, s1, r->destination, s2);
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    cJSON *labels = cJSON_AddObjectToObject(md, "labels");
    cJSON *ann = cJSON_AddObjectToObject(md, "annotations");
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    cJSON *sel = cJSON_AddObjectToObject(spec, "addedNodeSelector");
    bool ok =
        cJSON_AddStringToObject(o, "apiVersion", "kubevirt.io/v1") &&
        cJSON_AddStringToObject(o, "kind", "VirtualMachineInstanceMigration") && md && labels && ann && spec && sel &&
        cJSON_AddStringToObject(md, "generateName", gen) && cJSON_AddStringToObject(md, "namespace", r->ns) &&
        cJSON_AddStringToObject(labels, MIGRATE_MANAGED_BY_LABEL, MIGRATE_MANAGED_BY) &&
        cJSON_AddStringToObject(labels, MIGRATE_OWNER_LABEL, r->owner) &&
        cJSON_AddStringToObject(ann, MIGRATE_SOURCE_ANNOTATION, r->source) &&
        cJSON_AddStringToObject(ann, MIGRATE_DESTINATION_ANNOTATION, r->destination) &&
        cJSON_AddStringToObject(ann, MIGRATE_PREDICTION_ANNOTATION, pred) &&
        cJSON_AddStringToObject(spec, "vmiName", r->vmi) && cJSON_AddStringToObject(sel, MIGRATE_HOSTNAME_LABEL, host);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

enum migrate_support migrate_crd_support(const cJSON *crd, char *why, size_t len)
{
    if (!crd) {
        snprintf(why, len, "the CustomResourceDefinition %s does not exist (no KubeVirt)", MIGRATE_CRD_NAME);
        return MIGRATE_UNSUPPORTED;
    }
    const cJSON *v, *version = NULL;
    cJSON_ArrayForEach (v, jx_get(crd, "spec.versions"))
        if (base_same(jx_nonempty(v, "name"), "v1"))
            version = v;
    if (!version || cJSON_IsFalse(jx_at(version, "served"))) {
        snprintf(why, len, "the CustomResourceDefinition %s does not serve kubevirt.io/v1", MIGRATE_CRD_NAME);
        return MIGRATE_UNSUPPORTED;
    }
    const cJSON *schema = jx_at(jx_at(version, "schema"), "openAPIV3Schema");
    if (!schema) {
        snprintf(why, len, "the CustomResourceDefinition %s has no schema for kubevirt.io/v1", MIGRATE_CRD_NAME);
        return MIGRATE_UNKNOWN;
    }
    const cJSON *spec = jx_get(schema, "properties.spec");
    if (cJSON_IsObject(jx_get(spec, "properties.addedNodeSelector")))
        return MIGRATE_SUPPORTED;
    snprintf(why, len,
             "the CustomResourceDefinition %s has no spec.addedNodeSelector (an older KubeVirt): a "
             "migration cannot be sent to a chosen node",
             MIGRATE_CRD_NAME);
    return MIGRATE_UNSUPPORTED;
}

bool migrate_move_targeted(const struct api_move *m)
{
    return m->migration && strncmp(m->migration, MIGRATE_NAME_PREFIX, strlen(MIGRATE_NAME_PREFIX)) == 0;
}

enum migrate_action migrate_cleanup_action(const struct moves_migration *g, int64_t now_s, int64_t stuck_s)
{
    if (!g->owner)
        return MIGRATE_KEEP;
    if (base_same(g->phase, "Failed"))
        return MIGRATE_DELETE_FAILED;
    if (moves_phase_final(g->phase))
        return MIGRATE_KEEP;
    bool waiting = !g->phase || !g->phase[0] || base_same(g->phase, "Pending") || base_same(g->phase, "Scheduling");
    if (stuck_s <= 0)
        stuck_s = MIGRATE_STUCK_S;
    if (waiting && g->created > 0 && now_s - g->created >= stuck_s)
        return MIGRATE_DELETE_STUCK;
    return MIGRATE_KEEP;
}

bool migrate_move_lost(const struct api_move *m, const struct moves_migration *migs, size_t nm, int64_t now_s)
{
    if (!migrate_move_targeted(m) || (m->phase != API_MOVE_REQUESTED && m->phase != API_MOVE_MIGRATING))
        return false;
    for (size_t i = 0; i < nm; i++)
        if (base_same(migs[i].name, m->migration) && base_same(migs[i].ns, m->ns))
            return false;
    return now_s - m->time > MIGRATE_LOST_S;
}

enum evictor_outcome migrate_create_outcome(long http_status)
{
    if (http_status == 0 || http_status == 200 || http_status == 201)
        return EVICTOR_MIGRATING;
    if (http_status == 404)
        return EVICTOR_GONE;
    /* 400: KubeVirt's migration admitter refuses ("Cannot migrate VMI", a migration in flight,
     * a VMI in a final state): a skip with a cooldown, not a failed cycle */
    if (http_status == 400 || http_status == 409 || http_status == 422 || http_status == 429)
        return EVICTOR_REFUSED;
    return EVICTOR_ERROR;
}
