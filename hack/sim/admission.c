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
                     "VMI %s is configured with an eviction strategy but is not live-migratable", jx_str0(vmi, "metadata.name"));
            return;
        }
        mark = true;
        break;
    case SCENARIO_STRATEGY_LIVE_MIGRATE_IF_POSSIBLE:
        mark = migratable;
        break;
    case SCENARIO_STRATEGY_EXTERNAL:
        mark = true;
        break;
    case SCENARIO_STRATEGY_NONE:
    case SCENARIO_STRATEGY_UNSET:
        break;
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
    if (!req->uid || !req->pod) {
        snprintf(err, errlen, "AdmissionReview request without uid or name");
        return -1;
    }
    req->dry_run = jx_bool(r, "dryRun", false);
    const cJSON *obj = jx_get(r, "object");
    const cJSON *dr = jx_get(obj, "deleteOptions.dryRun");
    const cJSON *first = cJSON_IsArray(dr) ? cJSON_GetArrayItem(dr, 0) : NULL;
    if (cJSON_IsString(first) && strcmp(first->valuestring, "All") == 0)
        req->dry_run = true;
    req->requested_by = jx_annotation(obj, "requested-by");
    return 0;
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
