/* jsonlex: JSON's lexical rules (RFC 8259) for the readers that scan JSON text without
 * building a tree: the Prometheus reply reader (psi/promreply) and the watch event's
 * managedFields cut (kube/jsonstrip). An escape inside a string and a number, each measured
 * at the start of a text of n bytes, with a fault saying why when it is no JSON's. Pure. */
#ifndef PSI_BASE_JSONLEX_H
#define PSI_BASE_JSONLEX_H

#include <stddef.h>

/* Why an escape or a number is no JSON's. */
enum jsonlex_fault {
    JSONLEX_OK = 0,
    JSONLEX_ESCAPE_CUT,       /* the text ends inside the escape */
    JSONLEX_ESCAPE_UNKNOWN,   /* a letter after the backslash that JSON has no escape for */
    JSONLEX_ESCAPE_NOT_HEX,   /* a \u with a character that is no hex digit */
    JSONLEX_LONE_LOW,         /* a \u of a low surrogate first */
    JSONLEX_HIGH_WITHOUT_LOW, /* a \u of a high surrogate not followed by a \u of a low one */
    JSONLEX_NO_DIGIT,         /* no number: no digit where it starts (or after its '-') */
    JSONLEX_NO_FRACTION,      /* no digit after a number's '.' */
    JSONLEX_NO_EXPONENT,      /* no digit in a number's exponent */
};

/* The value of the 4 hex digits at h (4 bytes readable), or -1. */
long jsonlex_hex4(const char *h);

/* The escape at s[0] (its backslash) of s[0..n): its length (2, 6, or 12 for a surrogate
 * pair) with its code point in *cp when cp is not NULL, or 0 with the fault in *fault. */
size_t jsonlex_escape(const char *s, size_t n, unsigned *cp, enum jsonlex_fault *fault);

/* The length of the number at the start of s[0..n) (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
 * as far as it goes: what follows is the caller's), or 0 with the fault in *fault. */
size_t jsonlex_number(const char *s, size_t n, enum jsonlex_fault *fault);

/* A fault in words ("a \u escape is a lone low surrogate"); "" for JSONLEX_OK. */
const char *jsonlex_fault_text(enum jsonlex_fault fault);

#endif
