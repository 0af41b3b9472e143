/* psi_kubelet: the kubelet Summary API as a pressure source (KubeletPSI, beta and on by
 * default since Kubernetes 1.34).
 *
 * Per node, GET /api/v1/nodes/<name>/proxy/stats/summary through the API server (RBAC:
 * get on nodes/proxy), reading node.cpu.psi, node.memory.psi and node.io.psi, each
 * {"some": {...}, "full": {...}} with avg10, avg60, avg300 (percent) and total (the
 * kernel's stall time in microseconds). A node whose summary has no psi for a resource
 * (KubeletPSI off, or the kernel booted without psi=1) is Unknown for it.
 *
 * Window rule: the longest kernel average not longer than the window, so a sample never
 * averages over more time than asked: window >= 300 s -> avg300, >= 60 s -> avg60,
 * otherwise avg10 (the default 1m window reads avg60).
 *
 * Every node at once (kube_multiget: streams of one HTTP/2 connection to the API server),
 * at most PSI_KUBELET_IN_FLIGHT in flight, each with its own PSI_KUBELET_TIMEOUT_MS: a slow
 * or dead kubelet costs its own node a reading, not the others their time. A node the
 * source cannot read is Unknown, marked unread with its reason (psi_sample_node_unread) and
 * counted in psi_sample.n_node_errors: Timeout (no answer in time), SourceUnreachable
 * (proxy error, kubelet down), NotFound, MalformedReply (not a summary, a value outside
 * 0..100, another node's summary), PSIUnavailable (a summary without PSI for any requested
 * resource: KubeletPSI off, or the kernel booted without psi=1). The sample fails when the
 * API server answers 401 or 403 (Unauthorized, Forbidden: the operator's RBAC is wrong for
 * every node) or when no node at all could be read (the reason of the last failure). */
#ifndef PSI_PSI_KUBELET_H
#define PSI_PSI_KUBELET_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/multiget.h"
#include "psi/source.h"

struct kube_client;

/* Per request limits of the node summaries. */
#define PSI_KUBELET_TIMEOUT_MS 5000L
#define PSI_KUBELET_IN_FLIGHT 64
#define PSI_KUBELET_MAX_REPLY (8L * 1024 * 1024)

/* Which kernel average a window reads. */
enum psi_kubelet_avg { PSI_AVG10 = 0, PSI_AVG60 = 1, PSI_AVG300 = 2 };

/* The average for window_s (rule above). */
enum psi_kubelet_avg psi_kubelet_avg_for_window(long window_s);

/* The JSON field name of an average ("avg10", "avg60", "avg300"). */
const char *psi_kubelet_avg_name(enum psi_kubelet_avg a);

/* Read a Summary (pure): the PSI of the requested resources (PSI_RES_BIT set, 0: all), "full"
 * for those in full (PSI_RES_BIT set) and "some" for the others, for window into out[] (others
 * and absent ones Unknown). Returns 0, or -1 with a message in errbuf when summary is not a
 * summary object or a psi value is not a number in 0..100 (out[] is then all Unknown). */
int psi_kubelet_parse_summary(const cJSON *summary, unsigned resources, unsigned full, long window_s,
                              struct psi_value out[PSI_NRESOURCES], char *errbuf, size_t errlen);

/* Read a Summary's CPU utilisation (pure): node.cpu.usageNanoCores over cpus, in percent
 * (clamped to 100), into *out; Unknown when cpus <= 0 or the usage is absent or invalid. */
void psi_kubelet_parse_utilization(const cJSON *summary, double cpus, struct psi_value *out);

/* The API path of a node's summary: /api/v1/nodes/<name>/proxy/stats/summary (name
 * escaped). Caller frees; NULL on ENOMEM. */
char *psi_kubelet_summary_path(const char *node);

/* GET the summary of every node of nodes[0..n) at once with the limits above; fn gets
 * each (index into nodes) as it arrives. Returns 0, or -1 with err when the requests could
 * not run at all (kube_multiget). */
int psi_kubelet_fetch(struct kube_client *client, const char *const *nodes, size_t n, kube_multiget_fn fn, void *ud,
                      struct kube_err *err);

/* A kubelet source over client (borrowed: it must outlive the source); NULL with st failed
 * when out of memory. Free with psi_source_free. */
struct psi_source *psi_kubelet_source_new(struct kube_client *client, struct kube_err *st);

#endif
