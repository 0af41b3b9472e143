/* cli_why: see why.h. */
#include "cli/why.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "base/util.h"
#include "cli/top.h"

static void add(struct cli_why *w, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(struct cli_why *w, const char *code, const char *fmt, ...)
{
    if (w->n >= CLI_WHY_MAX)
        return;
    struct cli_why_reason *r = &w->reasons[w->n++];
    r->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->text, sizeof(r->text), fmt, ap);
    va_end(ap);
}

static bool has(const struct cli_why *w, const char *code)
{
    for (size_t i = 0; i < w->n; i++)
        if (base_same(w->reasons[i].code, code))
            return true;
    return false;
}

/* The reason code of a Rebalancing condition reason: a known one's, else "decision" (a
 * reason newer than this plugin still says what the operator decided). */
static const char *decision_code(const char *reason)
{
    static const char *const map[][2] = {
        {"NoDestination", "no-destination"},
        {"NoImprovingMove", "no-improvement"},
        {"NoPlacement", "no-placement"},
        {"LimitReached", "limits"},
        {"NoCandidate", "protected"},
        {"UsageUnknown", "usage-unknown"},
        {"UsageUnavailable", "usage-unknown"},
        {"Settling", "settling"},
        {"EvictionRefused", "protected"},
        {"OscillationHeld", "oscillation"},
        {"MoveBudgetReached", "budget"},
        {"IneffectiveMoveHeld", "ineffective"},
        {"MaintenanceInProgress", "maintenance"},
    };
    for (size_t i = 0; reason && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(reason, map[i][0]) == 0)
            return map[i][1];
    return "decision";
}

/* Global reasons: spec, mode, resource. Returns true when they alone stop every move. */
static bool global_reasons(const struct cli_psir *p, struct cli_why *w)
{
    const struct api_spec *s = &p->pr.spec;
    const struct api_condition *ready = cli_psir_condition(p, API_CONDITION_READY);
    const struct api_condition *rb = cli_psir_condition(p, API_CONDITION_REBALANCING);
    if (ready && base_same(ready->reason, "InvalidSpec")) {
        add(w, "spec", "the PsiRebalance's spec is invalid, so nothing is done: %s",
            ready->message ? ready->message : "");
        return true;
    }
    if (s->eviction.mode == API_MODE_DISABLED) {
        add(w, "mode", "spec.eviction.mode is Disabled: nodes are tainted, nothing is moved");
        return true;
    }
    if (rb && base_same(rb->reason, "ResourceNotSupported")) {
        add(w, "resource", "%s", rb->message ? rb->message : "this pressure.resource is not rebalanced");
        return true;
    }
    if (s->eviction.mode == API_MODE_DRY_RUN)
        add(w, "dry-run", "spec.eviction.mode is DryRun: moves are reported (phase WouldMove), none is made");
    return false;
}

/* Moves of p under way that touch node; adds "moving" and returns how many leave it. */
static size_t moving(const struct cli_psir *p, const char *node, int64_t now, struct cli_why *w)
{
    size_t off = 0;
    for (size_t i = 0; i < p->pr.status.nmoves; i++) {
        const struct api_move *m = &p->pr.status.moves[i];
        if (!cli_move_under_way(m, now))
            continue;
        bool from = base_same(m->source_node, node);
        if (!from && !base_same(cli_move_to(m), node))
            continue;
        char age[32];
        cli_fmt_duration(now - m->time, age, sizeof(age));
        add(w, "moving", "%s %s/%s %s %s (%s, %s, asked %s ago)", m->kind ? m->kind : "Pod", m->ns ? m->ns : "",
            m->name ? m->name : "?", from ? "is moving to" : "is arriving from",
            from ? (cli_move_to(m) ? cli_move_to(m) : "a node the scheduler picks") : m->source_node,
            api_move_phase_name(m->phase), cli_move_method(m, cli_psir_raw_move(p, i)), age);
        off += from;
    }
    return off;
}

/* The latest end (or start) of a move that touched node, 0 when none. */
static int64_t last_touch(const struct cli_psir *p, const char *node)
{
    int64_t t = 0;
    for (size_t i = 0; i < p->pr.status.nmoves; i++) {
        const struct api_move *m = &p->pr.status.moves[i];
        if (m->phase == API_MOVE_FAILED || !(base_same(m->source_node, node) || base_same(cli_move_to(m), node)))
            continue;
        int64_t e = m->end_time ? m->end_time : m->time;
        if (e > t)
            t = e;
    }
    return t;
}

