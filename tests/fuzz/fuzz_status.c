/* PsiRebalance status (JSON): decode, copy, compare with itself and with a status of its
 * own, set a condition, encode, decode the encoding again. */
#include <cjson/cJSON.h>

#include "api/status.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    struct api_status st = {0}, copy = {0}, own = {0}, back = {0};
    struct api_errors errs = {0};
    api_status_decode(j, &st, &errs, &errs);
    if (api_status_copy(&copy, &st) == 0) {
        (void)api_status_changed(&st, &copy, NULL);
        api_status_set_condition(&own, API_CONDITION_READY, API_CONDITION_TRUE, "Fuzz", "", 1, 1);
        (void)api_status_changed(&st, &own, NULL);
        (void)api_status_changed(&own, &st, NULL);
        api_status_set_condition(&copy, API_CONDITION_READY, API_CONDITION_FALSE, "Fuzz", "m", 2, 2);
        cJSON *enc = api_status_encode(&copy);
        api_status_decode(enc, &back, &errs, &errs);
        cJSON_Delete(enc);
    }
    api_status_free(&st);
    api_status_free(&copy);
    api_status_free(&own);
    api_status_free(&back);
    api_errors_free(&errs);
    cJSON_Delete(j);
    return 0;
}
