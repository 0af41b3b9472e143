/* Unit tests for psi_prom without a network: reply parsing (errors, NaN, empty), the query,
 * series-to-node matching and the sample built from a reply. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "psi/prom.h"
#include "psi/promreply.h"
#include "testutil.h"
#include "tests/common/prom_blocking.h"

#define URL "http://prom.test:9090/api/v1/query"

static int parse(const char *body, long status, struct psi_prom_vector *v, struct kube_err *st)
{
    return psi_prom_parse_reply(body, body ? strlen(body) : 0, status, URL, v, st);
}

static int read_sample(const char *body, const struct psi_request *req, struct psi_sample *s)
{
    return psi_prom_read_sample(body, strlen(body), 200, URL, req, s);
}

static void test_parse_vector(void **state)
{
    (void)state;
    size_t len;
    char *body = read_testdata("prom_psi_vector.json", &len);
    assert_non_null(body);
    struct psi_prom_vector v;
    struct kube_err st;
    assert_int_equal(psi_prom_parse_reply(body, len, 200, URL, &v, &st), 0);
    assert_false(kube_err_failed(&st));
    assert_int_equal(v.n, 10);
    assert_string_equal(psi_prom_label_get(&v.series[0], "instance"), "worker-0");
    assert_string_equal(psi_prom_label_get(&v.series[0], "psi_resource"), "cpu");
    assert_null(psi_prom_label_get(&v.series[0], "node"));
    assert_float_equal(v.series[0].value, 0.312, 1e-12);
    assert_float_equal(v.series[0].timestamp, 1756720000.123, 1e-6);
    assert_true(isnan(v.series[8].value)); /* "NaN" is a value, kept as such */
    assert_null(v.warning);
    psi_prom_vector_free(&v);
    free(body);
}

static void test_parse_special_values_and_warnings(void **state)
{
    (void)state;
    struct psi_prom_vector v;
    struct kube_err st;
    const char *b = "{\"status\":\"success\",\"warnings\":[\"partial response: store x down\"],"
                    "\"data\":{\"resultType\":\"vector\",\"result\":["
                    "{\"metric\":{},\"value\":[1,\"+Inf\"]},"
                    "{\"value\":[2,\"-Inf\"]},"
                    "{\"metric\":{\"a\":\"b\"},\"value\":[3,\"1e-3\"]}]}}";
    assert_int_equal(parse(b, 200, &v, &st), 0);
    assert_int_equal(v.n, 3);
    assert_true(isinf(v.series[0].value) && v.series[0].value > 0);
    assert_true(isinf(v.series[1].value) && v.series[1].value < 0);
    assert_int_equal(v.series[1].n_labels, 0);
    assert_float_equal(v.series[2].value, 0.001, 1e-15);
    assert_string_equal(v.warning, "partial response: store x down");
    psi_prom_vector_free(&v);

    /* An empty vector is a success with no series. */
    assert_int_equal(parse("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}", 200, &v, &st),
                     0);
    assert_int_equal(v.n, 0);
    psi_prom_vector_free(&v);
}

/* Each bad reply gives the right reason and a message naming the URL. */
static void test_parse_errors(void **state)
{
    (void)state;
    char *err_json = read_testdata("prom_error.json", NULL);
    assert_non_null(err_json);
    const struct {
        const char *body;
        long status;
        const char *reason;
        const char *in_msg;
    } cases[] = {
        {err_json, 400, PSI_REASON_QUERY, "bad_data"},
        {"{\"status\":\"error\",\"errorType\":\"timeout\",\"error\":\"query timed out\"}", 503, PSI_REASON_QUERY,
         "query timed out"},
        {"Unauthorized\n", 401, PSI_REASON_UNAUTHORIZED, "401"},
        {"{\"status\":\"error\"}", 401, PSI_REASON_UNAUTHORIZED, "401"},
        {"Forbidden (user=system:serviceaccount:x:y, verb=get, resource=namespaces)", 403, PSI_REASON_FORBIDDEN,
         "verb=get"},
        {"404 page not found\n", 404, PSI_REASON_NOT_FOUND, "404 page not found"},
        {"<html>Bad Gateway</html>", 502, PSI_REASON_UNREACHABLE, "502"},
        {"oops", 500, PSI_REASON_BAD_STATUS, "HTTP 500"},
        {"# HELP x y\n# TYPE x counter\nx 1\n", 200, PSI_REASON_MALFORMED, "not JSON: # HELP x y"},
        {"", 200, PSI_REASON_MALFORMED, "empty body"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[", 200, PSI_REASON_MALFORMED,
         "not JSON"},
        {"{\"kind\":\"Status\"}", 200, PSI_REASON_MALFORMED, "\"status\": \"success\""},
        {"{\"status\":\"success\"}", 200, PSI_REASON_MALFORMED, "data.resultType"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"2\"]}}", 200, PSI_REASON_QUERY,
         "scalar"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}", 200, PSI_REASON_MALFORMED,
         "not an array"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1]}]}}",
         200, PSI_REASON_MALFORMED, "result[0].value"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1,2]}]}}",
         200, PSI_REASON_MALFORMED, "[number, string]"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1,\"abc\"]}]}}",
         200, PSI_REASON_MALFORMED, "\"abc\" is not a number"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1,\"\"]}]}}",
         200, PSI_REASON_MALFORMED, "is not a number"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"a\":1},\"value\":[1,\"1\"]}]}}",
         200, PSI_REASON_MALFORMED, "label \"a\""},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[1]}}", 200, PSI_REASON_MALFORMED,
         "result[0]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct psi_prom_vector v;
        struct kube_err st;
        int rc = parse(cases[i].body, cases[i].status, &v, &st);
        if (rc != -1 || !kube_err_failed(&st) || strcmp(st.reason, cases[i].reason) != 0 ||
            !strstr(st.msg, cases[i].in_msg) || !strstr(st.msg, "prom.test"))
            fail_msg("case %zu: rc=%d reason=%s message=\"%s\"; want %s with \"%s\"", i, rc, st.reason, st.msg,
                     cases[i].reason, cases[i].in_msg);
        assert_int_equal(v.n, 0);
        assert_null(v.series);
    }
    free(err_json);
}

