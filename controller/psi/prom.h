/* psi_prom: Prometheus / Thanos querier as a pressure source, and a general instant-query
 * client others reuse (e.g. per-VM CPU usage for rebalancing).
 *
 * One instant query per cycle for all nodes and every requested resource. Each rate keeps
 * only the two labels that name a node (`max by (node, instance)`: a node exporter's series
 * carry job, pod, namespace, service... which would make the reply four times larger), is
 * tagged with a label psi_resource by label_replace, and the resources are joined with `or`
 * (their label sets differ by that label, so `or` keeps all):
 *   label_replace(max by (node, instance) (rate(node_pressure_cpu_waiting_seconds_total[60s])),
 *                 "psi_resource", "cpu", "", "")
 *   or label_replace(max by (node, instance) (rate(node_pressure_memory_waiting_seconds_total[60s])), ...)
 *   or label_replace(max by (node, instance) (rate(node_pressure_io_waiting_seconds_total[60s])), ...)
 * ("full" uses the *_stalled_seconds_total counters). The counters are seconds stalled
 * per second, so percent = 100 * rate; the factor is applied here, not in PromQL.
 *
 * Series to node (first rule that names a requested node wins):
 *   1. a `node` label equal to the node's name;
 *   2. `instance` equal to the node's name, with or without ":port";
 *   3. `instance`'s host (":port" and IPv6 brackets removed) equal to one of the node's
 *      InternalIPs.
 * A node that no series names is Unknown. Several series for one node and resource (two
 * scrape jobs, say) give the largest value (PromQL's max where they share node and instance,
 * which passes over a NaN beside a number). A NaN, Inf or negative value of a requested node
 * fails the sample with InvalidValue (that node stays Unknown); values of other series are
 * not looked at. Percents are clamped to 0..100 (rate() extrapolation).
 *
 * Transport: a libcurl easy handle (HTTP GET <url>/api/v1/query?query=...), connect and
 * total timeouts, a reply size cap. What it trusts and which token it sends is promauth.h's:
 * TLS peer and host verification always on for https (the caFile alone, or the service CA
 * beside the ServiceAccount token plus the system trust store, re-read when they change);
 * the token of the pressure-reading ServiceAccount, or of a file, or none; never a token over
 * plain http:// unless asked by name. A 401 or 403 says whose token was refused and which
 * role it needs. A client is not thread-safe and runs one query at a time. Replies are read
 * without a JSON tree, within the bounds of promreply.h, and capped at 32 MiB (what a
 * cluster of 5,000 nodes answers, twice over). The pressure query's reply is read as it
 * arrives (promreply.h's stream), each series going into the sample: a cycle holds a step of
 * its text (16 KiB) and the sample, not the reply. */
#ifndef PSI_PSI_PROM_H
#define PSI_PSI_PROM_H

#include <stddef.h>

#include <curl/curl.h>

#include "psi/promauth.h"
#include "psi/source.h"

/* Client settings; strings are copied by psi_prom_new (see promauth.h for the credential
 * and trust fields). */
struct psi_prom_config {
    const char *url;                          /* base URL, e.g. https://thanos-querier.openshift-monitoring.svc:9091 */
    const char *token_file;                   /* bearer token file, or NULL for none (unused with token_fn) */
    const char *ca_file;                      /* CA bundle (PEM) trusted alone for https, or NULL */
    long connect_timeout_ms;                  /* 0: 5000 */
    long timeout_ms;                          /* whole request; 0: 15000 */
    const char *service_ca_file;              /* with ca_file NULL: trusted when present, plus the system's */
    const struct psi_prom_token_fn *token_fn; /* the token to send, or NULL */
    const char *own_token_file, *own_token;   /* the operator's own API token: never sent */
    int plain_http_token;                     /* a token may go over http:// */
    const char *const *file_roots;            /* where token_file and ca_file may be, or NULL: the
                                                 allowed roots of psi/specfile.h (borrowed) */
};

/* One label of a series. */
struct psi_prom_label {
    char *name;
    char *value;
};

/* One series of an instant vector: labels, the sample value and its timestamp (s). In a
 * vector from a reply, labels and all their strings are one allocation. */
struct psi_prom_series {
    struct psi_prom_label *labels;
    size_t n_labels;
    double value; /* NaN and +/-Inf are kept as such */
    double timestamp;
};

