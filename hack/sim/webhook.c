/* webhook: the eviction interceptor over HTTPS (see webhook.h). */
#include "hack/sim/webhook.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/jx.h"
#include "hack/sim/admission.h"
#include "httpd/cert.h"
#include "httpd/serve.h"
#include "httpd/tls.h"
#include "kube/rest.h"
#include "base/logging.h"

#define WEBHOOK_PATH "/virt-launcher-eviction"
#define WEBHOOK_MIGRATION_PATH "/migration-validate-create"

struct webhook {
    struct kube_client *client;
    const struct scenario *sc;
    struct record *rec;
    struct psi_serve *srv;
    struct psi_tls *tls;
    pthread_mutex_t mu; /* one admission at a time: reads, decision and mark stay consistent */
    char name[128];     /* the ValidatingWebhookConfiguration */
    int registered;
};

static char *base64(const char *text)
{
    size_t n = strlen(text);
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)text, (int)n);
    return out;
}

/* Mark the VMI d names: status.evacuationNodeName (and eviction-source when the descheduler
 * asks), in dry run when req is. KubeVirt sets both in one JSON patch of the VMI (markVMI in
 * pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go), so the
 * evacuation controller never sees the mark without its source. The bed's VMI CRD serves
 * status as a subresource, so here they are two patches, the annotation first: a VMI marked
 * before its annotation arrived would have its migration queued at system-critical. */
static int mark(struct webhook *w, const char *ns, const struct admission_request *req,
                const struct admission_decision *d, char *why, size_t whylen)
{
    const char *vmi = d->vmi, *node = d->node;
    bool dry_run = req->dry_run;
    struct kube_err err = {0};
    if (!dry_run && admission_descheduler_eviction(req)) {
        cJSON *patch = cJSON_CreateObject();
        cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations"),
                                "kubevirt.io/eviction-source", "descheduler");
        char *vmi_path = kube_path("kubevirt.io/v1", ns, "virtualmachineinstances", vmi, NULL);
        cJSON *res = kube_rest_patch(w->client, vmi_path, KUBE_PATCH_MERGE, patch, NULL, &err);
        cJSON_Delete(patch);
        free(vmi_path);
        if (!res) {
            snprintf(why, whylen, "%s", err.msg);
            return -1;
        }
        cJSON_Delete(res);
    }
    char *base = kube_path("kubevirt.io/v1", ns, "virtualmachineinstances", vmi, "status");
    const char *q[] = {"dryRun", dry_run ? "All" : NULL, NULL};
    char *path = kube_path_query(base, q);
    free(base);
    cJSON *ops = cJSON_CreateArray();
    cJSON *op = cJSON_CreateObject();
    cJSON_AddStringToObject(op, "op", "add");
    cJSON_AddStringToObject(op, "path", "/status/evacuationNodeName");
    cJSON_AddStringToObject(op, "value", node);
    cJSON_AddItemToArray(ops, op);
    char *text = cJSON_PrintUnformatted(ops);
    cJSON_Delete(ops);
    cJSON *res =
        kube_rest_request(w->client, "PATCH", path, "application/json-patch+json", text, KUBE_REQUEST_WRITE, &err);
    free(text);
    free(path);
    if (!res) {
        snprintf(why, whylen, "%s", err.msg);
        return -1;
    }
    cJSON_Delete(res);
    return 0;
}