#define ENVELOPE "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"

/* Hostile and broken replies (garbage, cut short, nested, JSON the API never writes): each
 * is refused with MalformedReply and a reason, and nothing is kept. */
static void test_parse_hostile(void **state)
{
    (void)state;
    static const struct {
        const char *body, *in_msg;
    } cases[] = {
        {"\x00\x01\x02garbage", "not JSON"},
        {"\xff\xfe{", "not JSON"},
        {"{\"status\":\"success\"", "ends early"},
        {"{\"status\":\"succ", "ends inside a string"},
        {ENVELOPE "[{\"metric\":{\"a\":\"b\"},\"value\":[1,\"0.5\"]}", "ends early"},
        {ENVELOPE "[{\"metric\":{\"a\":\"b\"},\"value\":[1,\"0.5\"]}]}}  x", "data after"},
        {ENVELOPE "[]}}\0", "NUL byte"},
        {ENVELOPE "[]}} {}", "data after"},
        {"{\"status\":\"success\",}", "not JSON"},
        {"{'status':'success'}", "not JSON"},
        {"{\"status\":\"a\tb\"}", "control character"},
        {"{\"status\":\"\\x41\"}", "unknown escape"},
        {"{\"status\":\"\\u00zz\"}", "no hex digit"},
        {"{\"status\":\"\\udc00\"}", "lone low surrogate"},
        {"{\"status\":\"\\ud800x\"}", "without its low half"},
        {"{\"status\":\"a\\u0000b\"}", "NUL"},
        {"{\"x\":01}", "not JSON"},
        {"{\"x\":1.}", "no digit after"},
        {"{\"x\":1e}", "exponent"},
        {"{\"x\":-}", "not JSON"},
        {"{\"x\":+1}", "not JSON"},
        {"{\"x\":NaN}", "not JSON"},
        {"{\"x\":Infinity}", "not JSON"},
        {"{\"x\":tru}", "not JSON"},
        {"{\"x\":nul}", "not JSON"},
        {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "nested deeper than 64"},
        {ENVELOPE
         "[{\"metric\":{},\"value\":[1e9999999999999999999999999999999999999999999999999999999999999999999,\"1\"]}]}}",
         "longer than 64"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct psi_prom_vector v;
        struct kube_err st;
        size_t len = strlen(cases[i].body);
        if (strstr(cases[i].in_msg, "NUL byte"))
            len++; /* the NUL byte is part of the reply */
        int rc = psi_prom_parse_reply(cases[i].body, len, 200, URL, &v, &st);
        if (rc != -1 || strcmp(st.reason, PSI_REASON_MALFORMED) != 0 || !strstr(st.msg, cases[i].in_msg))
            fail_msg("case %zu: rc=%d reason=%s message=\"%s\"; want \"%s\"", i, rc, st.reason, st.msg,
                     cases[i].in_msg);
        assert_int_equal(v.n, 0);
        assert_null(v.series);
    }
}

/* Bounds: too many series or labels end the read with an error, whatever the reply's size. */
static void test_parse_bounds(void **state)
{
    (void)state;
    const char *one = "{\"metric\":{},\"value\":[1,\"0\"]},";
    size_t n = PSI_PROMREPLY_MAX_SERIES + 1, len = strlen(ENVELOPE) + n * strlen(one) + 8;
    char *b = malloc(len);
    assert_non_null(b);
    size_t o = (size_t)snprintf(b, len, "%s[", ENVELOPE);
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(b + o, len - o, "%s", one);
    o += (size_t)snprintf(b + o - 1, len - o + 1, "]}}") - 1;
    struct psi_prom_vector v;
    struct kube_err st;
    assert_int_equal(psi_prom_parse_reply(b, o, 200, URL, &v, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_MALFORMED);
    assert_non_null(strstr(st.msg, "more than 250000 series"));
    assert_null(v.series);
    /* the same bound when the series are handed on instead of kept */
    const struct psi_node_desc node = {"a", NULL, 0, 0};
    struct psi_request req = {&node, 1, 0, 0, 60, 0};
    struct psi_sample s;
    assert_int_equal(psi_sample_init(&s, &req), 0);
    assert_int_equal(psi_prom_read_sample(b, o, 200, URL, &req, &s), -1);
    assert_non_null(strstr(s.status.msg, "more than 250000 series"));
    psi_sample_free(&s);
    /* one series fewer is read */
    size_t cut = strlen(ENVELOPE) + 1 + (n - 1) * strlen(one) - 1;
    memcpy(b + cut, "]}}", 4);
    assert_int_equal(psi_prom_parse_reply(b, cut + 3, 200, URL, &v, &st), 0);
    assert_int_equal(v.n, PSI_PROMREPLY_MAX_SERIES);
    psi_prom_vector_free(&v);
    free(b);

    char labels[8192] = ENVELOPE "[{\"metric\":{";
    for (int i = 0; i <= PSI_PROMREPLY_MAX_LABELS; i++)
        snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "%s\"l%d\":\"v\"", i ? "," : "", i);
    snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "},\"value\":[1,\"1\"]}]}}");
    assert_int_equal(parse(labels, 200, &v, &st), -1);
    assert_non_null(strstr(st.msg, "more than 128 labels"));
}

