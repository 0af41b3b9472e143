/* taintevents: per-node Events or one summary (see taintevents.h). */
#include "reconcile/taint/taintevents.h"

#include <stdio.h>
#include <string.h>

bool taintevents_per_node(size_t changes)
{
    return changes <= TAINTEVENTS_PER_NODE_MAX;
}

/* Room kept at the end of a list for " ... and 123456789 more)". */
#define TAIL_ROOM 32

/* Append what fits of s to buf at *at (cap bytes in all, NUL included); *at stays at the end. */
static void put(char *buf, size_t cap, size_t *at, const char *s)
{
    size_t n = strlen(s);
    if (*at + n >= cap)
        n = *at + 1 < cap ? cap - *at - 1 : 0;
    memcpy(buf + *at, s, n);
    *at += n;
    buf[*at] = '\0';
}

/* "verb N node(s) (a, b, ... and K more)". Names only while the rest of the note still fits. */
static void list(char *buf, size_t cap, size_t *at, const char *verb, const char *const *names, size_t n,
                 size_t room_after)
{
    char head[64];
    snprintf(head, sizeof(head), "%s %zu node%s (", verb, n, n == 1 ? "" : "s");
    put(buf, cap, at, head);
    size_t shown = 0;
    for (; shown < n; shown++) {
        size_t need = strlen(names[shown]) + 2 + TAIL_ROOM + room_after;
        if (*at + need >= cap)
            break;
        put(buf, cap, at, shown ? ", " : "");
        put(buf, cap, at, names[shown]);
    }
    char tail[TAIL_ROOM];
    if (shown < n)
        snprintf(tail, sizeof(tail), "%s... and %zu more)", shown ? ", " : "", n - shown);
    else
        snprintf(tail, sizeof(tail), ")");
    put(buf, cap, at, tail);
}

size_t taintevents_summary(char *buf, size_t len, const char *taint, const char *const *added, size_t nadded,
                           const char *const *removed, size_t nremoved)
{
    size_t cap = len < TAINTEVENTS_NOTE_MAX ? len : TAINTEVENTS_NOTE_MAX;
    size_t at = 0;
    if (!cap)
        return 0;
    buf[0] = '\0';
    put(buf, cap, &at, taint ? taint : "the taint");
    put(buf, cap, &at, ": ");
    /* the untainted list keeps room for its head and tail while the tainted one is written */
    size_t room = nremoved ? 64 + TAIL_ROOM : 0;
    if (nadded)
        list(buf, cap, &at, "tainted", added, nadded, room);
    if (nadded && nremoved)
        put(buf, cap, &at, "; ");
    if (nremoved)
        list(buf, cap, &at, "untainted", removed, nremoved, 0);
    return at;
}
