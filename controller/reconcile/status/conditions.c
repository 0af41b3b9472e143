/* conditions: metav1.Condition handling and the Ready/Degraded rule (see conditions.h). */
#include "reconcile/status/conditions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/reasons.h"
#include "base/strbuf.h"
#include "reconcile/status/coverage.h"

static bool is_alpha(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_alnum_(char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '_';
}

bool conditions_reason_valid(const char *reason)
{
    if (!reason || !is_alpha(reason[0]))
        return false;
    size_t n = strlen(reason);
    if (n > 1024)
        return false;
    for (size_t i = 1; i < n; i++)
        if (!is_alnum_(reason[i]) && reason[i] != ',' && reason[i] != ':')
            return false;
    return n == 1 || is_alnum_(reason[n - 1]);
}

int conditions_set(struct api_status *st, const char *type, enum api_condition_status status, const char *reason,
                   const char *message, int64_t generation, int64_t now)
{
    if (!conditions_reason_valid(reason))
        reason = CONDITIONS_REASON_INVALID;
    if (!message)
        message = "";
    size_t len = strlen(message);
    if (len <= CONDITIONS_MESSAGE_MAX)
        return api_status_set_condition(st, type, status, reason, message, generation, now);
    /* Cut at the last UTF-8 sequence start at or before the limit. */
    size_t cut = CONDITIONS_MESSAGE_MAX;
    while (cut > 0 && ((unsigned char)message[cut] & 0xC0) == 0x80)
        cut--;
    char *m = strndup(message, cut);
    if (!m)
        return -1;
    int rc = api_status_set_condition(st, type, status, reason, m, generation, now);
    free(m);
    return rc;
}

enum api_condition_status conditions_status(const struct api_status *st, const char *type)
{
    const struct api_condition *c = api_status_condition(st, type);
    return c ? c->status : API_CONDITION_UNKNOWN;
}

bool conditions_is(const struct api_status *st, const char *type, enum api_condition_status status)
{
    const struct api_condition *c = api_status_condition(st, type);
    return c && c->status == status;
}

int conditions_remove(struct api_status *st, const char *type)
{
    struct api_condition *c = api_status_condition(st, type);
    if (!c)
        return 0;
    size_t i = (size_t)(c - st->conditions);
    free(c->type);
    free(c->reason);
    free(c->message);
    memmove(&st->conditions[i], &st->conditions[i + 1], (st->nconditions - i - 1) * sizeof(*c));
    st->nconditions--;
    if (!st->nconditions) {
        free(st->conditions);
        st->conditions = NULL;
    }
    return 1;
}

/* Add a part to a "; "-joined message. */
static void msg_add(struct strbuf *m, const char *what, const char *detail)
{
    strbuf_addf(m, "%s%s%s%s", m->len ? "; " : "", what, detail && *detail ? ": " : "", detail ? detail : "");
}

static const char *reason_of(const struct api_condition *c, const char *fallback)
{
    return c && c->reason && *c->reason ? c->reason : fallback;
}

int conditions_derive(struct api_status *st, const struct conditions_cycle *cycle, int64_t generation, int64_t now)
{
    const struct api_condition *metrics = api_status_condition(st, API_CONDITION_METRICS_AVAILABLE);
    const struct api_condition *psi = api_status_condition(st, API_CONDITION_PSI_ENABLED);
    const struct api_condition *conflict = api_status_condition(st, CONDITIONS_NODE_CONFLICT);
    bool failed = cycle && !cycle->ok;
    bool metrics_false = metrics && metrics->status == API_CONDITION_FALSE;
    bool partial = metrics_false && metrics->reason && strcmp(metrics->reason, COVERAGE_REASON_PARTIAL) == 0;
    bool psi_false = psi && psi->status == API_CONDITION_FALSE && psi->reason;
    bool pool_degraded = psi_false && strcmp(psi->reason, CONDITIONS_REASON_POOL_DEGRADED) == 0;
    bool mc_refused = psi_false && (strcmp(psi->reason, API_REASON_ADMISSION_POLICY_MISSING) == 0 ||
                                    strcmp(psi->reason, API_REASON_ADMISSION_POLICY_UNVERIFIED) == 0);
    bool conflicting = conflict && conflict->status == API_CONDITION_TRUE;

    /* Everything needed from the conditions is copied before setting any: setting one may
     * move the array the pointers above point into. */
    const char *first = NULL;
    struct strbuf m = STRBUF_INIT;
    if (failed) {
        first = cycle->reason && *cycle->reason ? cycle->reason : API_REASON_CYCLE_FAILED;
        msg_add(&m, "the last cycle failed", cycle->message);
    }
    if (metrics_false) {
        first = first ? first : reason_of(metrics, API_REASON_METRICS_UNAVAILABLE);
        msg_add(&m,
                partial ? "some nodes not measured, their taints held" : "pressure metrics unavailable, taints held",
                metrics->message);
    }
    if (pool_degraded) {
        first = first ? first : CONDITIONS_REASON_POOL_DEGRADED;
        msg_add(&m, "a MachineConfigPool is degraded", psi->message);
    }
    if (mc_refused) {
        first = first ? first : psi->reason;
        msg_add(&m, psi->message ? psi->message : "MachineConfig mode refused", NULL); /* names it already */
    }
    if (conflicting) {
        first = first ? first : reason_of(conflict, API_REASON_NODE_CONFLICT);
        msg_add(&m, "nodes selected by another PsiRebalance", conflict->message);
    }
    if (strbuf_failed(&m)) {
        strbuf_release(&m);
        return -1;
    }
    char *first_copy = strdup(first ? first : CONDITIONS_REASON_AS_EXPECTED);

    enum api_condition_status ready;
    char *ready_reason, *ready_msg;
    if (failed) {
        ready = API_CONDITION_FALSE;
        ready_reason = strdup(first_copy ? first_copy : "");
        ready_msg = strdup(cycle->message ? cycle->message : "");
    } else if (partial) {
        ready = API_CONDITION_TRUE;
        ready_reason = strdup(COVERAGE_REASON_PARTIAL);
        ready_msg = strdup(metrics->message ? metrics->message : "");
    } else if (metrics_false) {
        ready = API_CONDITION_FALSE;
        ready_reason = strdup(reason_of(metrics, API_REASON_METRICS_UNAVAILABLE));
        ready_msg = strdup(metrics->message ? metrics->message : "");
    } else if (!metrics || metrics->status == API_CONDITION_UNKNOWN) {
        ready = API_CONDITION_UNKNOWN;
        ready_reason = strdup(CONDITIONS_REASON_PENDING);
        ready_msg = strdup("no pressure reading yet");
    } else {
        ready = API_CONDITION_TRUE;
        ready_reason = strdup(CONDITIONS_REASON_CYCLE_SUCCEEDED);
        ready_msg = strdup("the last cycle measured every selected node and acted on it");
    }
    int rc = -1;
    if (first_copy && ready_reason && ready_msg) {
        int r1 = conditions_set(st, API_CONDITION_READY, ready, ready_reason, ready_msg, generation, now);
        int r2 = conditions_set(st, API_CONDITION_DEGRADED, m.len ? API_CONDITION_TRUE : API_CONDITION_FALSE,
                                first_copy, m.len ? strbuf_str(&m) : "no problem found", generation, now);
        rc = r1 < 0 || r2 < 0 ? -1 : (r1 || r2);
    }
    free(first_copy);
    free(ready_reason);
    free(ready_msg);
    strbuf_release(&m);
    return rc;
}
