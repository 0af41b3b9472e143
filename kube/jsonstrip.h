/* kube_jsonstrip: drop metadata.managedFields from a watch event's text before it is parsed.
 *
 * A watch event is {"type":..,"object":{..,"metadata":{..,"managedFields":[..],..},..}}.
 * managedFields (server-side apply's record of who set which field) is the largest part
 * of many objects (a PsiRebalance's status.nodes is a list keyed by name, so it carries a
 * field set per node) and the operator never reads it; removing it from the text spares
 * the JSON tree of it, which would be built only to be deleted.
 *
 * The text is scanned, not parsed: strings (with their escapes) and nesting are followed,
 * and the whole top-level value is checked as JSON (RFC 8259: structure, escapes, numbers),
 * so that only text the parser would take is changed. Only the member managedFields
 * of object.metadata is removed; one anywhere else (in spec, in a string such as an
 * annotation's value, at another depth) stays. When in doubt the text is left as it is
 * (the parser then reports what is wrong, as it would have): malformed or truncated text,
 * anything but whitespace after the top-level object, nesting deeper than
 * KUBE_JSONSTRIP_MAX_DEPTH, a number over 63 characters, a duplicate "object", "metadata" or "managedFields" on the
 * path, or a key on the path written with escapes. Pure; no allocation. */
#ifndef PSI_KUBE_JSONSTRIP_H
#define PSI_KUBE_JSONSTRIP_H

#include <stddef.h>

/* Nesting deeper than this leaves the text unchanged (the JSON parser allows 1000). */
#define KUBE_JSONSTRIP_MAX_DEPTH 512

/* Remove object.metadata.managedFields from the event text[0..len), in place; returns the
 * new length (len when nothing was removed). When shorter, text[new length] is set to NUL;
 * the bytes after it are unspecified. */
size_t kube_jsonstrip_managed_fields(char *text, size_t len);

#endif
