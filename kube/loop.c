#include "kube/loop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"

/* Longest single wait; the loop wakes at least this often even when idle. */
#define LOOP_MAX_WAIT_MS 60000

struct loop_xfer {
    CURL *easy;
    kube_loop_done_fn done;
    void *ud;
    struct loop_xfer *prev, *next;
};

struct loop_timer {
    uint64_t id;
    uint64_t due_ms;
    uint64_t period_ms;
    kube_loop_timer_fn fn;
    void *ud;
    bool dead;
};

_Static_assert(ATOMIC_BOOL_LOCK_FREE == 2, "kube_loop_stop needs a lock-free atomic_bool");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the heartbeat needs a lock-free 64-bit atomic");

struct kube_loop {
    CURLM *multi;
    int wake_fd;
    /* Set by kube_loop_stop from another thread (the election's) or a signal handler: a
     * C11 atomic, lock-free (checked below), so both are defined behaviour. */
    atomic_bool stop;
    /* Monotonic ms of the last sign of progress (kube_loop_beat), read by other threads. */
    _Atomic uint64_t beat_ms;
    bool running;
    struct loop_xfer *xfers;
    int nxfers;
    struct loop_timer *timers;
    size_t ntimers, cap_timers;
    uint64_t next_timer_id;
};

uint64_t kube_loop_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void kube_loop_beat(struct kube_loop *loop)
{
    atomic_store(&loop->beat_ms, kube_loop_now_ms());
}

uint64_t kube_loop_last_beat_ms(const struct kube_loop *loop)
{
    return atomic_load(&loop->beat_ms);
}

bool kube_loop_stalled(uint64_t now_ms, uint64_t beat_ms, uint64_t bound_ms)
{
    return now_ms > beat_ms && now_ms - beat_ms > bound_ms;
}

