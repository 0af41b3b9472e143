/* taintevents: which Events the taint changes of one cycle get. Pure.
 *
 * Up to TAINTEVENTS_PER_NODE_MAX changes (taints added plus removed) in a cycle, each gets
 * its own Event about its node, as before. Past it (a storm: many nodes crossing at once),
 * one Event about the PsiRebalance summarises them: how many were tainted and untainted,
 * and the first names of each that fit in an Event's note. The taint writes come first and
 * the Events after, and a storm of 1,000 crossings costs one Event write instead of 1,000,
 * so the taints keep the client's write budget. The log keeps a line per change. */
#ifndef PSI_RECONCILE_TAINTEVENTS_H
#define PSI_RECONCILE_TAINTEVENTS_H

#include <stdbool.h>
#include <stddef.h>

/* Most changes in a cycle that still get an Event each. */
#define TAINTEVENTS_PER_NODE_MAX 10

/* The longest note an Event may carry (events.k8s.io/v1 note: 1 kB). */
#define TAINTEVENTS_NOTE_MAX 1024

/* Whether the changes of a cycle get an Event each (true) or one summary (false). */
bool taintevents_per_node(size_t changes);

/* The note of the summary Event into buf (len bytes, at most TAINTEVENTS_NOTE_MAX used):
 * "TAINT: tainted N nodes (a, b, ... and K more); untainted M nodes (...)", taint being how
 * the taint is shown (NULL: "the taint"), with as many names of added[0..nadded) and
 * removed[0..nremoved) as fit; a direction without changes is left out. Returns its length. */
size_t taintevents_summary(char *buf, size_t len, const char *taint, const char *const *added, size_t nadded,
                           const char *const *removed, size_t nremoved);

#endif
