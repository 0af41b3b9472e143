/* cli_source: see source.h. */
#include "cli/source.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/psirebalance.h"
#include "cli/errors.h"
#include "kube/informer.h"
#include "kube/loop.h"

#define PSIR_GV API_GROUP "/" API_VERSION
#define VMI_GV "kubevirt.io/v1"
#define VMI_RESOURCE "virtualmachineinstances"
/* Tries of a read that failed for a transient reason, the first pause (doubled each time). */
#define READ_TRIES 5
#define READ_PAUSE_MS 250

int cli_source_open(struct cli_source *s, const char *kubeconfig, const char *context, char *err, size_t len)
{
    struct kube_err e = {0};
    if (kube_config_load(kubeconfig, context, &s->cfg, &e) < 0 || !(s->client = kube_client_new(s->cfg, &e))) {
        cli_error_explain(&e, CLI_REQUEST_CONFIG, NULL, NULL, err, len);
        return -1;
    }
    s->cfg->user_agent = "kubectl-psi/" PSI_VERSION; /* audit logs tell the plugin from the operator */
    kube_client_set_timeout(s->client, 15000);
    return 0;
}

void cli_source_close(struct cli_source *s)
{
    kube_client_free(s->client);
    kube_config_free(s->cfg);
    s->client = NULL;
    s->cfg = NULL;
}

static int by_name(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    const cJSON *nx = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(x, "metadata"), "name");
    const cJSON *ny = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(y, "metadata"), "name");
    return strcmp(cJSON_IsString(nx) ? nx->valuestring : "", cJSON_IsString(ny) ? ny->valuestring : "");
}

