/* events_e2e: the Event recorder against the test bed.
 *
 * The same occurrence recorded N times on a real ConfigMap gives one events.k8s.io/v1 Event
 * with series.count N; another reason gives a second Event; with the default patch interval
 * repeats are held back and a forced flush sends the count; an Event about a cluster-scoped
 * Node lands in "default". Exits non-zero on any failure. Config from $KUBECONFIG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "e2e_util.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/rest.h"

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct kube_client *c;

/* Events in ns with reason (and regarding name when given): how many, and the series count
 * (0 without a series) of the last one. */
static int events_with(const char *ns, const char *reason, const char *regarding, int *series_count)
{
    struct kube_err err;
    char *p = kube_path("events.k8s.io/v1", ns, "events", NULL, NULL);
    cJSON *list = kube_rest_list(c, p, NULL, &err);
    free(p);
    if (!list) {
        printf("# listing events: %s\n", err.msg);
        return -1;
    }
    int n = 0;
    *series_count = 0;
    const cJSON *ev;
    cJSON_ArrayForEach (ev, cJSON_GetObjectItem(list, "items")) {
        const cJSON *r = cJSON_GetObjectItem(ev, "reason");
        const cJSON *reg = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "regarding"), "name");
        if (!cJSON_IsString(r) || strcmp(r->valuestring, reason))
            continue;
        if (regarding && (!cJSON_IsString(reg) || strcmp(reg->valuestring, regarding)))
            continue;
        n++;
        const cJSON *cnt = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "series"), "count");
        *series_count = cJSON_IsNumber(cnt) ? cnt->valueint : 0;
    }
    cJSON_Delete(list);
    return n;
}

int main(void)
{
    struct kube_config *cfg = NULL;
    struct kube_err err;
    c = e2e_kube_client("events_e2e", NULL, &cfg);
    if (!c)
        return 2;
    kube_client_set_rate_limit(c, 0, 0);
    char ns[64];
    e2e_namespace_create(c, "events-e2e", ns, sizeof(ns));
    cJSON *b = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"subject\"}}");
    char *cms = kube_path("v1", ns, "configmaps", NULL, NULL);
    cJSON *cm = kube_rest_create(c, cms, b, NULL, &err);
    e2e_check(cm != NULL, "create ConfigMap subject (%s)", cm ? "" : err.msg);
    cJSON_Delete(b);
    free(cms);
    const cJSON *uid = cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "metadata"), "uid");
    struct kube_event_ref ref = {"v1", "ConfigMap", ns, "subject", cJSON_IsString(uid) ? uid->valuestring : NULL};

    /* every repeat patched at once */
    struct kube_events *ev = kube_events_new(c, "rebalance.psi.dev/e2e", "events-e2e", &err);
    kube_events_set_aggregation(ev, 0, -1);
    const int N = 5;
    int ok = 1;
    for (int i = 0; i < N; i++) {
        if (kube_events_record(ev, &ref, &(struct kube_event_occurrence){"Normal", "Tested", "Probe", "the same note"},
                               wall_ms(), &err)) {
            printf("# record %d: %s\n", i, err.msg);
            ok = 0;
        }
    }
    e2e_check(ok, "recorded the same event %d times", N);
    int count, n = events_with(ns, "Tested", "subject", &count);
    e2e_check(n == 1 && count == N, "one Event with series.count == %d (events %d, count %d)", N, n, count);

    e2e_check(kube_events_record(ev, &ref,
                                 &(struct kube_event_occurrence){"Warning", "OtherReason", "Probe", "the same note"},
                                 wall_ms(), &err) == 0,
              "record with another reason (%s)", err.msg);
    n = events_with(ns, "OtherReason", "subject", &count);
    int n1 = events_with(ns, "Tested", "subject", &count);
    e2e_check(n == 1 && n1 == 1, "another reason is a second Event, the first is unchanged (%d, %d)", n, n1);
    kube_events_free(ev);

    /* default interval: repeats held back, flushed on demand */
    ev = kube_events_new(c, "rebalance.psi.dev/e2e", "events-e2e", &err);
    for (int i = 0; i < 4; i++)
        kube_events_record(ev, &ref, &(struct kube_event_occurrence){"Normal", "Deferred", "Probe", NULL}, wall_ms(),
                           &err);
    n = events_with(ns, "Deferred", "subject", &count);
    e2e_check(n == 1 && count == 0, "4 quick repeats: one Event created, repeats held back (events %d, count %d)", n,
              count);
    int64_t next = 0;
    e2e_check(kube_events_flush(ev, wall_ms(), 0, &next, &err) == 0 && next != INT64_MAX,
              "nothing is due before the interval, a flush is scheduled");
    e2e_check(kube_events_flush(ev, wall_ms(), 1, &next, &err) == 0 && next == INT64_MAX,
              "forced flush sends everything (%s)", err.msg);
    n = events_with(ns, "Deferred", "subject", &count);
    e2e_check(n == 1 && count == 4, "after the flush: series.count == 4 (events %d, count %d)", n, count);

    /* a cluster-scoped object: the Event goes to the default namespace */
    char node_reason[64];
    snprintf(node_reason, sizeof(node_reason), "E2eNodeProbe%d", (int)getpid());
    struct kube_event_ref node = {"v1", "Node", NULL, "worker-0", NULL};
    e2e_check(kube_events_record(ev, &node,
                                 &(struct kube_event_occurrence){"Normal", node_reason, "Probe", "node note"},
                                 wall_ms(), &err) == 0,
              "record on Node worker-0 (%s)", err.msg);
    n = events_with("default", node_reason, "worker-0", &count);
    e2e_check(n == 1, "the Node's Event is in namespace default (%d)", n);
    kube_events_free(ev);

    /* clean up the default-namespace event and the namespace */
    char *p = kube_path("events.k8s.io/v1", "default", "events", NULL, NULL);
    cJSON *list = kube_rest_list(c, p, NULL, &err);
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(list, "items")) {
        const cJSON *rs = cJSON_GetObjectItem(it, "reason");
        const cJSON *nm = cJSON_GetObjectItem(cJSON_GetObjectItem(it, "metadata"), "name");
        if (cJSON_IsString(rs) && !strcmp(rs->valuestring, node_reason) && cJSON_IsString(nm)) {
            char *ep = kube_path("events.k8s.io/v1", "default", "events", nm->valuestring, NULL);
            cJSON_Delete(kube_rest_delete(c, ep, NULL, NULL, &err));
            free(ep);
        }
    }
    cJSON_Delete(list);
    free(p);
    e2e_namespace_delete(c, ns);
    cJSON_Delete(cm);
    kube_client_free(c);
    kube_config_free(cfg);
    return e2e_report();
}
