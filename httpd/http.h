/* psi_http: reading an HTTP/1.1 request head (the request line and the header fields), as
 * pure functions over a buffer, for psi_serve.
 *
 * The head is parsed in place: psi_http_parse_head writes NULs into the buffer and the
 * parsed fields point into it, so they live as long as the buffer is not reused. Only
 * what the server acts on is kept: method, path (percent-decoded), raw query, the body's
 * framing (Content-Length, Transfer-Encoding), Connection, Expect and a bearer token.
 * Anything ambiguous that could smuggle a second request past the framing (both
 * Content-Length and Transfer-Encoding, two different lengths, a folded header line, a
 * space before the colon) is a 400. */
#ifndef PSI_HTTPD_HTTP_H
#define PSI_HTTPD_HTTP_H

#include <stddef.h>

/* What a request head says. Strings point into the parsed buffer. */
struct psi_http_head {
    const char *method;       /* as sent, e.g. "GET" */
    const char *path;         /* percent-decoded, starts with '/' */
    const char *query;        /* after '?', still encoded; "" when none */
    const char *bearer;       /* the token of "Authorization: Bearer <token>"; "" when none */
    int minor;                /* HTTP/1.<minor> */
    long long content_length; /* -1 when absent */
    int chunked;              /* Transfer-Encoding present (chunked is the only one HTTP/1.1 defines) */
    int keep_alive;           /* the connection may carry another request after this one */
    int expect_continue;      /* "Expect: 100-continue" */
};

/* Where the head ends in buf[0..len): the offset just past the blank line ("\r\n\r\n"),
 * or 0 when it has not been received in full. Searching starts at from (bytes before it
 * were searched already; pass 0 the first time). */
size_t psi_http_head_end(const char *buf, size_t len, size_t from);

/* The status for a head that does not fit in a buffer of len bytes (buf full, no end
 * found): 414 when the request line alone fills it, 431 when the header fields do. */
int psi_http_overflow_status(const char *buf, size_t len);

/* Parse the head in buf[0..len) (len from psi_http_head_end) in place into h. Returns 0,
 * or the status to answer with: 400 (malformed), 501 (a transfer coding other than
 * chunked), 505 (not HTTP/1.x). */
int psi_http_parse_head(char *buf, size_t len, struct psi_http_head *h);

/* The reason phrase of a status code ("OK", "Not Found", ...; "Unknown" otherwise). */
const char *psi_http_reason(int status);

#endif
