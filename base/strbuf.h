/* strbuf: a growing, always terminated string. Zero-initialise (STRBUF_INIT), append, take or
 * release. Appending never fails loudly: on no memory the buffer keeps what it had and
 * remembers the failure (strbuf_failed), so a caller builds a whole text and checks once. */
#ifndef PSI_BASE_STRBUF_H
#define PSI_BASE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
    char *s;     /* NULL until the first append; terminated after it */
    size_t len;  /* bytes before the terminator */
    size_t cap;  /* bytes allocated */
    bool failed; /* an append ran out of memory */
};

#define STRBUF_INIT       \
    {                     \
        NULL, 0, 0, false \
    }

/* Append n bytes of s. */
void strbuf_addn(struct strbuf *b, const char *s, size_t n);

/* Append string s (NULL: nothing). */
void strbuf_add(struct strbuf *b, const char *s);

/* Append printf-formatted text. */
void strbuf_addf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether an append failed (the text is incomplete). */
bool strbuf_failed(const struct strbuf *b);

/* The text, or "" when nothing was appended (borrowed; valid until the next append). */
const char *strbuf_str(const struct strbuf *b);

/* The text (caller frees; "" allocated when empty), or NULL when an append failed or on no
 * memory; b is empty afterwards either way. */
char *strbuf_take(struct strbuf *b);

/* Release the text and empty b. */
void strbuf_release(struct strbuf *b);

#endif
