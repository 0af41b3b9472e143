/* Names and selectors: the name checks and globs on the input as text; the input as JSON
 * decoded as a label selector, validated, encoded, turned into a query and matched against
 * itself as labels. */
#include <cjson/cJSON.h>

#include "api/names.h"
#include "api/selector.h"
#include "api/wildcard.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    (void)api_names_check_qualified(s);
    (void)api_names_check_label_value(s);
    (void)api_names_check_dns_label(s);
    (void)api_names_check_dns_subdomain(s);
    if (!api_wildcard_check(s)) {
        (void)api_wildcard_match(s, "worker-0");
        (void)api_wildcard_match(s, s);
    }
    cJSON *j = cJSON_ParseWithLength(s, size);
    struct api_selector sel = {0};
    struct api_errors errs = {0};
    if (api_selector_decode(j, "sel", &sel, &errs, &errs) == 0 && api_selector_validate(&sel, "sel", &errs) == 0) {
        cJSON *enc = api_selector_encode(&sel);
        free(api_selector_to_query(&sel));
        (void)api_selector_matches(&sel, cJSON_GetObjectItemCaseSensitive(j, "matchLabels"));
        struct api_selector again = {0};
        if (api_selector_decode(enc, "sel", &again, &errs, &errs) == 0 && !api_selector_equal(&sel, &again))
            abort(); /* a selector's encoding decodes as itself */
        api_selector_free(&again);
        cJSON_Delete(enc);
    }
    api_selector_free(&sel);
    api_errors_free(&errs);
    cJSON_Delete(j);
    free(s);
    return 0;
}