static void admit(struct webhook *w, const char *body, struct psi_serve_reply *reply)
{
    char why[512];
    log_debug("admission review", "body", body);
    cJSON *review = cJSON_Parse(body);
    struct admission_request req;
    if (!review || admission_parse_request(review, &req, why, sizeof(why)) < 0) {
        if (!review)
            snprintf(why, sizeof(why), "the body is not JSON");
        psi_serve_reply_text(reply, 400, NULL, why);
        cJSON_Delete(review);
        return;
    }
    const char *ns = req.ns ? req.ns : w->sc->namespace;
    struct kube_err err = {0};
    char *path = kube_path("v1", ns, "pods", req.pod, NULL);
    cJSON *pod = kube_rest_get(w->client, path, &err);
    free(path);
    struct admission_decision d;
    admission_decide(pod, NULL, NULL, w->sc->cluster_strategy, &d);
    cJSON *vmi = NULL;
    if (d.verdict != ADMISSION_ALLOW || d.vmi) {
        path = kube_path("kubevirt.io/v1", ns, "virtualmachineinstances", d.vmi, NULL);
        vmi = kube_rest_get(w->client, path, &err);
        free(path);
        admission_decide(pod, vmi, vmi ? NULL : err.msg, w->sc->cluster_strategy, &d);
    }
    const char *verdict = "allowed";
    if (d.verdict == ADMISSION_MARK) {
        verdict = "evacuation";
        if (mark(w, ns, &req, &d, why, sizeof(why)) < 0) {
            snprintf(d.message, sizeof(d.message), "kubevirt failed marking the vmi for eviction: %s", why);
            verdict = "denied";
        }
    } else if (d.verdict == ADMISSION_DENY) {
        verdict = strncmp(d.message, ADMISSION_IN_PROGRESS_PREFIX, strlen(ADMISSION_IN_PROGRESS_PREFIX)) == 0
                      ? "in-progress"
                      : "denied";
    }
    bool allowed = d.verdict == ADMISSION_ALLOW;
    log_info("eviction", "pod", req.pod, "namespace", ns, "vmi", d.vmi ? d.vmi : "", "verdict", verdict, "dry_run",
             req.dry_run ? "true" : "false", "message", allowed ? "" : d.message);
    record_add(w->rec, "eviction", "pod", req.pod, "namespace", ns, "vmi", d.vmi ? d.vmi : "", "node",
               jx_str0(pod, "spec.nodeName"), "verdict", verdict, "dryRun", req.dry_run ? "true" : "false",
               "requestedBy", req.requested_by ? req.requested_by : "", "message", allowed ? "" : d.message, NULL);
    snprintf(reply->content_type, sizeof(reply->content_type), "application/json");
    reply->body = admission_response(req.uid, allowed, 429, d.message);
    reply->len = reply->body ? strlen(reply->body) : 0;
    if (!reply->body)
        reply->status = 500;
    cJSON_Delete(pod);
    cJSON_Delete(vmi);
    cJSON_Delete(review);
}

/* A migration's creation: the VMI and the namespace's migrations, then admission.h's rules. */
static void admit_migration(struct webhook *w, const char *body, struct psi_serve_reply *reply)
{
    char why[512];
    cJSON *review = cJSON_Parse(body);
    struct admission_request req;
    if (!review || admission_parse_request(review, &req, why, sizeof(why)) < 0) {
        psi_serve_reply_text(reply, 400, NULL, review ? why : "the body is not JSON");
        cJSON_Delete(review);
        return;
    }
    const char *ns = req.ns ? req.ns : w->sc->namespace;
    struct kube_err err = {0};
    cJSON *vmi = NULL;
    char vmi_error[300] = "";
    if (req.vmi_name && *req.vmi_name) {
        char *path = kube_path("kubevirt.io/v1", ns, "virtualmachineinstances", req.vmi_name, NULL);
        vmi = kube_rest_get(w->client, path, &err);
        free(path);
        if (!vmi && err.status != 404)
            snprintf(vmi_error, sizeof(vmi_error), "%s", err.msg);
    }
    char *path = kube_path("kubevirt.io/v1", ns, "virtualmachineinstancemigrations", NULL, NULL);
    cJSON *list = kube_rest_get(w->client, path, &err);
    free(path);
    struct admission_migration_decision d;
    if (!list) {
        d.allowed = false;
        d.code = 400;
        snprintf(d.message, sizeof(d.message), "%s", err.msg);
    } else {
        admission_decide_migration(ns, req.vmi_name, vmi, *vmi_error ? vmi_error : NULL, jx_get(list, "items"), &d);
    }
    log_info("migration admission", "vmi", req.vmi_name ? req.vmi_name : "", "namespace", ns, "verdict",
             d.allowed ? "allowed" : "denied", "message", d.allowed ? "" : d.message);
    record_add(w->rec, "migration-admission", "vmi", req.vmi_name ? req.vmi_name : "", "namespace", ns, "verdict",
               d.allowed ? "allowed" : "denied", "dryRun", req.dry_run ? "true" : "false", "message",
               d.allowed ? "" : d.message, NULL);
    snprintf(reply->content_type, sizeof(reply->content_type), "application/json");
    reply->body = admission_response(req.uid, d.allowed, d.code, d.message);
    reply->len = reply->body ? strlen(reply->body) : 0;
    if (!reply->body)
        reply->status = 500;
    cJSON_Delete(list);
    cJSON_Delete(vmi);
    cJSON_Delete(review);
}

