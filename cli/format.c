/* cli_format: see format.h. */
#include "cli/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESET "\033[0m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define MAGENTA "\033[35m"
#define CYAN "\033[36m"

struct cli_style cli_style_detect(bool is_tty, const char *no_color)
{
    return (struct cli_style){.color = is_tty && !(no_color && no_color[0])};
}

const char *cli_style_state(const struct cli_style *st, enum api_node_state state)
{
    if (!st->color)
        return "";
    switch (state) {
    case API_NODE_NORMAL: return GREEN;
    case API_NODE_PRESSURED: return YELLOW;
    case API_NODE_TAINTED: return RED;
    case API_NODE_COOLING: return CYAN;
    case API_NODE_UNKNOWN: return MAGENTA;
    }
    return "";
}

const char *cli_style_level(const struct cli_style *st, double pct, double taint, double evict)
{
    if (!st->color || isnan(pct))
        return "";
    return pct > evict ? RED : pct > taint ? YELLOW : GREEN;
}

const char *cli_style_reset(const struct cli_style *st)
{
    return st->color ? RESET : "";
}

char *cli_fmt_pct(double pct, char *buf, size_t len)
{
    if (isnan(pct))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f%%", pct);
    return buf;
}

char *cli_fmt_duration(int64_t s, char *buf, size_t len)
{
    if (s < 0)
        s = 0;
    long long v = (long long)s;
    if (v < 60)
        snprintf(buf, len, "%llds", v);
    else if (v < 3600)
        snprintf(buf, len, v % 60 ? "%lldm%llds" : "%lldm", v / 60, v % 60);
    else if (v < 86400)
        snprintf(buf, len, v % 3600 / 60 ? "%lldh%lldm" : "%lldh", v / 3600, v % 3600 / 60);
    else
        snprintf(buf, len, v % 86400 / 3600 ? "%lldd%lldh" : "%lldd", v / 86400, v % 86400 / 3600);
    return buf;
}

/* The cell of a bar of width cells where pct falls (0..width-1). */
static int cell(double pct, int width)
{
    int c = (int)floor(pct * width / 100.0);
    return c < 0 ? 0 : c >= width ? width - 1 : c;
}

char *cli_bar(double pct, double taint, double evict, int width, char *buf, size_t len)
{
    if (width < 1 || len < (size_t)width + 1) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    int filled = isnan(pct) ? 0 : (int)lround((pct < 0 ? 0 : pct > 100 ? 100 : pct) * width / 100.0);
    for (int i = 0; i < width; i++)
        buf[i] = isnan(pct) ? ' ' : i < filled ? '#' : '.';
    buf[cell(taint, width)] = CLI_BAR_TAINT;
    buf[cell(evict, width)] = CLI_BAR_EVICT;
    buf[width] = '\0';
    return buf;
}

/* v as a percentage when it is a number or a decimal string; -1 otherwise. */
static int number_of(const cJSON *v, double *out)
{
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return 0;
    }
    if (cJSON_IsString(v) && v->valuestring[0]) {
        char *end;
        double d = strtod(v->valuestring, &end);
        if (*end == '\0' && isfinite(d)) {
            *out = d;
            return 0;
        }
    }
    return -1;
}

char *cli_fmt_extra(const cJSON *v, char *buf, size_t len)
{
    double d;
    if (number_of(v, &d) == 0) {
        snprintf(buf, len, "%.1f%%", d);
        return buf;
    }
    if (!cJSON_IsObject(v) || len == 0)
        return NULL;
    size_t used = 0;
    buf[0] = '\0';
    const cJSON *it;
    cJSON_ArrayForEach (it, v) {
        if (number_of(it, &d) < 0 || used >= len)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s %.1f%%", used ? ", " : "", it->string, d);
        used += w > 0 ? (size_t)w : 0;
    }
    return used ? buf : NULL;
}
