/* kube_lease: leader election on a coordination.k8s.io/v1 Lease, as client-go does it.
 *
 * A pure decision (kube_lease_decide) over the observed Lease and our own memory of it,
 * with an injected monotonic clock; and an edge (kube_lease_tick) that gets, creates and
 * updates the Lease with optimistic concurrency (resourceVersion; 409 means another
 * candidate won) and is driven from the caller's event loop.
 * Like client-go, a follower judges expiry by its own clock: the lease is valid until
 * leaseDurationSeconds after the moment this process last saw the record change, so clock
 * skew between candidates does not matter. The leader steps down when it could not renew
 * for renewDeadline. Release (graceful shutdown) writes holderIdentity "" and
 * leaseDurationSeconds 1, as client-go's ReleaseOnCancel, so a follower takes over at its
 * next retry instead of waiting for the lease to expire. */
#ifndef PSI_KUBE_LEASE_H
#define PSI_KUBE_LEASE_H

#include <stdint.h>

#include <cjson/cJSON.h>
#include "base/err.h"
#include "kube/rest.h"

#define KUBE_LEASE_DEFAULT_DURATION_MS 15000
#define KUBE_LEASE_DEFAULT_RENEW_DEADLINE_MS 10000
#define KUBE_LEASE_DEFAULT_RETRY_PERIOD_MS 2000

/* Timing; 0 fields take the defaults above. Needs duration > renew_deadline > retry_period. */
struct kube_lease_timing {
    int64_t lease_duration_ms;
    int64_t renew_deadline_ms;
    int64_t retry_period_ms;
};

/* The Lease as read from the API (the fields the decision needs). */
struct kube_lease_record {
    int exists;                /* 0: the Lease does not exist (404) */
    char holder[256];          /* spec.holderIdentity ("" when released/absent) */
    int64_t duration_s;        /* spec.leaseDurationSeconds */
    char resource_version[64]; /* metadata.resourceVersion: changes iff the record changed */
};

/* What the decider remembers between decisions. Zero-initialise it. */
struct kube_lease_memory {
    char observed_rv[64];   /* resourceVersion of the record last seen */
    int64_t observed_at_ms; /* our clock when that record was first seen */
    int64_t observed_duration_s;
    int leader;            /* we hold the lease */
    int64_t last_renew_ms; /* our clock at our last successful create/renew */
};

enum kube_lease_action {
    KUBE_LEASE_ACT_CREATE,    /* no Lease: create it with us as holder */
    KUBE_LEASE_ACT_RENEW,     /* we hold it: update renewTime */
    KUBE_LEASE_ACT_ACQUIRE,   /* free or expired: update it with us as holder */
    KUBE_LEASE_ACT_WAIT,      /* someone else holds a valid lease (or the read failed): retry later */
    KUBE_LEASE_ACT_STEP_DOWN, /* we were leader and lost it (taken over or renew deadline passed) */
};

/* Decide what to do at now_ms given rec (NULL when reading the Lease failed). Updates mem's
 * observation (and clears mem->leader on STEP_DOWN). Pure. */
enum kube_lease_action kube_lease_decide(struct kube_lease_memory *mem, const struct kube_lease_record *rec,
                                         const char *identity, const struct kube_lease_timing *t, int64_t now_ms);

/* Read a Lease object (JSON) into rec (pure): holder and resourceVersion (cut to their
 * fields' sizes) and spec.leaseDurationSeconds, 0 when it is no int32 of at least 0. */
void kube_lease_record_read(const cJSON *obj, struct kube_lease_record *rec);

/* When (our clock) the lease we last observed expires for a follower. Pure. */
int64_t kube_lease_expiry_ms(const struct kube_lease_memory *mem);

/* Fill t's zero fields with the defaults and check the ordering; -1 with err if invalid. */
int kube_lease_timing_check(struct kube_lease_timing *t, struct kube_err *err);

/* Election state as the caller sees it. */
enum kube_lease_state {
    KUBE_LEASE_FOLLOWER, /* not leading */
    KUBE_LEASE_LEADER,   /* leading: do the work */
    KUBE_LEASE_LOST,     /* leadership just ended (reported once; stop the work now) */
};

struct kube_lease;

/* New elector for Lease ns/name with our identity. It makes its own client over c's config
 * and transport (kube_client_new_sibling: own timeouts and write limiter); c is only
 * borrowed here. timing may be NULL (defaults).
 * Returns NULL with err on bad arguments. */
struct kube_lease *kube_lease_new(struct kube_client *c, const char *ns, const char *name, const char *identity,
                                  const struct kube_lease_timing *timing, struct kube_err *err);

/* Free an elector (does not release: call kube_lease_release first). NULL is fine. */
void kube_lease_free(struct kube_lease *l);

/* Drive the election at now_ms (a monotonic clock in ms). Does API calls only when a tick
 * is due, else just reports. Returns the state; *next_tick_ms gets when to call again.
 * err is set when an API call failed (the state is still meaningful). Blocking calls are
 * bounded so a leader notices a missed renew deadline in time. */
enum kube_lease_state kube_lease_tick(struct kube_lease *l, int64_t now_ms, int64_t *next_tick_ms,
                                      struct kube_err *err);

/* Give up the lease if we hold it (holderIdentity "", leaseDurationSeconds 1), so a
 * successor takes over at once; afterwards we are a follower. 0 on success or when not
 * leading; -1 with err. */
int kube_lease_release(struct kube_lease *l, struct kube_err *err);

/* The holder identity last observed ("" if none). Owned by l. */
const char *kube_lease_holder(const struct kube_lease *l);

#endif
