/* cli_model: what kubectl-psi knows of the cluster, as the views read it. Pure: decoded
 * PsiRebalances (api/), the VMs per node, and the questions every view asks of them (the
 * entry of a node, the moves in and out of it, which moves are under way, their method).
 *
 * Fields newer than api/ (a rebalancer may add to status before this plugin knows them) are
 * read from the object as served, which each cli_psir keeps: the views show them when present
 * and leave them out otherwise. Ownership: a cli_psir owns its decoded copy and borrows the
 * served JSON, which must outlive it. */
#ifndef PSI_CLI_MODEL_H
#define PSI_CLI_MODEL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/psirebalance.h"

/* A Requested move (KubeVirt accepted the eviction, no migration yet) counts as under way
 * this long after it was asked, as the operator counts it. */
#define CLI_REQUESTED_UNDER_WAY_S (10 * 60)
/* The prefix of the live migrations the operator creates itself (eviction.method Migrate). */
#define CLI_OWN_MIGRATION_PREFIX "psi-rebalancer-"

/* One PsiRebalance: decoded, and as served. */
struct cli_psir {
    struct api_psirebalance pr; /* spec with defaults, status; owned */
    const cJSON *raw;           /* the object as served; borrowed */
};

/* Decode obj into *out (zeroed before). Problems of the spec or status do not stop it (what
 * decodes is shown); it fails only when obj has no metadata.name or memory runs out, with a
 * sentence in err. Returns 0 or -1; free *out with cli_psir_free in any case. */
int cli_psir_decode(const cJSON *obj, struct cli_psir *out, char *err, size_t len);

/* Release what p owns and zero it. */
void cli_psir_free(struct cli_psir *p);

/* The status entry of node in p, or NULL. */
const struct api_node_status *cli_psir_node(const struct cli_psir *p, const char *node);

/* The served status.moves[i] (the same order as p->pr.status.moves), or NULL. */
const cJSON *cli_psir_raw_move(const struct cli_psir *p, size_t i);

/* The condition of type in p's status, or NULL. */
const struct api_condition *cli_psir_condition(const struct cli_psir *p, const char *type);

/* spec.eviction.reliefTargetPercent as served (a rebalancer that relieves a node until it is
 * predicted below it), or NAN when the object has none. */
double cli_psir_relief_target(const struct cli_psir *p);

/* Whether move m is under way at now (Unix s): Migrating, or Requested less than
 * CLI_REQUESTED_UNDER_WAY_S ago. */
bool cli_move_under_way(const struct api_move *m, int64_t now);

/* How move m was made: raw's "method" when the rebalancer reports it, else DryRun for a
 * WouldMove, Migrate for a live migration the operator created, Evict otherwise. Static or
 * borrowed from raw. */
const char *cli_move_method(const struct api_move *m, const cJSON *raw);

/* The node a move went to, or is predicted to go to: its target once known, else its
 * destination; NULL when neither is known. */
const char *cli_move_to(const struct api_move *m);

/* Moves of p's status history off node (*out) and onto it (*in). */
void cli_move_counts(const struct cli_psir *p, const char *node, int64_t *in, int64_t *out);

/* VirtualMachineInstances per node. known is false when they could not be read (no KubeVirt
 * API, or not allowed): the views then show no count. Counting is one append per VM and one
 * sort (cli_vms_sort); a lookup is a binary search, so a large cluster costs no more than
 * its sort. */
struct cli_vm_count {
    char *node;
    int64_t count;
};
struct cli_vms {
    bool known;
    bool sorted; /* entries sorted by node, each node once */
    struct cli_vm_count *v;
    size_t n, cap;
};

/* Count one VM on node (call cli_vms_sort before looking up); returns 0, or -1 on no memory. */
int cli_vms_add(struct cli_vms *v, const char *node);

/* Sort the entries by node and merge those of one node. */
void cli_vms_sort(struct cli_vms *v);

/* Count the items of a VirtualMachineInstance list (status.nodeName), sort them and set known;
 * returns 0, or -1 on no memory. */
int cli_vms_from_list(struct cli_vms *v, const cJSON *list);

/* VMs on node: 0 when none, -1 when not known (or not sorted). */
int64_t cli_vms_on(const struct cli_vms *v, const char *node);

/* Release what v owns and zero it. */
void cli_vms_free(struct cli_vms *v);

#endif
