/* admission: the eviction interceptor's decisions and the AdmissionReview format (see
 * admission.h). */
#include "hack/sim/admission.h"

#include <stdio.h>
#include <string.h>

#include "base/jx.h"

static void deny(struct admission_decision *out, const char *msg)
{
    out->verdict = ADMISSION_DENY;
    snprintf(out->message, sizeof(out->message), "%s", msg);
}

enum scenario_strategy admission_strategy(const cJSON *vmi, enum scenario_strategy cluster)
{
    enum scenario_strategy st;
    const char *s = jx_str(vmi, "spec.evictionStrategy");
    if (s && scenario_strategy_parse(s, &st) == 0)
        return st;
    return cluster;
}

bool admission_migratable(const cJSON *vmi)
{
    return jx_condition_true(vmi, "LiveMigratable");
}

void admission_decide(const cJSON *pod, const cJSON *vmi, const char *vmi_error, enum scenario_strategy cluster,
                      struct admission_decision *out)
{
    memset(out, 0, sizeof(*out));
    out->verdict = ADMISSION_ALLOW;
    if (!pod || !jx_eq(jx_label(pod, "kubevirt.io"), "virt-launcher"))
        return;
    const char *phase = jx_str(pod, "status.phase");
    if (jx_eq(phase, "Succeeded") || jx_eq(phase, "Failed"))
        return;
    out->vmi = jx_annotation(pod, "kubevirt.io/domain");
    if (!out->vmi)
        return;
    if (!vmi) {
        out->verdict = ADMISSION_DENY;
        snprintf(out->message, sizeof(out->message), "kubevirt failed getting the vmi: %s",
                 vmi_error ? vmi_error : "not found");
        return;
    }
    bool migratable = admission_migratable(vmi);
    bool mark = false;
    switch (admission_strategy(vmi, cluster)) {
    case SCENARIO_STRATEGY_LIVE_MIGRATE:
        if (!migratable) {
            out->verdict = ADMISSION_DENY;
            snprintf(out->message, sizeof(out->message),
                     "VMI %s is configured with an eviction strategy but is not live-migratable",
                     jx_str0(vmi, "metadata.name"));
            return;
        }
        mark = true;
        break;
    case SCENARIO_STRATEGY_LIVE_MIGRATE_IF_POSSIBLE: mark = migratable; break;
    case SCENARIO_STRATEGY_EXTERNAL: mark = true; break;
    case SCENARIO_STRATEGY_NONE:
    case SCENARIO_STRATEGY_UNSET: break;
    }
    if (!mark)
        return;
    const char *ns = jx_str0(vmi, "metadata.namespace");
    const char *name = jx_str0(vmi, "metadata.name");
    char evict[400];
    snprintf(evict, sizeof(evict), ADMISSION_EVICTION_FMT, ns, name);
    if (jx_str(vmi, "status.evacuationNodeName") && *jx_str(vmi, "status.evacuationNodeName")) {
        out->verdict = ADMISSION_DENY;
        snprintf(out->message, sizeof(out->message), ADMISSION_IN_PROGRESS_PREFIX "%s", evict);
        return;
    }
    const char *pod_node = jx_str(pod, "spec.nodeName");
    if (!jx_eq(jx_str(vmi, "status.nodeName"), pod_node) || !pod_node) {
        deny(out, "Eviction request for target Pod");
        return;
    }
    out->verdict = ADMISSION_MARK;
    out->node = pod_node;
    snprintf(out->message, sizeof(out->message), "%s", evict);
}

static void refuse(struct admission_migration_decision *out, int code, const char *msg)
{
    out->allowed = false;
    out->code = code;
    snprintf(out->message, sizeof(out->message), "%s", msg);
}