static void cooldowns(const struct cli_psir *p, const char *node, int64_t now, struct cli_why *w)
{
    for (size_t i = 0; i < p->pr.status.nmoves; i++) {
        const struct api_move *m = &p->pr.status.moves[i];
        if (m->cooldown_until <= now || cli_move_under_way(m, now) ||
            !(base_same(m->source_node, node) || base_same(cli_move_to(m), node)))
            continue;
        char left[32];
        add(w, "cooldown", "%s %s/%s %s %s %s and may not move again for %s", m->kind ? m->kind : "Pod",
            m->ns ? m->ns : "", m->name ? m->name : "?", m->phase == API_MOVE_WOULD_MOVE ? "would move" : "moved",
            base_same(m->source_node, node) ? "off it to" : "onto it from",
            base_same(m->source_node, node) ? (cli_move_to(m) ? cli_move_to(m) : "?") : m->source_node,
            cli_fmt_duration(m->cooldown_until - now, left, sizeof(left)));
    }
}

/* A node above the evict level: what holds its relief back. */
static void held_back(const struct cli_psir *p, const struct api_node_status *ns, int64_t now, struct cli_why *w)
{
    const struct api_spec *s = &p->pr.spec;
    char held[32], need[32];
    if (ns->state == API_NODE_PRESSURED && ns->since && (now - ns->since) * 1000 < s->pressure.sustain_ms)
        add(w, "sustain",
            "its pressure rose above the taint level %s ago; a node is relieved once it stays above "
            "evictAbovePercent for the whole sustain window (%s)",
            cli_fmt_duration(now - ns->since, held, sizeof(held)),
            cli_fmt_duration(s->pressure.sustain_ms / 1000, need, sizeof(need)));
    int64_t settle = (s->metrics.window_ms + 2 * s->metrics.interval_ms) / 1000, touched = last_touch(p, ns->name);
    if (touched && now - touched < settle)
        add(w, "settling",
            "a move touched it %s ago: its pressure settles for %s (metrics.window + 2 x "
            "metrics.interval) before the next move is planned",
            cli_fmt_duration(now - touched, held, sizeof(held)), cli_fmt_duration(settle, need, sizeof(need)));
    const struct api_condition *rb = cli_psir_condition(p, API_CONDITION_REBALANCING);
    if (rb && !(base_same(rb->reason, "MaintenanceInProgress") && has(w, "maintenance")))
        add(w, decision_code(rb->reason), "the last decision (Rebalancing %s): %s", rb->reason ? rb->reason : "",
            rb->message ? rb->message : "");
    int64_t in_flight = p->pr.status.summary.migrations_in_flight;
    if (!has(w, "limits") && in_flight >= s->eviction.max_in_flight_migrations)
        add(w, "limits", "%lld live migrations are in flight, maxInFlightMigrations is %lld", (long long)in_flight,
            (long long)s->eviction.max_in_flight_migrations);
}

/* The clause of a MaintenanceInProgress message about node ("...: NODE: why; ..." or "... why.
 * "), copied to buf; NULL when the message names no hold of node. */
static const char *maintenance_clause(const char *msg, const char *node, char *buf, size_t len)
{
    size_t nl = strlen(node);
    for (const char *at = msg ? strstr(msg, node) : NULL; at; at = strstr(at + 1, node)) {
        bool starts = at - msg >= 2 && (at[-2] == ':' || at[-2] == ';') && at[-1] == ' ';
        if (!starts || strncmp(at + nl, ": ", 2) != 0)
            continue;
        const char *why = at + nl + 2, *semi = strstr(why, "; "), *stop = strstr(why, ". ");
        const char *end = semi && (!stop || semi < stop) ? semi : stop ? stop : why + strlen(why);
        snprintf(buf, len, "%.*s", (int)(end - why), why);
        return buf;
    }
    return NULL;
}

/* Maintenance holds node: neither a source nor a destination (the MaintenanceInProgress
 * decision names it). */
