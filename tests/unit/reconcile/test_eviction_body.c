/* The operator's Evictions as KubeVirt's eviction admitter reads them: the body kube_rest_evict
 * sends, wrapped in the AdmissionReview the API server gives the webhook, parsed by the
 * simulator's admitter (hack/sim/admission.c, following pod-eviction-admitter.go). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "hack/sim/admission.h"
#include "kube/rest.h"
#include "reconcile/mover.h"

/* Parse the Eviction body for (requested_by, dry_run) as the webhook gets it; fills *req,
 * returns the review (caller frees; req points into it). */
static cJSON *review_of(const char *requested_by, int dry_run, struct admission_request *req)
{
    cJSON *body = kube_eviction_body("apps", "virt-launcher-vm-1", dry_run, requested_by);
    assert_non_null(body);
    cJSON *review = cJSON_CreateObject();
    cJSON *r = cJSON_AddObjectToObject(review, "request");
    cJSON_AddStringToObject(r, "uid", "u");
    cJSON_AddStringToObject(r, "namespace", "apps");
    cJSON_AddStringToObject(r, "name", "virt-launcher-vm-1");
    cJSON_AddItemToObject(r, "object", body);
    char err[128];
    assert_int_equal(admission_parse_request(review, req, err, sizeof(err)), 0);
    return review;
}

/* The operator's own Eviction queues its migration at system-maintenance, in dry run or not. */
static void test_operator_eviction_is_maintenance(void **state)
{
    (void)state;
    for (int dry = 0; dry <= 1; dry++) {
        struct admission_request req;
        cJSON *review = review_of(MOVER_REQUESTED_BY, dry, &req);
        assert_true(admission_descheduler_eviction(&req));
        assert_int_equal(req.dry_run, dry);
        assert_string_equal(req.pod, "virt-launcher-vm-1");
        cJSON_Delete(review);
    }
}

/* Generated: any requested-by value, or none; only the descheduler's exact value counts. */
static void test_requested_by_generated(void **state)
{
    (void)state;
    static const char *const seeds[] = {"sigs.k8s.io/descheduler", "rebalance.psi.dev/psi-rebalancer", "descheduler",
                                        "SIGS.K8S.IO/DESCHEDULER", ""};
    srand(32);
    for (int i = 0; i < 2000; i++) {
        char value[64];
        const char *rb = NULL;
        int pick = rand() % 7;
        if (pick < 5) {
            snprintf(value, sizeof(value), "%s", seeds[pick]);
            size_t n = strlen(value);
            if (n && rand() % 3 == 0)
                value[rand() % n] ^= (char)(1 + rand() % 3); /* a near miss */
            else if (rand() % 4 == 0 && n + 1 < sizeof(value))
                value[n] = ' ', value[n + 1] = '\0';
            rb = value;
        } else if (pick == 5) {
            for (int k = 0; k < 20; k++)
                value[k] = (char)('a' + rand() % 26);
            value[20] = '\0';
            rb = value;
        }
        int dry = rand() % 2;
        struct admission_request req;
        cJSON *review = review_of(rb, dry, &req);
        bool want = rb && strcmp(rb, "sigs.k8s.io/descheduler") == 0;
        assert_int_equal(admission_descheduler_eviction(&req), want);
        assert_int_equal(req.dry_run, dry);
        if (rb)
            assert_string_equal(req.requested_by, rb);
        else
            assert_null(req.requested_by);
        cJSON_Delete(review);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operator_eviction_is_maintenance),
        cmocka_unit_test(test_requested_by_generated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
