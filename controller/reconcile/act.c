/* act: the writes of rebalancing (see act.h). */
#include "reconcile/act.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/reasons.h"
#include "base/jx.h"
#include "base/util.h"
#include "base/logging.h"
#include "reconcile/move/migrate.h"
#include "reconcile/move/moves.h"
#include "reconcile/notify.h"

void act_event(const struct act *a, const char *type, const char *reason, const char *action, const char *note)
{
    const cJSON *meta = jx_at(a->in->obj, "metadata");
    struct kube_event_ref ref = {API_API_VERSION, API_KIND, NULL, jx_nonempty(meta, "name"), jx_nonempty(meta, "uid")};
    notify_event(a->d->events, &ref, type, reason, action, note, a->in->now_ms);
}

/* ---- following ---- */

/* A failed live migration of move m (migration: its name; why: NULL or what happened):
 * counters, a repeat move in the workload's cooldown, log and a Warning Event. */
static void migration_failed(const struct act *a, struct api_move *m, const char *migration, const char *why)
{
    history_failed(a->h, m);
    a->stats->migrations_failed++;
    char note[1024];
    /* why, without the full stop KubeVirt's messages end with, goes before a ';' */
    int wlen = why ? (int)strlen(why) : 0;
    if (wlen > 0 && why[wlen - 1] == '.')
        wlen--;
    if (migrate_move_targeted(m))
        snprintf(note, sizeof(note),
                 "live migration %s of VirtualMachineInstance %s/%s %s -> %s failed%s%.*s; it was deleted and its "
                 "cooldown grows",
                 migration, m->ns, m->name, m->source_node ? m->source_node : "?",
                 m->destination_node ? m->destination_node : "?", wlen ? ": " : "", wlen, why ? why : "");
    else
        snprintf(note, sizeof(note),
                 "live migration %s of VirtualMachineInstance %s/%s off %s failed (%lld failed since the move was "
                 "asked)%s%.*s; its cooldown grows",
                 migration, m->ns, m->name, m->source_node ? m->source_node : "?", (long long)m->failures,
                 wlen ? ": " : "", wlen, why ? why : "");
    log_warn("live migration failed", "psirebalance", a->in->pr->name, "vmi", m->name, "namespace", m->ns, "migration",
             migration, "source", m->source_node, "destination", m->destination_node, "why", why ? why : "");
    act_event(a, "Warning", API_EVENT_MIGRATION_FAILED, "Migrate", note);
}

static void migration_succeeded(const struct act *a, const struct api_move *m, const char *migration)
{
    history_succeeded(a->h, m);
    a->stats->migrations_succeeded++;
    if (m->cost.timed) { /* what it took, and how far the estimate was from it */
        a->stats->migrations_timed++;
        a->stats->migration_seconds += (double)m->cost.duration_s;
        if (m->cost.basis != API_COST_NONE) {
            a->stats->migrations_estimated++;
            a->stats->migration_expected_seconds += (double)m->cost.expected_s;
            a->stats->migration_estimate_error_seconds += fabs((double)(m->cost.duration_s - m->cost.expected_s));
        }
    }
    bool targeted = migrate_move_targeted(m);
    bool elsewhere =
        targeted && m->target_node && m->destination_node && strcmp(m->target_node, m->destination_node) != 0;
    char note[512];
    snprintf(note, sizeof(note), "VirtualMachineInstance %s/%s migrated %s -> %s (migration %s%s%s%s)", m->ns, m->name,
             m->source_node ? m->source_node : "?", m->target_node ? m->target_node : "?", migration,
             targeted ? ", sent to " : "", targeted ? m->destination_node : "",
             elsewhere ? ", but it landed elsewhere" : "");
    log_info("live migration succeeded", "psirebalance", a->in->pr->name, "vmi", m->name, "namespace", m->ns,
             "migration", migration, "source", m->source_node, "target", m->target_node, "destination",
             m->destination_node);
    act_event(a, elsewhere ? "Warning" : "Normal", API_EVENT_MIGRATION_SUCCEEDED, "Migrate", note);
}

