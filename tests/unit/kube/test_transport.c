/* Unit tests of the transport seam (kube/transport.h): what kube_rest_request does around
 * any transport's answer (the observer, errors, parsing), and that a sibling client sends
 * through its parent's transport. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "kube/rest.h"
#include "kube/transport.h"

/* A transport that answers every request the same way. */
struct canned {
    int rc;
    long status;
    const char *body;
    int calls;
    char last_url[128];
};

static int canned_send(void *ud, const struct kube_transport_request *req, long *status, struct kube_rest_reply *reply,
                       struct kube_err *err)
{
    struct canned *t = ud;
    t->calls++;
    snprintf(t->last_url, sizeof(t->last_url), "%s", req->url);
    if (t->rc != 0)
        return kube_err_set(err, 0, "Transport", "canned failure"), t->rc;
    *status = t->status;
    if (t->body)
        kube_rest_reply_write((char *)t->body, 1, strlen(t->body), reply);
    return 0;
}

struct seen {
    int calls;
    long status;
};

static void observe(const char *method, long status, void *ud)
{
    (void)method;
    struct seen *s = ud;
    s->calls++;
    s->status = status;
}

struct fixture {
    struct kube_config cfg;
    struct kube_client *c;
    struct seen seen;
};

static void fixture_init(struct fixture *f, struct canned *t)
{
    memset(f, 0, sizeof(*f));
    f->cfg.server = f->cfg.effective_server = "https://seam.invalid";
    struct kube_err err;
    f->c = kube_client_new(&f->cfg, &err);
    assert_non_null(f->c);
    kube_client_set_transport(f->c, &(struct kube_transport){canned_send, t});
    kube_client_set_observer(f->c, observe, &f->seen);
}

static void test_reply_parsed_and_observed(void **state)
{
    (void)state;
    struct canned t = {0, 200, "{\"kind\": \"Node\"}", 0, ""};
    struct fixture f;
    fixture_init(&f, &t);
    struct kube_err err;
    cJSON *j = kube_rest_get(f.c, "/api/v1/nodes/a", &err);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "kind")->valuestring, "Node");
    assert_string_equal(t.last_url, "https://seam.invalid/api/v1/nodes/a");
    assert_int_equal(f.seen.calls, 1);
    assert_int_equal(f.seen.status, 200);
    cJSON_Delete(j);
    kube_client_free(f.c);
}

static void test_error_reply_decoded(void **state)
{
    (void)state;
    struct canned t = {0, 503, "upstream down", 0, ""};
    struct fixture f;
    fixture_init(&f, &t);
    struct kube_err err;
    assert_null(kube_rest_get(f.c, "/api/v1/nodes", &err));
    assert_int_equal(err.status, 503);
    assert_string_equal(err.reason, "Decode"); /* not a metav1.Status */
    assert_int_equal(f.seen.status, 503);
    kube_client_free(f.c);
}

static void test_no_reply_is_observed_not_sent_is_not(void **state)
{
    (void)state;
    struct canned t = {KUBE_TRANSPORT_NO_REPLY, 0, NULL, 0, ""};
    struct fixture f;
    fixture_init(&f, &t);
    struct kube_err err;
    assert_null(kube_rest_get(f.c, "/api/v1/nodes", &err));
    assert_string_equal(err.reason, "Transport");
    assert_int_equal(f.seen.calls, 1);
    assert_int_equal(f.seen.status, 0);
    t.rc = KUBE_TRANSPORT_NOT_SENT;
    assert_null(kube_rest_get(f.c, "/api/v1/nodes", &err));
    assert_int_equal(f.seen.calls, 1);
    kube_client_free(f.c);
}

static void test_sibling_shares_the_transport(void **state)
{
    (void)state;
    struct canned t = {0, 200, "{}", 0, ""};
    struct fixture f;
    fixture_init(&f, &t);
    struct kube_err err;
    struct kube_client *s = kube_client_new_sibling(f.c, &err);
    assert_non_null(s);
    cJSON *j = kube_rest_get(s, "/api/v1/namespaces", &err);
    assert_non_null(j);
    assert_int_equal(t.calls, 1);
    cJSON_Delete(j);
    kube_client_free(s);
    kube_client_free(f.c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply_parsed_and_observed),
        cmocka_unit_test(test_error_reply_decoded),
        cmocka_unit_test(test_no_reply_is_observed_not_sent_is_not),
        cmocka_unit_test(test_sibling_shares_the_transport),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}
