/* cli_format: the small pieces every kubectl-psi view prints with. Pure: percentages,
 * durations, pressure bars with the threshold marks, colour (only when asked for: a terminal
 * without NO_COLOR), and the values newer status fields may hold. */
#ifndef PSI_CLI_FORMAT_H
#define PSI_CLI_FORMAT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/status.h"

/* Marks of the thresholds in a bar. */
#define CLI_BAR_TAINT '|'
#define CLI_BAR_EVICT '!'

/* Whether the views colour their output. */
struct cli_style {
    bool color;
};

/* Colour only on a terminal, and not when NO_COLOR is set to anything but "" (no-color.org);
 * no_color is getenv("NO_COLOR"). */
struct cli_style cli_style_detect(bool is_tty, const char *no_color);

/* The escape that starts the colour of a node state, or "" without colour. */
const char *cli_style_state(const struct cli_style *st, enum api_node_state state);

/* The escape that starts the colour of a pressure against the thresholds (above evict,
 * above taint, below), or "" without colour (also for an unknown pressure). */
const char *cli_style_level(const struct cli_style *st, double pct, double taint, double evict);

/* The escape that ends a colour, or "" without colour. */
const char *cli_style_reset(const struct cli_style *st);

/* "53.2%", or "-" when pct is NAN. Returns buf. */
char *cli_fmt_pct(double pct, char *buf, size_t len);

/* A duration in seconds as "45s", "3m10s", "2h5m", "3d4h" ("0s" for negatives). Returns buf. */
char *cli_fmt_duration(int64_t s, char *buf, size_t len);

/* A bar of width cells for pct (0..100, clamped; '#' filled, '.' empty), with CLI_BAR_TAINT
 * at the taint level and CLI_BAR_EVICT at the evict level drawn over it; spaces when pct is
 * NAN (the marks stay). buf must hold width + 1 bytes. Returns buf. */
char *cli_bar(double pct, double taint, double evict, int width, char *buf, size_t len);

/* A pressure value a newer status may carry, as text: a number or a decimal string as
 * "12.3%", an object as its members "key 12.3%" joined by ", ". NULL when v is none of
 * these (nothing to show). Returns buf or NULL. */
char *cli_fmt_extra(const cJSON *v, char *buf, size_t len);

#endif