/* POST of the eviction interceptor's and the migration admitter's AdmissionReviews. */
static void on_eviction(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    struct webhook *w = ud;
    pthread_mutex_lock(&w->mu);
    admit(w, req->body, reply);
    pthread_mutex_unlock(&w->mu);
}

static void on_migration(const struct psi_serve_request *req, struct psi_serve_reply *reply, void *ud)
{
    struct webhook *w = ud;
    pthread_mutex_lock(&w->mu);
    admit_migration(w, req->body, reply);
    pthread_mutex_unlock(&w->mu);
}

/* One webhook of the configuration: CREATE of group/version resource in the scenario's
 * namespace, sent to url. */
static cJSON *hook(const struct webhook *w, const char *name, const char *url, const char *ca_b64, const char *group,
                   const char *resource)
{
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "name", name);
    cJSON *cc = cJSON_AddObjectToObject(h, "clientConfig");
    cJSON_AddStringToObject(cc, "url", url);
    cJSON_AddStringToObject(cc, "caBundle", ca_b64);
    cJSON *rule = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(rule, "operations"), cJSON_CreateString("CREATE"));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(rule, "apiGroups"), cJSON_CreateString(group));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(rule, "apiVersions"), cJSON_CreateString("v1"));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(rule, "resources"), cJSON_CreateString(resource));
    cJSON_AddStringToObject(rule, "scope", "Namespaced");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(h, "rules"), rule);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(h, "namespaceSelector"), "matchLabels"),
                            "kubernetes.io/metadata.name", w->sc->namespace);
    cJSON_AddStringToObject(h, "failurePolicy", "Fail");
    cJSON_AddStringToObject(h, "matchPolicy", "Equivalent");
    cJSON_AddStringToObject(h, "sideEffects", "NoneOnDryRun");
    cJSON_AddNumberToObject(h, "timeoutSeconds", 10);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(h, "admissionReviewVersions"), cJSON_CreateString("v1"));
    return h;
}

/* The configuration: the eviction interceptor and the migration create admitter, served at
 * base + their paths. */
static cJSON *configuration(const struct webhook *w, const char *base, const char *ca_b64)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", "admissionregistration.k8s.io/v1");
    cJSON_AddStringToObject(o, "kind", "ValidatingWebhookConfiguration");
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(md, "name", w->name);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "labels"), "sim.psi.dev/scenario", w->sc->name);
    cJSON *hooks = cJSON_AddArrayToObject(o, "webhooks");
    char url[300];
    snprintf(url, sizeof(url), "%s%s", base, WEBHOOK_PATH);
    cJSON_AddItemToArray(hooks, hook(w, ADMISSION_WEBHOOK_NAME, url, ca_b64, "", "pods/eviction"));
    snprintf(url, sizeof(url), "%s%s", base, WEBHOOK_MIGRATION_PATH);
    cJSON_AddItemToArray(hooks, hook(w, ADMISSION_MIGRATION_WEBHOOK_NAME, url, ca_b64, "kubevirt.io",
                                     "virtualmachineinstancemigrations"));
    return o;
}

