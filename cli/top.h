/* cli_top: the `kubectl psi top` view. Pure: for each PsiRebalance, each node of its status
 * with the pressure of every resource (a bar for the one it acts on, marked at the taint and
 * evict levels), utilisation, state and why the node is in it, VMs, and the moves in and
 * out of it; then the summary and the conditions that explain the whole. As text for a
 * terminal or a log, or as JSON. */
#ifndef PSI_CLI_TOP_H
#define PSI_CLI_TOP_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/format.h"
#include "cli/model.h"

/* Cells of the pressure bar. */
#define CLI_TOP_BAR 20

/* Why node n of p is in its state at now (Unix s), one phrase into buf ("above taint 25%
 * for 4s of sustain 10s", "metrics unavailable: ..."). Returns buf. */
char *cli_top_state_why(const struct cli_psir *p, const struct api_node_status *n, int64_t now, char *buf, size_t len);

/* Print the table of every PsiRebalance in ps[0..n) to f; node filters to one node (NULL:
 * all); vms may be NULL (no VM counts). */
void cli_top_render(FILE *f, const struct cli_psir *ps, size_t n, const char *node, const struct cli_vms *vms,
                    int64_t now, const struct cli_style *st);

/* The same as JSON: {"items": [{"name", "resource", "stall", "mode", "method", "thresholds",
 * "summary", "conditions", "nodes": [...]}]}. NULL on no memory; the caller frees it. */
cJSON *cli_top_json(const struct cli_psir *ps, size_t n, const char *node, const struct cli_vms *vms, int64_t now);

/* The "thresholds" object of p's item in cli_top_json ({"taintAbovePercent",
 * "untaintBelowPercent", "evictAbovePercent", "sustainSeconds"[, "reliefTargetPercent"]}). */
cJSON *cli_top_thresholds_json(const struct cli_psir *p);

/* Node n of p as an item of "nodes" in cli_top_json ({"name", "pressure", "utilization",
 * "state", "since", "why", "vms", "movesIn", "movesOut"}); vms may be NULL ("vms": null). */
cJSON *cli_top_node_json(const struct cli_psir *p, const struct api_node_status *n, const struct cli_vms *vms,
                         int64_t now);

#endif
