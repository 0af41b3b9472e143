/* Unit tests of controller/reconcile/move/resources: resource amounts and a pod's effective requests. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "reconcile/move/resources.h"

static void test_get(void **state)
{
    (void)state;
    cJSON *o = cJSON_Parse("{\"cpu\":\"3\",\"memory\":\"64Gi\",\"pods\":110,\"bad\":\"x\",\"nul\":null}");
    assert_true(fabs(resources_get(o, "cpu") - 3) < 1e-12);
    assert_true(fabs(resources_get(o, "memory") - 68719476736.0) < 1);
    assert_true(fabs(resources_get(o, "pods") - 110) < 1e-12);
    assert_true(isnan(resources_get(o, "bad")));
    assert_true(isnan(resources_get(o, "nul")));
    assert_true(isnan(resources_get(o, "missing")));
    assert_true(isnan(resources_get(NULL, "cpu")));
    cJSON_Delete(o);
}

static void requests(const char *json, double cpu, double mem)
{
    cJSON *pod = cJSON_Parse(json);
    assert_non_null(pod);
    double c = -1, m = -1;
    resources_pod_requests(pod, &c, &m);
    assert_true(fabs(c - cpu) < 1e-9);
    assert_true(fabs(m - mem) < 1e-3);
    cJSON_Delete(pod);
}

static void test_pod_requests(void **state)
{
    (void)state;
    /* containers add up; one without requests adds nothing */
    requests("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"200m\",\"memory\":\"1Gi\"}}},"
             "{\"resources\":{\"requests\":{\"cpu\":\"300m\"}}},{\"name\":\"x\"}]}}",
             0.5, 1073741824.0);
    /* an init container larger than the containers sets the request */
    requests("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],"
             "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}",
             2, 0);
    /* sidecars (restartPolicy Always) add to the containers and to the init containers after them */
    requests("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
             "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}},"
             "{\"resources\":{\"requests\":{\"cpu\":\"1200m\"}}}]}}",
             1.7, 0);
    /* overhead is added */
    requests("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"100Mi\"}}}],"
             "\"overhead\":{\"memory\":\"10Mi\",\"cpu\":\"10m\"}}}",
             0.01, 115343360.0);
    /* nothing at all */
    requests("{\"spec\":{}}", 0, 0);
    requests("{}", 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_pod_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
