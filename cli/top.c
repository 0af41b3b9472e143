/* cli_top: see top.h. */
#include "cli/top.h"

#include <math.h>
#include <string.h>

#include "api/json.h"

static const char *const resource_label[API_RESOURCES] = {"CPU", "MEMORY", "IO"};

static char *why_unknown(const struct cli_psir *p, const struct api_node_status *n, char *buf, size_t len)
{
    const struct api_spec *s = &p->pr.spec;
    const struct api_condition *m = cli_psir_condition(p, API_CONDITION_METRICS_AVAILABLE);
    if (m && m->status == API_CONDITION_FALSE)
        snprintf(buf, len, "metrics unavailable (%s): %s", m->reason ? m->reason : "", m->message ? m->message : "");
    else if (isnan(n->pressure[s->pressure.resource]))
        snprintf(buf, len, "no %s pressure reading for this node", api_resource_name(s->pressure.resource));
    else if (s->pressure.has_utilization_floor && isnan(n->utilization))
        snprintf(buf, len, "no CPU utilisation reading, which utilizationFloorPercent needs");
    else
        snprintf(buf, len, "no usable reading in the last cycle");
    return buf;
}

char *cli_top_state_why(const struct cli_psir *p, const struct api_node_status *n, int64_t now, char *buf, size_t len)
{
    const struct api_spec *s = &p->pr.spec;
    double pct = n->pressure[s->pressure.resource];
    long long taint = (long long)s->pressure.taint_above_percent,
              untaint = (long long)s->pressure.untaint_below_percent,
              evict = (long long)s->eviction.evict_above_percent;
    char held[32], sustain[32];
    cli_fmt_duration(n->since ? now - n->since : 0, held, sizeof(held));
    cli_fmt_duration(s->pressure.sustain_ms / 1000, sustain, sizeof(sustain));
    bool sustained = n->since && (now - n->since) * 1000 >= s->pressure.sustain_ms;
    switch (n->state) {
    case API_NODE_UNKNOWN: return why_unknown(p, n, buf, len);
    case API_NODE_NORMAL:
        if (!isnan(pct) && pct > taint)
            snprintf(buf, len, "above taint %lld%% this cycle", taint);
        else
            snprintf(buf, len, "not above taint %lld%%", taint);
        break;
    case API_NODE_PRESSURED:
        if (!n->since || !sustained)
            snprintf(buf, len, "above taint %lld%% for %s of sustain %s", taint, held, sustain);
        else
            snprintf(buf, len, "above taint %lld%% for %s; no taint: maxTaintedPercent %lld%% reached", taint, held,
                     (long long)s->pressure.max_tainted_percent);
        break;
    case API_NODE_TAINTED:
        if (!isnan(pct) && pct > evict)
            snprintf(buf, len, "tainted; above evict %lld%%", evict);
        else
            snprintf(buf, len, "tainted; not above evict %lld%%, not below untaint %lld%%", evict, untaint);
        break;
    case API_NODE_COOLING:
        snprintf(buf, len, "below untaint %lld%% for %s of sustain %s; taint held", untaint, held, sustain);
        break;
    }
    return buf;
}

static void render_header(FILE *f, const struct cli_psir *p)
{
    const struct api_spec *s = &p->pr.spec;
    double relief = cli_psir_relief_target(p);
    char target[48] = "";
    if (!isnan(relief))
        snprintf(target, sizeof(target), ", relieved to below %.0f%%", relief);
    fprintf(f,
            "PsiRebalance %s: %s pressure (%s); taint above %lld%%, untaint below %lld%%, evict above %lld%%%s, "
            "sustain %llds; eviction %s, method %s\n",
            p->pr.name, api_resource_name(s->pressure.resource), api_stall_name(s->pressure.stall),
            (long long)s->pressure.taint_above_percent, (long long)s->pressure.untaint_below_percent,
            (long long)s->eviction.evict_above_percent, target, (long long)(s->pressure.sustain_ms / 1000),
            api_eviction_mode_name(s->eviction.mode), api_eviction_method_name(s->eviction.method));
}

