/* mcopool: the MachineConfig operator's pure bookkeeping (see mcopool.h). */
#include "hack/sim/mcopool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "api/selector.h"
#include "base/jx.h"
#include "base/strbuf.h"

/* Whether obj's labels match the LabelSelector selector (matchLabels and matchExpressions).
 * An absent or undecodable selector matches nothing, and so does an empty one unless
 * empty_all (a MachineConfig selector {} selects every MachineConfig; a node selector {}
 * none, as the MachineConfig operator has it). */
static bool selector_matches(const cJSON *selector, const cJSON *obj, bool empty_all)
{
    if (!cJSON_IsObject(selector))
        return false;
    struct api_selector sel = {0};
    struct api_errors errs = {0};
    bool match = api_selector_decode(selector, "selector", &sel, &errs, NULL) == 0 &&
                 (empty_all || sel.nlabels || sel.nexprs) && api_selector_matches(&sel, jx_get(obj, "metadata.labels"));
    api_selector_free(&sel);
    api_errors_free(&errs);
    return match;
}

bool mcopool_selects(const cJSON *pool, const cJSON *mc)
{
    const char *name = jx_str0(mc, "metadata.name");
    if (strncmp(name, "rendered-", 9) == 0)
        return false;
    return selector_matches(jx_get(pool, "spec.machineConfigSelector"), mc, true);
}

bool mcopool_has_node(const cJSON *pool, const cJSON *node)
{
    return selector_matches(jx_get(pool, "spec.nodeSelector"), node, false);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(jx_str0(*(const cJSON *const *)a, "metadata.name"),
                  jx_str0(*(const cJSON *const *)b, "metadata.name"));
}

bool mcopool_has_karg(const cJSON *mc, const char *arg)
{
    const cJSON *args = jx_get(mc, "spec.kernelArguments");
    const cJSON *it;
    cJSON_ArrayForEach (it, (cJSON_IsArray(args) ? args : NULL)) {
        if (cJSON_IsString(it) && strcmp(it->valuestring, arg) == 0)
            return true;
    }
    return false;
}