int act_follow(const struct act *a, const struct gather_migrations *migs)
{
    struct moves_event *ev = NULL;
    size_t nev = 0;
    if (moves_follow(a->h->status.moves, a->h->status.nmoves, migs->v, migs->n, &ev, &nev) < 0) {
        free(ev);
        return -1;
    }
    for (size_t i = 0; i < nev; i++) {
        struct api_move *m = &a->h->status.moves[ev[i].move];
        if (ev[i].kind == MOVES_STARTED)
            log_info("live migration running", "psirebalance", a->in->pr->name, "vmi", m->name, "namespace", m->ns,
                     "migration", ev[i].migration, "source", m->source_node);
        else if (ev[i].kind == MOVES_SUCCEEDED)
            migration_succeeded(a, m, ev[i].migration);
        else
            migration_failed(a, m, ev[i].migration, ev[i].reason);
    }
    free(ev);
    return 0;
}

/* ---- cleaning up ---- */

/* Mark move m failed now and count it. */
static void fail_move(const struct act *a, struct api_move *m, const char *migration, const char *why)
{
    m->phase = API_MOVE_FAILED;
    m->failures++;
    m->end_time = a->in->now_ms / 1000;
    migration_failed(a, m, migration, why);
}

/* Delete migration g. Returns 1 when deleted, 0 when gone already, -1 on failure (logged). */
static int delete_migration(const struct act *a, const struct moves_migration *g)
{
    char *path = kube_path(MOVER_KUBEVIRT_GV, g->ns, "virtualmachineinstancemigrations", g->name, NULL);
    struct kube_err err;
    kube_err_clear(&err);
    if (!path)
        kube_err_set(&err, 0, "Encode", "out of memory");
    cJSON *res = path ? kube_rest_delete(a->d->client, path, NULL, NULL, &err) : NULL;
    free(path);
    cJSON_Delete(res);
    if (!res && err.status != 404) {
        log_warn("migration not deleted: trying again", "psirebalance", a->in->pr->name, "migration", g->name,
                 "namespace", g->ns, "error", err.msg);
        return -1;
    }
    return res ? 1 : 0;
}

/* The moves carried by stuck migration g failed. */
static void stuck(const struct act *a, const struct moves_migration *g)
{
    int64_t now_s = a->in->now_ms / 1000;
    char why[256];
    snprintf(why, sizeof(why), "still %s %lld s after its creation (the target pod was not scheduled)",
             g->phase && g->phase[0] ? g->phase : "without a phase", (long long)(now_s - g->created));
    for (size_t i = 0; i < a->h->status.nmoves; i++) {
        struct api_move *m = &a->h->status.moves[i];
        if (!base_same(m->migration, g->name) || !base_same(m->ns, g->ns) ||
            (m->phase != API_MOVE_REQUESTED && m->phase != API_MOVE_MIGRATING))
            continue;
        fail_move(a, m, g->name, why);
    }
}

void act_cleanup(const struct act *a, const struct gather_migrations *migs)
{
    int64_t now_s = a->in->now_ms / 1000;
    for (size_t k = 0; k < migs->n; k++) {
        const struct moves_migration *g = &migs->v[k];
        if (!base_same(g->owner, a->in->pr->name))
            continue;
        enum migrate_action act = migrate_cleanup_action(g, now_s, 0);
        if (act == MIGRATE_KEEP || delete_migration(a, g) <= 0)
            continue; /* kept, failed (tried again), or gone already (counted when it went) */
        log_info(act == MIGRATE_DELETE_STUCK ? "stuck migration deleted" : "failed migration deleted", "psirebalance",
                 a->in->pr->name, "migration", g->name, "namespace", g->ns, "phase", g->phase);
        if (act == MIGRATE_DELETE_STUCK)
            stuck(a, g);
    }
    for (size_t i = 0; i < a->h->status.nmoves; i++) {
        struct api_move *m = &a->h->status.moves[i];
        if (migrate_move_lost(m, migs->v, migs->n, now_s))
            fail_move(a, m, m->migration, "the migration is gone (deleted before it ended)");
    }
}

