/* api_selector: label selectors. */
#include "api/selector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "api/names.h"
#include "base/grow.h"
#include "base/strbuf.h"

static const char *const op_names[] = {"In", "NotIn", "Exists", "DoesNotExist"};

void api_selector_free(struct api_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->nlabels; i++) {
        free(sel->labels[i].key);
        free(sel->labels[i].value);
    }
    free(sel->labels);
    for (size_t i = 0; i < sel->nexprs; i++) {
        free(sel->exprs[i].key);
        api_json_strv_free(sel->exprs[i].values, sel->exprs[i].nvalues);
    }
    free(sel->exprs);
    memset(sel, 0, sizeof(*sel));
}

int api_selector_add_label(struct api_selector *sel, const char *key, const char *value)
{
    if (BASE_GROW(sel->labels, sel->nlabels + 1, sel->labels_cap) < 0)
        return -1;
    struct api_selector_label *v = sel->labels;
    char *k = strdup(key), *val = strdup(value);
    if (!k || !val) {
        free(k);
        free(val);
        return -1;
    }
    v[sel->nlabels].key = k;
    v[sel->nlabels].value = val;
    sel->nlabels++;
    return 0;
}

static int decode_expr(const cJSON *item, const char *path, struct api_selector_req *req, struct api_errors *errs,
                       struct api_errors *warns)
{
    static const char *const known[] = {"key", "operator", "values", NULL};
    int rc = 0, op = -1;
    if (!cJSON_IsObject(item))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(item, path, known, warns);
    char p[API_JSON_PATH_MAX];
    if (api_json_string(item, path, "key", &req->key, errs) < 0)
        rc = -1;
    else if (!req->key)
        rc = api_errors_add(errs, api_json_path(p, path, "key"), "Required value");
    if (api_json_enum(item, path, "operator", op_names, 4, &op, errs) < 0)
        rc = -1;
    else if (op < 0)
        rc = api_errors_add(errs, api_json_path(p, path, "operator"), "Required value");
    else
        req->op = (enum api_selector_op)op;
    if (api_json_strv(item, path, "values", &req->values, &req->nvalues, errs) < 0)
        rc = -1;
    return rc;
}

int api_selector_decode(const cJSON *json, const char *path, struct api_selector *sel, struct api_errors *errs,
                        struct api_errors *warns)
{
    static const char *const known[] = {"matchLabels", "matchExpressions", NULL};
    api_selector_free(sel);
    if (!cJSON_IsObject(json))
        return api_errors_add(errs, path, "must be of type object");
    api_json_unknown(json, path, known, warns);
    int rc = 0;
    const cJSON *labels, *exprs, *it;
    char p[API_JSON_PATH_MAX], ip[API_JSON_PATH_MAX];
    if (api_json_object(json, path, "matchLabels", &labels, errs) < 0)
        rc = -1;
    api_json_path(p, path, "matchLabels");
    cJSON_ArrayForEach (it, labels) {
        if (!cJSON_IsString(it))
            rc = api_errors_add(errs, api_json_path(ip, p, it->string), "must be of type string");
        else if (api_selector_add_label(sel, it->string, it->valuestring) < 0)
            rc = api_errors_add(errs, p, "out of memory");
    }
    if (api_json_array(json, path, "matchExpressions", &exprs, errs) < 0)
        rc = -1;
    if (exprs) {
        int n = cJSON_GetArraySize(exprs), i = 0;
        sel->exprs = calloc(n ? (size_t)n : 1, sizeof(*sel->exprs));
        if (!sel->exprs)
            return api_errors_add(errs, path, "out of memory");
        api_json_path(p, path, "matchExpressions");
        cJSON_ArrayForEach (it, exprs) {
            if (decode_expr(it, api_json_index(ip, p, i), &sel->exprs[i], errs, warns) < 0)
                rc = -1;
            i++;
        }
        sel->nexprs = (size_t)n;
    }
    return rc;
}

int api_selector_validate(const struct api_selector *sel, const char *path, struct api_errors *errs)
{
    int rc = 0;
    char p[API_JSON_PATH_MAX], ip[API_JSON_PATH_MAX], vp[API_JSON_PATH_MAX];
    const char *why;
    api_json_path(p, path, "matchLabels");
    if (sel->nlabels > API_SELECTOR_MAX_LABELS)
        rc = api_errors_add(errs, p, "must have at most %d entries, has %zu", API_SELECTOR_MAX_LABELS, sel->nlabels);
    for (size_t i = 0; i < sel->nlabels; i++) {
        if ((why = api_names_check_qualified(sel->labels[i].key)))
            rc = api_errors_add(errs, p, "key '%s' is not a qualified name: %s", sel->labels[i].key, why);
        if ((why = api_names_check_label_value(sel->labels[i].value)))
            rc = api_errors_add(errs, api_json_path(ip, p, sel->labels[i].key), "'%s' is not a label value: %s",
                                sel->labels[i].value, why);
    }
    api_json_path(p, path, "matchExpressions");
    if (sel->nexprs > API_SELECTOR_MAX_EXPRS)
        rc = api_errors_add(errs, p, "must have at most %d items, has %zu", API_SELECTOR_MAX_EXPRS, sel->nexprs);
    for (size_t i = 0; i < sel->nexprs; i++) {
        const struct api_selector_req *r = &sel->exprs[i];
        api_json_index(ip, p, (int)i);
        if (!r->key)
            continue; /* decode already said it is missing */
        if ((why = api_names_check_qualified(r->key)))
            rc = api_errors_add(errs, api_json_path(vp, ip, "key"), "'%s' is not a qualified name: %s", r->key, why);
        api_json_path(vp, ip, "values");
        bool set_op = r->op == API_SELECTOR_IN || r->op == API_SELECTOR_NOT_IN;
        if (set_op && r->nvalues == 0)
            rc = api_errors_add(errs, vp, "must be non-empty when operator is In or NotIn");
        if (!set_op && r->nvalues > 0)
            rc = api_errors_add(errs, vp, "must be empty when operator is Exists or DoesNotExist");
        if (r->nvalues > API_SELECTOR_MAX_VALUES)
            rc = api_errors_add(errs, vp, "must have at most %d items, has %zu", API_SELECTOR_MAX_VALUES, r->nvalues);
        for (size_t k = 0; k < r->nvalues; k++) {
            char kp[API_JSON_PATH_MAX];
            if ((why = api_names_check_label_value(r->values[k])))
                rc = api_errors_add(errs, api_json_index(kp, vp, (int)k), "'%s' is not a label value: %s", r->values[k],
                                    why);
        }
    }
    return rc;
}

