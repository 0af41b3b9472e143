/* servicemonitor: the operator's own ServiceMonitor made to name the metrics Service in the
 * namespace the operator runs in.
 *
 * Prometheus verifies the metrics endpoint's certificate for the ServiceMonitor's
 * tlsConfig.serverName. The certificate OpenShift's service CA issues names only
 * <service>.<namespace>.svc and <service>.<namespace>.svc.cluster.local, and neither OLM nor the
 * Prometheus Operator rewrites a serverName, so a ServiceMonitor shipped for one namespace
 * fails every scrape in another. At the start of leading, the operator reads its ServiceMonitor
 * (in its own namespace, by name) and, where a serverName names a Service in another
 * namespace, points it at its own. */
#ifndef PSI_SERVICEMONITOR_H
#define PSI_SERVICEMONITOR_H

#include <cjson/cJSON.h>

#include "kube/rest.h"

/* The ServiceMonitor the manifests ship (config/prometheus, bundle/). */
#define SERVICEMONITOR_NAME "psi-rebalancer"

/* The JSON patch (RFC 6902: a test of each old value, then its replacement) that makes every
 * endpoint's tlsConfig.serverName of sm of the form <service>.<namespace>.svc[.<domain>] name
 * namespace ns instead; other serverNames are left as they are. NULL when nothing is to change
 * (or no memory: *changed is then -1); *changed gets the number of serverNames changed. Pure. */
cJSON *servicemonitor_patch(const cJSON *sm, const char *ns, int *changed);

/* Read ServiceMonitor name in ns and patch it as servicemonitor_patch says. Returns 1 when it
 * was patched, 0 when nothing had to change or it cannot be had here (no such object, no
 * monitoring.coreos.com API, no right to read it: logged, not an error), -1 with err when
 * reading or writing it failed otherwise. */
int servicemonitor_follow(struct kube_client *c, const char *ns, const char *name, struct kube_err *err);

#endif
