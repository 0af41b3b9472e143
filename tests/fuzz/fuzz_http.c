/* An HTTP/1.1 request head as a client sends it to psi_serve: the end of the head found
 * in the bytes, then the head parsed in place. */
#include "fuzz.h"
#include "httpd/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    psi_http_overflow_status(s, size);
    size_t end = psi_http_head_end(s, size, size / 2);
    end = end ? end : psi_http_head_end(s, size, 0);
    struct psi_http_head h;
    if (end)
        psi_http_parse_head(s, end, &h);
    free(s);
    return 0;
}