/* Sample values: Go's float text and Prometheus' own NaN, +Inf, -Inf; nothing else. */
static void test_sample_values(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        double v;
    } good[] = {
        {"0", 0},  {"0.312", 0.312}, {"-0.5", -0.5}, {"1e-05", 1e-5}, {"1.5E+21", 1.5e21},
        {"+3", 3}, {".5", 0.5},      {"5.", 5},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        double v = -42;
        if (psi_promreply_value(good[i].s, &v) != 0 || fabs(v - good[i].v) > 1e-12 * fabs(good[i].v))
            fail_msg("\"%s\": got %g", good[i].s, v);
    }
    double v = 0;
    assert_int_equal(psi_promreply_value("NaN", &v), 0);
    assert_true(isnan(v));
    assert_int_equal(psi_promreply_value("+Inf", &v), 0);
    assert_true(isinf(v) && v > 0);
    assert_int_equal(psi_promreply_value("-Inf", &v), 0);
    assert_true(isinf(v) && v < 0);
    static const char *const bad[] = {"",    " 1",   "1 ",  "0x1p3", "0x10",  "infinity", "Infinity", "inf",
                                      "Inf", "+inf", "nan", "-NaN",  "+NaN",  "1e999",    "-1e999",   "1e",
                                      "1e+", ".",    "-",   "1,5",   "1.5.5", "--1",      "١"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = -42;
        if (psi_promreply_value(bad[i], &v) == 0)
            fail_msg("\"%s\" read as %g", bad[i], v);
        assert_true(v == -42);
    }
    /* in a reply: refused with the value named */
    struct psi_prom_vector vec;
    struct kube_err st;
    assert_int_equal(parse(ENVELOPE "[{\"metric\":{},\"value\":[1,\"0x1p-2\"]}]}}", 200, &vec, &st), -1);
    assert_non_null(strstr(st.msg, "\"0x1p-2\" is not a number"));
    assert_int_equal(parse(ENVELOPE "[{\"metric\":{},\"value\":[1,\"infinity\"]}]}}", 200, &vec, &st), -1);
    assert_int_equal(parse(ENVELOPE "[{\"metric\":{},\"value\":[1,\"1111111111111111111111111111111111111111"
                                    "1111111111111111111111111111111111111111\"]}]}}",
                           200, &vec, &st),
                     -1);
}

/* What the reader skips and keeps: unknown members at any depth, members in any order,
 * escapes in labels, the first of duplicate members (as a JSON object lookup takes). */
static void test_parse_order_and_escapes(void **state)
{
    (void)state;
    const char *b = "{\"data\":{\"result\":[{\"value\":[1.5,\"2\"],\"extra\":{\"x\":[1,{\"y\":null}]},"
                    "\"metric\":{\"n\\u00e9\":\"a\\\"b\\\\c\\ud83d\\ude00\",\"e\":\"\"},\"metric\":{\"z\":\"z\"}}],"
                    "\"resultType\":\"vector\"},\"warnings\":[\"w1\",\"w2\"],\"infos\":[\"i\"],"
                    "\"status\":\"success\",\"status\":\"error\"}";
    struct psi_prom_vector v;
    struct kube_err st;
    if (parse(b, 200, &v, &st) != 0)
        fail_msg("%s", st.msg);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.series[0].n_labels, 2);
    assert_string_equal(psi_prom_label_get(&v.series[0], "n\xc3\xa9"), "a\"b\\c\xf0\x9f\x98\x80");
    assert_string_equal(psi_prom_label_get(&v.series[0], "e"), "");
    assert_null(psi_prom_label_get(&v.series[0], "z"));
    assert_float_equal(v.series[0].timestamp, 1.5, 0);
    assert_string_equal(v.warning, "w1");
    psi_prom_vector_free(&v);
    /* a matrix result before its resultType: a query error, not a malformed reply */
    const char *m = "{\"status\":\"success\",\"data\":{\"result\":[{\"metric\":{},\"values\":[[1,\"2\"]]}],"
                    "\"resultType\":\"matrix\"}}";
    assert_int_equal(parse(m, 200, &v, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_QUERY);
    assert_null(v.series);
}

