/* cli_moves: see moves.h. */
#include "cli/moves.h"

#include <math.h>
#include <string.h>

#include "api/json.h"

static const char *const predicted_keys[] = CLI_MOVES_PREDICTED_KEYS;
static const char *const observed_keys[] = CLI_MOVES_OBSERVED_KEYS;

/* "31.0%/12.5%" from obj's members src and dst ("-" for one missing); NULL when both are. */
static char *pair(const cJSON *obj, const char *src, const char *dst, char *buf, size_t len)
{
    char a[48], b[48];
    bool has_a = cli_fmt_extra(cJSON_GetObjectItemCaseSensitive(obj, src), a, sizeof(a)) != NULL;
    bool has_b = cli_fmt_extra(cJSON_GetObjectItemCaseSensitive(obj, dst), b, sizeof(b)) != NULL;
    if (!has_a && !has_b)
        return NULL;
    snprintf(buf, len, "%s/%s", has_a ? a : "-", has_b ? b : "-");
    return buf;
}

/* The first member of raw named in keys (NULL-terminated) that holds a pressure, as text. */
static char *first_of(const cJSON *raw, const char *const *keys, char *buf, size_t len)
{
    for (size_t i = 0; keys[i]; i++) {
        char *s = cli_fmt_extra(cJSON_GetObjectItemCaseSensitive(raw, keys[i]), buf, len);
        if (s)
            return s;
    }
    return NULL;
}

char *cli_moves_predicted(const cJSON *raw, char *buf, size_t len)
{
    char *s = pair(cJSON_GetObjectItemCaseSensitive(raw, "prediction"), "source", "destination", buf, len);
    return s ? s : first_of(raw, predicted_keys, buf, len);
}

char *cli_moves_observed(const cJSON *raw, char *buf, size_t len)
{
    char *s =
        pair(cJSON_GetObjectItemCaseSensitive(raw, "prediction"), "observedSource", "observedDestination", buf, len);
    return s ? s : first_of(raw, observed_keys, buf, len);
}

/* "12s/13s": the live migration's expected and actual seconds (status.moves[].cost), "-" for
 * one unknown; "-" when both are. */
static const char *migration_time(const struct api_move_cost *c, char *buf, size_t len)
{
    char exp[24] = "-", took[24] = "-";
    if (c->basis != API_COST_NONE)
        snprintf(exp, sizeof(exp), "%llds", (long long)c->expected_s);
    if (c->timed)
        snprintf(took, sizeof(took), "%llds", (long long)c->duration_s);
    if (c->basis == API_COST_NONE && !c->timed)
        return "-";
    snprintf(buf, len, "%s/%s", exp, took);
    return buf;
}

/* "48.3%/1.12c": the workload's own CPU stall and the demand the planner gave it when the move
 * was decided (status.moves[].workloadPressure), "-" for one unknown; "-" when not recorded. */
static const char *own_pressure(const struct api_workload_pressure *w, char *buf, size_t len)
{
    if (w->from == API_DEMAND_FROM_NONE)
        return "-";
    char stall[16] = "-", demand[24] = "-";
    if (!isnan(w->cpu))
        snprintf(stall, sizeof(stall), "%.1f%%", w->cpu);
    if (!isnan(w->demand))
        snprintf(demand, sizeof(demand), "%.2fc", w->demand);
    snprintf(buf, len, "%s/%s", stall, demand);
    return buf;
}

static const char *phase_color(const struct cli_style *st, enum api_move_phase ph)
{
    if (!st->color)
        return "";
    return ph == API_MOVE_FAILED ? "\033[31m" : ph == API_MOVE_SUCCEEDED ? "\033[32m" : "\033[33m";
}

static void render_move(FILE *f, const struct cli_psir *p, size_t i, int64_t now, const struct cli_style *st)
{
    const struct api_move *m = &p->pr.status.moves[i];
    const cJSON *raw = cli_psir_raw_move(p, i);
    char age[32], cool[48], pred[160], obs[160], workload[400], route[300], took[64], own[48];
    cli_fmt_duration(now - m->time, age, sizeof(age));
    if (m->cooldown_until > now)
        cli_fmt_duration(m->cooldown_until - now, cool, sizeof(cool));
    else
        snprintf(cool, sizeof(cool), "-");
    snprintf(workload, sizeof(workload), "%s %s%s%s", m->kind ? m->kind : "Pod", m->ns ? m->ns : "", m->ns ? "/" : "",
             m->name ? m->name : "?");
    const char *dst = m->destination_node ? m->destination_node : "?";
    if (m->target_node && (!m->destination_node || strcmp(m->target_node, m->destination_node) != 0))
        snprintf(route, sizeof(route), "%s -> %s (went to %s)", m->source_node ? m->source_node : "?", dst,
                 m->target_node);
    else
        snprintf(route, sizeof(route), "%s -> %s", m->source_node ? m->source_node : "?", dst);
    fprintf(f, "%6s  %-50s %-36s %-7s %s%-18s%s %-14s %-14s %-10s %-23s %s\n", age, workload, route,
            cli_move_method(m, raw), phase_color(st, m->phase), api_move_phase_name(m->phase), cli_style_reset(st),
            cli_moves_predicted(raw, pred, sizeof(pred)) ? pred : "-",
            cli_moves_observed(raw, obs, sizeof(obs)) ? obs : "-", cool, migration_time(&m->cost, took, sizeof(took)),
            own_pressure(&m->pressure, own, sizeof(own)));
}

