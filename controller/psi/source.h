/* psi_source: what every pressure source answers, and the interface the kubelet source
 * implements (psi_source_sample). The Prometheus read answers the same on the operator's event
 * loop instead (prom.h: psi_prom_sample_start, then _finish when the transfer ends).
 *
 * A source is asked for a set of node descriptors (name, InternalIPs, CPUs), the resources
 * wanted, "some" or "full" for each, a window, and whether CPU utilisation is wanted too; it
 * answers a psi_sample: per node (in the order of the descriptors) the pressure percent
 * 0..100 of cpu, memory and io and the CPU utilisation percent, each known or Unknown, plus
 * an overall status. A node for which the source has no series is Unknown,
 * never zero. A failed status carries a reason fit for a metav1.Condition (the
 * PSI_REASON_* strings below) and a message naming the URL and why; the operator sets
 * MetricsAvailable=False with them and holds every taint as it is. Node values that were
 * read before the failure may still be filled in (e.g. InvalidValue makes only the
 * offending node Unknown), but a caller should act on none of them when it failed.
 * The status is the project's error record, struct kube_err (base/failure.h): its reason is
 * the condition reason, psi_fail fills it. */
#ifndef PSI_PSI_SOURCE_H
#define PSI_PSI_SOURCE_H

#include <stddef.h>

#include "api/pressure.h"
#include "api/reasons.h"
#include "base/err.h"

/* Condition reasons of a failed sample. */
#define PSI_REASON_UNREACHABLE API_REASON_SOURCE_UNREACHABLE
#define PSI_REASON_TLS API_REASON_TLS_ERROR
#define PSI_REASON_UNAUTHORIZED API_REASON_UNAUTHORIZED
#define PSI_REASON_FORBIDDEN API_REASON_FORBIDDEN
#define PSI_REASON_NOT_FOUND API_REASON_NOT_FOUND
#define PSI_REASON_BAD_STATUS API_REASON_UNEXPECTED_STATUS
#define PSI_REASON_MALFORMED API_REASON_MALFORMED_REPLY
#define PSI_REASON_INVALID API_REASON_INVALID_VALUE
#define PSI_REASON_QUERY API_REASON_QUERY_ERROR
#define PSI_REASON_CONFIG API_REASON_SOURCE_CONFIG_ERROR
#define PSI_REASON_TIMEOUT API_REASON_TIMEOUT
#define PSI_REASON_NO_PSI API_REASON_PSI_UNAVAILABLE
#define PSI_REASON_CREDENTIAL API_REASON_CREDENTIAL_UNAVAILABLE

/* One pressure value: known (percent 0..100) or Unknown (known == 0). */
struct psi_value {
    int known;
    double percent;
};

/* A node to sample: its name and InternalIP addresses (both borrowed), and its CPUs (the
 * capacity; 0 when unknown), which turn the kubelet's CPU usage into utilisation. */
struct psi_node_desc {
    const char *name;
    const char *const *internal_ips;
    size_t n_ips;
    double cpus;
};

/* What to sample. */
struct psi_request {
    const struct psi_node_desc *nodes; /* borrowed */
    size_t n_nodes;
    unsigned resources; /* PSI_RES_BIT set; 0 means all */
    unsigned full;      /* PSI_RES_BIT set of the resources read as "full"; the others "some" */
    long window_s;      /* averaging window in seconds (rate window, kernel average) */
    int utilization;    /* also read each node's CPU utilisation */
};

/* Per node: the pressure of each resource (Unknown when not requested or not found) and the
 * CPU utilisation, percent of the node's CPUs busy (Unknown unless requested and found). */
struct psi_node_sample {
    char *name; /* owned by the sample */
    struct psi_value value[PSI_NRESOURCES];
    struct psi_value utilization;
    const char *unread; /* why the source could not read the node (a PSI_REASON_*), or NULL */
};

/* A sample: one entry per requested node, in request order, and the overall status. */
struct psi_sample {
    struct psi_node_sample *nodes;
    size_t n_nodes;
    struct kube_err status;
    size_t n_node_errors; /* nodes the source failed to read while the sample stayed ok */
    char node_error[512]; /* the first of those errors, for a log line */
};

/* A source: an implementation behind function pointers. */
struct psi_source {
    const char *name; /* "Prometheus", "Kubelet" */
    /* Fill out (initialised by the caller with psi_sample_init) for req; returns 0 when
     * out->status is ok, -1 when failed. */
    int (*sample)(struct psi_source *src, const struct psi_request *req, struct psi_sample *out);
    /* Free the implementation (may be NULL). */
    void (*free)(struct psi_source *src);
    void *impl;
};

/* Set st to failed with reason (a PSI_REASON_*: the condition's) and a printf-formatted
 * message (at most 1023 bytes, control and non-ASCII bytes replaced by '?': it may carry parts
 * of a server's reply); returns -1. */
int psi_fail(struct kube_err *st, const char *reason, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prepare out for req: one Unknown entry per node (names copied), status ok. Returns 0, or
 * -1 (status failed) when out of memory. Free with psi_sample_free. */
int psi_sample_init(struct psi_sample *out, const struct psi_request *req);

/* Free the contents of a sample (the struct itself is the caller's). */
void psi_sample_free(struct psi_sample *s);

/* Record a per-node read error that left the node Unknown (keeps the first message). */
void psi_sample_node_error(struct psi_sample *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Mark node i unread for reason (a PSI_REASON_* string) and record the printf-formatted
 * message as psi_sample_node_error does. */
void psi_sample_node_unread(struct psi_sample *s, size_t i, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Describe the unread nodes into buf: "<n> unread: <node> (<reason>), ..." with as many as
 * fit (then ", ..."); "" when none. Returns buf. */
char *psi_sample_unread_text(const struct psi_sample *s, char *buf, size_t len);

/* Sample through src: psi_sample_init then src->sample. Returns 0 or -1 (out->status). */
int psi_source_sample(struct psi_source *src, const struct psi_request *req, struct psi_sample *out);

/* A source named name (static) over impl with the given functions (free may be NULL). Returns
 * it, or NULL with st failed (SourceConfigError) when out of memory; impl stays the caller's
 * then. Free with psi_source_free. */
struct psi_source *psi_source_new(const char *name,
                                  int (*sample)(struct psi_source *, const struct psi_request *, struct psi_sample *),
                                  void (*free_impl)(struct psi_source *), void *impl, struct kube_err *st);

/* Free a source made by a psi_*_source_new (NULL is fine). */
void psi_source_free(struct psi_source *src);

/* Check a measured percent: NaN, Inf or negative (beyond -1e-6 rounding) is invalid (returns
 * -1); otherwise it is
 * clamped to 0..100 (a rate() extrapolates and may overshoot a little) into *out. */
int psi_percent_check(double v, double *out);

/* Write a printf-formatted message into errbuf (nothing when errbuf is NULL or errlen 0);
 * returns -1. For the parsers that report into a caller's buffer. */
int psi_errbuf_fail(char *errbuf, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
