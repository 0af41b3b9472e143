/* /proc/pressure/<resource> text. */
#include "fuzz.h"
#include "psi/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    struct psi_procfs p;
    char eb[256];
    psi_procfs_parse(s, &p, eb, sizeof(eb));
    free(s);
    return 0;
}
