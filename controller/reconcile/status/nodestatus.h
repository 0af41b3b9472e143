/* nodestatus: status.summary and status.nodes of a PsiRebalance from one cycle of the taint
 * state machine and the pressure readings. Pure: fills a struct api_status (api/status.h),
 * whose encoder writes each pressure as a decimal string with one digit after the point.
 *
 * Size bound: status.nodes does not grow with the cluster. A status is one etcd object and
 * every write sends all of it to every watcher, so status.nodes lists only the nodes with
 * something to say, and never more than NODESTATUS_MAX_NODES (200) entries nor more than
 * NODESTATUS_MAX_BYTES (64 KiB) of unformatted JSON for them, as nodestatus_entry_size
 * counts each entry, at any cluster size. The summary counts every selected node, by state
 * (summary.nodeStates), and /metrics has the pressure of every node. Listed, in this order
 * until the next entry would pass either bound:
 *   1. Tainted and Cooling nodes, 2. Pressured nodes, 3. Unknown nodes (each hottest first,
 *      ties by name), 4. nodes named by a move in status.moves (the history window), by
 *      name, 5. the NODESTATUS_HOTTEST (10) hottest Normal nodes; a Normal node listed before
 *      stays listed while it is among the 2 x NODESTATUS_HOTTEST hottest, so that small
 *      changes of pressure do not swap entries (and rewrite the status) every cycle.
 * A selected node not listed is Normal (or did not fit in a storm: nodestatus_info.omitted
 * counts those with something to say that were left out). Entries are sorted by name.
 */
#ifndef PSI_RECONCILE_NODESTATUS_H
#define PSI_RECONCILE_NODESTATUS_H

#include <stddef.h>

#include "api/status.h"
#include "reconcile/taint/taintfsm.h"

#define NODESTATUS_MAX_NODES 200
#define NODESTATUS_MAX_BYTES (64 * 1024)
#define NODESTATUS_HOTTEST 10

/* The readings of one node this cycle, NAN where there is none. */
struct nodestatus_reading {
    double pressure[API_RESOURCES]; /* percent, by enum api_resource */
    double utilization;             /* CPU utilisation percent */
};

/* What nodestatus_build left out. */
struct nodestatus_info {
    size_t listed;  /* entries in status.nodes */
    size_t omitted; /* nodes with something to say (classes 1-4 above) not listed for the bound */
};

/* Bytes n takes in status.nodes as api_status_encode writes it, unformatted, with its comma. */
size_t nodestatus_entry_size(const struct api_node_status *n);

/* Replace st->nodes with the nodes of r (chosen and bounded as above; st->moves and the
 * entries st holds are what "named by a move" and "listed before" look at) and set
 * st->summary's nodes, pressured, tainted and nodeStates from r. readings (may be NULL: no
 * readings) is indexed like the input the state machine ran on (taintfsm_node.input). Each node's since is its since_ms
 * / 1000 (so the state machine's clock must be Unix milliseconds); its evictions and migrations counters, and the
 * summary's eviction and migration counts, and its demandSource and saturated (the mover's), are kept from st as it
 * was. info may be NULL. Returns 0, or -1 on no memory
 * (st is then unchanged). */
int nodestatus_build(struct api_status *st, const struct taintfsm_result *r, const struct nodestatus_reading *readings,
                     struct nodestatus_info *info);

#endif
