/* jsonlex: JSON's escapes and numbers (see jsonlex.h). */
#include "jsonlex.h"

long jsonlex_hex4(const char *h)
{
    long v = 0;
    for (int k = 0; k < 4; k++) {
        char c = h[k];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t fault_is(enum jsonlex_fault *fault, enum jsonlex_fault f)
{
    *fault = f;
    return 0;
}

/* A \u escape at s[0]: as jsonlex_escape. */
static size_t unicode(const char *s, size_t n, unsigned *cp, enum jsonlex_fault *fault)
{
    if (n < 6)
        return fault_is(fault, JSONLEX_ESCAPE_CUT);
    long hi = jsonlex_hex4(s + 2);
    if (hi < 0)
        return fault_is(fault, JSONLEX_ESCAPE_NOT_HEX);
    if (hi >= 0xDC00 && hi <= 0xDFFF)
        return fault_is(fault, JSONLEX_LONE_LOW);
    if (hi < 0xD800 || hi > 0xDBFF) {
        *cp = (unsigned)hi;
        return 6;
    }
    if (n < 8 || s[6] != '\\' || s[7] != 'u')
        return fault_is(fault, JSONLEX_HIGH_WITHOUT_LOW);
    if (n < 12)
        return fault_is(fault, JSONLEX_ESCAPE_CUT);
    long lo = jsonlex_hex4(s + 8);
    if (lo < 0)
        return fault_is(fault, JSONLEX_ESCAPE_NOT_HEX);
    if (lo < 0xDC00 || lo > 0xDFFF)
        return fault_is(fault, JSONLEX_HIGH_WITHOUT_LOW);
    *cp = 0x10000u + (((unsigned)hi - 0xD800u) << 10) + ((unsigned)lo - 0xDC00u);
    return 12;
}

size_t jsonlex_escape(const char *s, size_t n, unsigned *cp, enum jsonlex_fault *fault)
{
    unsigned ignored;
    if (!cp)
        cp = &ignored;
    *fault = JSONLEX_OK;
    if (n < 2)
        return fault_is(fault, JSONLEX_ESCAPE_CUT);
    switch (s[1]) {
    case '"':
    case '\\':
    case '/': *cp = (unsigned char)s[1]; return 2;
    case 'b': *cp = '\b'; return 2;
    case 'f': *cp = '\f'; return 2;
    case 'n': *cp = '\n'; return 2;
    case 'r': *cp = '\r'; return 2;
    case 't': *cp = '\t'; return 2;
    case 'u': return unicode(s, n, cp, fault);
    default: return fault_is(fault, JSONLEX_ESCAPE_UNKNOWN);
    }
}

/* Moves *k past the digits of s[0..n); returns how many there were. */
static size_t digits(const char *s, size_t n, size_t *k)
{
    size_t from = *k;
    while (*k < n && s[*k] >= '0' && s[*k] <= '9')
        (*k)++;
    return *k - from;
}

size_t jsonlex_number(const char *s, size_t n, enum jsonlex_fault *fault)
{
    size_t k = 0;
    *fault = JSONLEX_OK;
    if (k < n && s[k] == '-')
        k++;
    if (k < n && s[k] == '0')
        k++;
    else if (digits(s, n, &k) == 0)
        return fault_is(fault, JSONLEX_NO_DIGIT);
    if (k < n && s[k] == '.') {
        k++;
        if (digits(s, n, &k) == 0)
            return fault_is(fault, JSONLEX_NO_FRACTION);
    }
    if (k < n && (s[k] == 'e' || s[k] == 'E')) {
        k++;
        if (k < n && (s[k] == '+' || s[k] == '-'))
            k++;
        if (digits(s, n, &k) == 0)
            return fault_is(fault, JSONLEX_NO_EXPONENT);
    }
    return k;
}

const char *jsonlex_fault_text(enum jsonlex_fault fault)
{
    switch (fault) {
    case JSONLEX_OK: return "";
    case JSONLEX_ESCAPE_CUT: return "an escape is cut short";
    case JSONLEX_ESCAPE_UNKNOWN: return "a string has an unknown escape";
    case JSONLEX_ESCAPE_NOT_HEX: return "a \\u escape has a character that is no hex digit";
    case JSONLEX_LONE_LOW: return "a \\u escape is a lone low surrogate";
    case JSONLEX_HIGH_WITHOUT_LOW: return "a \\u escape is a high surrogate without its low half";
    case JSONLEX_NO_DIGIT: return "a value is no JSON value";
    case JSONLEX_NO_FRACTION: return "a number has no digit after its '.'";
    case JSONLEX_NO_EXPONENT: return "a number has no digit in its exponent";
    }
    return "";
}
