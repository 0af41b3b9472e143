/* nodestatus: status.summary and status.nodes of a PsiRebalance from one cycle of the taint
 * state machine and the pressure readings. Pure: fills a struct api_status (api/status.h),
 * whose encoder writes each pressure as a decimal string with one digit after the point.
 *
 * Size bound. A status is one etcd object (1.5 MiB at most by default) and every write sends
 * all of it, so status.nodes is bounded: at most NODESTATUS_MAX_NODES (5,000) entries and at
 * most NODESTATUS_MAX_BYTES (1.2 MB) of unformatted JSON for them, as nodestatus_entry_size
 * counts each entry (long node names or big counters lower the count; typical entries of
 * about 200 bytes let 5,000 nodes fit), which leaves room for the rest of the object.
 * When every selected node fits, every one is listed. Otherwise entries are chosen in this
 * order until the next one would not fit:
 *   1. Tainted and Cooling nodes, 2. Pressured nodes, 3. Unknown nodes (each hottest first,
 *      ties by name), 4. Normal nodes by name (by name, not by pressure, so the same Normal
 *      nodes stay listed from one cycle to the next and the status is not rewritten for it).
 * summary.nodes always counts every selected node, so nodes[] shorter than summary.nodes
 * tells a reader entries were left out; nodestatus_info.omitted says how many (the CRD has
 * no field for it yet: a reconciler can put it in a condition message).
 * Entries are sorted by name.
 */
#ifndef PSI_RECONCILE_NODESTATUS_H
#define PSI_RECONCILE_NODESTATUS_H

#include <stddef.h>

#include "api/status.h"
#include "reconcile/taintfsm.h"

#define NODESTATUS_MAX_NODES 5000
#define NODESTATUS_MAX_BYTES (1200 * 1000)

/* The readings of one node this cycle, NAN where there is none. */
struct nodestatus_reading {
    double pressure[API_RESOURCES]; /* percent, by enum api_resource */
    double utilization;             /* CPU utilisation percent */
};

/* What nodestatus_build left out. */
struct nodestatus_info {
    size_t listed;  /* entries in status.nodes */
    size_t omitted; /* selected nodes not listed */
};

/* Bytes n takes in status.nodes as api_status_encode writes it, unformatted, with its comma. */
size_t nodestatus_entry_size(const struct api_node_status *n);

/* Replace st->nodes with the nodes of r (bounded as above) and set st->summary's nodes,
 * pressured and tainted from r. readings (may be NULL: no readings) is indexed like the input
 * the state machine ran on (taintfsm_node.input). Each node's since is its since_ms / 1000
 * (so the state machine's clock must be Unix milliseconds); its evictions and migrations
 * counters, and the summary's eviction and migration counts, are kept from st as it was.
 * info may be NULL. Returns 0, or -1 on no memory (st is then unchanged). */
int nodestatus_build(struct api_status *st, const struct taintfsm_result *r, const struct nodestatus_reading *readings,
                     struct nodestatus_info *info);

#endif
