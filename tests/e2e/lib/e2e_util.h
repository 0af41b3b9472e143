/* e2e_util: what the C end-to-end test programs share: checks counted and printed one a line
 * ("ok   - <what>" or "FAIL - <what>", flushed), the closing tally, and a Kubernetes client
 * and a namespace of their own on the test bed. */
#ifndef PSI_E2E_UTIL_H
#define PSI_E2E_UTIL_H

#include <stddef.h>

struct kube_client;
struct kube_config;

/* Print a check's line with the printf-formatted message and count it as passed or failed. */
void e2e_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "<n> passed, <m> failed"; returns the exit status: 1 after a failed check, else 0. */
int e2e_report(void);

/* A client over the config kube_config_load finds with kubeconfig (NULL: $KUBECONFIG or
 * in-cluster), the config in *cfg; NULL after printing "<prog>: <why>" on stderr. The caller
 * frees the client (kube_client_free), then *cfg (kube_config_free). */
struct kube_client *e2e_kube_client(const char *prog, const char *kubeconfig, struct kube_config **cfg);

/* Create the namespace "<prefix>-<pid>", its name written to ns (len bytes), as one check.
 * Returns 0, or -1 when it was not created. */
int e2e_namespace_create(struct kube_client *c, const char *prefix, char *ns, size_t len);

/* Delete the namespace ns (what the server answers is not checked). */
void e2e_namespace_delete(struct kube_client *c, const char *ns);

#endif
