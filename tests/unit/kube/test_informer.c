/* Unit tests for the informer's cache logic: lists, relist diffs, duplicates, bookmarks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/informer.h"

/* What the projection keeps: the name, rv and label "step". */
struct node_view {
    char name[64];
    char rv[32];
    char step[32];
};

static int projections;

static void *project(const cJSON *obj, void *ud)
{
    (void)ud;
    projections++;
    struct node_view *v = calloc(1, sizeof(*v));
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *s;
    if (cJSON_IsString(s = cJSON_GetObjectItemCaseSensitive(md, "name")))
        snprintf(v->name, sizeof(v->name), "%s", s->valuestring);
    if (cJSON_IsString(s = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion")))
        snprintf(v->rv, sizeof(v->rv), "%s", s->valuestring);
    s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "labels"), "step");
    if (cJSON_IsString(s))
        snprintf(v->step, sizeof(v->step), "%s", s->valuestring);
    return v;
}

/* The handler log: one line per call, "add a 1 s0", "update a 1->2", "delete a 2 unknown". */
static char logbuf[1 << 20];
static size_t loglen;
static int synced_calls;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loglen += (size_t)vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen, fmt, ap);
    va_end(ap);
}

static void on_add(const char *key, const void *obj, void *ud)
{
    (void)ud;
    const struct node_view *v = obj;
    logf_("add %s %s %s\n", key, v->rv, v->step);
}

static void on_update(const char *key, const void *old_obj, const void *new_obj, void *ud)
{
    (void)ud;
    const struct node_view *o = old_obj, *n = new_obj;
    logf_("update %s %s->%s %s\n", key, o->rv, n->rv, n->step);
}

static void on_delete(const char *key, const void *obj, bool unknown, void *ud)
{
    (void)ud;
    const struct node_view *v = obj;
    logf_("delete %s %s%s\n", key, v->rv, unknown ? " unknown" : "");
}

static void on_synced(void *ud)
{
    (void)ud;
    synced_calls++;
}

static struct kube_informer *new_informer(void)
{
    loglen = 0;
    logbuf[0] = '\0';
    synced_calls = 0;
    projections = 0;
    struct kube_informer_opts o = {
        .path = "/api/v1/nodes",
        .project = project,
        .handlers = {.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .on_synced = on_synced},
    };
    struct kube_err err = {0};
    struct kube_informer *inf = kube_informer_new(&o, &err);
    assert_non_null(inf);
    return inf;
}

/* A node-like object; ns may be NULL. Caller deletes. */
static cJSON *obj(const char *ns, const char *name, const char *uid, const char *rv, const char *step)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    if (name)
        cJSON_AddStringToObject(md, "name", name);
    if (ns)
        cJSON_AddStringToObject(md, "namespace", ns);
    if (uid)
        cJSON_AddStringToObject(md, "uid", uid);
    if (rv)
        cJSON_AddStringToObject(md, "resourceVersion", rv);
    cJSON *labels = cJSON_AddObjectToObject(md, "labels");
    if (step)
        cJSON_AddStringToObject(labels, "step", step);
    cJSON *mf = cJSON_AddArrayToObject(md, "managedFields");
    cJSON_AddItemToArray(mf, cJSON_CreateString("big"));
    return o;
}

static void item(struct kube_informer *inf, const char *name, const char *uid, const char *rv, const char *step)
{
    cJSON *o = obj(NULL, name, uid, rv, step);
    kube_informer_list_item(inf, o); /* takes o */
}

static void event(struct kube_informer *inf, enum kube_watch_type t, const char *name, const char *uid, const char *rv,
                  const char *step)
{
    cJSON *o = obj(NULL, name, uid, rv, step);
    kube_informer_event(inf, t, o); /* takes o */
}

static void bookmark(struct kube_informer *inf, const char *rv, bool end)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "Node");
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(md, "resourceVersion", rv);
    if (end)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), KUBE_WATCH_INITIAL_EVENTS_END, "true");
    kube_informer_event(inf, KUBE_WATCH_BOOKMARK, o);
}