static void render_row(FILE *f, const struct cli_psir *p, const struct api_node_status *n, const struct cli_vms *vms,
                       int64_t now, const struct cli_style *st)
{
    const struct api_spec *s = &p->pr.spec;
    enum api_resource r = s->pressure.resource;
    double taint = (double)s->pressure.taint_above_percent, evict = (double)s->eviction.evict_above_percent;
    char pct[API_RESOURCES][16], bar[CLI_TOP_BAR + 1], util[16], held[32], why[512], vm[24];
    for (int k = 0; k < API_RESOURCES; k++)
        cli_fmt_pct(n->pressure[k], pct[k], sizeof(pct[k]));
    cli_bar(n->pressure[r], taint, evict, CLI_TOP_BAR, bar, sizeof(bar));
    cli_fmt_pct(n->utilization, util, sizeof(util));
    cli_fmt_duration(n->since ? now - n->since : 0, held, sizeof(held));
    int64_t in, out, v = cli_vms_on(vms, n->name);
    cli_move_counts(p, n->name, &in, &out);
    if (v < 0)
        snprintf(vm, sizeof(vm), "-");
    else
        snprintf(vm, sizeof(vm), "%lld", (long long)v);
    const char *level = cli_style_level(st, n->pressure[r], taint, evict), *reset = cli_style_reset(st);
    fprintf(f, "%-16s", n->name);
    for (int k = 0; k < API_RESOURCES; k++)
        fprintf(f, " %s%7s%s", k == (int)r ? level : "", pct[k], k == (int)r ? reset : "");
    fprintf(f, "  %s[%s]%s %6s  %s%-9s%s %6s %4s %3lld %3lld  %s\n", level, bar, reset, util,
            cli_style_state(st, n->state), api_node_state_name(n->state), reset, n->since ? held : "-", vm,
            (long long)in, (long long)out, cli_top_state_why(p, n, now, why, sizeof(why)));
}

/* The node's workloads as the planner saw them (status.nodes[].workloads), under its row. */
static void render_workloads(FILE *f, const struct api_node_status *n)
{
    if (!n->nworkloads)
        return;
    fprintf(f, "  %-56s %-8s %8s %8s %7s %7s  %s\n", "WORKLOAD", "ROLE", "OWN CPU", "OWN MEM", "USAGE", "DEMAND",
            "DEMAND FROM");
    for (size_t i = 0; i < n->nworkloads; i++) {
        const struct api_node_workload *w = &n->workloads[i];
        char name[400], cpu[16], mem[16], usage[24] = "-", demand[24] = "-";
        snprintf(name, sizeof(name), "%s %s%s%s", w->kind[0] ? w->kind : "Pod", w->ns, w->ns[0] ? "/" : "", w->name);
        cli_fmt_pct(w->p.cpu, cpu, sizeof(cpu));
        cli_fmt_pct(w->p.memory, mem, sizeof(mem));
        if (!isnan(w->p.usage))
            snprintf(usage, sizeof(usage), "%.2f", w->p.usage);
        if (!isnan(w->p.demand))
            snprintf(demand, sizeof(demand), "%.2f", w->p.demand);
        fprintf(f, "  %-56s %-8s %8s %8s %7s %7s  %s\n", name, w->role ? api_workload_role_name(w->role) : "-", cpu,
                mem, usage, demand, w->p.from ? api_demand_from_name(w->p.from) : "-");
    }
}

static void render_footer(FILE *f, const struct cli_psir *p)
{
    const struct api_status *s = &p->pr.status;
    const struct api_summary *m = &s->summary;
    fprintf(f,
            "nodes %lld, pressured %lld, tainted %lld; evictions %lld; migrations %lld succeeded, %lld failed, "
            "%lld in flight\n",
            (long long)m->nodes, (long long)m->pressured, (long long)m->tainted, (long long)m->evictions,
            (long long)m->migrations_succeeded, (long long)m->migrations_failed, (long long)m->migrations_in_flight);
    if ((int64_t)s->nnodes < m->nodes)
        fprintf(f,
                "%lld selected nodes are not listed in status (it lists the nodes with something to say and the "
                "10 hottest; the others are Normal)\n",
                (long long)(m->nodes - (int64_t)s->nnodes));
    const int64_t *by = m->node_states;
    if (by[API_NODE_NORMAL] + by[API_NODE_PRESSURED] + by[API_NODE_TAINTED] + by[API_NODE_COOLING] +
        by[API_NODE_UNKNOWN])
        fprintf(f, "by state: %lld Normal, %lld Pressured, %lld Tainted, %lld Cooling, %lld Unknown\n",
                (long long)by[API_NODE_NORMAL], (long long)by[API_NODE_PRESSURED], (long long)by[API_NODE_TAINTED],
                (long long)by[API_NODE_COOLING], (long long)by[API_NODE_UNKNOWN]);
    static const char *const shown[] = {API_CONDITION_READY, API_CONDITION_METRICS_AVAILABLE,
                                        API_CONDITION_REBALANCING};
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
        const struct api_condition *c = cli_psir_condition(p, shown[i]);
        if (c)
            fprintf(f, "%s %s (%s): %s\n", c->type, api_condition_status_name(c->status), c->reason ? c->reason : "",
                    c->message ? c->message : "");
    }
}