/* Sort list's items by name; returns list, or NULL (list freed) on no memory. */
static cJSON *sorted(cJSON *list)
{
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    int n = cJSON_GetArraySize(items);
    if (n < 2)
        return list;
    cJSON **v = calloc((size_t)n, sizeof(*v));
    if (!v) {
        cJSON_Delete(list);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        v[i] = cJSON_DetachItemFromArray(items, 0);
    qsort(v, (size_t)n, sizeof(*v), by_name);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(items, v[i]);
    free(v);
    return list;
}

/* GET path (list: LIST it, every page), asked again after a pause while the failure is
 * transient (cli_error_transient). */
static cJSON *read_path(struct cli_source *s, const char *path, bool list, struct kube_err *e)
{
    long pause_ms = READ_PAUSE_MS;
    for (int i = 1;; i++, pause_ms *= 2) {
        cJSON *got = list ? kube_rest_list(s->client, path, NULL, e) : kube_rest_get(s->client, path, e);
        if (got || i == READ_TRIES || !cli_error_transient(e))
            return got;
        struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

cJSON *cli_source_psirs(struct cli_source *s, const char *name, char *err, size_t len)
{
    struct kube_err e = {0};
    char *path = kube_path(PSIR_GV, NULL, API_PLURAL, name, NULL);
    if (!path) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    cJSON *got = read_path(s, path, !name, &e);
    free(path);
    if (!got) {
        enum cli_request req = name ? CLI_REQUEST_NAMED : CLI_REQUEST_COLLECTION;
        if (name && e.status == 404) { /* which is missing: the object, or the API? */
            struct kube_err e2 = {0};
            char *coll = kube_path(PSIR_GV, NULL, API_PLURAL, NULL, NULL);
            cJSON *probe = coll ? read_path(s, coll, false, &e2) : NULL;
            if (!probe && e2.status == 404)
                req = CLI_REQUEST_COLLECTION;
            cJSON_Delete(probe);
            free(coll);
        }
        cli_error_explain(&e, req, name, kube_config_server(s->cfg), err, len);
        return NULL;
    }
    if (!name)
        return sorted(got);
    cJSON *list = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(list, "items");
    if (!items) {
        cJSON_Delete(list);
        cJSON_Delete(got);
        snprintf(err, len, "out of memory");
        return NULL;
    }
    cJSON_AddItemToArray(items, got);
    return list;
}

int cli_source_vms(struct cli_source *s, struct cli_vms *vms)
{
    struct kube_err e = {0};
    char *path = kube_path(VMI_GV, NULL, VMI_RESOURCE, NULL, NULL);
    if (!path)
        return -1;
    cJSON *list = read_path(s, path, true, &e);
    free(path);
    int rc = list ? cli_vms_from_list(vms, list) : 0;
    cJSON_Delete(list);
    return rc;
}

/* ---- watching ---- */

struct watch {
    struct kube_loop *loop;
    struct kube_informer *psirs, *vmis;
    uint64_t redraw;
    cli_source_draw_fn draw;
    void *ud;
};

static struct kube_loop *signal_loop;

static void on_signal(int sig)
{
    (void)sig;
    if (signal_loop)
        kube_loop_stop(signal_loop);
}

static int collect_psir(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    cJSON *copy = obj ? cJSON_Duplicate(obj, 1) : NULL;
    if (obj && !copy)
        return -1;
    if (copy)
        cJSON_AddItemToArray(ud, copy);
    return 0;
}

static int collect_vmi(const char *key, const char *rv, const void *obj, void *ud)
{
    (void)key, (void)rv;
    return obj && cli_vms_add(ud, obj) < 0 ? -1 : 0;
}

static void redraw(struct kube_loop *loop, void *ud)
{
    (void)loop;
    struct watch *w = ud;
    w->redraw = 0;
    if (!kube_informer_synced(w->psirs))
        return;
    cJSON *list = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(list, "items");
    struct cli_vms vms = {0};
    if (items && kube_informer_foreach(w->psirs, collect_psir, items) == 0 && (list = sorted(list)) &&
        (!w->vmis || kube_informer_foreach(w->vmis, collect_vmi, &vms) == 0)) {
        cli_vms_sort(&vms);
        vms.known = w->vmis && kube_informer_synced(w->vmis);
        w->draw(list, &vms, w->ud);
    } else {
        fprintf(stderr, "kubectl-psi: out of memory drawing the view\n");
    }
    cli_vms_free(&vms);
    cJSON_Delete(list);
}

static void changed(struct watch *w)
{
    if (!w->redraw)
        w->redraw = kube_loop_timer(w->loop, CLI_SOURCE_REDRAW_MS, 0, redraw, w);
}

static void on_add(const char *key, const void *obj, void *ud)
{
    (void)key, (void)obj;
    changed(ud);
}

static void on_update(const char *key, const void *old_obj, const void *new_obj, void *ud)
{
    (void)key, (void)old_obj, (void)new_obj;
    changed(ud);
}

static void on_delete(const char *key, const void *obj, bool unknown, void *ud)
{
    (void)key, (void)obj, (void)unknown;
    changed(ud);
}

static void on_synced(void *ud)
{
    changed(ud);
}

static void on_log(enum kube_watch_level level, const char *msg, void *ud)
{
    (void)ud;
    if (level >= KUBE_WATCH_WARN)
        fprintf(stderr, "kubectl-psi: %s\n", msg);
}

/* A VMI as its node's name (NULL: not placed). */
static void *vmi_node(const cJSON *obj, void *ud)
{
    (void)ud;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"), "nodeName");
    return cJSON_IsString(n) && n->valuestring[0] ? strdup(n->valuestring) : NULL;
}

static struct kube_informer *informer(struct watch *w, const char *path, const char *field_selector,
                                      kube_informer_project_fn project, struct cli_source *s, struct kube_err *e)
{
    struct kube_informer_opts o = {
        .path = path,
        .field_selector = field_selector,
        .project = project,
        .free_value = project ? free : NULL,
        .handlers = {on_add, on_update, on_delete, on_synced, on_log},
        .ud = w,
    };
    struct kube_informer *inf = kube_informer_new(&o, e);
    if (inf && kube_informer_start(inf, w->loop, s->client, e) < 0) {
        kube_informer_free(inf);
        return NULL;
    }
    return inf;
}

int cli_source_watch(struct cli_source *s, const char *name, bool with_vms, cli_source_draw_fn draw, void *ud,
                     char *err, size_t len)
{
    struct watch w = {.draw = draw, .ud = ud};
    struct kube_err e = {0};
    char *psir_path = kube_path(PSIR_GV, NULL, API_PLURAL, NULL, NULL),
         *vmi_path = kube_path(VMI_GV, NULL, VMI_RESOURCE, NULL, NULL);
    char selector[400] = "";
    if (name)
        snprintf(selector, sizeof(selector), "metadata.name=%s", name);
    int rc = -1;
    if (!psir_path || !vmi_path || !(w.loop = kube_loop_new(&e)) ||
        !(w.psirs = informer(&w, psir_path, name ? selector : NULL, NULL, s, &e)) ||
        (with_vms && !(w.vmis = informer(&w, vmi_path, NULL, vmi_node, s, &e)))) {
        snprintf(err, len, "cannot watch: %s", e.msg[0] ? e.msg : "out of memory");
        goto out;
    }
    signal_loop = w.loop;
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rc = kube_loop_run(w.loop, &e);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    signal_loop = NULL;
    if (rc < 0)
        snprintf(err, len, "watch failed: %s", e.msg);
out:
    kube_informer_free(w.vmis);
    kube_informer_free(w.psirs);
    kube_loop_free(w.loop);
    free(psir_path);
    free(vmi_path);
    return rc;
}
