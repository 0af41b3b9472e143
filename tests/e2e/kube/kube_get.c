/* kube_get: GET an API path with the config kube_config_load finds (flags, $KUBECONFIG,
 * in-cluster, ~/.kube/config) and print one line per request:
 *   "OK <source> <status-free summary>" or "ERR <status> <reason> <message>".
 *
 *   kube_get [--kubeconfig PATH] [--context NAME] [--rotate NEWTOKEN TOKENFILE] PATH...
 *
 * --rotate: after the first request, atomically replace TOKENFILE with the content of
 * NEWTOKEN (as the kubelet rotates a projected token) before the following ones, in the
 * same process and with the same client. Exit status: 0 when the last request succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/config.h"
#include "kube/rest.h"

static int copy_atomically(const char *from, const char *to)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", to);
    FILE *in = fopen(from, "rb"), *out = fopen(tmp, "wb");
    if (!in || !out) {
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return -1;
    }
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        fwrite(buf, 1, n, out);
    fclose(in);
    if (fclose(out))
        return -1;
    return rename(tmp, to);
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *context = NULL, *new_token = NULL, *token_file = NULL;
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--kubeconfig") && i + 1 < argc)
            kubeconfig = argv[++i];
        else if (!strcmp(argv[i], "--context") && i + 1 < argc)
            context = argv[++i];
        else if (!strcmp(argv[i], "--rotate") && i + 2 < argc) {
            new_token = argv[++i];
            token_file = argv[++i];
        } else {
            fprintf(stderr, "kube_get: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    struct kube_err err;
    struct kube_config *cfg = NULL;
    if (kube_config_load(kubeconfig, context, &cfg, &err)) {
        printf("CONFIG-ERR %s\n", err.msg);
        return 3;
    }
    printf("CONFIG %s %s\n", cfg->source, kube_config_server(cfg));
    struct kube_client *c = kube_client_new(cfg, &err);
    if (!c) {
        printf("CONFIG-ERR %s\n", err.msg);
        kube_config_free(cfg);
        return 3;
    }
    int rc = 0;
    for (int first = 1; i < argc; i++, first = 0) {
        if (!first && new_token) {
            if (copy_atomically(new_token, token_file)) {
                perror("kube_get: rotating the token");
                rc = 2;
                break;
            }
            new_token = NULL;
        }
        cJSON *r = kube_rest_get(c, argv[i], &err);
        if (r) {
            const cJSON *kind = cJSON_GetObjectItemCaseSensitive(r, "kind");
            printf("OK %s %s\n", argv[i], cJSON_IsString(kind) ? kind->valuestring : "?");
            rc = 0;
        } else {
            printf("ERR %ld %s %s\n", err.status, err.reason, err.msg);
            rc = 1;
        }
        fflush(stdout);
        cJSON_Delete(r);
    }
    kube_client_free(c);
    kube_config_free(cfg);
    return rc;
}