static void test_psi_query(void **state)
{
    (void)state;
    struct psi_request req = {.resources = PSI_RES_BIT(PSI_CPU), .window_s = 60};
    char *q = psi_prom_psi_query(&req);
    assert_string_equal(q,
                        "label_replace(max by (node, instance) (rate(node_pressure_cpu_waiting_seconds_total[60s])), "
                        "\"psi_resource\", \"cpu\", \"\", \"\")");
    free(q);
    req = (struct psi_request){.window_s = 120};
    q = psi_prom_psi_query(&req);
    assert_non_null(strstr(q, "node_pressure_cpu_waiting_seconds_total[120s]"));
    assert_non_null(strstr(
        q, ") or label_replace(max by (node, instance) (rate(node_pressure_memory_waiting_seconds_total[120s]))"));
    assert_non_null(
        strstr(q, ") or label_replace(max by (node, instance) (rate(node_pressure_io_waiting_seconds_total[120s]))"));
    assert_non_null(strstr(q, "\"psi_resource\", \"io\""));
    assert_null(strstr(q, "node_cpu_seconds_total"));
    free(q);
    req = (struct psi_request){.resources = PSI_RES_BIT(PSI_MEMORY) | PSI_RES_BIT(PSI_IO),
                               .full = PSI_RES_BIT(PSI_MEMORY) | PSI_RES_BIT(PSI_IO),
                               .window_s = 30};
    q = psi_prom_psi_query(&req);
    assert_null(strstr(q, "cpu"));
    assert_non_null(strstr(q, "node_pressure_memory_stalled_seconds_total[30s]"));
    assert_non_null(strstr(q, "node_pressure_io_stalled_seconds_total[30s]"));
    assert_null(strstr(q, "waiting"));
    free(q);
    /* full for one resource only, "some" for the others, and the utilisation part */
    req = (struct psi_request){.full = PSI_RES_BIT(PSI_IO), .window_s = 60, .utilization = 1};
    q = psi_prom_psi_query(&req);
    assert_non_null(strstr(q, "node_pressure_cpu_waiting_seconds_total[60s]"));
    assert_non_null(strstr(q, "node_pressure_memory_waiting_seconds_total[60s]"));
    assert_non_null(strstr(q, "node_pressure_io_stalled_seconds_total[60s]"));
    assert_null(strstr(q, "io_waiting"));
    assert_non_null(strstr(q, " or label_replace(1 - avg by (node, instance) "
                              "(rate(node_cpu_seconds_total{mode=\"idle\"}[60s])), \"psi_resource\", \"utilization\""));
    free(q);
}

/* A series made of label pairs. */
static struct psi_prom_series mk(struct psi_prom_label *labels, size_t n)
{
    struct psi_prom_series s = {labels, n, 0, 0};
    return s;
}

