/* election: leader election on a Lease in a thread of its own, with its own config and
 * client, so that renewals never wait behind a long reconcile in the event loop (a storm of
 * taint writes through the write limiter can outlast the renew deadline). The loop learns
 * the state by polling election_leading; a lost leadership stops the loop, since another
 * replica now works and this one must not. */
#ifndef PSI_ELECTION_H
#define PSI_ELECTION_H

#include <stdbool.h>

#include "base/err.h"
#include "kube/loop.h"

struct election;

/* How long the event loop may go without a heartbeat (kube_loop_beat) before it counts as
 * stuck: /healthz then fails and the election gives the Lease up. Idle, the loop wakes every
 * 500 ms (main.c's readiness timer); inside one iteration the longest legitimate step is a
 * blocking call: a REST call (kube_client's 30 s timeout, connect included; each completion
 * stamps the heartbeat) or a Prometheus query (15 s). Twice the longest call. */
#define ELECTION_LOOP_STALL_MS 60000

/* Start contending for Lease ns/name as identity, through a config loaded from kubeconfig
 * and context like the operator's own (see kube_config_load). loop (borrowed) is stopped
 * when leadership is lost. While leading, a loop whose heartbeat is older than
 * ELECTION_LOOP_STALL_MS makes the thread release the Lease (a successor takes over at once)
 * and stop the loop, instead of renewing for a loop that does no work. NULL with err. */
struct election *election_start(const char *kubeconfig, const char *context, const char *ns, const char *name,
                                const char *identity, struct kube_loop *loop, struct kube_err *err);

/* True while this process holds the Lease. Safe from any thread. */
bool election_leading(const struct election *e);

/* True once leadership was held and then lost. Safe from any thread. */
bool election_lost(const struct election *e);

/* Stop the thread, release the Lease if held (so a successor takes over at once), free.
 * NULL is fine. */
void election_stop(struct election *e);

#endif
