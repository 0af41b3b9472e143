/* taintstate: what the taint state machine decided for each node last cycle, and our last
 * taint write to it, kept between cycles for one PsiRebalance; and status.taintKeys kept
 * crash-safe (taintstate_key_*). Pure.
 *
 * The node cache may lag behind a taint write of ours: a node whose cache still shows the
 * resourceVersion from before our write is taken to carry what we wrote (within
 * TAINTSTATE_OWN_WRITE_GRACE_MS), instead of being "restored" with a write that changes
 * nothing. After a restart the state is adopted from the taints on the nodes.
 *
 * Every taint key this PsiRebalance may have written is in its stored status before the
 * first taint under it is added, so that a crash between the taint write and the status
 * write leaves at worst a recorded key that no node carries (cleanup finds nothing under it
 * and forgets it), never a taint that no record names. */
#ifndef PSI_RECONCILE_TAINTSTATE_H
#define PSI_RECONCILE_TAINTSTATE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/status.h"
#include "reconcile/taint/taintfsm.h"

/* How long the node cache may lag behind a taint write of ours before what it shows counts
 * again. */
#define TAINTSTATE_OWN_WRITE_GRACE_MS 30000

/* One node. */
struct taintstate_record {
    char *name;
    enum api_node_state state;
    int64_t since_ms;
    bool tainted;
    int64_t tainted_since_ms; /* when the taint was put on (taintfsm_node's) */
    char written_rv[32];      /* the node's resourceVersion after our last taint write; "" none */
    int64_t written_ms;
};

/* All nodes, sorted by name; owned. */
struct taintstate {
    struct taintstate_record *v;
    size_t n;
};

/* The record of node, or NULL. */
const struct taintstate_record *taintstate_find(const struct taintstate *ts, const char *node);

/* Whether the taint on a node whose cached resourceVersion is cached_rv ("" or NULL: unknown)
 * is as rec says rather than as the cache shows: our write happened, and the cache has not
 * caught up with it yet. */
bool taintstate_cache_behind(const struct taintstate_record *rec, const char *cached_rv, int64_t now_ms);

/* Replace the records with the state machine's result res; written[i] is the resourceVersion
 * after our write to input node i this cycle ("" when none: the last one is kept). Returns 0,
 * or -1 on no memory (the records are then empty: adopted anew from the nodes). */
int taintstate_update(struct taintstate *ts, const struct taintfsm_result *res, const char (*written)[32],
                      int64_t now_ms);

/* Release the records. */
void taintstate_free(struct taintstate *ts);

/* Whether the record of key must be stored before this cycle's taint writes: adds (the
 * taints to add under key this cycle) is not 0, and neither the stored status (stored, as the
 * cache shows it) nor stored_by_us (the key whose record this process stored last; NULL:
 * none, and it covers a cache that has not caught up with that write) names key. */
bool taintstate_key_record_first(const struct api_status *stored, const char *stored_by_us, const char *key,
                                 size_t adds);

/* Whether recorded key may be forgotten: it is not the current key, and taking its taints
 * off every node left none behind (failures 0; a key never written has none to take off). */
bool taintstate_key_forget(const char *key, const char *current, int failures);

#endif