/* The log lines, sorted (a relist's deletes come in hash order). */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void assert_log_sorted(const char *want)
{
    char *got = strdup(logbuf);
    char *lines[4096];
    size_t n = 0;
    for (char *save = NULL, *l = strtok_r(got, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    qsort(lines, n, sizeof(lines[0]), cmp_str);
    char sorted[1 << 16] = "";
    size_t off = 0;
    for (size_t i = 0; i < n; i++)
        off += (size_t)snprintf(sorted + off, sizeof(sorted) - off, "%s\n", lines[i]);
    assert_string_equal(sorted, want);
    free(got);
    loglen = 0;
    logbuf[0] = '\0';
}

static void assert_log(const char *want)
{
    assert_string_equal(logbuf, want);
    loglen = 0;
    logbuf[0] = '\0';
}

static void test_initial_list(void **state)
{
    (void)state;
    struct kube_informer *inf = new_informer();
    assert_false(kube_informer_synced(inf));
    kube_informer_list_begin(inf);
    item(inf, "a", "ua", "10", "s0");
    item(inf, "b", "ub", "11", "s0");
    assert_false(kube_informer_synced(inf));
    kube_informer_list_end(inf, "20");
    assert_true(kube_informer_synced(inf));
    assert_int_equal(synced_calls, 1);
    assert_log("add a 10 s0\nadd b 11 s0\n");
    assert_int_equal(kube_informer_len(inf), 2);
    assert_string_equal(kube_informer_rv(inf), "20");
    const struct node_view *v = kube_informer_get(inf, NULL, "b");
    assert_non_null(v);
    assert_string_equal(v->rv, "11");
    assert_null(kube_informer_get(inf, NULL, "c"));
    assert_string_equal(kube_informer_rv_of(inf, "a"), "10");
    kube_informer_free(inf);
}

static void test_watch_events_and_duplicates(void **state)
{
    (void)state;
    struct kube_informer *inf = new_informer();
    kube_informer_list_begin(inf);
    kube_informer_list_end(inf, "5");
    assert_true(kube_informer_synced(inf));
    event(inf, KUBE_WATCH_ADDED, "a", "ua", "6", "s0");
    event(inf, KUBE_WATCH_ADDED, "a", "ua", "6", "s0"); /* duplicate */
    event(inf, KUBE_WATCH_MODIFIED, "a", "ua", "7", "s1");
    event(inf, KUBE_WATCH_MODIFIED, "a", "ua", "7", "s1"); /* duplicate */
    event(inf, KUBE_WATCH_MODIFIED, "b", "ub", "8", "s0"); /* unknown key: an add */
    event(inf, KUBE_WATCH_DELETED, "a", "ua", "9", "s1");
    event(inf, KUBE_WATCH_DELETED, "a", "ua", "9", "s1");  /* duplicate */
    event(inf, KUBE_WATCH_DELETED, "zz", "uz", "9", "s1"); /* never seen */
    assert_log("add a 6 s0\nupdate a 6->7 s1\nadd b 8 s0\ndelete a 9\n");
    struct kube_informer_stats st = kube_informer_stats(inf);
    assert_int_equal(st.adds, 2);
    assert_int_equal(st.updates, 1);
    assert_int_equal(st.deletes, 1);
    assert_int_equal(st.duplicates, 4);
    assert_int_equal(kube_informer_len(inf), 1);
    assert_string_equal(kube_informer_rv(inf), "9");
    kube_informer_free(inf);
}

static void test_relist_diff(void **state)
{
    (void)state;
    struct kube_informer *inf = new_informer();
    kube_informer_list_begin(inf);
    item(inf, "same", "u1", "1", "s0");
    item(inf, "changed", "u2", "2", "s0");
    item(inf, "gone", "u3", "3", "s0");
    item(inf, "replaced", "u4", "4", "s0");
    kube_informer_list_end(inf, "4");
    assert_int_equal(kube_informer_len(inf), 4);
    loglen = 0;
    logbuf[0] = '\0';
    int before = projections;

    /* While disconnected: "changed" changed, "gone" was deleted, "replaced" was deleted and
     * created again (new uid), "new" was created. */
    kube_informer_list_begin(inf);
    item(inf, "same", "u1", "1", "s0");
    item(inf, "changed", "u2", "12", "s1");
    item(inf, "replaced", "u9", "14", "s0");
    item(inf, "new", "u5", "15", "s0");
    kube_informer_list_end(inf, "20");
    assert_log_sorted("add new 15 s0\n"
                      "add replaced 14 s0\n"
                      "delete gone 3 unknown\n"
                      "delete replaced 4 unknown\n"
                      "update changed 2->12 s1\n");
    /* An unchanged object is not even projected again. */
    assert_int_equal(projections - before, 3);
    assert_int_equal(kube_informer_len(inf), 4);
    assert_false(kube_informer_has(inf, "gone"));
    assert_string_equal(kube_informer_rv_of(inf, "replaced"), "14");
    assert_int_equal(synced_calls, 2);
    struct kube_informer_stats st = kube_informer_stats(inf);
    assert_int_equal(st.relist_deletes, 2);
    assert_int_equal(st.lists, 2);

    /* A relist of an unchanged world emits nothing. */
    kube_informer_list_begin(inf);
    item(inf, "same", "u1", "1", "s0");
    item(inf, "changed", "u2", "12", "s1");
    item(inf, "replaced", "u9", "14", "s0");
    item(inf, "new", "u5", "15", "s0");
    kube_informer_list_end(inf, "21");
    assert_log("");

    /* An empty list deletes everything. */
    kube_informer_list_begin(inf);
    kube_informer_list_end(inf, "22");
    assert_log_sorted("delete changed 12 unknown\ndelete new 15 unknown\n"
                      "delete replaced 14 unknown\ndelete same 1 unknown\n");
    assert_int_equal(kube_informer_len(inf), 0);
    kube_informer_free(inf);
}

/* A list interrupted half way and started again: what the partial list delivered is not
 * delivered again, and the deletes come only from the complete list. */
static void test_interrupted_relist(void **state)
{
    (void)state;
    struct kube_informer *inf = new_informer();
    kube_informer_list_begin(inf);
    item(inf, "a", "ua", "1", "s0");
    item(inf, "b", "ub", "2", "s0");
    item(inf, "c", "uc", "3", "s0");
    kube_informer_list_end(inf, "3");
    loglen = 0;
    logbuf[0] = '\0';

    kube_informer_list_begin(inf);
    item(inf, "a", "ua", "11", "s1");
    /* the stream broke here */
    kube_informer_list_begin(inf);
    item(inf, "a", "ua", "11", "s1");
    item(inf, "c", "uc", "3", "s0");
    item(inf, "d", "ud", "12", "s0");
    kube_informer_list_end(inf, "12");
    assert_log_sorted("add d 12 s0\ndelete b 2 unknown\nupdate a 1->11 s1\n");
    kube_informer_free(inf);
}

static void test_bookmarks(void **state)
{
    (void)state;
    struct kube_informer *inf = new_informer();
    kube_informer_list_begin(inf);
    item(inf, "a", "ua", "1", "s0");
    kube_informer_list_end(inf, "1");
    loglen = 0;
    logbuf[0] = '\0';
    bookmark(inf, "50", false);
    bookmark(inf, "60", true);
    assert_log("");
    assert_string_equal(kube_informer_rv(inf), "60");
    assert_int_equal(kube_informer_len(inf), 1);
    assert_string_equal(kube_informer_rv_of(inf, "a"), "1");
    struct kube_informer_stats st = kube_informer_stats(inf);
    assert_int_equal(st.adds, 1);
    assert_int_equal(st.updates + st.deletes + st.duplicates, 0);
    kube_informer_free(inf);
}

static void test_namespaced_keys_and_bad_objects(void **state)
{
    (void)state;
    struct kube_informer *inf = new_informer();
    kube_informer_list_begin(inf);
    cJSON *o1 = obj("ns1", "p", "u1", "1", "s0");
    cJSON *o2 = obj("ns2", "p", "u2", "2", "s0");
    cJSON *bad1 = obj(NULL, NULL, "u3", "3", "s0");  /* no name */
    cJSON *bad2 = obj("ns1", "q", "u4", NULL, "s0"); /* no resourceVersion */
    kube_informer_list_item(inf, o1);
    kube_informer_list_item(inf, o2);
    kube_informer_list_item(inf, bad1);
    kube_informer_list_item(inf, bad2);
    kube_informer_list_end(inf, "5");
    assert_log("add ns1/p 1 s0\nadd ns2/p 2 s0\n");
    assert_int_equal(kube_informer_len(inf), 2);
    assert_non_null(kube_informer_get(inf, "ns1", "p"));
    assert_non_null(kube_informer_get(inf, "ns2", "p"));
    assert_null(kube_informer_get(inf, NULL, "p"));
    assert_ptr_equal(kube_informer_get_key(inf, "ns2/p"), kube_informer_get(inf, "ns2", "p"));
    assert_null(kube_informer_get_key(inf, "ns3/p"));
    kube_informer_free(inf);
}

static int count_cb(const char *key, const char *rv, const void *o, void *ud)
{
    (void)key;
    (void)o;
    assert_non_null(rv);
    (*(size_t *)ud)++;
    return 0;
}

/* Many objects (the table grows); a relist that drops every other one. */
static void test_many_objects(void **state)
{
    (void)state;
    struct kube_informer *inf = new_informer();
    enum { N = 5000 };
    char name[32], rv[32];
    kube_informer_list_begin(inf);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "n%05d", i);
        snprintf(rv, sizeof(rv), "%d", i + 1);
        item(inf, name, name, rv, "s0");
    }
    kube_informer_list_end(inf, "9999");
    assert_int_equal(kube_informer_len(inf), N);
    assert_int_equal(kube_informer_stats(inf).adds, N);
    size_t n = 0;
    assert_int_equal(kube_informer_foreach(inf, count_cb, &n), 0);
    assert_int_equal(n, N);
    kube_informer_list_begin(inf);
    for (int i = 0; i < N; i += 2) {
        snprintf(name, sizeof(name), "n%05d", i);
        snprintf(rv, sizeof(rv), "%d", i + 1);
        item(inf, name, name, rv, "s0");
    }
    kube_informer_list_end(inf, "10000");
    assert_int_equal(kube_informer_len(inf), N / 2);
    struct kube_informer_stats st = kube_informer_stats(inf);
    assert_int_equal(st.deletes, N / 2);
    assert_int_equal(st.updates, 0);
    assert_true(kube_informer_has(inf, "n00000"));
    assert_false(kube_informer_has(inf, "n00001"));
    kube_informer_free(inf);
}

