/* promrun: a Prometheus client and its query in flight on the event loop (see promrun.h). */
#include "reconcile/promrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "psi/source.h"

struct psi_prom *promrun_client(struct promrun *r, const struct psi_prom_config *cfg, struct kube_err *st)
{
    if (!cfg) {
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
        return NULL;
    }
    char key[2048];
    snprintf(key, sizeof(key), "%s|%s|%s|%s|%d", base_or_empty(cfg->url), cfg->token_fn ? "reader" : "",
             base_or_empty(cfg->token_file), base_or_empty(cfg->ca_file), cfg->plain_http_token);
    if (r->prom && r->key && strcmp(r->key, key) == 0)
        return r->prom;
    promrun_release(r);
    r->prom = psi_prom_new(cfg, st);
    if (r->prom && !(r->key = strdup(key))) { /* without its key it would be made anew every time */
        psi_prom_free(r->prom);
        r->prom = NULL;
        psi_fail(st, PSI_REASON_CONFIG, "out of memory");
    }
    return r->prom;
}

/* kube_loop's end of the transfer: the continuation, the query no longer in flight. */
static void ended(struct kube_loop *loop, CURL *easy, CURLcode rc, void *ud)
{
    (void)loop;
    (void)easy;
    struct promrun *r = ud;
    r->easy = NULL;
    r->fn(r, rc, r->ud);
}

int promrun_start(struct promrun *r, struct kube_loop *loop, CURL *easy, promrun_fn fn, void *ud, struct kube_err *st)
{
    r->fn = fn;
    r->ud = ud;
    if (!loop) {
        fn(r, curl_easy_perform(easy), ud);
        return 0;
    }
    struct kube_err err;
    if (kube_loop_add(loop, easy, ended, r, &err) < 0)
        return psi_fail(st, PSI_REASON_CONFIG, "the query could not be run: %s", err.msg);
    r->loop = loop;
    r->easy = easy;
    return 0;
}

bool promrun_busy(const struct promrun *r)
{
    return r->easy != NULL;
}

void promrun_release(struct promrun *r)
{
    if (r->easy) /* off its loop, without its continuation */
        kube_loop_remove(r->loop, r->easy);
    r->easy = NULL;
    psi_prom_free(r->prom);
    free(r->key);
    r->prom = NULL;
    r->key = NULL;
}