/* An instant vector; warning is the first of the reply's warnings (Thanos partial
 * responses), or NULL. Free the contents with psi_prom_vector_free. */
struct psi_prom_vector {
    struct psi_prom_series *series;
    size_t n;
    char *warning;
};

struct psi_prom;

/* New client for cfg. Returns NULL with st failed (SourceConfigError) on a bad URL or no
 * memory. Free with psi_prom_free. */
struct psi_prom *psi_prom_new(const struct psi_prom_config *cfg, struct kube_err *st);

/* Free a client (NULL is fine). */
void psi_prom_free(struct psi_prom *p);

/* The query endpoint URL (base + /api/v1/query); points into p. */
const char *psi_prom_endpoint(const struct psi_prom *p);

/* An instant query (on an event loop, e.g. kube_loop): set up p's easy handle for promql and return it
 * (owned by p; the caller runs it, e.g. kube_loop_add), or NULL with st failed. */
CURL *psi_prom_query_start(struct psi_prom *p, const char *promql, struct kube_err *st);

/* Finish a transfer started by psi_prom_query_start, given its result code: fills out (caller
 * frees with psi_prom_vector_free) and returns 0, or returns -1 with st failed (out left
 * empty). */
int psi_prom_query_finish(struct psi_prom *p, CURLcode rc, struct psi_prom_vector *out, struct kube_err *st);

/* Parse a /api/v1/query reply (pure): body of len bytes, the HTTP status, url naming the
 * request in messages. Returns 0 with out filled, or -1 with st failed:
 * Unauthorized (401), Forbidden (403), QueryError (status "error": errorType and error;
 * or a result type other than vector), NotFound (404), SourceUnreachable (502/503/504
 * that are no Prometheus error), UnexpectedStatus (other non-2xx), MalformedReply. */
int psi_prom_parse_reply(const char *body, size_t len, long http_status, const char *url, struct psi_prom_vector *out,
                         struct kube_err *st);

/* Free the contents of v (NULL is fine). */
void psi_prom_vector_free(struct psi_prom_vector *v);

/* The value of label name in s, or NULL. */
const char *psi_prom_label_get(const struct psi_prom_series *s, const char *name);

/* The one query of a cycle for req: the PSI of req's resources (PSI_RES_BIT set, 0: all),
 * "full" (node_pressure_<r>_stalled_seconds_total) for those in req->full and "some"
 * (..._waiting_seconds_total) for the others, rated over req->window_s (at least 1), and,
 * when req->utilization is set, each node's CPU utilisation
 * (1 - the mean idle rate of node_cpu_seconds_total). Each part is tagged with a label
 * psi_resource (cpu, memory, io, utilization) by label_replace and joined with `or`.
 * Caller frees; NULL on ENOMEM. */
char *psi_prom_psi_query(const struct psi_request *req);

/* Index of the node among nodes[0..n) that series s belongs to (rules above), or -1. */
long psi_prom_match_node(const struct psi_prom_series *s, const struct psi_node_desc *nodes, size_t n);

/* Fill out (prepared by psi_sample_init for req) from the reply to psi_prom_psi_query
 * (pure; body, len, http_status and url as psi_prom_parse_reply's). The series are not kept:
 * each goes into its node's values as it is read (a sink, promreply.h), so that a cycle holds
 * the reply's text and the sample, not the series too. Returns 0, or -1 with out->status
 * failed as psi_prom_parse_reply fails, or InvalidValue; the values of a failed sample are
 * not to be used. */
int psi_prom_read_sample(const char *body, size_t len, long http_status, const char *url, const struct psi_request *req,
                         struct psi_sample *out);

/* Non-blocking pressure read (e.g. in kube_loop): set up p's easy handle for req's query
 * (psi_prom_psi_query), the reply read into out as it arrives, and return the handle (owned by
 * p; the caller runs it). req is copied; out, prepared by psi_sample_init for req, is the
 * caller's and must stay until psi_prom_sample_finish. NULL with out->status failed. A read
 * started before and never finished is dropped. */
CURL *psi_prom_sample_start(struct psi_prom *p, const struct psi_request *req, struct psi_sample *out);

/* Finish the read psi_prom_sample_start began, given its transfer's result code: returns 0, or
 * -1 with out->status failed, as a source's sample does (-1 too when no read was begun). */
int psi_prom_sample_finish(struct psi_prom *p, CURLcode rc);

#endif