/* ---- moves ---- */

/* Create a targeted live migration for r (dry_run: dryRun=All, nothing is created). *name gets
 * the created migration's name (caller frees; NULL in a dry run or on failure). */
static enum evictor_outcome create_migration(const struct mover_deps *d, const struct migrate_request *r, bool dry_run,
                                             char **name, struct kube_err *err)
{
    kube_err_clear(err);
    *name = NULL;
    cJSON *o = migrate_vmim_new(r);
    char *path = kube_path(MOVER_KUBEVIRT_GV, r->ns, "virtualmachineinstancemigrations", NULL, NULL);
    struct kube_write_opts opts = {.dry_run = dry_run};
    cJSON *res = o && path ? kube_rest_create(d->client, path, o, &opts, err) : NULL;
    if (!o || !path)
        kube_err_set(err, 0, "Encode", "out of memory");
    cJSON_Delete(o);
    free(path);
    if (!res)
        return err->status ? migrate_create_outcome(err->status) : EVICTOR_ERROR;
    const char *n = jx_nonempty(res, "metadata.name");
    if (!dry_run && n && !(*name = strdup(n)))
        log_warn("migration name not kept: out of memory", "migration", n);
    cJSON_Delete(res);
    return EVICTOR_MIGRATING;
}

/* Ask for move k of the round: a targeted live migration, or an eviction. */
static enum evictor_outcome ask(const struct act *a, const struct act_round *r, size_t k, bool targeted,
                                char **mig_name, struct kube_err *err)
{
    const struct rebalance_move *mv = &r->plan->moves[k];
    const struct rebalance_candidate *c = &r->cands->c[mv->candidate];
    *mig_name = NULL;
    if (targeted) {
        struct migrate_request req = {
            .ns = c->ns,
            .vmi = r->cands->w[mv->candidate].vmi,
            .owner = a->in->pr->name,
            .source = r->nodes[mv->source].name,
            .destination = r->nodes[mv->destination].name,
            .hostname = migrate_hostname(a->in->nodes[mv->destination].node->labels, r->nodes[mv->destination].name),
            .src_load = mv->src_load,
            .src_load_after = mv->src_load_after,
            .dst_load = mv->dst_load,
            .dst_load_after = mv->dst_load_after,
        };
        return create_migration(a->d, &req, r->dry, mig_name, err);
    }
    if (kube_rest_evict(a->d->client, c->ns, c->name, r->dry, MOVER_REQUESTED_BY, err) == 0)
        return EVICTOR_EVICTED;
    if (err->status == 0)
        return EVICTOR_ERROR; /* no answer: transport */
    return evictor_outcome(err->status, err->msg);
}

