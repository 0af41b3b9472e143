/* promrun: one owner's Prometheus client and the query it has in flight on the event loop, so
 * that no Prometheus query blocks the loop (watches, other PsiRebalances, the heartbeat) while
 * it waits for its answer.
 *
 * The owner (the pressure reads of sampling.h, the usage reads of gather.h) asks for its client
 * with its settings; the client is made anew when they change, and a query in flight on the old
 * one is dropped then. A query is started with a continuation: the transfer runs on the loop,
 * and when it ends, the continuation runs on the loop's thread with its result. Without a loop
 * the transfer runs at once, blocking, and the continuation runs before promrun_start returns.
 * A dropped query (a new client, promrun_release) never calls its continuation: an owner tells
 * whether its query runs by promrun_busy, never by a flag of its own.
 * Not thread-safe: the loop's thread only. */
#ifndef PSI_RECONCILE_PROMRUN_H
#define PSI_RECONCILE_PROMRUN_H

#include <stdbool.h>

#include <curl/curl.h>

#include "kube/loop.h"
#include "psi/prom.h"

struct promrun;

/* A query ended with the transfer's result rc (finish it on the client: psi_prom_query_finish,
 * psi_prom_sample_finish). It may start the next query. */
typedef void (*promrun_fn)(struct promrun *r, CURLcode rc, void *ud);

/* Zero it before use; release with promrun_release. */
struct promrun {
    struct psi_prom *prom;  /* the client, or NULL (not made yet) */
    char *key;              /* the settings it was made from */
    struct kube_loop *loop; /* the loop the query in flight runs on */
    CURL *easy;             /* the query in flight, or NULL */
    promrun_fn fn;
    void *ud;
};

/* The client for cfg, made anew when cfg's settings changed since it was made (a query in flight
 * is dropped then). NULL with st failed (SourceConfigError) on a bad URL, no memory or cfg NULL. */
struct psi_prom *promrun_client(struct promrun *r, const struct psi_prom_config *cfg, struct kube_err *st);

/* Run easy (set up on r's client by psi_prom_query_start or psi_prom_sample_start) on loop, fn
 * (ud) to follow when it ends; loop NULL: at once, blocking. Returns 0, or -1 with st failed when
 * the loop refused it (fn is not called then). Not while promrun_busy. */
int promrun_start(struct promrun *r, struct kube_loop *loop, CURL *easy, promrun_fn fn, void *ud, struct kube_err *st);

/* Whether a query is in flight. */
bool promrun_busy(const struct promrun *r);

/* Drop the query in flight (its continuation is not called) and free the client. */
void promrun_release(struct promrun *r);

#endif
