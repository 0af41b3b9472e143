/* Unit tests for servicemonitor_patch: every endpoint's serverName of the form
 * <service>.<namespace>.svc[.<domain>] is pointed at the operator's namespace, over a generated
 * set of ServiceMonitors (services, namespaces, domains, forms that are not a Service's name,
 * endpoints without TLS) checked against a reference that splits the name by its labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "servicemonitor.h"

/* The reference: what name becomes in ns, or "" when it stays. */
static void expect(const char *name, const char *ns, char *out, size_t len)
{
    char labels[8][64];
    int n = 0;
    const char *p = name;
    out[0] = '\0';
    while (n < 8) {
        const char *d = strchr(p, '.');
        size_t l = d ? (size_t)(d - p) : strlen(p);
        if (l == 0 || l >= sizeof(labels[0]))
            return;
        memcpy(labels[n], p, l);
        labels[n++][l] = '\0';
        if (!d)
            break;
        p = d + 1;
    }
    if (n < 3 || strcmp(labels[2], "svc") != 0 || strcmp(labels[1], ns) == 0)
        return;
    int w = snprintf(out, len, "%s.%s", labels[0], ns);
    for (int i = 2; i < n; i++)
        w += snprintf(out + w, len - (size_t)w, ".%s", labels[i]);
}

static void test_generated(void **state)
{
    (void)state;
    static const char *const services[] = {"psi-rebalancer-metrics", "m", "a-b-c"};
    static const char *const namespaces[] = {"psi-rebalancer", "openshift-psi-rebalancer", "x"};
    static const char *const tails[] = {".svc", ".svc.cluster.local", ".svc.example.org", ".svcx", ".local", "",
                                        ".svc."};
    static const char *const odd[] = {"127.0.0.1", "psi-rebalancer-metrics", ".ns.svc", "a..svc", "svc"};
    size_t changed_total = 0, kept_total = 0;
    for (size_t own = 0; own < 3; own++) {
        for (size_t s = 0; s < 3; s++) {
            for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
                /* Three endpoints: one in each namespace, plus one without tlsConfig and an odd name. */
                char names[5][128];
                cJSON *sm = cJSON_CreateObject();
                cJSON *eps = cJSON_AddArrayToObject(cJSON_AddObjectToObject(sm, "spec"), "endpoints");
                for (size_t k = 0; k < 5; k++) {
                    cJSON *ep = cJSON_CreateObject();
                    cJSON_AddItemToArray(eps, ep);
                    if (k == 3) {
                        cJSON_AddStringToObject(ep, "port", "https");
                        names[k][0] = '\0';
                        continue;
                    }
                    if (k == 4)
                        snprintf(names[k], sizeof(names[k]), "%s", odd[(own + s + t) % 5]);
                    else
                        snprintf(names[k], sizeof(names[k]), "%s.%s%s", services[s], namespaces[k], tails[t]);
                    cJSON_AddStringToObject(cJSON_AddObjectToObject(ep, "tlsConfig"), "serverName", names[k]);
                }
                int changed;
                cJSON *patch = servicemonitor_patch(sm, namespaces[own], &changed);
                int want = 0, op = 0;
                for (size_t k = 0; k < 5; k++) {
                    char exp[160];
                    if (!names[k][0])
                        continue;
                    expect(names[k], namespaces[own], exp, sizeof(exp));
                    if (!exp[0]) {
                        kept_total++;
                        continue;
                    }
                    want++;
                    char path[96];
                    snprintf(path, sizeof(path), "/spec/endpoints/%zu/tlsConfig/serverName", k);
                    const cJSON *test = cJSON_GetArrayItem(patch, op++), *repl = cJSON_GetArrayItem(patch, op++);
                    assert_non_null(repl);
                    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(test, "op")), "test");
                    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(test, "path")), path);
                    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(test, "value")), names[k]);
                    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(repl, "op")), "replace");
                    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(repl, "path")), path);
                    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(repl, "value")), exp);
                }
                assert_int_equal(changed, want);
                assert_int_equal(patch ? cJSON_GetArraySize(patch) : 0, 2 * want);
                changed_total += (size_t)want;
                cJSON_Delete(patch);
                cJSON_Delete(sm);
            }
        }
    }
    assert_true(changed_total > 0 && kept_total > 0);
    /* Nothing to change, or no endpoints at all: no patch. */
    cJSON *sm = cJSON_Parse("{\"spec\":{\"endpoints\":[{\"tlsConfig\":{\"serverName\":\"m.ns.svc\"}}]}}");
    int changed;
    assert_null(servicemonitor_patch(sm, "ns", &changed));
    assert_int_equal(changed, 0);
    cJSON_Delete(sm);
    sm = cJSON_Parse("{}");
    assert_null(servicemonitor_patch(sm, "ns", &changed));
    assert_int_equal(changed, 0);
    cJSON_Delete(sm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
