/* A PsiRebalance as the API server holds it (JSON): decode, validate, encode, compare. */
#include <cjson/cJSON.h>

#include "api/psirebalance.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    struct api_psirebalance pr = {0};
    struct api_errors errs = {0}, warns = {0};
    api_psirebalance_decode(j, &pr, &errs, &warns);
    free(api_errors_join(&errs, "; "));
    cJSON *spec = api_spec_encode(&pr.spec);
    struct api_spec again = {0};
    struct api_errors e2 = {0};
    api_spec_decode(spec, &again, &e2, NULL);
    (void)api_spec_equal(&pr.spec, &again);
    api_spec_free(&again);
    api_errors_free(&e2);
    cJSON_Delete(spec);
    api_psirebalance_free(&pr);
    api_errors_free(&errs);
    api_errors_free(&warns);
    cJSON_Delete(j);
    return 0;
}