static void test_match_node(void **state)
{
    (void)state;
    const char *ips0[] = {"10.0.0.10"};
    const char *ips1[] = {"10.0.0.11", "fd00::11"};
    const struct psi_node_desc nodes[] = {
        {"worker-0", ips0, 1, 0},
        {"worker-1", ips1, 2, 0},
        {"worker-2", NULL, 0, 0},
    };
    struct psi_prom_label l1[] = {{"instance", "worker-0"}};
    struct psi_prom_label l2[] = {{"instance", "worker-0:9100"}};
    struct psi_prom_label l3[] = {{"instance", "10.0.0.11:9100"}};
    struct psi_prom_label l4[] = {{"instance", "[fd00::11]:9100"}};
    struct psi_prom_label l5[] = {{"instance", "fd00::11"}};
    struct psi_prom_label l6[] = {{"instance", "worker-0:9100"}, {"node", "worker-2"}};
    struct psi_prom_label l7[] = {{"instance", "worker-1"}, {"node", "not-selected"}};
    struct psi_prom_label l8[] = {{"instance", "10.0.0.99:9100"}};
    struct psi_prom_label l9[] = {{"job", "x"}};
    struct psi_prom_label l10[] = {{"instance", "worker-0.example.com:9100"}};
    struct psi_prom_label l11[] = {{"instance", "10.0.0.10"}};
    struct {
        struct psi_prom_series s;
        long want;
    } cases[] = {
        {mk(l1, 1), 0},   /* instance = name */
        {mk(l2, 1), 0},   /* name:port */
        {mk(l3, 1), 1},   /* InternalIP:port */
        {mk(l4, 1), 1},   /* [IPv6]:port */
        {mk(l5, 1), 1},   /* bare IPv6 */
        {mk(l6, 2), 2},   /* node label wins over instance */
        {mk(l7, 2), 1},   /* node label of no requested node: instance still tried */
        {mk(l8, 1), -1},  /* an unknown address */
        {mk(l9, 1), -1},  /* no instance, no node */
        {mk(l10, 1), -1}, /* an FQDN is not the node name */
        {mk(l11, 1), 0},  /* bare IPv4 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long got = psi_prom_match_node(&cases[i].s, nodes, 3);
        if (got != cases[i].want)
            fail_msg("case %zu: matched %ld, want %ld", i, got, cases[i].want);
    }
}

static void test_read_sample(void **state)
{
    (void)state;
    char *body = read_testdata("prom_psi_vector.json", NULL);
    const char *ips2[] = {"10.0.0.12"};
    const char *ips4[] = {"fd00::5"};
    const struct psi_node_desc nodes[] = {
        {"worker-0", NULL, 0, 0}, {"worker-1", NULL, 0, 0}, {"worker-2", ips2, 1, 0},
        {"worker-3", NULL, 0, 0}, {"worker-4", ips4, 1, 0}, {"worker-5", NULL, 0, 0},
    };
    struct psi_request req = {nodes, 6, 0, 0, 60, 0};
    struct psi_sample s;
    assert_int_equal(psi_sample_init(&s, &req), 0);
    assert_int_equal(read_sample(body, &req, &s), 0);
    assert_false(kube_err_failed(&s.status));
    assert_int_equal(s.n_nodes, 6);
    assert_string_equal(s.nodes[0].name, "worker-0");
    assert_true(s.nodes[0].value[PSI_CPU].known);
    assert_float_equal(s.nodes[0].value[PSI_CPU].percent, 31.2, 1e-9);
    assert_true(s.nodes[0].value[PSI_MEMORY].known); /* a zero is known, not Unknown */
    assert_float_equal(s.nodes[0].value[PSI_MEMORY].percent, 0, 1e-12);
    assert_float_equal(s.nodes[0].value[PSI_IO].percent, 1.1, 1e-9);
    /* two series for worker-1 (two jobs): the larger */
    assert_float_equal(s.nodes[1].value[PSI_CPU].percent, 6, 1e-9);
    assert_false(s.nodes[1].value[PSI_MEMORY].known);
    /* by InternalIP */
    assert_float_equal(s.nodes[2].value[PSI_CPU].percent, 20, 1e-9);
    assert_float_equal(s.nodes[2].value[PSI_MEMORY].percent, 0.1, 1e-9);
    assert_false(s.nodes[2].value[PSI_IO].known);
    /* by node label */
    assert_float_equal(s.nodes[3].value[PSI_CPU].percent, 99, 1e-9);
    /* by IPv6 */
    assert_float_equal(s.nodes[4].value[PSI_CPU].percent, 7, 1e-9);
    /* no series: Unknown, never zero */
    for (int r = 0; r < PSI_NRESOURCES; r++)
        assert_false(s.nodes[5].value[r].known);
    psi_sample_free(&s);

    /* Only cpu asked: memory and io stay Unknown even where series exist. */
    req.resources = PSI_RES_BIT(PSI_CPU);
    assert_int_equal(psi_sample_init(&s, &req), 0);
    assert_int_equal(read_sample(body, &req, &s), 0);
    assert_true(s.nodes[0].value[PSI_CPU].known);
    assert_false(s.nodes[0].value[PSI_MEMORY].known);
    assert_false(s.nodes[0].value[PSI_IO].known);
    psi_sample_free(&s);
    free(body);
}

static void test_read_utilization(void **state)
{
    (void)state;
    const char *b = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                    "{\"metric\":{\"instance\":\"a\",\"psi_resource\":\"cpu\"},\"value\":[1,\"0.3\"]},"
                    "{\"metric\":{\"instance\":\"a:9100\",\"psi_resource\":\"utilization\"},\"value\":[1,\"0.85\"]},"
                    "{\"metric\":{\"instance\":\"b\",\"psi_resource\":\"cpu\"},\"value\":[1,\"0.3\"]},"
                    "{\"metric\":{\"instance\":\"b\",\"psi_resource\":\"utilization\"},\"value\":[1,\"NaN\"]}]}}";
    const struct psi_node_desc nodes[] = {{"a", NULL, 0, 0}, {"b", NULL, 0, 0}, {"c", NULL, 0, 0}};
    struct psi_request req = {nodes, 3, 0, 0, 60, 1};
    struct psi_sample s;
    assert_int_equal(psi_sample_init(&s, &req), 0);
    /* a bad utilisation leaves only that node's utilisation Unknown; the sample stays good */
    assert_int_equal(read_sample(b, &req, &s), 0);
    assert_true(s.nodes[0].utilization.known);
    assert_float_equal(s.nodes[0].utilization.percent, 85, 1e-9);
    assert_false(s.nodes[1].utilization.known);
    assert_true(s.nodes[1].value[PSI_CPU].known);
    assert_int_equal(s.n_node_errors, 1);
    assert_non_null(strstr(s.node_error, "CPU utilisation of node b"));
    assert_false(s.nodes[2].utilization.known);
    psi_sample_free(&s);
    /* not asked for: not read */
    req.utilization = 0;
    assert_int_equal(psi_sample_init(&s, &req), 0);
    assert_int_equal(read_sample(b, &req, &s), 0);
    assert_false(s.nodes[0].utilization.known);
    psi_sample_free(&s);
}

static void test_read_sample_invalid_value(void **state)
{
    (void)state;
    char *body = read_testdata("prom_psi_vector.json", NULL);
    /* master-0's cpu is NaN: asked for, the sample fails with InvalidValue naming it; the
     * other nodes are still read, master-0's cpu is Unknown. */
    const struct psi_node_desc nodes[] = {{"worker-0", NULL, 0, 0}, {"master-0", NULL, 0, 0}};
    struct psi_request req = {nodes, 2, 0, 0, 60, 0};
    struct psi_sample s;
    assert_int_equal(psi_sample_init(&s, &req), 0);
    assert_int_equal(read_sample(body, &req, &s), -1);
    assert_true(kube_err_failed(&s.status));
    assert_string_equal(s.status.reason, PSI_REASON_INVALID);
    assert_non_null(strstr(s.status.msg, "master-0"));
    assert_non_null(strstr(s.status.msg, "cpu"));
    assert_false(s.nodes[1].value[PSI_CPU].known);
    assert_true(s.nodes[0].value[PSI_CPU].known);
    psi_sample_free(&s);
    free(body);

    /* +Inf and negative are invalid too; a small overshoot above 100 % is clamped. */
    const char *b = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                    "{\"metric\":{\"instance\":\"a\",\"psi_resource\":\"cpu\"},\"value\":[1,\"+Inf\"]},"
                    "{\"metric\":{\"instance\":\"b\",\"psi_resource\":\"cpu\"},\"value\":[1,\"-0.5\"]},"
                    "{\"metric\":{\"instance\":\"c\",\"psi_resource\":\"cpu\"},\"value\":[1,\"1.013\"]},"
                    "{\"metric\":{\"instance\":\"a\",\"psi_resource\":\"cpu\"},\"value\":[1,\"0.5\"]}]}}";
    const struct psi_node_desc abc[] = {{"a", NULL, 0, 0}, {"b", NULL, 0, 0}, {"c", NULL, 0, 0}};
    struct psi_request r2 = {abc, 3, PSI_RES_BIT(PSI_CPU), 0, 60, 0};
    assert_int_equal(psi_sample_init(&s, &r2), 0);
    assert_int_equal(read_sample(b, &r2, &s), -1);
    assert_string_equal(s.status.reason, PSI_REASON_INVALID);
    assert_false(s.nodes[0].value[PSI_CPU].known); /* a later valid series does not clear it */
    assert_false(s.nodes[1].value[PSI_CPU].known);
    assert_true(s.nodes[2].value[PSI_CPU].known);
    assert_float_equal(s.nodes[2].value[PSI_CPU].percent, 100, 1e-12);
    psi_sample_free(&s);
}

/* What a read of a reply gave: its outcome and the series handed, in order (a hash). */
struct outcome {
    int rc;
    char why[256], status[32], result_type[32], problem[256];
    size_t n;
    uint64_t hash;
};

static void hash_series(void *ud, const struct psi_prom_series *s)
{
    struct outcome *o = ud;
    char text[512];
    size_t n = 0;
    for (size_t i = 0; i < s->n_labels && n < sizeof(text); i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s=%s,", s->labels[i].name, s->labels[i].value);
    if (n < sizeof(text))
        snprintf(text + n, sizeof(text) - n, "%.17g@%.17g", s->value, s->timestamp);
    for (const char *c = text; *c; c++)
        o->hash = (o->hash ^ (unsigned char)*c) * 1099511628211ULL;
    o->hash = (o->hash ^ 0xFF) * 1099511628211ULL;
    o->n++;
}

static void note(struct outcome *o, int rc, const struct psi_promreply *r)
{
    o->rc = rc;
    snprintf(o->status, sizeof(o->status), "%s", r->status ? r->status : "-");
    snprintf(o->result_type, sizeof(o->result_type), "%s", r->result_type ? r->result_type : "-");
    snprintf(o->problem, sizeof(o->problem), "%s", r->result_problem);
}

/* body read as it arrives, in chunks of chunk bytes with a read every step bytes; *kept_max
 * is the most text the stream held. */
static void read_streamed(const char *body, size_t len, size_t chunk, size_t step, struct outcome *o, size_t *kept_max)
{
    memset(o, 0, sizeof(*o));
    struct psi_promreply_sink sink = {hash_series, o};
    struct psi_promreply_stream s;
    psi_promreply_stream_init(&s, &sink);
    s.step = step;
    *kept_max = 0;
    for (size_t at = 0; at < len; at += chunk) {
        assert_int_equal(psi_promreply_stream_feed(&s, body + at, len - at < chunk ? len - at : chunk), 0);
        if (s.text.len > *kept_max)
            *kept_max = s.text.len;
    }
    struct psi_promreply r;
    note(o, psi_promreply_stream_end(&s, &r, o->why, sizeof(o->why)), &r);
    psi_promreply_free(&r);
    psi_promreply_stream_free(&s);
}

/* A reply of n series (labels as the pressure query's): head, '[', the series, tail. Caller
 * frees. */
static char *big_reply(const char *head, size_t n, const char *tail, size_t *len)
{
    size_t cap = 200 + n * 160 + strlen(tail);
    char *b = malloc(cap);
    assert_non_null(b);
    size_t o = (size_t)snprintf(b, cap, "%s[", head);
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(b + o, cap - o,
                              "%s{\"metric\":{\"instance\":\"127.0.0.1:9100\",\"node\":\"node-%05zu\","
                              "\"psi_resource\":\"%s\"},\"value\":[1796168836.123,\"0.%zu\"]}",
                              i ? "," : "", i / 3, (const char *[]){"cpu", "memory", "io"}[i % 3], i);
    o += (size_t)snprintf(b + o, cap - o, "%s", tail);
    *len = o;
    return b;
}

/* Read as it arrives, in any chunks, a reply gives what it gives read whole: the sink is
 * handed the series the vector keeps, in the same order, with the same outcome and message
 * (byte offsets and series indices of the whole reply); and a vector's reply is held a step
 * or two at a time, not whole. */
static void test_reply_stream(void **state)
{
    (void)state;
    size_t n3000, nbad, ncut, ntype, nlate, nafter, ncomma;
    char *r3000 = big_reply(ENVELOPE, 3000, "]}}", &n3000);
    char *bad = big_reply(ENVELOPE, 2000, ",{\"metric\":{\"a\":1},\"value\":[1,\"1\"]}]}}", &nbad);
    char *cut = big_reply(ENVELOPE, 900, "", &ncut);
    ncut -= 40; /* inside a series */
    char *type =
        big_reply("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":", 600, "]}}", &ntype);
    char *late =
        big_reply("{\"data\":{\"result\":", 600, "],\"resultType\":\"matrix\"},\"status\":\"success\"}", &nlate);
    char *after = big_reply(ENVELOPE, 700, "]}} x", &nafter);
    char *comma = big_reply(ENVELOPE, 1000, ",\n ]}}", &ncomma); /* a ',' and no series after it */
    size_t nfile;
    char *file = read_testdata("prom_psi_vector.json", &nfile);
    struct {
        const char *body;
        size_t len;
    } bodies[] = {
        {r3000, n3000},       {bad, nbad},   {cut, ncut},
        {type, ntype},        {late, nlate}, {after, nafter},
        {comma, ncomma},      {file, nfile}, {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"x\"}", 0},
        {ENVELOPE "[]}}", 0},
    };
    for (size_t b = 0; b < sizeof(bodies) / sizeof(bodies[0]); b++) {
        size_t len = bodies[b].len ? bodies[b].len : strlen(bodies[b].body);
        struct outcome whole = {0}, streamed;
        struct psi_promreply r;
        note(&whole, psi_promreply_read(bodies[b].body, len, &r, whole.why, sizeof(whole.why)), &r);
        for (size_t i = 0; i < r.vector.n; i++)
            hash_series(&whole, &r.vector.series[i]);
        psi_promreply_free(&r);
        const size_t chunks[][2] = {
            {len, PSI_PROMREPLY_STEP}, {16384, PSI_PROMREPLY_STEP}, {1, 1}, {7, 100}, {100, 333}, {4096, 1000}};
        for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
            if (chunks[c][0] == 1 && len > 4096)
                continue; /* a byte at a time: small replies only */
            size_t kept;
            read_streamed(bodies[b].body, len, chunks[c][0], chunks[c][1], &streamed, &kept);
            int same_series =
                whole.rc != 0 || whole.problem[0] || (streamed.n == whole.n && streamed.hash == whole.hash);
            if (streamed.rc != whole.rc || strcmp(streamed.why, whole.why) != 0 || !same_series ||
                strcmp(streamed.status, whole.status) != 0 || strcmp(streamed.result_type, whole.result_type) != 0 ||
                strcmp(streamed.problem, whole.problem) != 0)
                fail_msg(
                    "reply %zu, chunks of %zu, step %zu: rc %d \"%s\" (%s) %zu series; whole: rc %d \"%s\" (%s) %zu", b,
                    chunks[c][0], chunks[c][1], streamed.rc, streamed.why, streamed.problem, streamed.n, whole.rc,
                    whole.why, whole.problem, whole.n);
            if (b == 0 && chunks[c][0] < len && kept > 2 * chunks[c][1] + chunks[c][0] + 300)
                fail_msg("chunks of %zu, step %zu: %zu bytes kept of a reply of %zu", chunks[c][0], chunks[c][1], kept,
                         len);
        }
    }
    free(r3000);
    free(bad);
    free(cut);
    free(type);
    free(late);
    free(after);
    free(comma);
    free(file);
}