/* Without a projection the informer keeps the object it is given (no copy) minus
 * managedFields, from events and list items alike, and frees it when replaced or deleted
 * (the sanitizer's leak check sees a value kept twice or lost). */
static const cJSON *seen_default, *seen_old, *seen_deleted;
static int default_adds, default_updates, default_deletes;
static void on_add_default(const char *key, const void *o, void *ud)
{
    (void)key;
    (void)ud;
    seen_default = o;
    default_adds++;
}

static void on_update_default(const char *key, const void *old_obj, const void *new_obj, void *ud)
{
    (void)key;
    (void)ud;
    seen_old = old_obj;
    seen_default = new_obj;
    default_updates++;
}

static void on_delete_default(const char *key, const void *o, bool unknown, void *ud)
{
    (void)key;
    (void)unknown;
    (void)ud;
    seen_deleted = o;
    default_deletes++;
}

static void assert_kept_without_managed_fields(const cJSON *c, const char *name, const char *rv)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(c, "metadata");
    assert_null(cJSON_GetObjectItemCaseSensitive(md, "managedFields"));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(md, "name")->valuestring, name);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion")->valuestring, rv);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(md, "labels"));
}

static void test_default_projection(void **state)
{
    (void)state;
    struct kube_informer_opts o = {
        .path = "/api/v1/nodes",
        .handlers = {.on_add = on_add_default, .on_update = on_update_default, .on_delete = on_delete_default},
    };
    struct kube_informer *inf = kube_informer_new(&o, NULL);
    assert_non_null(inf);

    cJSON *l = obj(NULL, "l", "ul", "1", "s0"); /* a LIST item, with its managedFields */
    kube_informer_list_begin(inf);
    kube_informer_list_item(inf, l);
    kube_informer_list_end(inf, "1");
    assert_ptr_equal(kube_informer_get(inf, NULL, "l"), l);
    assert_kept_without_managed_fields(l, "l", "1");

    cJSON *a1 = obj(NULL, "a", "ua", "2", "s0");
    kube_informer_event(inf, KUBE_WATCH_ADDED, a1);
    assert_int_equal(default_adds, 2);
    assert_ptr_equal(seen_default, a1);
    assert_ptr_equal(kube_informer_get(inf, NULL, "a"), a1);
    assert_kept_without_managed_fields(a1, "a", "2");

    cJSON *a2 = obj(NULL, "a", "ua", "3", "s1");
    kube_informer_event(inf, KUBE_WATCH_MODIFIED, a2);
    assert_int_equal(default_updates, 1);
    assert_ptr_equal(seen_old, a1);
    assert_ptr_equal(seen_default, a2);
    assert_ptr_equal(kube_informer_get(inf, NULL, "a"), a2);

    kube_informer_event(inf, KUBE_WATCH_MODIFIED, obj(NULL, "a", "ua", "3", "s1")); /* a duplicate */
    assert_int_equal(default_updates, 1);
    assert_ptr_equal(kube_informer_get(inf, NULL, "a"), a2);

    cJSON *gone = obj(NULL, "a", "ua", "4", "s2");
    kube_informer_event(inf, KUBE_WATCH_DELETED, gone);
    assert_int_equal(default_deletes, 1);
    assert_ptr_equal(seen_deleted, gone); /* the final state, from the event */
    assert_null(kube_informer_get(inf, NULL, "a"));
    assert_string_equal(kube_informer_rv(inf), "4");
    kube_informer_free(inf);
}

static void test_bad_options(void **state)
{
    (void)state;
    struct kube_err err = {0};
    struct kube_informer_opts o = {.path = "api/v1/nodes"};
    assert_null(kube_informer_new(&o, &err));
    assert_string_equal(err.reason, "Invalid");
    assert_non_null(strstr(err.msg, "collection path"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_list), cmocka_unit_test(test_watch_events_and_duplicates),
        cmocka_unit_test(test_relist_diff),  cmocka_unit_test(test_interrupted_relist),
        cmocka_unit_test(test_bookmarks),    cmocka_unit_test(test_namespaced_keys_and_bad_objects),
        cmocka_unit_test(test_many_objects), cmocka_unit_test(test_default_projection),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