void cli_top_render(FILE *f, const struct cli_psir *ps, size_t n, const char *node, const struct cli_vms *vms,
                    int64_t now, const struct cli_style *st)
{
    if (!n) {
        fprintf(f, "No PsiRebalance found.\n");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct cli_psir *p = &ps[i];
        if (i)
            fputc('\n', f);
        render_header(f, p);
        if (!p->pr.has_status) {
            fprintf(f, "no status yet: the operator has not reconciled it (is it running?)\n");
            continue;
        }
        fprintf(f, "%-16s %7s %7s %7s  %-*s %6s  %-9s %6s %4s %3s %3s  %s\n", "NODE", resource_label[0],
                resource_label[1], resource_label[2], CLI_TOP_BAR + 2, "PRESSURE (| taint ! evict)", "UTIL", "STATE",
                "FOR", "VMS", "IN", "OUT", "WHY");
        size_t shown = 0;
        for (size_t k = 0; k < p->pr.status.nnodes; k++) {
            const struct api_node_status *ns = &p->pr.status.nodes[k];
            if (node && strcmp(node, ns->name) != 0)
                continue;
            render_row(f, p, ns, vms, now, st);
            if (node) /* one node: its workloads too */
                render_workloads(f, ns);
            shown++;
        }
        if (!shown)
            fprintf(f, node ? "(node %s is not in its status: Normal, or not selected)\n" : "(no node in its status)\n",
                    node);
        render_footer(f, p);
    }
}

/* ---- JSON ---- */

static cJSON *number_or_null(double v)
{
    return isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v);
}

cJSON *cli_top_node_json(const struct cli_psir *p, const struct api_node_status *n, const struct cli_vms *vms,
                         int64_t now)
{
    cJSON *o = cJSON_CreateObject(), *pr = cJSON_AddObjectToObject(o, "pressure");
    if (!pr)
        return o;
    for (int k = 0; k < API_RESOURCES; k++)
        cJSON_AddItemToObject(pr, api_resource_name((enum api_resource)k), number_or_null(n->pressure[k]));
    char why[512], t[32];
    int64_t in, out, v = cli_vms_on(vms, n->name);
    cli_move_counts(p, n->name, &in, &out);
    cJSON_AddStringToObject(o, "name", n->name);
    cJSON_AddItemToObject(o, "utilization", number_or_null(n->utilization));
    cJSON_AddStringToObject(o, "state", api_node_state_name(n->state));
    if (n->since)
        cJSON_AddStringToObject(o, "since", api_json_format_time(n->since, t, sizeof(t)));
    cJSON_AddStringToObject(o, "why", cli_top_state_why(p, n, now, why, sizeof(why)));
    cJSON_AddItemToObject(o, "vms", v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v));
    cJSON_AddNumberToObject(o, "movesIn", (double)in);
    cJSON_AddNumberToObject(o, "movesOut", (double)out);
    cJSON *ws = n->nworkloads ? cJSON_AddArrayToObject(o, "workloads") : NULL;
    for (size_t i = 0; ws && i < n->nworkloads; i++) {
        const struct api_node_workload *w = &n->workloads[i];
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(ws, e)) {
            cJSON_Delete(e);
            break;
        }
        cJSON_AddStringToObject(e, "kind", w->kind);
        cJSON_AddStringToObject(e, "namespace", w->ns);
        cJSON_AddStringToObject(e, "name", w->name);
        cJSON_AddStringToObject(e, "role", api_workload_role_name(w->role));
        cJSON_AddItemToObject(e, "cpu", number_or_null(w->p.cpu));
        cJSON_AddItemToObject(e, "memory", number_or_null(w->p.memory));
        cJSON_AddItemToObject(e, "usageCores", number_or_null(w->p.usage));
        cJSON_AddItemToObject(e, "demandCores", number_or_null(w->p.demand));
        cJSON_AddStringToObject(e, "demandFrom", api_demand_from_name(w->p.from));
    }
    return o;
}

