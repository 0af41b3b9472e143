/* Unit tests: NO_PROXY matching with CIDR entries, in-cluster host names (proxy.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/proxy.h"

static void test_cidr_and_addresses(void **state)
{
    (void)state;
    /* what a cluster-wide proxy puts in NO_PROXY: service and pod networks as CIDR */
    const char *np =
        ".cluster.local,.svc,10.128.0.0/14,127.0.0.1,172.30.0.0/16,api-int.example.test,localhost,fd02::/112";
    assert_true(kube_proxy_bypass(np, "172.30.0.1"));  /* the in-cluster API service */
    assert_true(kube_proxy_bypass(np, "10.131.2.7"));  /* a pod, inside 10.128.0.0/14 */
    assert_false(kube_proxy_bypass(np, "10.132.0.1")); /* just outside it */
    assert_false(kube_proxy_bypass(np, "172.31.0.1"));
    assert_true(kube_proxy_bypass(np, "127.0.0.1"));
    assert_false(kube_proxy_bypass(np, "127.0.0.2"));
    assert_true(kube_proxy_bypass(np, "[fd02::1]"));
    assert_true(kube_proxy_bypass(np, "fd02::ffff"));
    assert_false(kube_proxy_bypass(np, "fd02::1:0"));
    /* domains match themselves and subdomains, on label boundaries */
    assert_true(kube_proxy_bypass(np, "api-int.example.test"));
    assert_true(kube_proxy_bypass(np, "x.API-INT.example.test"));
    assert_false(kube_proxy_bypass(np, "evilapi-int.example.test"));
    assert_true(kube_proxy_bypass(np, "thanos-querier.openshift-monitoring.svc"));
    assert_false(kube_proxy_bypass(np, "prometheus.example.com"));
    /* an address never matches a domain entry, nor a name a CIDR */
    assert_false(kube_proxy_bypass("example.com,10.0.0.0/8", "10example.com"));
    assert_true(kube_proxy_bypass("*", "anything.example.com"));
    assert_false(kube_proxy_bypass(NULL, "172.30.0.1"));
    assert_false(kube_proxy_bypass("", "172.30.0.1"));
    /* malformed entries match nothing, the others still work */
    assert_false(kube_proxy_bypass("10.0.0.0/33,10.0.0.0/x,/8,10.0.0.0/", "10.1.2.3"));
    assert_true(kube_proxy_bypass("10.0.0.0/33 , 10.0.0.0/8", "10.1.2.3"));
    assert_true(kube_proxy_bypass("0.0.0.0/0", "192.0.2.1"));
}

static void test_in_cluster_names(void **state)
{
    (void)state;
    assert_true(kube_proxy_in_cluster_host("thanos-querier.openshift-monitoring.svc"));
    assert_true(kube_proxy_in_cluster_host("prometheus.monitoring.svc.cluster.local"));
    assert_true(kube_proxy_in_cluster_host("kubernetes.default.svc."));
    assert_false(kube_proxy_in_cluster_host("svc"));
    assert_false(kube_proxy_in_cluster_host("prometheus.example.com"));
    assert_false(kube_proxy_in_cluster_host("172.30.0.1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cidr_and_addresses),
        cmocka_unit_test(test_in_cluster_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