struct kube_loop *kube_loop_new(struct kube_err *err)
{
    struct kube_loop *loop = calloc(1, sizeof(*loop));
    if (!loop) {
        kube_err_set(err, 0, "Internal", "event loop: out of memory");
        return NULL;
    }
    loop->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (loop->wake_fd < 0) {
        kube_err_set(err, 0, "Internal", "event loop: eventfd: %s", strerror(errno));
        free(loop);
        return NULL;
    }
    loop->multi = curl_multi_init();
    if (!loop->multi) {
        kube_err_set(err, 0, "Internal", "event loop: curl_multi_init failed");
        close(loop->wake_fd);
        free(loop);
        return NULL;
    }
    /* HTTP/2 multiplexing: many watches share one connection when the server allows it. */
    curl_multi_setopt(loop->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    loop->next_timer_id = 1;
    kube_loop_beat(loop);
    return loop;
}

void kube_loop_free(struct kube_loop *loop)
{
    if (!loop)
        return;
    struct loop_xfer *x = loop->xfers;
    while (x) {
        struct loop_xfer *next = x->next;
        curl_multi_remove_handle(loop->multi, x->easy);
        free(x);
        x = next;
    }
    curl_multi_cleanup(loop->multi);
    close(loop->wake_fd);
    free(loop->timers);
    free(loop);
}

static struct loop_xfer *loop_find(struct kube_loop *loop, CURL *easy)
{
    for (struct loop_xfer *x = loop->xfers; x; x = x->next)
        if (x->easy == easy)
            return x;
    return NULL;
}

static void loop_unlink(struct kube_loop *loop, struct loop_xfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        loop->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    loop->nxfers--;
}

int kube_loop_add(struct kube_loop *loop, CURL *easy, kube_loop_done_fn done, void *ud, struct kube_err *err)
{
    if (loop_find(loop, easy))
        return kube_err_set(err, 0, "Internal", "event loop: transfer added twice");
    struct loop_xfer *x = calloc(1, sizeof(*x));
    if (!x)
        return kube_err_set(err, 0, "Internal", "event loop: out of memory");
    CURLMcode mc = curl_multi_add_handle(loop->multi, easy);
    if (mc != CURLM_OK) {
        free(x);
        return kube_err_set(err, 0, "Internal", "event loop: adding a transfer: %s", curl_multi_strerror(mc));
    }
    x->easy = easy;
    x->done = done;
    x->ud = ud;
    x->next = loop->xfers;
    if (loop->xfers)
        loop->xfers->prev = x;
    loop->xfers = x;
    loop->nxfers++;
    return 0;
}

void kube_loop_remove(struct kube_loop *loop, CURL *easy)
{
    struct loop_xfer *x = loop_find(loop, easy);
    if (!x)
        return;
    curl_multi_remove_handle(loop->multi, easy);
    loop_unlink(loop, x);
    free(x);
}

int kube_loop_transfers(const struct kube_loop *loop)
{
    return loop->nxfers;
}

uint64_t kube_loop_timer(struct kube_loop *loop, uint64_t delay_ms, uint64_t period_ms, kube_loop_timer_fn fn, void *ud)
{
    if (BASE_GROW(loop->timers, loop->ntimers + 1, loop->cap_timers) < 0)
        return 0;
    uint64_t id = loop->next_timer_id++;
    loop->timers[loop->ntimers++] = (struct loop_timer){
        .id = id,
        .due_ms = kube_loop_now_ms() + delay_ms,
        .period_ms = period_ms,
        .fn = fn,
        .ud = ud,
    };
    return id;
}

void kube_loop_cancel(struct kube_loop *loop, uint64_t timer_id)
{
    for (size_t i = 0; i < loop->ntimers; i++)
        if (loop->timers[i].id == timer_id)
            loop->timers[i].dead = true;
}

void kube_loop_stop(struct kube_loop *loop)
{
    int saved = errno; /* a signal handler must not change errno */
    atomic_store(&loop->stop, true);
    uint64_t one = 1;
    ssize_t n = write(loop->wake_fd, &one, sizeof(one));
    (void)n; /* EAGAIN: the counter is already non-zero, the loop wakes anyway */
    errno = saved;
}

/* Fire the timers due at now (those created during this pass wait for the next one),
 * then drop the dead ones. */
static void loop_run_timers(struct kube_loop *loop)
{
    uint64_t now = kube_loop_now_ms();
    uint64_t last_id = loop->next_timer_id;
    for (size_t i = 0; i < loop->ntimers && !atomic_load(&loop->stop); i++) {
        struct loop_timer *t = &loop->timers[i];
        if (t->dead || t->id >= last_id || t->due_ms > now)
            continue;
        kube_loop_timer_fn fn = t->fn;
        void *ud = t->ud;
        if (t->period_ms > 0) {
            t->due_ms += t->period_ms;
            if (t->due_ms <= now)
                t->due_ms = now + t->period_ms;
        } else {
            t->dead = true;
        }
        fn(loop, ud); /* may add timers (realloc): t is not used after this */
    }
    size_t j = 0;
    for (size_t i = 0; i < loop->ntimers; i++)
        if (!loop->timers[i].dead)
            loop->timers[j++] = loop->timers[i];
    loop->ntimers = j;
}

/* Milliseconds until the next live timer, capped. */
static int loop_wait_ms(struct kube_loop *loop)
{
    uint64_t now = kube_loop_now_ms();
    uint64_t wait = LOOP_MAX_WAIT_MS;
    for (size_t i = 0; i < loop->ntimers; i++) {
        const struct loop_timer *t = &loop->timers[i];
        if (t->dead)
            continue;
        uint64_t w = t->due_ms > now ? t->due_ms - now : 0;
        if (w < wait)
            wait = w;
    }
    return (int)wait;
}

/* Hand finished transfers to their owners. */
static void loop_reap(struct kube_loop *loop)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(loop->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode result = msg->data.result;
        struct loop_xfer *x = loop_find(loop, easy);
        curl_multi_remove_handle(loop->multi, easy);
        if (!x)
            continue;
        kube_loop_done_fn done = x->done;
        void *ud = x->ud;
        loop_unlink(loop, x);
        free(x);
        if (done)
            done(loop, easy, result, ud);
    }
}

int kube_loop_run(struct kube_loop *loop, struct kube_err *err)
{
    if (loop->running)
        return kube_err_set(err, 0, "Internal", "event loop: run called from inside the loop");
    loop->running = true;
    int rc = 0;
    while (!atomic_load(&loop->stop)) {
        kube_loop_beat(loop);
        loop_run_timers(loop);
        if (atomic_load(&loop->stop))
            break;
        struct curl_waitfd wfd = {.fd = loop->wake_fd, .events = CURL_WAIT_POLLIN};
        int numfds = 0;
        CURLMcode mc = curl_multi_poll(loop->multi, &wfd, 1, loop_wait_ms(loop), &numfds);
        if (mc != CURLM_OK) {
            rc = kube_err_set(err, 0, "Internal", "event loop: curl_multi_poll: %s", curl_multi_strerror(mc));
            break;
        }
        if (wfd.revents) {
            uint64_t v;
            ssize_t n = read(loop->wake_fd, &v, sizeof(v));
            (void)n;
        }
        int running = 0;
        mc = curl_multi_perform(loop->multi, &running);
        if (mc != CURLM_OK) {
            rc = kube_err_set(err, 0, "Internal", "event loop: curl_multi_perform: %s", curl_multi_strerror(mc));
            break;
        }
        loop_run_timers(loop); /* deferred work queued by write callbacks, before completions */
        loop_reap(loop);
    }
    atomic_store(&loop->stop, false);
    loop->running = false;
    return rc;
}
