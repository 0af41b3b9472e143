/* psi_metrics: a small registry of Prometheus metrics rendered in the text exposition
 * format 0.0.4 (Content-Type: text/plain; version=0.0.4; charset=utf-8).
 *
 * Families (counter, gauge, histogram) have fixed label names given at registration;
 * a series is addressed by its label values, an array in the order of the names (NULL
 * when the family has none; a NULL value is the empty string). Rendering writes
 * "# HELP" and "# TYPE" lines, then the series sorted by label values; label values are
 * escaped (\\ \" \n), HELP text too (\\ \n); values print in the shortest form that reads
 * back exactly, NaN and +Inf/-Inf as Prometheus spells them. A family without labels
 * always shows one series (0 until changed); a labelled family with no series shows
 * nothing. Histograms render cumulative _bucket{le=...} lines ending in le="+Inf", then
 * _sum and _count.
 *
 * Thread-safe: one mutex per registry guards every update and the rendering, so the
 * operator's loop updates while the HTTP thread renders. */
#ifndef PSI_HTTPD_METRICS_H
#define PSI_HTTPD_METRICS_H

#include <stddef.h>

struct psi_metrics;
struct psi_metric;

/* A new empty registry; NULL when out of memory. Free with psi_metrics_free. */
struct psi_metrics *psi_metrics_new(void);

/* Free a registry and all its families (NULL is fine). */
void psi_metrics_free(struct psi_metrics *m);

/* Register a counter; labels is a NULL-terminated list of label names (or NULL). Returns
 * the family (owned by m), or NULL when a name is invalid, the metric name is taken, or
 * out of memory. */
struct psi_metric *psi_metrics_counter(struct psi_metrics *m, const char *name, const char *help,
                                       const char *const *labels);

/* Register a gauge (as psi_metrics_counter). */
struct psi_metric *psi_metrics_gauge(struct psi_metrics *m, const char *name, const char *help,
                                     const char *const *labels);

/* Register a histogram with n upper bounds (finite, strictly increasing; +Inf is added);
 * labels must not include "le". NULL on any invalid argument. */
struct psi_metric *psi_metrics_histogram(struct psi_metrics *m, const char *name, const char *help,
                                         const double *buckets, size_t n, const char *const *labels);

/* Counter: add delta (>= 0) to the series of values. Returns 0, -1 on a wrong family type,
 * a negative or NaN delta, or out of memory. */
int psi_metric_inc(struct psi_metric *f, const char *const *values, double delta);

/* Gauge: set the series of values to v. Returns 0 or -1 (wrong type, out of memory). */
int psi_metric_set(struct psi_metric *f, const char *const *values, double v);

/* Histogram: observe v in the series of values. Returns 0 or -1. */
int psi_metric_observe(struct psi_metric *f, const char *const *values, double v);

/* Remove the series of values (e.g. a node that left). Returns 0, -1 when absent. */
int psi_metric_remove(struct psi_metric *f, const char *const *values);

/* A family rebuilt from the current state, cycle after cycle (e.g. one series per node),
 * without freeing and allocating again the series that stay: psi_metric_begin marks every
 * series stale; an inc, set or observe makes its series live again; psi_metric_sweep
 * removes those still stale (an unlabelled family goes back to 0). Begin then sweep
 * removes every series. */
void psi_metric_begin(struct psi_metric *f);
void psi_metric_sweep(struct psi_metric *f);

/* Counter or gauge value of a series (a histogram's count), or NaN when absent. */
double psi_metric_value(struct psi_metric *f, const char *const *values);

/* Render the registry. Returns text the caller frees (*len set when len is non-NULL), NULL
 * when out of memory. */
char *psi_metrics_render(struct psi_metrics *m, size_t *len);

/* Format v as the exposition format does into buf (at least 32 bytes); returns buf. */
const char *psi_metrics_format_value(double v, char *buf, size_t len);

/* Exposition text being written, for a caller that renders metrics of its own in this
 * format: zero-initialise it, append, then take the text with psi_metrics_text_finish. d holds
 * len bytes and a NUL; oom is set when memory ran out (appends then do nothing). */
struct psi_metrics_text {
    char *d;
    size_t len, cap;
    int oom;
};

/* Append n bytes of s. */
void psi_metrics_text_add(struct psi_metrics_text *t, const char *s, size_t n);

/* Append the string s. */
void psi_metrics_text_str(struct psi_metrics_text *t, const char *s);

/* Append s escaped as a label value (\\ \" \n), without the quotes around it. */
void psi_metrics_text_label_value(struct psi_metrics_text *t, const char *s);

/* Append a family's "# HELP name help" (help escaped) and "# TYPE name type" lines. */
void psi_metrics_text_family(struct psi_metrics_text *t, const char *name, const char *type, const char *help);

/* Append v as psi_metrics_format_value formats it. */
void psi_metrics_text_value(struct psi_metrics_text *t, double v);

/* The text written (the caller frees it; *len set when len is non-NULL), or NULL, everything
 * freed, when memory ran out. t is not used again. */
char *psi_metrics_text_finish(struct psi_metrics_text *t, size_t *len);

/* The Content-Type of psi_metrics_render's output. */
#define PSI_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