/* Remember move k made (DryRun: decided) with outcome out; returns its record or NULL. */
static struct api_move *remember(const struct act *a, struct act_round *r, size_t k, enum evictor_outcome out,
                                 char *mig_name)
{
    const struct rebalance_move *mv = &r->plan->moves[k];
    const struct rebalance_candidate *c = &r->cands->c[mv->candidate];
    const struct gather_workload *w = &r->cands->w[mv->candidate];
    const char *src = r->nodes[mv->source].name, *dst = r->nodes[mv->destination].name;
    enum api_move_phase ph =
        r->dry ? API_MOVE_WOULD_MOVE : (out == EVICTOR_EVICTED ? API_MOVE_EVICTED : API_MOVE_REQUESTED);
    struct history_entry e = {w->key, w->kind, c->ns, w->name, c->name, src, dst, ph};
    struct api_move *rec = history_record(a->h, &e, a->in->now_ms);
    if (rec && !r->dry) { /* checked against what the nodes show once it settled (cycle_observe) */
        rec->predicted = true;
        rec->predicted_source = mv->src_pressure_after;
        rec->predicted_destination = mv->dst_pressure_after;
        rec->source_before = r->nodes[mv->source].pressure;
    }
    if (rec) {
        rec->vm_restart = w->restarts != NULL;
        rec->cost = w->cost;
        rec->pressure = w->pressure;
    }
    if (!rec)
        log_warn("move not recorded: out of memory", "psirebalance", a->in->pr->name, "workload", w->key);
    else if (mig_name) { /* followed by its name from now on */
        free(rec->migration);
        rec->migration = mig_name;
        mig_name = NULL;
    }
    free(mig_name);
    if (r->dry || out == EVICTOR_EVICTED) /* the move is over as far as we know: settle from now */
        history_settle(a->h, src, dst, a->in->now_ms + r->settle_ms);
    if (r->dry) {
        a->stats->dry_run_moves++;
        const double req[2] = {c->req_cpu, c->req_memory};
        if (history_add_virtual(a->h, w->key, src, dst, mv->demand, req) < 0)
            log_warn("dry-run move not kept: out of memory", "psirebalance", a->in->pr->name, "workload", w->key);
    } else if (out == EVICTOR_EVICTED) {
        a->stats->evictions++;
    } else {
        a->stats->migrations_requested++;
    }
    return rec;
}

/* Tell of move k made: log, Event, and the round's summary. */
static void tell(const struct act *a, struct act_round *r, size_t k, enum evictor_outcome out,
                 const struct api_move *rec)
{
    const struct rebalance_move *mv = &r->plan->moves[k];
    const struct rebalance_candidate *c = &r->cands->c[mv->candidate];
    const struct gather_workload *w = &r->cands->w[mv->candidate];
    const char *src = r->nodes[mv->source].name, *dst = r->nodes[mv->destination].name;
    bool dry = r->dry, targeted = r->targeted && c->vm && w->vmi;
    const char *kind = w->kind ? w->kind : "Pod";
    const char *what = dry                      ? (targeted ? "would migrate" : "would move")
                       : out == EVICTOR_EVICTED ? "evicted"
                       : targeted               ? "live migration created for"
                                                : "live migration asked for";
    /* source -> destination; with Evict the destination is what the plan predicts (the
     * scheduler places the pod), with Migrate where it is sent */
    char note[1024];
    snprintf(note, sizeof(note),
             "%s %s %s/%s (pod %s): %s -> %s%s, predicted load %s %.0f%% -> %.0f%%, %s %.0f%% -> %.0f%%%s%s%s%s%s",
             what, kind, c->ns, w->name, c->name, src, dst, targeted ? "" : " (predicted)", src, 100 * mv->src_load,
             100 * mv->src_load_after, dst, 100 * mv->dst_load, 100 * mv->dst_load_after,
             rec && rec->migration ? "; migration " : "", rec && rec->migration ? rec->migration : "",
             w->restarts ? "; the VM restarts, it is not migrated (allowVMRestart): " : "",
             w->restarts ? w->restarts : "", dry ? "; DryRun: nothing was done" : "");
    log_info(
        dry ? "dry run: would move"
            : (out == EVICTOR_EVICTED ? "evicted" : (targeted ? "live migration created" : "live migration asked")),
        "psirebalance", a->in->pr->name, "workload", w->key, "pod", c->name, "source", src, "destination", dst,
        "method", targeted ? "Migrate" : "Evict");
    act_event(a, "Normal",
              dry ? API_EVENT_WOULD_MOVE : (out == EVICTOR_EVICTED ? API_EVENT_EVICTED : API_EVENT_MIGRATION_REQUESTED),
              dry ? "DryRun" : (targeted ? "Migrate" : "Evict"), note);
    size_t used = strlen(r->made);
    if (used + 1 < r->made_len)
        snprintf(r->made + used, r->made_len - used, "%s%s %s/%s %s -> %s%s%s", used ? "; " : "", kind, c->ns, w->name,
                 src, dst, targeted ? " (live migration sent there)" : " (predicted; the scheduler places it)",
                 w->restarts ? " (the VM restarts)" : "");
}

