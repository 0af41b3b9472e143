/* taintpatch: JSON Patch bodies that add or remove our Node taint without racing. */
#include "reconcile/taint/taintpatch.h"

#include <stdio.h>
#include <string.h>

#include "api/names.h"

int taintpatch_taint_from_spec(const struct api_spec *spec, const char *owner, struct taintpatch_taint *t, char *err,
                               size_t errlen)
{
    memset(t, 0, sizeof(*t));
    const char *why = !owner || !*owner ? "must not be empty" : api_names_check_label_value(owner);
    if (why) {
        if (err && errlen)
            snprintf(err, errlen, "PsiRebalance name '%s' cannot be the value of its taint: %s", owner ? owner : "",
                     why);
        return -1;
    }
    t->key = spec->taint.key;
    t->effect = api_taint_effect_name(spec->taint.effect);
    t->owner = owner;
    return 0;
}

/* s as a string ("" for absent or non-string). */
static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

static bool is_key_effect(const cJSON *taint, const char *key, const char *effect)
{
    return strcmp(str_of(taint, "key"), key) == 0 && strcmp(str_of(taint, "effect"), effect) == 0;
}

/* Ours under any effect: our key and our owner as value. */
static bool is_ours(const cJSON *taint, const struct taintpatch_taint *t)
{
    return strcmp(str_of(taint, "key"), t->key) == 0 && strcmp(str_of(taint, "value"), t->owner) == 0;
}

const char *taintpatch_owner(const cJSON *taints, const char *key, const char *effect)
{
    const cJSON *it;
    if (!cJSON_IsArray(taints))
        return NULL;
    cJSON_ArrayForEach (it, taints) {
        if (is_key_effect(it, key, effect))
            return str_of(it, "value");
    }
    return NULL;
}

bool taintpatch_has(const cJSON *taints, const struct taintpatch_taint *t)
{
    const char *owner = taintpatch_owner(taints, t->key, t->effect);
    return owner && strcmp(owner, t->owner) == 0;
}

bool taintpatch_has_any(const cJSON *taints, const struct taintpatch_taint *t)
{
    const cJSON *it;
    if (!cJSON_IsArray(taints))
        return false;
    cJSON_ArrayForEach (it, taints) {
        if (is_ours(it, t))
            return true;
    }
    return false;
}

static enum taintpatch_result fail(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
    return TAINTPATCH_ERROR;
}

/* One op object {"op":op,"path":path,"value":value} appended to patch; takes value. */
static bool add_op(cJSON *patch, const char *op, const char *path, cJSON *value)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !value || !cJSON_AddStringToObject(o, "op", op) || !cJSON_AddStringToObject(o, "path", path)) {
        cJSON_Delete(o);
        cJSON_Delete(value);
        return false;
    }
    cJSON_AddItemToObject(o, "value", value);
    cJSON_AddItemToArray(patch, o);
    return true;
}

enum taintpatch_result taintpatch_build(const cJSON *taints, const char *resource_version,
                                        const struct taintpatch_taint *t, enum taintpatch_op op, cJSON **patch,
                                        char *err, size_t errlen)
{
    *patch = NULL;
    if (!t || !t->key || !t->effect || !t->owner)
        return fail(err, errlen, "taint patch: key, effect and owner are required");
    if (taints && !cJSON_IsNull(taints) && !cJSON_IsArray(taints))
        return fail(err, errlen, "taint patch: the node's spec.taints is not a list");
    const cJSON *cur = cJSON_IsArray(taints) ? taints : NULL;
    if (op == TAINTPATCH_ADD) {
        const char *owner = taintpatch_owner(cur, t->key, t->effect);
        if (owner && strcmp(owner, t->owner) != 0)
            return TAINTPATCH_FOREIGN;
        /* Present, and no copy of ours left under another effect: nothing to do. */
        bool stale = false;
        const cJSON *it;
        cJSON_ArrayForEach (it, cur) {
            stale = stale || (is_ours(it, t) && strcmp(str_of(it, "effect"), t->effect) != 0);
        }
        if (owner && !stale)
            return TAINTPATCH_NOOP;
    } else if (!taintpatch_has_any(cur, t)) {
        return TAINTPATCH_NOOP;
    }
    if (!cur && (!resource_version || !*resource_version))
        return fail(err, errlen, "taint patch: the node has no taints and no resourceVersion to test against");

    /* The new list: every taint that is not ours, in order, then ours when adding. */
    cJSON *next = cJSON_CreateArray();
    bool ok = next != NULL;
    const cJSON *it;
    cJSON_ArrayForEach (it, cur) {
        if (!ok)
            break;
        if (is_ours(it, t))
            continue;
        cJSON *copy = cJSON_Duplicate(it, true);
        ok = copy && cJSON_AddItemToArray(next, copy);
    }
    if (ok && op == TAINTPATCH_ADD) {
        cJSON *mine = cJSON_CreateObject();
        ok = mine && cJSON_AddItemToArray(next, mine) && cJSON_AddStringToObject(mine, "key", t->key) &&
             cJSON_AddStringToObject(mine, "value", t->owner) && cJSON_AddStringToObject(mine, "effect", t->effect);
    }
    cJSON *p = ok ? cJSON_CreateArray() : NULL;
    if (!p) {
        cJSON_Delete(next);
        return fail(err, errlen, "taint patch: out of memory");
    }
    /* add_op takes its value, freed on failure; next is handed over only by the second op. */
    if (cur)
        ok = add_op(p, "test", "/spec/taints", cJSON_Duplicate(cur, true));
    else
        ok = add_op(p, "test", "/metadata/resourceVersion", cJSON_CreateString(resource_version));
    if (ok)
        ok = add_op(p, cur ? "replace" : "add", "/spec/taints", next);
    else
        cJSON_Delete(next);
    if (!ok) {
        cJSON_Delete(p);
        return fail(err, errlen, "taint patch: out of memory");
    }
    *patch = p;
    return TAINTPATCH_PATCH;
}
