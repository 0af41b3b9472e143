/* informer_probe: runs one informer against a real API server and logs what its handlers
 * are told, for the e2e tests to compare with the truth.
 *
 *   informer_probe --log FILE --dump FILE [--kubeconfig PATH] [--path /api/v1/nodes]
 *                  [--selector SEL] [--mode auto|stream|list] [--watch-timeout SECONDS]
 *                  [--no-bookmarks] [--keep-objects] [--also PATH]...
 *
 * --keep-objects gives the informer no projection: it keeps the API objects themselves, and
 * what is logged is read from them; a kept object that still has metadata.managedFields
 * is logged as "MANAGED <key>".
 *
 * --also runs more informers (on other collections) in the same loop, to show their
 * watches share one HTTP/2 connection; they log only "ALSO-SYNCED <path>".
 *
 * The log (flushed per line):
 *   ADD <key> <rv> <step>            UPDATE <key> <old rv> <new rv> <step>
 *   DELETE <key> <rv> final|unknown  SYNCED <objects> <rv>
 *   LOG <level> <watch/informer log line>
 *   STATS key=value ...              (at exit)
 * <step> is the object's label "step" ("-" without it).
 * DELETE's rv is the final state's (final) or the last cached one (unknown).
 * SIGUSR1 writes the cache to the dump file ("<key> <rv>" lines, then "END"), atomically.
 * SIGTERM/SIGINT stop the loop; everything is freed before exit (for leak checkers). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "kube/config.h"
#include "kube/informer.h"
#include "kube/loop.h"
#include "kube/rest.h"

struct view {
    char rv[32];
    char step[64];
};

static FILE *logfp;
static const char *dump_path;
static struct kube_loop *loop;
static struct kube_informer *inf;
static volatile sig_atomic_t dump_requested;

/* The projection keeps the resourceVersion and the label "step". */
static void *project(const cJSON *obj, void *ud)
{
    (void)ud;
    struct view *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "labels"), "step");
    snprintf(v->rv, sizeof(v->rv), "%s", cJSON_IsString(rv) ? rv->valuestring : "?");
    snprintf(v->step, sizeof(v->step), "%s", cJSON_IsString(step) ? step->valuestring : "-");
    return v;
}

static const struct view nil = {"?", "?"};
static bool keep_objects;

/* The view of a cached value: the projection's, or made from the kept object (and a kept
 * object with managedFields logged). */
static const struct view *view_of(const char *key, const void *value, struct view *buf)
{
    if (!value)
        return &nil;
    if (!keep_objects)
        return value;
    struct view *v = project(value, NULL);
    if (!v)
        return &nil;
    *buf = *v;
    free(v);
    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(value, "metadata"), "managedFields"))
        fprintf(logfp, "MANAGED %s\n", key);
    return buf;
}

static void on_add(const char *key, const void *obj, void *ud)
{
    (void)ud;
    struct view b;
    const struct view *v = view_of(key, obj, &b);
    fprintf(logfp, "ADD %s %s %s\n", key, v->rv, v->step);
    fflush(logfp);
}

static void on_update(const char *key, const void *old_obj, const void *new_obj, void *ud)
{
    (void)ud;
    struct view bo, bn;
    const struct view *o = view_of(key, old_obj, &bo), *n = view_of(key, new_obj, &bn);
    fprintf(logfp, "UPDATE %s %s %s %s\n", key, o->rv, n->rv, n->step);
    fflush(logfp);
}

static void on_delete(const char *key, const void *obj, bool unknown, void *ud)
{
    (void)ud;
    struct view b;
    fprintf(logfp, "DELETE %s %s %s\n", key, view_of(key, obj, &b)->rv, unknown ? "unknown" : "final");
    fflush(logfp);
}

static void on_synced(void *ud)
{
    (void)ud;
    fprintf(logfp, "SYNCED %zu %s\n", kube_informer_len(inf), kube_informer_rv(inf));
    fflush(logfp);
}

static struct kube_informer *extra[8];

static void on_also_synced(void *ud)
{
    fprintf(logfp, "ALSO-SYNCED %s\n", (const char *)ud);
    fflush(logfp);
}

static void on_log(enum kube_watch_level level, const char *msg, void *ud)
{
    (void)ud;
    static const char *names[] = {"debug", "info", "warn", "error"};
    fprintf(logfp, "LOG %s %s\n", names[level], msg);
    fflush(logfp);
}

/* "<key> <rv>": the rv cached, or with --keep-objects the kept object's own. */
static int dump_one(const char *key, const char *rv, const void *obj, void *ud)
{
    struct view b;
    fprintf(ud, "%s %s\n", key, keep_objects ? view_of(key, obj, &b)->rv : rv);
    return 0;
}

