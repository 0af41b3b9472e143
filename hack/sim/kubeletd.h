/* kubeletd: every simulated node's kubelet, as far as the Summary API goes.
 *
 * For each simulated node whose InternalIP is a loopback address (127.0.0.0/8) and whose
 * status.daemonEndpoints.kubeletEndpoint.Port is set (hack/cluster/up makes them so), an
 * HTTPS server on that address and port (httpsd, a certificate for the address issued by
 * the bed's CA, which the API server checks with --kubelet-certificate-authority) answers
 *   GET /stats/summary    the node's Summary (summary.h) from the PSI model's numbers
 *   GET /healthz          ok
 * so that the real API server's node proxy (/api/v1/nodes/<node>/proxy/stats/summary)
 * reaches it. The numbers come from telemetry's tick (kubeletd_update, kubeletd_set_pods);
 * a node named in the scenario's kubelet.noPsi answers without psi, one in kubelet.slow
 * answers after kubelet.slowDelay. The client certificate the API server presents is not
 * checked (a real kubelet authenticates and authorises it). Thread-safe: the servers run in
 * their own threads; the state is guarded by a mutex. */
#ifndef PSI_SIM_KUBELETD_H
#define PSI_SIM_KUBELETD_H

#include <stdbool.h>
#include <stddef.h>

#include "sim.h"
#include "summary.h"

struct kubeletd;

/* New kubelets over s (borrowed), their certificates issued by the CA at ca_cert / ca_key.
 * NULL when out of memory. */
struct kubeletd *kubeletd_new(struct sim *s, const char *ca_cert, const char *ca_key);

/* Stop every server and free (NULL is fine). */
void kubeletd_free(struct kubeletd *k);

/* Start serving the simulated nodes not served yet (logged when a node cannot be). */
void kubeletd_sync(struct kubeletd *k);

/* A node's numbers over the last tick. */
struct kubeletd_update {
    bool psi;                          /* PSI is on (the scenario's or the pool's psi=1) */
    double pressure[PSI_NRESOURCES][2]; /* percent, [resource][PSI_SOME, PSI_FULL] */
    double cpu_cores;                  /* CPU used */
    double memory_capacity, memory_working_set; /* bytes */
};

/* Advance node's state to now (monotonic seconds) with u's numbers; ignored for a node not
 * served. */
void kubeletd_update(struct kubeletd *k, const char *node, const struct kubeletd_update *u, double now);

/* Replace node's pods (copied). */
void kubeletd_set_pods(struct kubeletd *k, const char *node, const struct summary_pod *pods, size_t n);

/* Nodes served. */
size_t kubeletd_count(const struct kubeletd *k);

#endif