/* Move k was refused (a PodDisruptionBudget, a VM that cannot migrate): skipped, held back. */
static void refused(const struct act *a, struct act_round *r, size_t k, bool targeted, const struct kube_err *err)
{
    const struct rebalance_move *mv = &r->plan->moves[k];
    struct rebalance_candidate *c = &r->cands->c[mv->candidate];
    r->refused++;
    a->stats->refused++;
    /* held back as a move would be: cooldown.initial, doubling while refusals repeat */
    history_refusal(a->h, r->cands->w[mv->candidate].key);
    c->blocked = "eviction refused";
    char note[1024];
    snprintf(note, sizeof(note), "%s%s of pod %s/%s off %s refused, skipped: %s", r->dry ? "dry-run " : "",
             targeted ? "live migration" : "eviction", c->ns, c->name, r->nodes[mv->source].name, err->msg);
    log_info("eviction refused: skipped", "psirebalance", a->in->pr->name, "pod", c->name, "namespace", c->ns, "error",
             err->msg);
    act_event(a, "Warning", API_EVENT_EVICTION_REFUSED, r->dry ? "DryRun" : "Evict", note);
}

/* Move k failed otherwise: the cycle fails. */
static void failed(const struct act *a, struct act_round *r, size_t k, bool targeted, const struct kube_err *err)
{
    struct rebalance_candidate *c = &r->cands->c[r->plan->moves[k].candidate];
    a->stats->eviction_failures++;
    r->failed = true;
    snprintf(r->fail_msg, r->fail_len, "the %s of pod %s/%s failed: %s", targeted ? "live migration" : "eviction",
             c->ns, c->name, err->msg);
    c->blocked = "eviction failed";
    log_error("eviction failed", "psirebalance", a->in->pr->name, "pod", c->name, "namespace", c->ns, "error",
              err->msg);
    act_event(a, "Warning", targeted ? API_EVENT_MIGRATION_FAILED : API_EVENT_EVICTION_FAILED,
              r->dry ? "DryRun" : (targeted ? "Migrate" : "Evict"), r->fail_msg);
}

size_t act_moves(const struct act *a, struct act_round *r)
{
    size_t done = 0;
    for (size_t k = 0; k < r->plan->nmoves; k++) {
        size_t ci = r->plan->moves[k].candidate;
        struct rebalance_candidate *c = &r->cands->c[ci];
        /* Migrate: a VM goes to the destination chosen; other pods are evicted */
        bool targeted = r->targeted && c->vm && r->cands->w[ci].vmi;
        struct kube_err err;
        char *mig_name;
        enum evictor_outcome out = ask(a, r, k, targeted, &mig_name, &err);
        if (r->dry && out != EVICTOR_EVICTED && out != EVICTOR_MIGRATING && err.status == 400 &&
            strstr(err.msg, "dry run")) {
            /* a webhook that cannot do dry runs: the move is still what would be done */
            log_warn("dry-run eviction not supported by the cluster: move reported unchecked", "pod", c->name,
                     "namespace", c->ns, "error", err.msg);
            out = c->vm ? EVICTOR_MIGRATING : EVICTOR_EVICTED;
        }
        if (out == EVICTOR_EVICTED || out == EVICTOR_MIGRATING) {
            tell(a, r, k, out, remember(a, r, k, out, mig_name));
            done++;
            continue;
        }
        free(mig_name);
        if (out == EVICTOR_REFUSED)
            refused(a, r, k, targeted, &err);
        else if (out == EVICTOR_GONE)
            c->blocked = "gone";
        else
            failed(a, r, k, targeted, &err);
    }
    return done;
}
