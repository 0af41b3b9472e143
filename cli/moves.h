/* cli_moves: the `kubectl psi moves` view. Pure: the moves of each PsiRebalance's status,
 * newest first: when, the workload, source -> destination (and where it really went), the
 * method, the phase, the pressure predicted and observed after the move where the status
 * carries them, and how long the workload may not move again. As text or JSON. */
#ifndef PSI_CLI_MOVES_H
#define PSI_CLI_MOVES_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/format.h"
#include "cli/model.h"

/* The pressure predicted after move raw (as served) for its source and destination, as
 * "31.0%/12.5%" ("-" for a side not given): from raw's prediction.source and
 * prediction.destination, or else the first of CLI_MOVES_PREDICTED_KEYS that holds a
 * pressure (cli_fmt_extra). NULL when raw carries none. Returns buf or NULL. */
char *cli_moves_predicted(const cJSON *raw, char *buf, size_t len);

/* The same for the pressure observed once the move settled: prediction.observedSource and
 * prediction.observedDestination, or else CLI_MOVES_OBSERVED_KEYS. */
char *cli_moves_observed(const cJSON *raw, char *buf, size_t len);

/* Other members of a served move that may hold those pressures, in the order looked for. */
#define CLI_MOVES_PREDICTED_KEYS               \
    {                                          \
        "predictedPressure", "predicted", NULL \
    }
#define CLI_MOVES_OBSERVED_KEYS              \
    {                                        \
        "observedPressure", "observed", NULL \
    }

/* Print the moves of every PsiRebalance in ps[0..n) to f, newest first. */
void cli_moves_render(FILE *f, const struct cli_psir *ps, size_t n, int64_t now, const struct cli_style *st);

/* The same as JSON: {"items": [{"psiRebalance", "kind", "namespace", "name", "pod", "source",
 * "destination", "target", "method", "phase", "time", "endTime", "migration", "failures",
 * "cooldownUntil", "cooldownSeconds", "predicted", "observed" (as text), "prediction" (as
 * served)}]}, newest first (members without a value left out). NULL on no memory; the caller frees it. */
cJSON *cli_moves_json(const struct cli_psir *ps, size_t n, int64_t now);

#endif
