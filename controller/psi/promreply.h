/* psi_promreply: read a Prometheus /api/v1/query reply without building a JSON tree.
 *
 * The reply is read once, front to back, from the buffered body or as it arrives (a
 * stream, below); only what the client
 * keeps is allocated: the envelope's strings (status, errorType, error, the first warning,
 * data.resultType, each cut to PSI_PROMREPLY_MAX_TEXT bytes) and the series of an instant
 * vector, with one allocation per series for all its labels. Memory is the series kept,
 * about the reply's size at most, instead of a JSON tree of every value (a 63 MiB reply of
 * tiny series took 1.38 GB as a cJSON tree). A reader that needs each series only once
 * reads the reply as a stream with a sink (below): the series are handed over as they are
 * read, and neither they nor the reply are kept whole.
 * Every member the client does not read is still checked as JSON and skipped.
 *
 * Bounds, each an error naming it: nesting deeper than PSI_PROMREPLY_MAX_DEPTH, more than
 * PSI_PROMREPLY_MAX_SERIES series or PSI_PROMREPLY_MAX_LABELS labels in one series, a
 * number longer than 64 characters where one is read. A string holding a NUL (\u0000)
 * is refused as no JSON a C string can hold.
 * Sample values are JSON strings in the Prometheus API (JSON has no NaN or Inf): a decimal
 * number as Go writes floats, or one of "NaN", "+Inf", "-Inf"; nothing else ("0x1p3",
 * "infinity", " 1") is a value. Pure. */
#ifndef PSI_PSI_PROMREPLY_H
#define PSI_PSI_PROMREPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "psi/prom.h"

#define PSI_PROMREPLY_MAX_DEPTH 64
/* 5,000 nodes (the supported size) with 10 pods each answer the usage query with about
 * 60,000 series, the pressure query with 4 per node (20,000); a quarter of a million
 * leaves room for two scrape jobs and busier nodes. */
#define PSI_PROMREPLY_MAX_SERIES 250000
#define PSI_PROMREPLY_MAX_LABELS 128
#define PSI_PROMREPLY_MAX_TEXT 1024

/* What a reply says. Strings are NULL when absent or not strings. */
struct psi_promreply {
    char *status;      /* "success" or "error" */
    char *error_type;  /* errorType */
    char *error;       /* error */
    char *warning;     /* the first of warnings[] */
    bool has_data;     /* data is an object */
    char *result_type; /* data.resultType */
    bool has_result;   /* data.result is there */
    /* Why data.result is no instant vector's result (e.g. "data.result is not an array",
     * "result[3] label \"a\" is not a string"), or "" when it is; the vector is then empty. */
    char result_problem[256];
    struct psi_prom_vector vector; /* data.result's series, when it is a vector's */
};

/* Where the series of an instant vector go when the reply is read as a stream (below),
 * instead of into out->vector: fn(ud, series) for each series, its labels valid until fn
 * returns. A series is handed over before the rest of the reply is read: when the read fails
 * or out->result_problem is set, what fn was given is to be thrown away. */
struct psi_promreply_sink {
    void (*fn)(void *ud, const struct psi_prom_series *series);
    void *ud;
};

/* Read body[0..len): 0 with out filled (free with psi_promreply_free) when it is JSON
 * within the bounds above, whatever its shape; otherwise out is left empty and why
 * (whylen bytes) says what and at which byte offset: -1 when it is not JSON, -2 when it
 * passes a bound (or memory ran out). */
int psi_promreply_read(const char *body, size_t len, struct psi_promreply *out, char *why, size_t whylen);

/* A reply read as it arrives, for a sink: each series is handed over once the text after it
 * shows it complete, and cut from what is kept, which is the text before data.result's first
 * series and after the last one handed: one or two PSI_PROMREPLY_STEPs, whatever the reply's
 * size. When four steps are kept and no series can be handed (a reply that is no instant
 * vector's, a series that long), the rest is kept whole and read once at the end, within the
 * caller's cap on the reply's size. The outcome is psi_promreply_read's on the whole reply,
 * the series going to the sink instead of out->vector:
 * the same series, result, errors and bounds (messages count the bytes and series of the
 * whole reply). The struct is the caller's: init, feed the bytes as they come, end, free. */
#define PSI_PROMREPLY_STEP ((size_t)16 << 10)

struct psi_promreply_stream {
    const struct psi_promreply_sink *sink;
    struct strbuf text; /* what is kept of the reply */
    size_t prefix;      /* text before the series (after data.result's '['), once series were cut */
    size_t dropped;     /* bytes of series cut from the text */
    size_t handed;      /* series handed to the sink */
    size_t step;        /* bytes between reads: PSI_PROMREPLY_STEP from init (tests take fewer) */
    size_t read_len;    /* the text's length when it was last read */
    bool whole;         /* no more cuts: the rest is kept whole */
};

/* Start a stream whose series go to sink (not NULL). */
void psi_promreply_stream_init(struct psi_promreply_stream *s, const struct psi_promreply_sink *sink);

/* The next n bytes of the reply; 0, or -1 when out of memory. */
int psi_promreply_stream_feed(struct psi_promreply_stream *s, const char *data, size_t n);

/* The reply has ended: read what is left; returns as psi_promreply_read (out->vector empty). */
int psi_promreply_stream_end(struct psi_promreply_stream *s, struct psi_promreply *out, char *why, size_t whylen);

/* Free what s holds (its sink stays the caller's). */
void psi_promreply_stream_free(struct psi_promreply_stream *s);

/* Free what out holds and empty it (NULL is fine). */
void psi_promreply_free(struct psi_promreply *out);

/* Parse a sample value as the Prometheus API writes it (above): 0 with *out, or -1. */
int psi_promreply_value(const char *s, double *out);

#endif
