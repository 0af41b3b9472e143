/* taintpatch: the write that puts our taint on a Node or takes it off, and the question
 * whether a node carries it and for which PsiRebalance. Pure: it builds the request body, the
 * caller sends it.
 *
 * Our taint is {key: spec.taint.key, effect: spec.taint.effect, value: <PsiRebalance name>}.
 * The value says which PsiRebalance owns the taint; a taint with our key and another value
 * belongs to someone else and is never touched.
 *
 * The write is an RFC 6902 JSON Patch (PATCH with Content-Type application/json-patch+json)
 * that rewrites /spec/taints as a whole, every other taint kept as it is, preceded by a test
 * op on the list it was computed from:
 *   [{"op":"test","path":"/spec/taints","value":<taints as read>},
 *    {"op":"replace","path":"/spec/taints","value":<taints with ours added or removed>}]
 * When the node has no taints at all there is no list to test, so the test is on
 * /metadata/resourceVersion and the list is added:
 *   [{"op":"test","path":"/metadata/resourceVersion","value":"<rv>"},
 *    {"op":"add","path":"/spec/taints","value":[...]}]
 * If anyone changed the taints in between (or, in the second form, the node at all), the test
 * fails and the API server answers 422 (reason Invalid) without writing: re-read the node and
 * build the patch again. So the write never drops a taint another writer just added.
 * The taints passed in must be the node's spec.taints exactly as served (an informer
 * projection must keep the list verbatim), or the test never passes.
 */
#ifndef PSI_RECONCILE_TAINTPATCH_H
#define PSI_RECONCILE_TAINTPATCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/psirebalance.h"

/* Our taint. Strings are borrowed. */
struct taintpatch_taint {
    const char *key;
    const char *effect; /* "PreferNoSchedule" or "NoSchedule" */
    const char *owner;  /* the value: the owning PsiRebalance's name */
};

enum taintpatch_op { TAINTPATCH_ADD, TAINTPATCH_REMOVE };

/* What taintpatch_build decided. */
enum taintpatch_result {
    TAINTPATCH_ERROR = -1,  /* err says why; *patch is NULL */
    TAINTPATCH_PATCH = 0,   /* *patch holds the JSON Patch to send */
    TAINTPATCH_NOOP = 1,    /* the node is already as asked (add: present; remove: absent) */
    TAINTPATCH_FOREIGN = 2, /* add: a taint with our key and effect belongs to another owner */
};

/* Fill *t from spec.taint and owner (borrowed). Returns 0, or -1 with why in err when owner
 * cannot be a taint value (a label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends). */
int taintpatch_taint_from_spec(const struct api_spec *spec, const char *owner, struct taintpatch_taint *t, char *err,
                               size_t errlen);

/* The value of the taint with this key and effect in taints (a JSON array, or NULL for none):
 * who owns it. NULL when there is no such taint; "" when it has no value. Borrowed from taints. */
const char *taintpatch_owner(const cJSON *taints, const char *key, const char *effect);

/* True when taints hold our taint: t->key with value t->owner, with t->effect. */
bool taintpatch_has(const cJSON *taints, const struct taintpatch_taint *t);

/* True when taints hold a taint with t->key and value t->owner under any effect (what a
 * removal takes off: also ours from before an effect change). */
bool taintpatch_has_any(const cJSON *taints, const struct taintpatch_taint *t);

/* Build the patch that adds our taint (replacing ours under another effect) or removes every
 * taint with our key and owner, given the node's spec.taints (NULL or absent: none) and its
 * metadata.resourceVersion (needed only when taints is NULL). *patch (caller frees with
 * cJSON_Delete) is set only for TAINTPATCH_PATCH. */
enum taintpatch_result taintpatch_build(const cJSON *taints, const char *resource_version,
                                        const struct taintpatch_taint *t, enum taintpatch_op op, cJSON **patch,
                                        char *err, size_t errlen);

#endif