cJSON *cli_top_thresholds_json(const struct cli_psir *p)
{
    const struct api_spec *s = &p->pr.spec;
    cJSON *th = cJSON_CreateObject();
    cJSON_AddNumberToObject(th, "taintAbovePercent", (double)s->pressure.taint_above_percent);
    cJSON_AddNumberToObject(th, "untaintBelowPercent", (double)s->pressure.untaint_below_percent);
    cJSON_AddNumberToObject(th, "evictAbovePercent", (double)s->eviction.evict_above_percent);
    cJSON_AddNumberToObject(th, "sustainSeconds", (double)(s->pressure.sustain_ms / 1000));
    if (!isnan(cli_psir_relief_target(p)))
        cJSON_AddNumberToObject(th, "reliefTargetPercent", cli_psir_relief_target(p));
    return th;
}

static cJSON *psir_json(const struct cli_psir *p, const char *node, const struct cli_vms *vms, int64_t now)
{
    const struct api_spec *s = &p->pr.spec;
    const struct api_status *st = &p->pr.status;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", p->pr.name);
    cJSON_AddStringToObject(o, "resource", api_resource_name(s->pressure.resource));
    cJSON_AddStringToObject(o, "stall", api_stall_name(s->pressure.stall));
    cJSON_AddStringToObject(o, "mode", api_eviction_mode_name(s->eviction.mode));
    cJSON_AddStringToObject(o, "method", api_eviction_method_name(s->eviction.method));
    cJSON_AddItemToObject(o, "thresholds", cli_top_thresholds_json(p));
    cJSON *sum = cJSON_AddObjectToObject(o, "summary");
    cJSON_AddNumberToObject(sum, "nodes", (double)st->summary.nodes);
    cJSON_AddNumberToObject(sum, "pressured", (double)st->summary.pressured);
    cJSON_AddNumberToObject(sum, "tainted", (double)st->summary.tainted);
    cJSON_AddNumberToObject(sum, "evictions", (double)st->summary.evictions);
    cJSON_AddNumberToObject(sum, "migrationsSucceeded", (double)st->summary.migrations_succeeded);
    cJSON_AddNumberToObject(sum, "migrationsFailed", (double)st->summary.migrations_failed);
    cJSON_AddNumberToObject(sum, "migrationsInFlight", (double)st->summary.migrations_in_flight);
    cJSON *by = cJSON_AddObjectToObject(sum, "nodeStates");
    for (int k = 0; by && k < API_NODE_STATES; k++)
        cJSON_AddNumberToObject(by, api_node_state_name((enum api_node_state)k), (double)st->summary.node_states[k]);
    cJSON *conds = cJSON_AddArrayToObject(o, "conditions");
    for (size_t i = 0; conds && i < st->nconditions; i++) {
        const struct api_condition *c = &st->conditions[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "type", c->type);
        cJSON_AddStringToObject(j, "status", api_condition_status_name(c->status));
        cJSON_AddStringToObject(j, "reason", c->reason ? c->reason : "");
        cJSON_AddStringToObject(j, "message", c->message ? c->message : "");
        cJSON_AddItemToArray(conds, j);
    }
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
    for (size_t k = 0; nodes && k < st->nnodes; k++)
        if (!node || strcmp(node, st->nodes[k].name) == 0)
            cJSON_AddItemToArray(nodes, cli_top_node_json(p, &st->nodes[k], vms, now));
    return o;
}

cJSON *cli_top_json(const struct cli_psir *ps, size_t n, const char *node, const struct cli_vms *vms, int64_t now)
{
    cJSON *root = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(root, "items");
    if (!items) {
        cJSON_Delete(root);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(items, psir_json(&ps[i], node, vms, now));
    return root;
}