static void maintenance(const struct cli_psir *p, const char *node, struct cli_why *w)
{
    const struct api_condition *rb = cli_psir_condition(p, API_CONDITION_REBALANCING);
    char clause[600];
    if (!rb || !base_same(rb->reason, "MaintenanceInProgress") ||
        !maintenance_clause(rb->message, node, clause, sizeof(clause)))
        return;
    add(w, "maintenance",
        "maintenance holds it: %s; until that ends nothing is moved off it or onto it (Rebalancing "
        "MaintenanceInProgress)",
        clause);
}

void cli_why(const struct cli_psir *ps, size_t n, const char *node, int64_t now, struct cli_why *out)
{
    memset(out, 0, sizeof(*out));
    out->verdict = CLI_VERDICT_NOT_LISTED;
    for (size_t i = 0; i < n && !out->node; i++)
        if ((out->node = cli_psir_node(&ps[i], node)))
            out->psir = &ps[i];
    if (!out->node)
        return;
    const struct cli_psir *p = out->psir;
    const struct api_node_status *ns = out->node;
    const struct api_spec *s = &p->pr.spec;
    double pct = ns->pressure[s->pressure.resource];
    out->verdict = CLI_VERDICT_BLOCKED;
    if (global_reasons(p, out)) {
        cooldowns(p, node, now, out);
        return;
    }
    if (moving(p, node, now, out))
        out->verdict = CLI_VERDICT_RELIEVING;
    maintenance(p, node, out);
    if (isnan(pct) || ns->state == API_NODE_UNKNOWN) {
        const struct api_condition *m = cli_psir_condition(p, API_CONDITION_METRICS_AVAILABLE);
        if (m && m->status == API_CONDITION_FALSE)
            add(out, "metrics-unknown", "its pressure is unknown: MetricsAvailable is False (%s): %s",
                m->reason ? m->reason : "", m->message ? m->message : "");
        else
            add(out, "metrics-unknown",
                "its %s pressure is unknown: the last cycle had no reading for it, so its "
                "taint is held and nothing is moved off it",
                api_resource_name(s->pressure.resource));
    } else if (pct <= (double)s->eviction.evict_above_percent) {
        if (out->verdict != CLI_VERDICT_RELIEVING)
            out->verdict = CLI_VERDICT_NOTHING;
        add(out, "below-evict", "its %s pressure %.1f%% is not above evictAbovePercent %lld%%: nothing to relieve%s",
            api_resource_name(s->pressure.resource), pct, (long long)s->eviction.evict_above_percent,
            ns->state == API_NODE_TAINTED || ns->state == API_NODE_COOLING
                ? " (it keeps the taint until below untaintBelowPercent for the sustain window)"
                : "");
    } else if (out->verdict != CLI_VERDICT_RELIEVING) {
        held_back(p, ns, now, out);
    }
    cooldowns(p, node, now, out);
}

const char *cli_verdict_code(enum cli_verdict v)
{
    switch (v) {
    case CLI_VERDICT_RELIEVING: return "relieving";
    case CLI_VERDICT_NOTHING: return "nothing";
    case CLI_VERDICT_BLOCKED: return "blocked";
    case CLI_VERDICT_NOT_LISTED: return "not-listed";
    }
    return "";
}

const char *cli_verdict_name(enum cli_verdict v)
{
    switch (v) {
    case CLI_VERDICT_RELIEVING: return "being relieved";
    case CLI_VERDICT_NOTHING: return "not being relieved: nothing to relieve";
    case CLI_VERDICT_BLOCKED: return "not being relieved now";
    case CLI_VERDICT_NOT_LISTED:
        return "not listed by any PsiRebalance: Normal or not selected (a status lists the Tainted, Cooling, "
               "Pressured, Unknown and recently moved nodes and the 10 hottest)";
    }
    return "";
}