/* Reading the sample fails as reading the reply does, though series were put into the
 * sample before the failure was seen; a broken reply wins over an invalid value before it. */
static void test_read_sample_fails_as_the_reply(void **state)
{
    (void)state;
    const char *good = "{\"metric\":{\"instance\":\"a\",\"psi_resource\":\"cpu\"},\"value\":[1,\"0.5\"]}";
    const char *nan = "{\"metric\":{\"instance\":\"a\",\"psi_resource\":\"io\"},\"value\":[1,\"NaN\"]}";
    char shape[512], broken[512], matrix[512], invalid[512];
    snprintf(shape, sizeof(shape), ENVELOPE "[%s,%s,{\"metric\":{\"x\":1},\"value\":[1,\"1\"]}]}}", good, nan);
    snprintf(broken, sizeof(broken), ENVELOPE "[%s,%s,{\"metric\":{}", good, nan);
    snprintf(matrix, sizeof(matrix), "{\"status\":\"success\",\"data\":{\"result\":[%s],\"resultType\":\"matrix\"}}",
             good);
    snprintf(invalid, sizeof(invalid), ENVELOPE "[%s,%s]}}", good, nan);
    struct {
        const char *body;
        long status;
        const char *reason, *in_msg;
    } cases[] = {
        {shape, 200, PSI_REASON_MALFORMED, "result[2] label \"x\" is not a string"},
        {broken, 200, PSI_REASON_MALFORMED, "ends early"},
        {matrix, 200, PSI_REASON_QUERY, "matrix"},
        {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}", 400, PSI_REASON_QUERY,
         "parse error"},
        {invalid, 401, PSI_REASON_UNAUTHORIZED, "401"},
        {invalid, 503, PSI_REASON_UNREACHABLE, "503"},
        {"", 200, PSI_REASON_MALFORMED, "empty body"},
        {invalid, 200, PSI_REASON_INVALID, "io pressure of node a"},
    };
    const struct psi_node_desc node = {"a", NULL, 0, 0};
    struct psi_request req = {&node, 1, 0, 0, 60, 0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct psi_sample s;
        assert_int_equal(psi_sample_init(&s, &req), 0);
        int rc = psi_prom_read_sample(cases[i].body, strlen(cases[i].body), cases[i].status, URL, &req, &s);
        if (rc != -1 || strcmp(s.status.reason, cases[i].reason) != 0 || !strstr(s.status.msg, cases[i].in_msg))
            fail_msg("case %zu: rc=%d reason=%s message=\"%s\"; want %s \"%s\"", i, rc, s.status.reason, s.status.msg,
                     cases[i].reason, cases[i].in_msg);
        psi_sample_free(&s);
    }
}

