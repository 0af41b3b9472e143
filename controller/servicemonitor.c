/* servicemonitor: the ServiceMonitor's serverName follows the operator's namespace (see
 * servicemonitor.h). */
#include "servicemonitor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logging.h"

/* name with its namespace label replaced by ns, into out; 0, or -1 when name is not
 * <service>.<namespace>.svc[.<domain>] or already names ns. */
static int renamed(const char *name, const char *ns, char *out, size_t len)
{
    size_t n = strlen(name);
    if (n == 0 || name[n - 1] == '.' || strstr(name, "..")) /* an empty label: no Service's name */
        return -1;
    const char *dot1 = strchr(name, '.');
    const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    if (!dot1 || dot1 == name || !dot2 || dot2 == dot1 + 1 || strncmp(dot2, ".svc", 4) != 0 ||
        (dot2[4] != '\0' && dot2[4] != '.'))
        return -1;
    if ((size_t)(dot2 - dot1 - 1) == strlen(ns) && strncmp(dot1 + 1, ns, strlen(ns)) == 0)
        return -1;
    int w = snprintf(out, len, "%.*s.%s%s", (int)(dot1 - name), name, ns, dot2);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

static int add_op(cJSON *patch, const char *op, const char *path, const char *value)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(patch, o))
        return cJSON_Delete(o), -1;
    return cJSON_AddStringToObject(o, "op", op) && cJSON_AddStringToObject(o, "path", path) &&
                   cJSON_AddStringToObject(o, "value", value)
               ? 0
               : -1;
}

cJSON *servicemonitor_patch(const cJSON *sm, const char *ns, int *changed)
{
    *changed = 0;
    cJSON *patch = cJSON_CreateArray();
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sm, "spec"), "endpoints");
    int i = 0;
    const cJSON *ep;
    cJSON_ArrayForEach (ep, eps) {
        const cJSON *sn =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ep, "tlsConfig"), "serverName");
        char path[96], name[512];
        snprintf(path, sizeof(path), "/spec/endpoints/%d/tlsConfig/serverName", i++);
        if (!patch || !cJSON_IsString(sn) || renamed(sn->valuestring, ns, name, sizeof(name)) < 0)
            continue;
        if (add_op(patch, "test", path, sn->valuestring) < 0 || add_op(patch, "replace", path, name) < 0) {
            cJSON_Delete(patch);
            *changed = -1;
            return NULL;
        }
        ++*changed;
    }
    if (!patch)
        *changed = -1;
    if (*changed <= 0) {
        cJSON_Delete(patch);
        return NULL;
    }
    return patch;
}

int servicemonitor_follow(struct kube_client *c, const char *ns, const char *name, struct kube_err *err)
{
    char *path = kube_path("monitoring.coreos.com/v1", ns, "servicemonitors", name, NULL);
    if (!path)
        return kube_err_set(err, 0, "NoMemory", "out of memory");
    cJSON *sm = kube_rest_get(c, path, err);
    if (!sm) {
        free(path);
        if (err->status == 404 || err->status == 403) {
            log_info("servicemonitor not followed", "namespace", ns, "name", name, "why",
                     err->status == 404
                         ? "no such ServiceMonitor here (or no monitoring.coreos.com API)"
                         : "no right to read it (config/prometheus's Role psi-rebalancer-servicemonitor)");
            return 0;
        }
        return -1;
    }
    int changed;
    cJSON *patch = servicemonitor_patch(sm, ns, &changed);
    cJSON_Delete(sm);
    int rc = 0;
    if (changed < 0) {
        rc = kube_err_set(err, 0, "NoMemory", "out of memory");
    } else if (patch) {
        struct kube_write_opts opts = {.discard_reply = 1};
        cJSON *reply = kube_rest_patch(c, path, KUBE_PATCH_JSON, patch, &opts, err);
        rc = reply ? 1 : -1;
        cJSON_Delete(reply);
        if (reply)
            log_info("servicemonitor serverName follows the namespace", "namespace", ns, "name", name);
    }
    cJSON_Delete(patch);
    free(path);
    return rc;
}