void cli_why_render(FILE *f, const struct cli_why *w, const char *node, int64_t now, const struct cli_style *st)
{
    if (!w->psir) {
        fprintf(f,
                "Node %s: %s (not selected by any spec.nodeSelector, or left out of a status that lists the "
                "hottest nodes first)\n",
                node, cli_verdict_name(w->verdict));
        return;
    }
    const struct api_spec *s = &w->psir->pr.spec;
    const struct api_node_status *ns = w->node;
    char pct[API_RESOURCES][16], held[32], why[512];
    for (int k = 0; k < API_RESOURCES; k++)
        cli_fmt_pct(ns->pressure[k], pct[k], sizeof(pct[k]));
    fprintf(f, "Node %s (PsiRebalance %s; eviction %s, method %s)\n", node, w->psir->pr.name,
            api_eviction_mode_name(s->eviction.mode), api_eviction_method_name(s->eviction.method));
    fprintf(f,
            "  pressure   cpu %s, memory %s, io %s; acting on %s (%s): taint above %lld%%, untaint below %lld%%, "
            "evict above %lld%%\n",
            pct[0], pct[1], pct[2], api_resource_name(s->pressure.resource), api_stall_name(s->pressure.stall),
            (long long)s->pressure.taint_above_percent, (long long)s->pressure.untaint_below_percent,
            (long long)s->eviction.evict_above_percent);
    fprintf(f, "  state      %s%s%s for %s: %s\n", cli_style_state(st, ns->state), api_node_state_name(ns->state),
            cli_style_reset(st), ns->since ? cli_fmt_duration(now - ns->since, held, sizeof(held)) : "?",
            cli_top_state_why(w->psir, ns, now, why, sizeof(why)));
    if (ns->demand_source[0])
        fprintf(f, "  demand     %s, from %s%s\n", ns->saturated ? "saturated" : "not saturated", ns->demand_source,
                ns->saturated ? " (its CPU reading is near 100 % or its CPUs are busy: PSI no longer says how much "
                                "demand goes unserved)"
                              : "");
    for (size_t i = 0; i < ns->nworkloads; i++) { /* what each VM's own pressure said of it */
        const struct api_node_workload *x = &ns->workloads[i];
        char own[16];
        fprintf(f, "  %-10s %s %s%s%s: %s, own CPU pressure %s, %s demand %.2f of %.2f cores used (from %s)\n",
                i ? "" : "workloads", x->kind[0] ? x->kind : "Pod", x->ns, x->ns[0] ? "/" : "", x->name,
                x->role == API_ROLE_CAUSES    ? "causes the load"
                : x->role == API_ROLE_SUFFERS ? "suffers from it"
                                              : "neither causes nor suffers",
                cli_fmt_pct(x->p.cpu, own, sizeof(own)),
                x->p.from == API_DEMAND_FROM_OWN_PRESSURE ? "given" : "estimated", x->p.demand, x->p.usage,
                x->p.from == API_DEMAND_FROM_OWN_PRESSURE ? "its own pressure" : "the node's pressure: no per-pod PSI");
    }
    fprintf(f, "  verdict    %s\n", cli_verdict_name(w->verdict));
    for (size_t i = 0; i < w->n; i++)
        fprintf(f, "  - [%s] %s\n", w->reasons[i].code, w->reasons[i].text);
}

cJSON *cli_why_json(const struct cli_why *w, const char *node, int64_t now)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "node", node);
    if (w->psir) {
        const struct api_spec *s = &w->psir->pr.spec;
        cJSON_AddStringToObject(o, "psiRebalance", w->psir->pr.name);
        cJSON_AddStringToObject(o, "resource", api_resource_name(s->pressure.resource));
        cJSON_AddStringToObject(o, "stall", api_stall_name(s->pressure.stall));
        cJSON_AddStringToObject(o, "mode", api_eviction_mode_name(s->eviction.mode));
        cJSON_AddStringToObject(o, "method", api_eviction_method_name(s->eviction.method));
        cJSON_AddItemToObject(o, "thresholds", cli_top_thresholds_json(w->psir));
        cJSON *status = cli_top_node_json(w->psir, w->node, NULL, now);
        cJSON_DeleteItemFromObjectCaseSensitive(status, "vms");
        cJSON_AddItemToObject(o, "status", status);
    }
    cJSON_AddStringToObject(o, "verdict", cli_verdict_code(w->verdict));
    cJSON_AddStringToObject(o, "verdictText", cli_verdict_name(w->verdict));
    cJSON *reasons = cJSON_AddArrayToObject(o, "reasons");
    if (!reasons) {
        cJSON_Delete(o);
        return NULL;
    }
    for (size_t i = 0; i < w->n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "code", w->reasons[i].code);
        cJSON_AddStringToObject(r, "text", w->reasons[i].text);
        cJSON_AddItemToArray(reasons, r);
    }
    return o;
}
