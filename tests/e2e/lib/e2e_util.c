#include "e2e_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kube/config.h"
#include "kube/rest.h"

static int failures, passes;

void e2e_check(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s - ", ok ? "ok  " : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    if (ok)
        passes++;
    else
        failures++;
}

int e2e_report(void)
{
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}

struct kube_client *e2e_kube_client(const char *prog, const char *kubeconfig, struct kube_config **cfg)
{
    struct kube_err err;
    *cfg = NULL;
    if (kube_config_load(kubeconfig, NULL, cfg, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return NULL;
    }
    struct kube_client *c = kube_client_new(*cfg, &err);
    if (!c) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        kube_config_free(*cfg);
        *cfg = NULL;
    }
    return c;
}

int e2e_namespace_create(struct kube_client *c, const char *prefix, char *ns, size_t len)
{
    struct kube_err err;
    snprintf(ns, len, "%s-%d", prefix, (int)getpid());
    cJSON *body = cJSON_CreateObject();
    cJSON *md = NULL;
    if (!body || !cJSON_AddStringToObject(body, "apiVersion", "v1") ||
        !cJSON_AddStringToObject(body, "kind", "Namespace") || !(md = cJSON_AddObjectToObject(body, "metadata")) ||
        !cJSON_AddStringToObject(md, "name", ns)) {
        cJSON_Delete(body);
        e2e_check(0, "create namespace %s (out of memory)", ns);
        return -1;
    }
    cJSON *r = kube_rest_create(c, "/api/v1/namespaces", body, NULL, &err);
    int created = r != NULL;
    e2e_check(created, "create namespace %s (%s)", ns, created ? "" : err.msg);
    cJSON_Delete(r);
    cJSON_Delete(body);
    if (!created)
        return -1;
    /* kube-controller-manager fills a new namespace asynchronously (its "default"
     * ServiceAccount, which pods need, and the kube-root-ca.crt ConfigMap); on a loaded
     * machine that takes a while: wait for both, so tests see a namespace a user would. */
    char *sa = kube_path("v1", ns, "serviceaccounts", "default", NULL);
    char *ca = kube_path("v1", ns, "configmaps", "kube-root-ca.crt", NULL);
    int ready = 0;
    for (int i = 0; sa && ca && i < 480 && !ready; i++) {
        cJSON *x = kube_rest_get(c, sa, &err), *y = x ? kube_rest_get(c, ca, &err) : NULL;
        ready = x && y;
        cJSON_Delete(x);
        cJSON_Delete(y);
        if (!ready)
            usleep(250000);
    }
    free(sa);
    free(ca);
    e2e_check(ready, "namespace %s has its default ServiceAccount and kube-root-ca.crt", ns);
    return ready ? 0 : -1;
}

void e2e_namespace_delete(struct kube_client *c, const char *ns)
{
    struct kube_err err;
    char *p = kube_path("v1", NULL, "namespaces", ns, NULL);
    cJSON_Delete(kube_rest_delete(c, p, NULL, NULL, &err));
    free(p);
}
