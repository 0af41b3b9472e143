/* cli_why: the `kubectl psi why NODE` view: whether a node is being relieved right now, and
 * why or why not. Pure: from the status and conditions of the PsiRebalance that lists the
 * node and its spec, it finds the reasons in the order the operator meets them (the spec and
 * mode, moves under way, maintenance holding it, the readings, the level, the sustain window, settling after a move,
 * what the last decision said: no destination fits, limits, nothing may move (protected
 * workloads), no usage; then cooldowns of the workloads that left it), and prints them on
 * one screen, or as JSON. */
#ifndef PSI_CLI_WHY_H
#define PSI_CLI_WHY_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/format.h"
#include "cli/model.h"

/* Most reasons one answer holds. */
#define CLI_WHY_MAX 12

/* The answer, in short. */
enum cli_verdict {
    CLI_VERDICT_RELIEVING,  /* moves off it are under way */
    CLI_VERDICT_NOTHING,    /* its pressure does not call for relief */
    CLI_VERDICT_BLOCKED,    /* it calls for relief and something holds it back */
    CLI_VERDICT_NOT_LISTED, /* no PsiRebalance lists it */
};

/* One reason: a stable code (for scripts and tests: "mode", "spec", "resource",
 * "metrics-unknown", "below-evict", "moving", "sustain", "settling", "no-destination",
 * "no-placement", "no-improvement", "limits", "protected", "usage-unknown", "oscillation",
 * "budget", "ineffective", "maintenance", "dry-run", "cooldown", and "decision": what the last
 * decision said, when its reason is none of these) and a sentence. */
struct cli_why_reason {
    const char *code;
    char text[1200];
};

struct cli_why {
    enum cli_verdict verdict;
    const struct cli_psir *psir;        /* the PsiRebalance that lists the node, or NULL */
    const struct api_node_status *node; /* its entry, or NULL */
    struct cli_why_reason reasons[CLI_WHY_MAX];
    size_t n;
};

/* Why node is or is not being relieved at now (Unix s), from ps[0..n). */
void cli_why(const struct cli_psir *ps, size_t n, const char *node, int64_t now, struct cli_why *out);

/* The name of a verdict as printed ("being relieved", ...). */
const char *cli_verdict_name(enum cli_verdict v);

/* The stable code of a verdict, for scripts: "relieving", "nothing", "blocked", "not-listed". */
const char *cli_verdict_code(enum cli_verdict v);

/* Print w for node to f (one screen: facts, verdict, reasons). */
void cli_why_render(FILE *f, const struct cli_why *w, const char *node, int64_t now, const struct cli_style *st);

/* The same as JSON: {"node", "verdict" (cli_verdict_code), "verdictText" (as printed),
 * "reasons": [{"code", "text"}], and when a PsiRebalance lists the node: "psiRebalance",
 * "resource", "stall", "mode", "method", "thresholds" and "status" (the node as
 * cli_top_json has it, without "vms")}. NULL on no memory; the caller frees it. */
cJSON *cli_why_json(const struct cli_why *w, const char *node, int64_t now);

#endif
