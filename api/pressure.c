#include "api/pressure.h"

#include <string.h>

static const char *const resource_names[PSI_NRESOURCES] = {"cpu", "memory", "io"};

const char *psi_resource_name(enum psi_resource r)
{
    return (r >= 0 && r < PSI_NRESOURCES) ? resource_names[r] : "?";
}

int psi_resource_parse(const char *s, enum psi_resource *out)
{
    for (int r = 0; r < PSI_NRESOURCES; r++) {
        if (s && strcmp(s, resource_names[r]) == 0) {
            *out = (enum psi_resource)r;
            return 0;
        }
    }
    return -1;
}