static void dump_tick(struct kube_loop *l, void *ud)
{
    (void)l;
    (void)ud;
    if (!dump_requested)
        return;
    dump_requested = 0;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", dump_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        perror(tmp);
        return;
    }
    kube_informer_foreach(inf, dump_one, f);
    fprintf(f, "END\n");
    fclose(f);
    rename(tmp, dump_path);
}

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        dump_requested = 1;
    else
        kube_loop_stop(loop);
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *path = "/api/v1/nodes", *selector = NULL, *log_path = NULL;
    enum kube_watch_list_mode mode = KUBE_WATCH_LIST_AUTO;
    int watch_timeout = 0;
    const char *also[8];
    int nalso = 0;
    bool no_bookmarks = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-bookmarks") == 0) {
            no_bookmarks = true;
            continue;
        }
        if (strcmp(a, "--keep-objects") == 0) {
            keep_objects = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "informer_probe: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--kubeconfig") == 0)
            kubeconfig = v;
        else if (strcmp(a, "--path") == 0)
            path = v;
        else if (strcmp(a, "--selector") == 0)
            selector = v;
        else if (strcmp(a, "--log") == 0)
            log_path = v;
        else if (strcmp(a, "--dump") == 0)
            dump_path = v;
        else if (strcmp(a, "--watch-timeout") == 0)
            watch_timeout = atoi(v);
        else if (strcmp(a, "--also") == 0 && nalso < 8)
            also[nalso++] = v;
        else if (strcmp(a, "--mode") == 0) {
            if (strcmp(v, "auto") == 0)
                mode = KUBE_WATCH_LIST_AUTO;
            else if (strcmp(v, "stream") == 0)
                mode = KUBE_WATCH_LIST_STREAM;
            else if (strcmp(v, "list") == 0)
                mode = KUBE_WATCH_LIST_PAGED;
            else {
                fprintf(stderr, "informer_probe: --mode must be auto, stream or list\n");
                return 2;
            }
        } else {
            fprintf(stderr, "informer_probe: unknown argument %s\n", a);
            return 2;
        }
        i++;
    }
    if (!log_path || !dump_path) {
        fprintf(stderr, "usage: informer_probe --log FILE --dump FILE [--kubeconfig P] [--path P] "
                        "[--selector S] [--mode auto|stream|list] [--watch-timeout S]\n");
        return 2;
    }
    logfp = fopen(log_path, "a");
    if (!logfp) {
        perror(log_path);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = 1;
    struct kube_err err = {0};
    struct kube_config *cfg = NULL;
    struct kube_client *client = NULL;
    if (kube_config_load(kubeconfig, NULL, &cfg, &err) < 0)
        goto out;
    client = kube_client_new(cfg, &err);
    if (!client)
        goto out;
    loop = kube_loop_new(&err);
    if (!loop)
        goto out;
    struct kube_informer_opts o = {
        .path = path,
        .label_selector = selector,
        .list_mode = mode,
        .watch_timeout_seconds = watch_timeout,
        .watch_no_bookmarks = no_bookmarks,
        .project = keep_objects ? NULL : project,
        .handlers =
            {.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .on_synced = on_synced, .log = on_log},
    };
    inf = kube_informer_new(&o, &err);
    if (!inf)
        goto out;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    if (!kube_loop_timer(loop, 100, 100, dump_tick, NULL)) {
        kube_err_set(&err, 0, "Internal", "out of memory");
        goto out;
    }
    if (kube_informer_start(inf, loop, client, &err) < 0)
        goto out;
    for (int i = 0; i < nalso; i++) {
        struct kube_informer_opts ao = {
            .path = also[i],
            .list_mode = mode,
            .watch_timeout_seconds = watch_timeout,
            .handlers = {.on_synced = on_also_synced},
            .ud = (void *)also[i],
        };
        extra[i] = kube_informer_new(&ao, &err);
        if (!extra[i] || kube_informer_start(extra[i], loop, client, &err) < 0)
            goto out;
    }
    if (kube_loop_run(loop, &err) < 0)
        goto out;
    struct kube_watch_stats ws = kube_informer_watch_stats(inf);
    struct kube_informer_stats is = kube_informer_stats(inf);
    fprintf(logfp,
            "STATS lists=%llu streamed_lists=%llu streams=%llu expired=%llu failures=%llu "
            "events=%llu bookmarks=%llu streaming_refused=%d adds=%llu updates=%llu deletes=%llu "
            "relist_deletes=%llu duplicates=%llu\n",
            (unsigned long long)ws.lists, (unsigned long long)ws.streamed_lists, (unsigned long long)ws.streams,
            (unsigned long long)ws.expired, (unsigned long long)ws.failures, (unsigned long long)ws.events,
            (unsigned long long)ws.bookmarks, ws.streaming_refused, (unsigned long long)is.adds,
            (unsigned long long)is.updates, (unsigned long long)is.deletes, (unsigned long long)is.relist_deletes,
            (unsigned long long)is.duplicates);
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "informer_probe: %s\n", err.msg);
    kube_informer_free(inf);
    for (int i = 0; i < 8; i++)
        kube_informer_free(extra[i]);
    kube_loop_free(loop);
    kube_client_free(client);
    kube_config_free(cfg);
    curl_global_cleanup();
    fclose(logfp);
    return rc;
}