cJSON *mcopool_render(const cJSON *pool, const cJSON *const *mcs, size_t n, cJSON **source)
{
    const cJSON **sorted = calloc(n ? n : 1, sizeof(*sorted));
    if (!sorted)
        return NULL;
    memcpy(sorted, mcs, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), by_name);
    cJSON *kargs = cJSON_CreateArray();
    cJSON *src = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *ref = cJSON_CreateObject();
        cJSON_AddStringToObject(ref, "apiVersion", "machineconfiguration.openshift.io/v1");
        cJSON_AddStringToObject(ref, "kind", "MachineConfig");
        cJSON_AddStringToObject(ref, "name", jx_str0(sorted[i], "metadata.name"));
        cJSON_AddItemToArray(src, ref);
        const cJSON *args = jx_get(sorted[i], "spec.kernelArguments");
        const cJSON *it;
        cJSON_ArrayForEach (it, (cJSON_IsArray(args) ? args : NULL)) {
            if (!cJSON_IsString(it))
                continue;
            bool dup = false;
            const cJSON *k;
            cJSON_ArrayForEach (k, kargs)
                dup = dup || strcmp(k->valuestring, it->valuestring) == 0;
            if (!dup)
                cJSON_AddItemToArray(kargs, cJSON_CreateString(it->valuestring));
        }
    }
    free(sorted);
    /* the name hashes what the machines get: the sources and the merged arguments */
    cJSON *content = cJSON_CreateObject();
    cJSON_AddItemReferenceToObject(content, "source", src);
    cJSON_AddItemReferenceToObject(content, "kernelArguments", kargs);
    char *text = cJSON_PrintUnformatted(content);
    cJSON_Delete(content);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1] = "";
    if (text && EVP_Digest(text, strlen(text), md, &mdlen, EVP_md5(), NULL))
        for (unsigned int i = 0; i < mdlen; i++)
            snprintf(hex + 2 * i, 3, "%02x", md[i]);
    free(text);
    const char *pool_name = jx_str0(pool, "metadata.name");
    char name[320];
    snprintf(name, sizeof(name), "rendered-%s-%s", pool_name, hex);

    cJSON *mc = cJSON_CreateObject();
    cJSON_AddStringToObject(mc, "apiVersion", "machineconfiguration.openshift.io/v1");
    cJSON_AddStringToObject(mc, "kind", "MachineConfig");
    cJSON *md_obj = cJSON_AddObjectToObject(mc, "metadata");
    cJSON_AddStringToObject(md_obj, "name", name);
    cJSON *ann = cJSON_AddObjectToObject(md_obj, "annotations");
    cJSON_AddStringToObject(ann, "machineconfiguration.openshift.io/generated-by-controller-version", "psi-sim");
    struct strbuf names = STRBUF_INIT;
    const cJSON *r;
    cJSON_ArrayForEach (r, src)
        strbuf_addf(&names, "%s%s", names.len ? "," : "", jx_str0(r, "name"));
    cJSON_AddStringToObject(ann, "machineconfiguration.openshift.io/source", strbuf_str(&names));
    strbuf_release(&names);
    cJSON *refs = cJSON_AddArrayToObject(md_obj, "ownerReferences");
    cJSON *owner = cJSON_CreateObject();
    cJSON_AddStringToObject(owner, "apiVersion", "machineconfiguration.openshift.io/v1");
    cJSON_AddStringToObject(owner, "kind", "MachineConfigPool");
    cJSON_AddStringToObject(owner, "name", pool_name);
    cJSON_AddStringToObject(owner, "uid", jx_str0(pool, "metadata.uid"));
    cJSON_AddTrueToObject(owner, "controller");
    cJSON_AddItemToArray(refs, owner);
    cJSON *spec = cJSON_AddObjectToObject(mc, "spec");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "config"), "ignition"), "version",
                            "3.2.0");
    cJSON_AddItemToObject(spec, "kernelArguments", kargs);
    if (source)
        *source = src;
    else
        cJSON_Delete(src);
    return mc;
}

void mcopool_count(const cJSON *const *nodes, size_t n, const char *target, struct mcopool_counts *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < n; i++) {
        const cJSON *node = nodes[i];
        const char *cur = jx_annotation(node, MCO_CURRENT);
        const char *des = jx_annotation(node, MCO_DESIRED);
        const char *state = jx_annotation(node, MCO_STATE);
        bool cordoned = jx_bool(node, "spec.unschedulable", false);
        bool degraded = jx_eq(state, "Degraded");
        bool updated = target && jx_eq(cur, target) && jx_eq(des, target) && jx_eq(state, "Done");
        c->machines++;
        c->updated += updated;
        c->ready += updated && !cordoned;
        c->degraded += degraded;
        c->unavailable += degraded || cordoned || !jx_eq(cur, des) || jx_eq(state, "Working");
        if (degraded && !c->degraded_reason[0])
            snprintf(c->degraded_reason, sizeof(c->degraded_reason), "Node %s is reporting: \"%s\"",
                     jx_str0(node, "metadata.name"),
                     jx_annotation(node, MCO_REASON) ? jx_annotation(node, MCO_REASON) : "");
    }
}

static void condition(cJSON *conds, const cJSON *old, const char *type, bool status, const char *reason,
                      const char *message, const char *now)
{
    const char *st = status ? "True" : "False";
    const char *since = now;
    const cJSON *o;
    cJSON_ArrayForEach (o, (cJSON_IsArray(old) ? old : NULL)) {
        if (jx_eq(jx_str(o, "type"), type) && jx_eq(jx_str(o, "status"), st) && jx_str(o, "lastTransitionTime"))
            since = jx_str(o, "lastTransitionTime");
    }
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "status", st);
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", message);
    cJSON_AddStringToObject(c, "lastTransitionTime", since);
    cJSON_AddItemToArray(conds, c);
}

