/* kube_framing: newline-delimited JSON framing of a watch stream.
 *
 * The API server writes one JSON object per line ("\n"-terminated). Bytes are fed
 * in arbitrary chunks (as libcurl delivers them); whole lines come out. A line is
 * split only on the byte 0x0A, which never occurs inside a multibyte UTF-8
 * sequence, so a chunk boundary anywhere (inside a sequence too) is harmless.
 * A trailing "\r" is dropped (CRLF tolerated); lines that are empty or only
 * whitespace are skipped. A line longer than the bound (KUBE_FRAMING_DEFAULT_MAX,
 * 16 MiB, when 0 is given) is an error: the stream can no longer be trusted and
 * the caller must drop it (the watch reconnects). */
#ifndef PSI_KUBE_FRAMING_H
#define PSI_KUBE_FRAMING_H

#include <stddef.h>

#include "base/err.h"

#define KUBE_FRAMING_DEFAULT_MAX ((size_t)16 << 20)

struct kube_framing;

/* Called once per complete line: line is NUL-terminated (line[len] == 0), without
 * its line ending, valid only during the call. Return 0 to go on, non-zero to stop
 * feeding (kube_framing_feed then returns that value). */
typedef int (*kube_framing_line_fn)(const char *line, size_t len, void *ud);

/* A new framer with a maximum line length (0: KUBE_FRAMING_DEFAULT_MAX); NULL when out of
 * memory. Free with kube_framing_free. */
struct kube_framing *kube_framing_new(size_t max_line);

/* Free f (NULL is fine). */
void kube_framing_free(struct kube_framing *f);

/* Feed len bytes; call cb for every line completed. Returns 0; or the callback's non-zero
 * value (the rest of this chunk is dropped: reset before reuse); or -1 with err set (line
 * over the bound, out of memory), after which the framer stays failed until reset. */
int kube_framing_feed(struct kube_framing *f, const char *data, size_t len, kube_framing_line_fn cb, void *ud,
                      struct kube_err *err);

/* Bytes of an incomplete line held back (0 at a clean end of stream). */
size_t kube_framing_pending(const struct kube_framing *f);

/* Forget any partial line and a failure (for a new stream); keeps the buffer. */
void kube_framing_reset(struct kube_framing *f);

#endif