static void test_client_config_errors(void **state)
{
    (void)state;
    struct kube_err st;
    const char *bad[] = {NULL, "", "prom:9090", "ftp://x", "http://x/?q=1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct psi_prom_config cfg = {.url = bad[i]};
        assert_null(psi_prom_new(&cfg, &st));
        assert_true(kube_err_failed(&st));
        assert_string_equal(st.reason, PSI_REASON_CONFIG);
    }
    struct psi_prom_config cfg = {.url = "https://thanos:9091/prefix//"};
    struct psi_prom *p = psi_prom_new(&cfg, &st);
    assert_non_null(p);
    assert_string_equal(psi_prom_endpoint(p), "https://thanos:9091/prefix/api/v1/query");
    psi_prom_free(p);
}

/* The token is read before any request: an empty file fails the query with
 * SourceConfigError naming the file, a token that appears later is picked up, and a file
 * that goes gets the one refusal of psi/specfile.h. */
static void test_token_file(void **state)
{
    (void)state;
    char path[] = "/tmp/psi-token-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *roots[] = {"/tmp/", NULL};
    struct psi_prom_config cfg = {.url = "http://127.0.0.1:1",
                                  .token_file = path,
                                  .connect_timeout_ms = 500,
                                  .timeout_ms = 1000,
                                  .plain_http_token = 1,
                                  .file_roots = roots};
    struct kube_err st;
    struct psi_prom *p = psi_prom_new(&cfg, &st);
    assert_non_null(p);
    struct psi_prom_vector v;
    assert_int_equal(prom_query_blocking(p, "up", &v, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_CONFIG);
    assert_non_null(strstr(st.msg, path));
    assert_non_null(strstr(st.msg, "empty"));

    FILE *f = fopen(path, "w");
    fputs("  abc def\n", f);
    fclose(f);
    assert_int_equal(prom_query_blocking(p, "up", &v, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_CONFIG);
    assert_non_null(strstr(st.msg, "whitespace"));

    f = fopen(path, "w");
    fputs("eyJhbGciOi.token.sig\n", f);
    fclose(f);
    /* Now the token is fine and the request itself fails: nothing listens on port 1. */
    assert_int_equal(prom_query_blocking(p, "up", &v, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_UNREACHABLE);
    assert_non_null(strstr(st.msg, "http://127.0.0.1:1/api/v1/query"));

    unlink(path);
    assert_int_equal(prom_query_blocking(p, "up", &v, &st), -1);
    assert_string_equal(st.reason, PSI_REASON_CONFIG);
    assert_non_null(strstr(st.msg, "bearerTokenFile must be a regular file"));
    psi_prom_free(p);
}

static void test_read_unreachable(void **state)
{
    (void)state;
    struct psi_prom_config cfg = {.url = "http://127.0.0.1:1", .connect_timeout_ms = 500, .timeout_ms = 1000};
    struct kube_err st;
    struct psi_prom *p = psi_prom_new(&cfg, &st);
    assert_non_null(p);
    const struct psi_node_desc nodes[] = {{"worker-0", NULL, 0, 0}};
    struct psi_request req = {nodes, 1, 0, 0, 60, 0};
    struct psi_sample s;
    assert_int_equal(prom_read_blocking(p, &req, &s), -1);
    assert_string_equal(s.status.reason, PSI_REASON_UNREACHABLE);
    assert_int_equal(s.n_nodes, 1);
    assert_false(s.nodes[0].value[PSI_CPU].known);
    psi_sample_free(&s);
    assert_int_equal(psi_prom_sample_finish(p, CURLE_OK), -1); /* no read begun any more */
    psi_prom_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_vector),
        cmocka_unit_test(test_parse_special_values_and_warnings),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_hostile),
        cmocka_unit_test(test_parse_bounds),
        cmocka_unit_test(test_sample_values),
        cmocka_unit_test(test_parse_order_and_escapes),
        cmocka_unit_test(test_psi_query),
        cmocka_unit_test(test_match_node),
        cmocka_unit_test(test_read_sample),
        cmocka_unit_test(test_read_utilization),
        cmocka_unit_test(test_read_sample_invalid_value),
        cmocka_unit_test(test_reply_stream),
        cmocka_unit_test(test_read_sample_fails_as_the_reply),
        cmocka_unit_test(test_client_config_errors),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test(test_read_unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
