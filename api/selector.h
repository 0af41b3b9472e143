/* api_selector: Kubernetes label selectors (metav1.LabelSelector) as the PsiRebalance API
 * uses them for nodes and pods: decode, validate with the API server's rules, encode, match
 * against an object's labels, and render as a labelSelector query parameter. */
#ifndef PSI_API_SELECTOR_H
#define PSI_API_SELECTOR_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/errors.h"

enum api_selector_op {
    API_SELECTOR_IN,
    API_SELECTOR_NOT_IN,
    API_SELECTOR_EXISTS,
    API_SELECTOR_DOES_NOT_EXIST,
};

struct api_selector_label {
    char *key, *value;
};

struct api_selector_req {
    char *key;
    enum api_selector_op op;
    char **values;
    size_t nvalues;
};

/* matchLabels (in document order) and matchExpressions. All zero: the empty selector, which
 * matches everything. Owns its strings; release with api_selector_free. */
struct api_selector {
    struct api_selector_label *labels;
    size_t nlabels, labels_cap;
    struct api_selector_req *exprs;
    size_t nexprs;
};

/* Most entries the CRD allows in matchLabels, in matchExpressions, and in one values list. */
#define API_SELECTOR_MAX_LABELS 64
#define API_SELECTOR_MAX_EXPRS 32
#define API_SELECTOR_MAX_VALUES 64

/* Decode the LabelSelector json (an object; path names it in errors) into *sel, replacing its
 * content; type errors go to errs, unknown fields to warns (may be NULL). Returns 0 or -1. */
int api_selector_decode(const cJSON *json, const char *path, struct api_selector *sel, struct api_errors *errs,
                        struct api_errors *warns);

/* Check sel against the API server's rules for label selectors (key and value syntax,
 * operator/values agreement, sizes); adds one error per problem under path. Returns 0 or -1. */
int api_selector_validate(const struct api_selector *sel, const char *path, struct api_errors *errs);

/* sel as a LabelSelector JSON object (caller owns it; NULL on no memory). */
cJSON *api_selector_encode(const struct api_selector *sel);

/* True when an object with these labels (a JSON object of strings, NULL for none) matches sel. */
bool api_selector_matches(const struct api_selector *sel, const cJSON *labels);

/* As api_selector_matches, with the labels read through get(labels, key) (NULL: no such label). */
bool api_selector_matches_with(const struct api_selector *sel, const char *(*get)(const void *labels, const char *key),
                               const void *labels);

/* sel as a labelSelector query value ("a=b,c in (d,e),!f"), not URL-encoded; "" for the empty
 * selector. Caller frees; NULL on no memory. */
char *api_selector_to_query(const struct api_selector *sel);

/* True when a and b hold the same labels and expressions in the same order. */
bool api_selector_equal(const struct api_selector *a, const struct api_selector *b);

/* Add matchLabels key=value to sel (copies both); returns 0 or -1 on no memory. */
int api_selector_add_label(struct api_selector *sel, const char *key, const char *value);

/* Release what sel owns and reset it to the empty selector. */
void api_selector_free(struct api_selector *sel);

#endif