/* "host:port", an IPv6 host in brackets. */
static void host_port(char *buf, size_t len, const char *host, int port)
{
    bool v6 = strchr(host, ':') != NULL;
    snprintf(buf, len, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

static int register_config(struct webhook *w, const char *host, const char *ca_pem, char *errbuf, size_t errlen)
{
    char hp[128], url[256];
    host_port(hp, sizeof(hp), host, psi_serve_port(w->srv));
    snprintf(url, sizeof(url), "https://%s", hp);
    char *ca_b64 = base64(ca_pem);
    cJSON *body = configuration(w, url, ca_b64 ? ca_b64 : "");
    free(ca_b64);
    struct kube_err err = {0};
    char *path = kube_path("admissionregistration.k8s.io/v1", NULL, "validatingwebhookconfigurations", w->name, NULL);
    /* replace a leftover from an earlier run (its port and CA are stale) */
    cJSON *old = kube_rest_delete(w->client, path, NULL, NULL, &err);
    cJSON_Delete(old);
    free(path);
    path = kube_path("admissionregistration.k8s.io/v1", NULL, "validatingwebhookconfigurations", NULL, NULL);
    cJSON *created = kube_rest_create(w->client, path, body, NULL, &err);
    free(path);
    cJSON_Delete(body);
    if (!created) {
        snprintf(errbuf, errlen, "registering the ValidatingWebhookConfiguration %s failed: %s", w->name, err.msg);
        return -1;
    }
    cJSON_Delete(created);
    w->registered = 1;
    log_info("eviction webhook registered", "name", w->name, "url", url);
    return 0;
}

struct webhook *webhook_start(const struct webhook_opts *opts, char *err, size_t errlen)
{
    struct webhook *w = calloc(1, sizeof(*w));
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    w->sc = opts->sc;
    w->rec = opts->rec;
    snprintf(w->name, sizeof(w->name), "psi-sim.%s", opts->sc->namespace);
    struct kube_err kerr = {0};
    w->client = kube_client_new(opts->cfg, &kerr);
    if (!w->client) {
        snprintf(err, errlen, "webhook client: %s", kerr.msg);
        webhook_free(w);
        return NULL;
    }
    kube_client_set_rate_limit(w->client, 0, 0);
    kube_client_set_timeout(w->client, 5000);
    const char *ips[] = {opts->host, NULL};
    const char *dns[] = {"localhost", NULL};
    struct cert_bundle cb;
    const struct cert_request req = {opts->ca_cert, opts->ca_key, "psi-sim-webhook", ips, dns, 30};
    if (cert_issue(&req, &cb, err, errlen) < 0) {
        webhook_free(w);
        return NULL;
    }
    char addr[128];
    host_port(addr, sizeof(addr), opts->host, opts->port);
    const struct psi_tls_options to = {.cert_pem = cb.cert_pem, .key_pem = cb.key_pem};
    if (!(w->tls = psi_tls_new(&to, err, errlen)) || !(w->srv = psi_serve_new(addr, err, errlen)) ||
        psi_serve_set_tls(w->srv, w->tls) < 0 || psi_serve_route(w->srv, "POST", WEBHOOK_PATH, on_eviction, w) < 0 ||
        psi_serve_route(w->srv, "POST", WEBHOOK_MIGRATION_PATH, on_migration, w) < 0 ||
        psi_serve_start(w->srv, err, errlen) < 0 || register_config(w, opts->host, cb.ca_pem, err, errlen) < 0) {
        cert_bundle_clear(&cb);
        webhook_free(w);
        return NULL;
    }
    cert_bundle_clear(&cb);
    return w;
}

int webhook_port(const struct webhook *w)
{
    return psi_serve_port(w->srv);
}

void webhook_free(struct webhook *w)
{
    if (!w)
        return;
    if (w->registered) {
        struct kube_err err = {0};
        char *path =
            kube_path("admissionregistration.k8s.io/v1", NULL, "validatingwebhookconfigurations", w->name, NULL);
        pthread_mutex_lock(&w->mu);
        cJSON *res = kube_rest_delete(w->client, path, NULL, NULL, &err);
        pthread_mutex_unlock(&w->mu);
        if (res)
            log_info("eviction webhook deregistered", "name", w->name);
        else
            log_warn("deregistering the eviction webhook failed", "name", w->name, "error", err.msg);
        cJSON_Delete(res);
        free(path);
    }
    psi_serve_free(w->srv);
    psi_tls_free(w->tls);
    kube_client_free(w->client);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