void cli_moves_render(FILE *f, const struct cli_psir *ps, size_t n, int64_t now, const struct cli_style *st)
{
    if (!n) {
        fprintf(f, "No PsiRebalance found.\n");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct cli_psir *p = &ps[i];
        const struct api_status *s = &p->pr.status;
        char hist[32];
        if (i)
            fputc('\n', f);
        fprintf(f, "PsiRebalance %s: %zu move%s in the last %s (eviction %s, method %s)\n", p->pr.name, s->nmoves,
                s->nmoves == 1 ? "" : "s",
                cli_fmt_duration(p->pr.spec.eviction.cooldown.history_ms / 1000, hist, sizeof(hist)),
                api_eviction_mode_name(p->pr.spec.eviction.mode), api_eviction_method_name(p->pr.spec.eviction.method));
        if (!s->nmoves)
            continue;
        fprintf(f, "%6s  %-50s %-36s %-7s %-18s %-14s %-14s %-10s %-23s %s\n", "AGE", "WORKLOAD",
                "SOURCE -> DESTINATION", "METHOD", "PHASE", "PREDICTED S/D", "OBSERVED S/D", "COOLDOWN",
                "MIGRATION EXPECTED/TOOK", "OWN STALL/DEMAND");
        for (size_t k = s->nmoves; k-- > 0;)
            render_move(f, p, k, now, st);
    }
}

static void add_str(cJSON *o, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, key, v);
}

static void add_time(cJSON *o, const char *key, int64_t t)
{
    char buf[32];
    if (t)
        cJSON_AddStringToObject(o, key, api_json_format_time(t, buf, sizeof(buf)));
}

static cJSON *move_json(const struct cli_psir *p, size_t i, int64_t now)
{
    const struct api_move *m = &p->pr.status.moves[i];
    const cJSON *raw = cli_psir_raw_move(p, i);
    cJSON *o = cJSON_CreateObject();
    char pred[160], obs[160];
    add_str(o, "psiRebalance", p->pr.name);
    add_str(o, "kind", m->kind);
    add_str(o, "namespace", m->ns);
    add_str(o, "name", m->name);
    add_str(o, "pod", m->pod);
    add_str(o, "source", m->source_node);
    add_str(o, "destination", m->destination_node);
    add_str(o, "target", m->target_node);
    add_str(o, "method", cli_move_method(m, raw));
    add_str(o, "phase", api_move_phase_name(m->phase));
    add_time(o, "time", m->time);
    add_time(o, "endTime", m->end_time);
    add_str(o, "migration", m->migration);
    cJSON_AddNumberToObject(o, "failures", (double)m->failures);
    add_time(o, "cooldownUntil", m->cooldown_until);
    cJSON_AddNumberToObject(o, "cooldownSeconds", (double)(m->cooldown_until > now ? m->cooldown_until - now : 0));
    add_str(o, "predicted", cli_moves_predicted(raw, pred, sizeof(pred)));
    add_str(o, "observed", cli_moves_observed(raw, obs, sizeof(obs)));
    if (m->cost.basis != API_COST_NONE)
        cJSON_AddNumberToObject(o, "expectedSeconds", (double)m->cost.expected_s);
    if (m->cost.timed)
        cJSON_AddNumberToObject(o, "durationSeconds", (double)m->cost.duration_s);
    const cJSON *prediction = cJSON_GetObjectItemCaseSensitive(raw, "prediction");
    if (cJSON_IsObject(prediction))
        cJSON_AddItemToObject(o, "prediction", cJSON_Duplicate(prediction, 1));
    const cJSON *wp = cJSON_GetObjectItemCaseSensitive(raw, "workloadPressure");
    if (cJSON_IsObject(wp))
        cJSON_AddItemToObject(o, "workloadPressure", cJSON_Duplicate(wp, 1));
    return o;
}

cJSON *cli_moves_json(const struct cli_psir *ps, size_t n, int64_t now)
{
    cJSON *root = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(root, "items");
    if (!items) {
        cJSON_Delete(root);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = ps[i].pr.status.nmoves; k-- > 0;)
            cJSON_AddItemToArray(items, move_json(&ps[i], k, now));
    return root;
}