const char *mcopool_primary(const cJSON *const *pools, size_t n, const cJSON *node)
{
    const char *master = NULL, *worker = NULL, *custom = NULL;
    size_t n_custom = 0;
    for (size_t i = 0; i < n; i++) {
        if (!mcopool_has_node(pools[i], node))
            continue;
        const char *name = jx_str0(pools[i], "metadata.name");
        if (strcmp(name, "master") == 0) {
            master = name;
        } else if (strcmp(name, "worker") == 0) {
            worker = name;
        } else {
            custom = name;
            n_custom++;
        }
    }
    if (n_custom > 1)
        return NULL;
    if (master)
        return master;
    return custom ? custom : worker;
}

cJSON *mcopool_status(const cJSON *pool, const char *target, const cJSON *source, const struct mcopool_counts *c,
                      const char *now)
{
    const cJSON *old = jx_get(pool, "status");
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "observedGeneration", jx_num(pool, "metadata.generation", 1));
    bool all = c->updated == c->machines && target;
    /* status.configuration moves to the target once every machine runs it */
    const cJSON *old_cfg = jx_get(old, "configuration");
    if (all) {
        cJSON *cfg = cJSON_AddObjectToObject(st, "configuration");
        cJSON_AddStringToObject(cfg, "name", target);
        cJSON_AddItemToObject(cfg, "source", source ? cJSON_Duplicate(source, 1) : cJSON_CreateArray());
    } else if (old_cfg) {
        cJSON_AddItemToObject(st, "configuration", cJSON_Duplicate(old_cfg, 1));
    }
    cJSON_AddNumberToObject(st, "machineCount", c->machines);
    cJSON_AddNumberToObject(st, "updatedMachineCount", c->updated);
    cJSON_AddNumberToObject(st, "readyMachineCount", c->ready);
    cJSON_AddNumberToObject(st, "unavailableMachineCount", c->unavailable);
    cJSON_AddNumberToObject(st, "degradedMachineCount", c->degraded);
    const cJSON *old_conds = jx_get(old, "conditions");
    cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
    char msg[512];
    snprintf(msg, sizeof(msg), "All nodes are updated with MachineConfig %s", target ? target : "");
    condition(conds, old_conds, "Updated", all, "", all ? msg : "", now);
    bool paused = jx_bool(pool, "spec.paused", false);
    if (paused)
        snprintf(msg, sizeof(msg), "Pool is paused; will not update to %s", target ? target : "");
    else
        snprintf(msg, sizeof(msg), "All nodes are updating to MachineConfig %s", target ? target : "");
    condition(conds, old_conds, "Updating", !all && !paused, "", !all ? msg : "", now);
    bool degraded = c->degraded > 0;
    snprintf(msg, sizeof(msg), "%d nodes are reporting degraded status on sync", c->degraded);
    condition(conds, old_conds, "NodeDegraded", degraded, degraded ? msg : "", degraded ? c->degraded_reason : "", now);
    condition(conds, old_conds, "RenderDegraded", false, "", "", now);
    condition(conds, old_conds, "Degraded", degraded, degraded ? msg : "", degraded ? c->degraded_reason : "", now);
    return st;
}

/* A copy without the transition times. */
static cJSON *strip(const cJSON *st)
{
    cJSON *c = st ? cJSON_Duplicate(st, 1) : cJSON_CreateObject();
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(c, "conditions");
    cJSON *it;
    cJSON_ArrayForEach (it, (cJSON_IsArray(conds) ? conds : NULL))
        cJSON_DeleteItemFromObjectCaseSensitive(it, "lastTransitionTime");
    return c;
}

bool mcopool_status_equal(const cJSON *a, const cJSON *b)
{
    cJSON *x = strip(a), *y = strip(b);
    bool eq = cJSON_Compare(x, y, 1);
    cJSON_Delete(x);
    cJSON_Delete(y);
    return eq;
}
