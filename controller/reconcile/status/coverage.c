/* coverage: how much of a sample measured what is acted on (see coverage.h). */
#include "reconcile/status/coverage.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct coverage coverage_of(const struct psi_sample *s, enum psi_resource res, char *text, size_t len)
{
    struct coverage c = {s->n_nodes, 0};
    size_t used = 0;
    bool full = false;
    if (len)
        text[0] = '\0';
    for (size_t i = 0; i < s->n_nodes; i++) {
        const struct psi_node_sample *ns = &s->nodes[i];
        if (ns->value[res].known) {
            c.measured++;
            continue;
        }
        if (full || !len)
            continue;
        char item[400];
        int w = snprintf(item, sizeof(item), "%s%s (%s)", used ? ", " : "", ns->name,
                         ns->unread ? ns->unread : COVERAGE_WHY_NO_SERIES);
        size_t n = w > 0 && (size_t)w < sizeof(item) ? (size_t)w : sizeof(item) - 1;
        if (used + n + sizeof(", ...") > len) {
            snprintf(text + used, len - used, "%s", len - used >= sizeof(", ...") ? ", ..." : "");
            full = true;
            continue;
        }
        memcpy(text + used, item, n + 1);
        used += n;
    }
    return c;
}

const char *coverage_reason(const struct coverage *c)
{
    if (c->measured == c->asked)
        return COVERAGE_REASON_ALL;
    return c->measured ? COVERAGE_REASON_PARTIAL : COVERAGE_REASON_NONE;
}
