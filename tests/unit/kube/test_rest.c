/* Unit tests for kube_rest's pure parts: metav1.Status decoding, URL escaping, path building,
 * the reply gatherer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/rest.h"

static void test_status_decoding(void **state)
{
    (void)state;
    struct kube_err err;
    const char *body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                       "\"message\":\"pods \\\"x\\\" not found\",\"reason\":\"NotFound\","
                       "\"details\":{\"name\":\"x\",\"kind\":\"pods\"},\"code\":404}";
    assert_int_equal(
        kube_rest_decode_status(body, strlen(body), 404, "GET", "https://h/api/v1/namespaces/a/pods/x", &err), -1);
    assert_int_equal(err.status, 404);
    assert_string_equal(err.reason, "NotFound");
    assert_string_equal(err.msg, "GET https://h/api/v1/namespaces/a/pods/x: pods \"x\" not found");

    body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"Operation cannot be fulfilled on leases "
           "\\\"l\\\": the object has been modified\",\"reason\":\"Conflict\",\"code\":409}";
    kube_rest_decode_status(body, strlen(body), 409, "PUT", "u", &err);
    assert_int_equal(err.status, 409);
    assert_string_equal(err.reason, "Conflict");
    assert_string_equal(err.msg, "PUT u: Operation cannot be fulfilled on leases \"l\": the object has been modified");

    /* eviction refused by a PodDisruptionBudget: 429, distinguishable */
    body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"Cannot evict pod as it would violate the "
           "pod's disruption budget.\",\"reason\":\"TooManyRequests\",\"details\":{\"causes\":[{\"reason\":"
           "\"DisruptionBudget\"}]},\"code\":429}";
    kube_rest_decode_status(body, strlen(body), 429, "POST", "u", &err);
    assert_int_equal(err.status, 429);
    assert_string_equal(err.reason, "TooManyRequests");

    /* a Status without reason: the reason comes from the HTTP code */
    body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"boom\",\"code\":500}";
    kube_rest_decode_status(body, strlen(body), 500, "GET", "u", &err);
    assert_string_equal(err.reason, "InternalError");
    assert_string_equal(err.msg, "GET u: boom");

    /* 410 from a watch/list: reason Expired kept */
    body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"too old resource version\",\"reason\":"
           "\"Expired\",\"code\":410}";
    kube_rest_decode_status(body, strlen(body), 410, "GET", "u", &err);
    assert_int_equal(err.status, 410);
    assert_string_equal(err.reason, "Expired");
}

static void test_status_garbled(void **state)
{
    (void)state;
    struct kube_err err;
    const char *html = "<html><body>502 Bad Gateway</body></html>";
    kube_rest_decode_status(html, strlen(html), 502, "GET", "https://h/api/v1/nodes", &err);
    assert_int_equal(err.status, 502);
    assert_string_equal(err.reason, "Decode");
    assert_string_equal(err.msg, "GET https://h/api/v1/nodes: HTTP 502 (Unknown): reply is not a metav1.Status: "
                                 "\"<html><body>502 Bad Gateway</body></html>\"");
    /* truncated JSON */
    const char *cut = "{\"kind\":\"Status\",\"code\":4";
    kube_rest_decode_status(cut, strlen(cut), 403, "GET", "u", &err);
    assert_string_equal(err.reason, "Decode");
    assert_int_equal(err.status, 403);
    /* JSON, but not a Status */
    const char *obj = "{\"kind\":\"Pod\"}";
    kube_rest_decode_status(obj, strlen(obj), 400, "GET", "u", &err);
    assert_string_equal(err.reason, "Decode");
    /* binary junk is shown escaped */
    const char junk[] = {'\x01', '"', '\xff', 0};
    kube_rest_decode_status(junk, 3, 500, "GET", "u", &err);
    assert_string_equal(err.msg, "GET u: HTTP 500 (InternalError): reply is not a metav1.Status: \"\\x01\\x22\\xff\"");
    /* empty body */
    kube_rest_decode_status(NULL, 0, 503, "GET", "u", &err);
    assert_string_equal(err.reason, "ServiceUnavailable");
    assert_string_equal(err.msg, "GET u: HTTP 503 (ServiceUnavailable) with an empty body");
}

/* A Status code is read only when it is an HTTP status: a server's 1e300 is no integer. */
static void test_status_code_out_of_range(void **state)
{
    (void)state;
    static const char *const codes[] = {"1e300", "-1e300", "2.5", "99999999999999999999", "600", "-404", "\"404\""};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        char body[200];
        struct kube_err err;
        snprintf(body, sizeof(body), "{\"kind\":\"Status\",\"reason\":\"Odd\",\"message\":\"m\",\"code\":%s}",
                 codes[i]);
        kube_rest_decode_status(body, strlen(body), 0, "GET", "u", &err);
        if (err.status != 0)
            fail_msg("code %s read as the status %ld", codes[i], err.status);
        assert_string_equal(err.reason, "Odd");
        /* a 3xx reply: its own status stays */
        kube_rest_decode_status(body, strlen(body), 302, "GET", "u", &err);
        assert_int_equal(err.status, 302);
    }
    const char *ok = "{\"kind\":\"Status\",\"code\":404}";
    struct kube_err err;
    kube_rest_decode_status(ok, strlen(ok), 0, "GET", "u", &err);
    assert_int_equal(err.status, 404);
    assert_string_equal(err.reason, "NotFound");
}

