/* kube_loop: a single-threaded event loop over libcurl's multi interface.
 *
 * Runs many streaming transfers (watches) at once, multiplexed over HTTP/2 where the
 * server offers it (CURLPIPE_MULTIPLEX; transfers should ask for CURL_HTTP_VERSION_2TLS
 * and CURLOPT_PIPEWAIT), plus timers. The loop calls user code only between libcurl
 * calls (timers and transfer completions), never from inside a libcurl callback, so a
 * timer or completion callback may do anything, including blocking REST calls on their
 * own easy handles, adding and removing transfers and timers, and kube_loop_stop.
 * Inside libcurl callbacks (a transfer's write/header function) only kube_loop_timer
 * (e.g. a 0 ms timer to defer work to the loop) and kube_loop_stop may be called.
 * kube_loop_stop is also safe from a signal handler and from another thread. */
#ifndef PSI_KUBE_LOOP_H
#define PSI_KUBE_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "base/err.h"

struct kube_loop;

/* A timer's callback. */
typedef void (*kube_loop_timer_fn)(struct kube_loop *loop, void *ud);

/* A transfer ended (result CURLE_OK or the error); it has been removed from the loop
 * already, so the callback may free the easy handle or add it again. */
typedef void (*kube_loop_done_fn)(struct kube_loop *loop, CURL *easy, CURLcode result, void *ud);

/* A new loop (its own curl multi handle and wake-up eventfd); NULL with err on failure.
 * Free with kube_loop_free. */
struct kube_loop *kube_loop_new(struct kube_err *err);

/* Free the loop: transfers still in it are removed (without their done callback; their
 * owners still own the easy handles), timers are dropped. NULL is fine. */
void kube_loop_free(struct kube_loop *loop);

/* Add an easy handle (its options set; CURLOPT_PRIVATE stays the caller's); done is called
 * once when the transfer ends. Returns 0 or -1 with err. */
int kube_loop_add(struct kube_loop *loop, CURL *easy, kube_loop_done_fn done, void *ud, struct kube_err *err);

/* Remove a transfer before it ended, without calling its done callback (no-op if absent).
 * Not from inside a libcurl callback. */
void kube_loop_remove(struct kube_loop *loop, CURL *easy);

/* Number of transfers in the loop. */
int kube_loop_transfers(const struct kube_loop *loop);

/* Call fn after delay_ms, then every period_ms when period_ms > 0. Returns a timer id
 * (never 0) for kube_loop_cancel, or 0 when out of memory. */
uint64_t kube_loop_timer(struct kube_loop *loop, uint64_t delay_ms, uint64_t period_ms, kube_loop_timer_fn fn,
                         void *ud);

/* Cancel a timer (no-op for 0, a fired one-shot or an unknown id). */
void kube_loop_cancel(struct kube_loop *loop, uint64_t timer_id);

/* Run until kube_loop_stop. Returns 0 when stopped, -1 with err on a libcurl or poll
 * failure or when called from inside the loop. Each stop request ends one run; a stop
 * requested before run makes it return at once. */
int kube_loop_run(struct kube_loop *loop, struct kube_err *err);

/* Ask kube_loop_run to return (async-signal-safe: sets a flag and writes the eventfd). */
void kube_loop_stop(struct kube_loop *loop);

/* Stamp the heartbeat with the monotonic clock: the loop does it at every iteration; code
 * that runs long inside one iteration (a blocking REST call's completion) may too. */
void kube_loop_beat(struct kube_loop *loop);

/* The last heartbeat (monotonic ms). Safe from any thread. */
uint64_t kube_loop_last_beat_ms(const struct kube_loop *loop);

/* The staleness rule: true when more than bound_ms passed from beat_ms to now_ms (a beat
 * stamped after now_ms, read by another thread, is never stale). Pure. */
bool kube_loop_stalled(uint64_t now_ms, uint64_t beat_ms, uint64_t bound_ms);

/* The monotonic clock in milliseconds (the timers' clock). */
uint64_t kube_loop_now_ms(void);

#endif