cJSON *api_selector_encode(const struct api_selector *sel)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (sel->nlabels) {
        cJSON *ml = cJSON_AddObjectToObject(o, "matchLabels");
        for (size_t i = 0; ml && i < sel->nlabels; i++)
            if (!cJSON_AddStringToObject(ml, sel->labels[i].key, sel->labels[i].value))
                ml = NULL;
        if (!ml)
            goto fail;
    }
    if (sel->nexprs) {
        cJSON *me = cJSON_AddArrayToObject(o, "matchExpressions");
        if (!me)
            goto fail;
        for (size_t i = 0; i < sel->nexprs; i++) {
            const struct api_selector_req *r = &sel->exprs[i];
            cJSON *e = cJSON_CreateObject();
            if (!e || !cJSON_AddItemToArray(me, e) || !cJSON_AddStringToObject(e, "key", r->key ? r->key : "") ||
                !cJSON_AddStringToObject(e, "operator", op_names[r->op]))
                goto fail;
            if (r->nvalues) {
                cJSON *vals = cJSON_AddArrayToObject(e, "values");
                if (!vals)
                    goto fail;
                for (size_t k = 0; k < r->nvalues; k++) {
                    cJSON *s = cJSON_CreateString(r->values[k]);
                    if (!s || !cJSON_AddItemToArray(vals, s)) {
                        cJSON_Delete(s);
                        goto fail;
                    }
                }
            }
        }
    }
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

static const char *label_of(const void *json, const char *key)
{
    const cJSON *labels = json;
    const cJSON *v = cJSON_IsObject(labels) ? cJSON_GetObjectItemCaseSensitive(labels, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool in_values(const struct api_selector_req *r, const char *v)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (strcmp(r->values[i], v) == 0)
            return true;
    return false;
}

bool api_selector_matches(const struct api_selector *sel, const cJSON *labels)
{
    return api_selector_matches_with(sel, label_of, labels);
}

bool api_selector_matches_with(const struct api_selector *sel, const char *(*get)(const void *labels, const char *key),
                               const void *labels)
{
    for (size_t i = 0; i < sel->nlabels; i++) {
        const char *v = get(labels, sel->labels[i].key);
        if (!v || strcmp(v, sel->labels[i].value) != 0)
            return false;
    }
    for (size_t i = 0; i < sel->nexprs; i++) {
        const struct api_selector_req *r = &sel->exprs[i];
        const char *v = r->key ? get(labels, r->key) : NULL;
        switch (r->op) {
        case API_SELECTOR_IN:
            if (!v || !in_values(r, v))
                return false;
            break;
        case API_SELECTOR_NOT_IN:
            if (v && in_values(r, v))
                return false;
            break;
        case API_SELECTOR_EXISTS:
            if (!v)
                return false;
            break;
        case API_SELECTOR_DOES_NOT_EXIST:
            if (v)
                return false;
            break;
        }
    }
    return true;
}

char *api_selector_to_query(const struct api_selector *sel)
{
    struct strbuf b = STRBUF_INIT;
    for (size_t i = 0; i < sel->nlabels; i++) {
        if (b.len)
            strbuf_add(&b, ",");
        strbuf_add(&b, sel->labels[i].key);
        strbuf_add(&b, "=");
        strbuf_add(&b, sel->labels[i].value);
    }
    for (size_t i = 0; i < sel->nexprs; i++) {
        const struct api_selector_req *r = &sel->exprs[i];
        if (b.len)
            strbuf_add(&b, ",");
        if (r->op == API_SELECTOR_DOES_NOT_EXIST)
            strbuf_add(&b, "!");
        strbuf_add(&b, r->key ? r->key : "");
        if (r->op == API_SELECTOR_IN || r->op == API_SELECTOR_NOT_IN) {
            strbuf_add(&b, r->op == API_SELECTOR_IN ? " in (" : " notin (");
            for (size_t k = 0; k < r->nvalues; k++) {
                if (k)
                    strbuf_add(&b, ",");
                strbuf_add(&b, r->values[k]);
            }
            strbuf_add(&b, ")");
        }
    }
    return strbuf_take(&b);
}

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool api_selector_equal(const struct api_selector *a, const struct api_selector *b)
{
    if (a->nlabels != b->nlabels || a->nexprs != b->nexprs)
        return false;
    for (size_t i = 0; i < a->nlabels; i++)
        if (!str_eq(a->labels[i].key, b->labels[i].key) || !str_eq(a->labels[i].value, b->labels[i].value))
            return false;
    for (size_t i = 0; i < a->nexprs; i++) {
        const struct api_selector_req *x = &a->exprs[i], *y = &b->exprs[i];
        if (!str_eq(x->key, y->key) || x->op != y->op || x->nvalues != y->nvalues)
            return false;
        for (size_t k = 0; k < x->nvalues; k++)
            if (!str_eq(x->values[k], y->values[k]))
                return false;
    }
    return true;
}
