/* nodelabels: a node's metadata.labels, kept compact: a count and (key, value) pairs of shared,
 * reference-counted strings. Every node with the label "kubernetes.io/os: linux" points at the
 * same two strings, and a label costs 16 bytes in its node's record instead of a cJSON item
 * (64 bytes and malloc's header). Two label sets are equal when their pairs are the same
 * pointers in the same order. The planner, selectors and MachineConfig pools read them through
 * nodelabels_get. Not thread-safe: the shared strings are one table per process, used from the
 * event loop's thread. */
#ifndef PSI_RECONCILE_NODELABELS_H
#define PSI_RECONCILE_NODELABELS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct nodelabel {
    const char *key, *value; /* shared strings */
};

struct nodelabels {
    size_t n;
    struct nodelabel v[]; /* in the order of the JSON object */
};

/* The string labels of labels (a JSON object; other members are skipped), or NULL when there
 * are none (or when memory ran out: *oom is then set). Free with nodelabels_free. */
struct nodelabels *nodelabels_new(const cJSON *labels, bool *oom);

/* Free l and drop its references to the shared strings (NULL is fine). */
void nodelabels_free(struct nodelabels *l);

/* The value of label key, or NULL when l (may be NULL) has none. */
const char *nodelabels_get(const struct nodelabels *l, const char *key);

/* nodelabels_get for api_selector_matches_with (labels is a const struct nodelabels *). */
const char *nodelabels_lookup(const void *labels, const char *key);

/* Whether a and b (either may be NULL) hold the same labels in the same order. */
bool nodelabels_equal(const struct nodelabels *a, const struct nodelabels *b);

/* l as a JSON object whose strings refer to the shared ones (cJSON_Delete frees the object
 * only); an empty object for NULL; NULL on no memory. */
cJSON *nodelabels_json(const struct nodelabels *l);

/* The number of distinct shared strings alive (for tests). */
size_t nodelabels_shared_strings(void);

#endif
