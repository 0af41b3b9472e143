/* kubeletd: every simulated node's kubelet, as far as the Summary API goes.
 *
 * The API server reaches kubelets through its egress selector (the "cluster" egress of
 * hack/cluster/up: HTTP CONNECT over a Unix socket, as it would through Konnectivity), so no
 * node address is ever dialed. kubeletd listens on that socket: a CONNECT to a node's
 * InternalIP and status.daemonEndpoints.kubeletEndpoint.Port is answered 200 and the tunnel
 * then speaks TLS (a certificate for that address issued by the bed's CA, which the API
 * server checks with --kubelet-certificate-authority) and HTTP/1.1:
 *   GET /stats/summary    the node's Summary (summary.h) from the PSI model's numbers
 *   GET /healthz          ok
 * so that the real API server's node proxy (/api/v1/nodes/<node>/proxy/stats/summary)
 * reaches it. A CONNECT to any other address gets 502. The numbers come from telemetry's
 * tick (kubeletd_update, kubeletd_set_pods); a node named in the scenario's kubelet.noPsi
 * answers without psi (its pods' too), kubelet.podPsi false lists the pods without psi (a
 * kubelet before 1.34), one in kubelet.slow answers after kubelet.slowDelay. The TLS
 * handshake requires a client certificate signed by the bed's CA (the API server's
 * --kubelet-client-certificate); a real kubelet would also authorise its user with a
 * SubjectAccessReview, which this one does not. Thread-safe: one thread accepts the tunnels,
 * each tunnel has a thread until its CONNECT is answered, and then one psi_serve (httpd/
 * serve.h) that listens nowhere serves every node's connections, each with its node's
 * certificate; a slow kubelet's request is parked there until its delay has passed. The
 * state is guarded by a mutex. */
#ifndef PSI_SIM_KUBELETD_H
#define PSI_SIM_KUBELETD_H

#include <stdbool.h>
#include <stddef.h>

#include "hack/sim/sim.h"
#include "hack/sim/summary.h"

struct kubeletd;

/* New kubelets over s (borrowed) listening on the Unix socket path (a stale socket file is
 * replaced), their certificates issued by the CA at ca_cert / ca_key. NULL with why in err. */
struct kubeletd *kubeletd_new(struct sim *s, const char *path, const char *ca_cert, const char *ca_key, char *err,
                              size_t errlen);

/* Stop every server and free (NULL is fine). */
void kubeletd_free(struct kubeletd *k);

/* Start serving the simulated nodes not served yet (logged when a node cannot be). */
void kubeletd_sync(struct kubeletd *k);

/* A node's numbers over the last tick. */
struct kubeletd_update {
    bool psi;                                   /* PSI is on (the scenario's or the pool's psi=1) */
    double pressure[PSI_NRESOURCES][2];         /* percent, [resource][PSI_SOME, PSI_FULL] */
    double cpu_cores;                           /* CPU used */
    double memory_capacity, memory_working_set; /* bytes */
};

/* Advance node's state to now (monotonic seconds) with u's numbers; ignored for a node not
 * served. */
void kubeletd_update(struct kubeletd *k, const char *node, const struct kubeletd_update *u, double now);

/* Replace node's pods (copied, with their pressure's averages and totals). */
void kubeletd_set_pods(struct kubeletd *k, const char *node, const struct summary_pod *pods, size_t n);

#endif
