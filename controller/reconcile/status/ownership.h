/* ownership: which nodes a PsiRebalance owns. A node is owned by the oldest PsiRebalance (by
 * creationTimestamp, then name) whose spec.nodeSelector selects it; the others that select it
 * report a NodeConflict and leave it alone. Pure: the nodes and the PsiRebalances as the
 * informers keep them in, marks out. */
#ifndef PSI_RECONCILE_OWNERSHIP_H
#define PSI_RECONCILE_OWNERSHIP_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/selector.h"
#include "reconcile/status/nodeproj.h"

/* A node (borrowed from the informer) and whether this PsiRebalance owns it. */
struct ownership_node {
    const struct nodeproj *node;
    const char *name; /* node->name */
    bool owned;
};

/* Every node, sorted by name (ownership_mark sorts). Free v with free(). */
struct ownership_nodes {
    struct ownership_node *v;
    size_t n, cap;
};

/* Another PsiRebalance that is older than this one. name and sel are owned (ownership_rivals_free). */
struct ownership_rival {
    char *name;
    struct api_selector sel;
};

struct ownership_rivals {
    struct ownership_rival *v;
    size_t n, cap;
};

/* Whether (created_a, name_a) is older than (created_b, name_b): creationTimestamp first
 * (RFC 3339 in UTC compares as text; NULL as ""), then name. */
bool ownership_older(const char *created_a, const char *name_a, const char *created_b, const char *name_b);

/* Append node to nodes. Returns 0, or -1 on no memory. */
int ownership_add_node(struct ownership_nodes *nodes, const struct nodeproj *node);

/* Append psirebalance (a PsiRebalance object) to rivals when it is older than self (name,
 * created); its spec.nodeSelector is decoded (absent: the default selector). Returns 0, or -1
 * on no memory. */
int ownership_add_rival(struct ownership_rivals *rivals, const cJSON *psirebalance, const char *self,
                        const char *self_created);

/* Release the rivals. */
void ownership_rivals_free(struct ownership_rivals *rivals);

/* Sort nodes by name and mark the ones sel selects that no rival selects as owned. Returns the
 * number selected but owned by a rival; *owner then names one such rival (borrowed from
 * rivals), else NULL. */
size_t ownership_mark(struct ownership_nodes *nodes, const struct api_selector *sel,
                      const struct ownership_rivals *rivals, const char **owner);

#endif
