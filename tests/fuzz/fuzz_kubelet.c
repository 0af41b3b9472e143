/* A kubelet Summary API reply (JSON): pressure for every resource and both lines, at the
 * window sizes that pick each average, and the CPU utilisation. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "psi/kubelet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    if (!j)
        return 0;
    static const long windows[] = {0, 10, 60, 300, 100000};
    for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
        struct psi_value out[PSI_NRESOURCES];
        char eb[256];
        psi_kubelet_parse_summary(j, PSI_RES_ALL, (unsigned)i & PSI_RES_ALL, windows[i], out, eb, sizeof(eb));
    }
    struct psi_value u;
    psi_kubelet_parse_utilization(j, 16, &u);
    psi_kubelet_parse_utilization(j, 0, &u);
    cJSON_Delete(j);
    return 0;
}