/* Paging ends: a repeated continue token or too many pages is an error, never a loop. */
static void test_list_continue_check(void **state)
{
    (void)state;
    char why[200];
    assert_int_equal(kube_rest_list_check_continue(NULL, "a", 1, why, sizeof(why)), 0);
    assert_int_equal(kube_rest_list_check_continue("a", "b", 2, why, sizeof(why)), 0);
    assert_int_equal(kube_rest_list_check_continue("b", "b", 3, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "would not end"));
    assert_int_equal(kube_rest_list_check_continue("a", "b", KUBE_REST_LIST_MAX_PAGES - 1, why, sizeof(why)), 0);
    assert_int_equal(kube_rest_list_check_continue("a", "b", KUBE_REST_LIST_MAX_PAGES, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "pages"));
}

static void test_url_escape(void **state)
{
    (void)state;
    char *s = kube_url_escape("app in (a,b),tier!=x y/z&q=1%~._-");
    assert_string_equal(s, "app%20in%20%28a%2Cb%29%2Ctier%21%3Dx%20y%2Fz%26q%3D1%25~._-");
    free(s);
    s = kube_url_escape("é");
    assert_string_equal(s, "%C3%A9");
    free(s);
    s = kube_url_escape("");
    assert_string_equal(s, "");
    free(s);
}

static void test_path_building(void **state)
{
    (void)state;
    char *p = kube_path("v1", NULL, "nodes", NULL, NULL);
    assert_string_equal(p, "/api/v1/nodes");
    free(p);
    p = kube_path("v1", "", "nodes", "worker-0", "status");
    assert_string_equal(p, "/api/v1/nodes/worker-0/status");
    free(p);
    p = kube_path("coordination.k8s.io/v1", "kube-system", "leases", "psi", NULL);
    assert_string_equal(p, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/psi");
    free(p);
    p = kube_path("v1", "ns", "pods", "a/b?c#d", "eviction"); /* a hostile name cannot change the path */
    assert_string_equal(p, "/api/v1/namespaces/ns/pods/a%2Fb%3Fc%23d/eviction");
    free(p);
    p = kube_path("rebalance.psi.dev/v1alpha1", NULL, "psirebalances", NULL, NULL);
    assert_string_equal(p, "/apis/rebalance.psi.dev/v1alpha1/psirebalances");
    free(p);

    const char *q1[] = {"labelSelector", "app=x,tier in (a,b)", "limit", "2", "continue", NULL, NULL};
    p = kube_path_query("/api/v1/pods", q1);
    assert_string_equal(p, "/api/v1/pods?labelSelector=app%3Dx%2Ctier%20in%20%28a%2Cb%29&limit=2");
    free(p);
    const char *q2[] = {"fieldSelector", "spec.nodeName=n1", NULL};
    p = kube_path_query("/api/v1/pods?watch=1", q2);
    assert_string_equal(p, "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1");
    free(p);
    p = kube_path_query("/api/v1/pods", NULL);
    assert_string_equal(p, "/api/v1/pods");
    free(p);
}

/* The reply gatherer both HTTP clients give libcurl: appends, keeps a NUL after the body,
 * and stops (0) once the body and its NUL would pass max. */
static void test_reply_write(void **state)
{
    (void)state;
    struct kube_rest_reply r = {.max = 10};
    char a[] = "abcd", b[] = "efghi", c[] = "j";
    assert_int_equal(kube_rest_reply_write(a, 1, 4, &r), 4);
    assert_int_equal(kube_rest_reply_write(b, 5, 1, &r), 5);
    assert_int_equal(r.len, 9);
    assert_string_equal(r.data, "abcdefghi");
    assert_false(r.too_big);
    /* 10 bytes and the NUL pass max: refused, the body as it was */
    assert_int_equal(kube_rest_reply_write(c, 1, 1, &r), 0);
    assert_true(r.too_big);
    assert_int_equal(r.len, 9);
    assert_string_equal(r.data, "abcdefghi");
    free(r.data);

    /* growth past the first allocation keeps every byte */
    struct kube_rest_reply big = {.max = 1 << 20};
    char chunk[1000];
    for (size_t i = 0; i < sizeof(chunk); i++)
        chunk[i] = (char)('a' + i % 26);
    for (int i = 0; i < 100; i++)
        assert_int_equal(kube_rest_reply_write(chunk, 1, sizeof(chunk), &big), sizeof(chunk));
    assert_int_equal(big.len, 100 * sizeof(chunk));
    assert_int_equal(strlen(big.data), big.len);
    assert_memory_equal(big.data + 99 * sizeof(chunk), chunk, sizeof(chunk));
    free(big.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_decoding),
        cmocka_unit_test(test_status_garbled),
        cmocka_unit_test(test_status_code_out_of_range),
        cmocka_unit_test(test_list_continue_check),
        cmocka_unit_test(test_url_escape),
        cmocka_unit_test(test_path_building),
        cmocka_unit_test(test_reply_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
