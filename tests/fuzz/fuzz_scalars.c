/* The scalar parsers, each on the whole input: quantities, durations (and their format
 * read back), RFC 3339 times (and their format read back), base64. */
#include "api/duration.h"
#include "api/json.h"
#include "api/quantity.h"
#include "fuzz.h"
#include "base/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    char eb[256], buf[64];
    double q;
    api_quantity_parse(s, &q, eb, sizeof(eb));
    int64_t ms, back;
    if (api_duration_parse(s, &ms, eb, sizeof(eb)) == 0 && ms < 100000LL * 3600 * 1000 &&
        (api_duration_parse(api_duration_format(ms, buf, sizeof(buf)), &back, eb, sizeof(eb)) != 0 || back != ms))
        abort(); /* a duration's own format reads back as itself (up to 99999h: five digits) */
    int64_t t, t2;
    if (api_json_parse_time(s, &t) == 0 && t >= -30610224000 && t < 253402300800 &&
        (api_json_parse_time(api_json_format_time(t, buf, sizeof(buf)), &t2) != 0 || t2 != t))
        abort(); /* so does a time's of the years 1000 to 9999 (four digits) */
    unsigned char *out = NULL;
    size_t n, bad;
    if (kube_base64_decode(s, &out, &n, &bad) == 0)
        free(out);
    free(s);
    return 0;
}
