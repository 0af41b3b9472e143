/* A watch stream: the framer splits the bytes (in two feeds, at a point the input picks)
 * into lines, queued as the watch queues them (kube_linequeue); each line taken from the
 * queue is decoded as an event, and as a metav1.Status error reply. Each line is also
 * stripped of object.metadata.managedFields (kube_jsonstrip) as the watch does when it queues
 * it: a line it shortens must have parsed, and must parse into the same tree less that member. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "kube/framing.h"
#include "kube/jsonstrip.h"
#include "kube/linequeue.h"
#include "kube/rest.h"
#include "kube/watch.h"

static int queue(const char *l, size_t len, void *ud)
{
    return kube_linequeue_push(ud, l, len, NULL) == 0 ? 0 : 1;
}

static void decode(const char *l, size_t len)
{
    cJSON *ev = cJSON_ParseWithLength(l, len);
    struct kube_watch_event e;
    char why[128];
    kube_watch_event_decode(ev, &e, why, sizeof(why));
    cJSON_Delete(ev);
    struct kube_err err;
    kube_rest_decode_status(l, len, 0, "GET", "u", &err);
    kube_rest_decode_status(l, len, 500, "GET", "u", &err);
}

/* The strip changes nothing the parser sees but object.metadata.managedFields. */
static void strip(const char *l, size_t len)
{
    char *copy = fuzz_cstr((const uint8_t *)l, len);
    if (!copy)
        return;
    size_t n = kube_jsonstrip_managed_fields(copy, len);
    if (n > len || (n < len && copy[n] != '\0'))
        abort();
    if (n < len) {
        cJSON *before = cJSON_ParseWithLength(l, len);
        if (!before)
            abort(); /* stripped what the parser refuses: the scan took it for JSON */
        cJSON *md = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(before, "object"), "metadata");
        if (!cJSON_GetObjectItemCaseSensitive(md, "managedFields"))
            abort();
        cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
        cJSON *after = cJSON_ParseWithLength(copy, n);
        if (!after)
            abort();
        /* Printed, not cJSON_Compare: that one finds members by key, and duplicate keys are
         * legal input where it reports a tree unequal to itself. */
        char *pb = cJSON_PrintUnformatted(before), *pa = cJSON_PrintUnformatted(after);
        if (pb && pa && strcmp(pb, pa) != 0)
            abort();
        cJSON_free(pb);
        cJSON_free(pa);
        cJSON_Delete(after);
        cJSON_Delete(before);
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_framing *f = kube_framing_new(4096);
    if (!f)
        return 0;
    size_t cut = size ? data[0] % (size + 1) : 0;
    struct kube_err err;
    struct kube_linequeue q = {0};
    if (kube_framing_feed(f, (const char *)data, cut, queue, &q, &err) == 0)
        kube_framing_feed(f, (const char *)data + cut, size - cut, queue, &q, &err);
    (void)kube_framing_pending(f);
    const char *l;
    size_t len;
    while ((l = kube_linequeue_next(&q, &len)) != NULL) {
        decode(l, len);
        strip(l, len);
    }
    kube_linequeue_free(&q);
    kube_framing_free(f);
    return 0;
}
