/* api_errors: a list of problems found in a PsiRebalance, each with the path of the field
 * it concerns ("spec.pressure.untaintBelowPercent") and a message ("must be less than
 * taintAbovePercent (25)"). Decoding and validation add to one list and never stop at the
 * first problem, so a user sees everything wrong with an object at once (the project's
 * failure convention: base/failure.h). */
#ifndef PSI_API_ERRORS_H
#define PSI_API_ERRORS_H

#include <stdbool.h>
#include <stddef.h>

struct api_error {
    char *field; /* JSON path of the field, e.g. "spec.nodeSelector.matchExpressions[0].values" */
    char *msg;   /* what is wrong with it, a sentence fragment */
};

/* Zero-initialise ({0}) before first use; api_errors_free releases it. */
struct api_errors {
    struct api_error *v;
    size_t n, cap;
    bool oom; /* an entry could not be recorded for lack of memory */
};

/* Append an error for field with a printf-formatted message; always returns -1. */
int api_errors_add(struct api_errors *e, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The first error whose field is exactly field, or NULL. */
const struct api_error *api_errors_find(const struct api_errors *e, const char *field);

/* True when some error's field is field or lies below it ("spec.a" covers "spec.a.b", "spec.a[0]"). */
bool api_errors_any_under(const struct api_errors *e, const char *field);

/* All errors as "field: msg" joined by sep; the caller frees the string (NULL on no memory). */
char *api_errors_join(const struct api_errors *e, const char *sep);

/* Release every entry and reset e to empty. */
void api_errors_free(struct api_errors *e);

#endif
