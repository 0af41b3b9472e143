/* policyprobe: GET the admission policies and judge them (see policyprobe.h). */
#include "reconcile/policyprobe.h"

#include <stdlib.h>

const char *const policyprobe_machineconfig_mode[] = {POLICYGUARD_MACHINECONFIGS};
const size_t policyprobe_machineconfig_mode_n = 1;

const char *const policyprobe_all[] = {POLICYGUARD_MACHINECONFIGS, POLICYGUARD_NODE_TAINTS, POLICYGUARD_MOVES,
                                       POLICYGUARD_WRITERS};
const size_t policyprobe_all_n = 4;

/* A GET's answer: the object (owned) or the error. */
struct got {
    cJSON *obj;
    struct kube_err err;
};

/* GET one object into *g and describe it in *r (borrowing from *g). */
static void get_one(struct kube_client *c, const char *resource, const char *name, struct got *g,
                    struct policyguard_read *r)
{
    kube_err_clear(&g->err);
    char *path = kube_path(POLICYGUARD_API_VERSION, NULL, resource, name, NULL);
    if (!path)
        kube_err_set(&g->err, 0, "NoMemory", "out of memory");
    g->obj = path ? kube_rest_get(c, path, &g->err) : NULL;
    *r = (struct policyguard_read){g->obj, g->obj ? 0 : g->err.status, g->obj ? NULL : g->err.msg};
    free(path);
}

int policyprobe_check(struct kube_client *c, const char *const *names, size_t n, const char *what,
                      struct policyguard_result *out)
{
    struct policyguard_policy *p = calloc(n ? n : 1, sizeof(*p));
    struct got *got = calloc(n ? 2 * n : 1, sizeof(*got));
    if (!p || !got) {
        free(p);
        free(got);
        struct policyguard_read none = {NULL, 0, "out of memory"};
        struct policyguard_policy one = {names && n ? names[0] : "", none, none};
        policyguard_judge(&one, 1, what, out);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        p[i].name = names[i];
        get_one(c, "validatingadmissionpolicies", names[i], &got[2 * i], &p[i].policy);
        get_one(c, "validatingadmissionpolicybindings", names[i], &got[2 * i + 1], &p[i].binding);
    }
    policyguard_judge(p, n, what, out);
    for (size_t i = 0; i < 2 * n; i++)
        cJSON_Delete(got[i].obj);
    free(p);
    free(got);
    return 0;
}