void admission_decide_migration(const char *ns, const char *vmi_name, const cJSON *vmi, const char *vmi_error,
                                const cJSON *migrations, struct admission_migration_decision *out)
{
    char msg[512];
    memset(out, 0, sizeof(*out));
    out->allowed = true;
    if (!vmi_name || !*vmi_name) {
        refuse(out, 422, "vmiName is missing");
        return;
    }
    if (!vmi) {
        if (vmi_error)
            refuse(out, 400, vmi_error);
        else {
            snprintf(msg, sizeof(msg), "the VMI \"%s/%s\" does not exist", ns ? ns : "", vmi_name);
            refuse(out, 400, msg);
        }
        return;
    }
    const char *phase = jx_str(vmi, "status.phase");
    if (jx_eq(phase, "Succeeded") || jx_eq(phase, "Failed")) {
        refuse(out, 400, "Cannot migrate VMI in finalized state.");
        return;
    }
    const cJSON *lm = jx_condition(vmi, "LiveMigratable");
    if (lm && jx_eq(jx_str(lm, "status"), "False")) {
        snprintf(msg, sizeof(msg), "Cannot migrate VMI, Reason: %s, Message: %s", jx_str0(lm, "reason"),
                 jx_str0(lm, "message"));
        refuse(out, 400, msg);
        return;
    }
    const cJSON *m;
    cJSON_ArrayForEach (m, migrations) {
        const char *mp = jx_str(m, "status.phase");
        if (!jx_eq(jx_str(m, "spec.vmiName"), vmi_name) || jx_eq(mp, "Succeeded") || jx_eq(mp, "Failed"))
            continue;
        snprintf(msg, sizeof(msg),
                 "in-flight migration detected. Active migration job (%s) is currently already in progress for VMI %s.",
                 jx_str0(m, "metadata.uid"), vmi_name);
        refuse(out, 400, msg);
        return;
    }
}

int admission_parse_request(const cJSON *review, struct admission_request *req, char *err, size_t errlen)
{
    memset(req, 0, sizeof(*req));
    const cJSON *r = jx_get(review, "request");
    if (!cJSON_IsObject(r)) {
        snprintf(err, errlen, "not an AdmissionReview: no request");
        return -1;
    }
    req->uid = jx_str(r, "uid");
    req->ns = jx_str(r, "namespace");
    req->pod = jx_str(r, "name");
    req->resource = jx_str(r, "resource.resource");
    const cJSON *obj = jx_get(r, "object");
    bool migration = jx_eq(req->resource, "virtualmachineinstancemigrations");
    if (migration) {
        req->pod = NULL;
        req->vmi_name = jx_str(obj, "spec.vmiName");
    }
    if (!req->uid || (!migration && !req->pod)) {
        snprintf(err, errlen, "AdmissionReview request without uid or name");
        return -1;
    }
    req->dry_run = jx_bool(r, "dryRun", false);
    const cJSON *dr = jx_get(obj, "deleteOptions.dryRun");
    const cJSON *first = cJSON_IsArray(dr) ? cJSON_GetArrayItem(dr, 0) : NULL;
    if (cJSON_IsString(first) && strcmp(first->valuestring, "All") == 0)
        req->dry_run = true;
    req->requested_by = jx_annotation(obj, "requested-by");
    return 0;
}

bool admission_descheduler_eviction(const struct admission_request *req)
{
    return req->requested_by && strcmp(req->requested_by, "sigs.k8s.io/descheduler") == 0;
}

char *admission_response(const char *uid, bool allowed, int code, const char *message)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *resp = cJSON_CreateObject();
    if (!root || !resp) {
        cJSON_Delete(root);
        cJSON_Delete(resp);
        return NULL;
    }
    cJSON_AddStringToObject(root, "apiVersion", "admission.k8s.io/v1");
    cJSON_AddStringToObject(root, "kind", "AdmissionReview");
    cJSON_AddItemToObject(root, "response", resp);
    cJSON_AddStringToObject(resp, "uid", uid ? uid : "");
    cJSON_AddBoolToObject(resp, "allowed", allowed);
    if (!allowed) {
        cJSON *st = cJSON_AddObjectToObject(resp, "status");
        cJSON_AddNumberToObject(st, "code", code);
        cJSON_AddStringToObject(st, "message", message ? message : "");
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}
