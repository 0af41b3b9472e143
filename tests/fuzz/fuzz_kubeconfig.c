/* A kubeconfig (YAML): the YAML reader, then the kubeconfig loader on the same text (from
 * a memory file, with $HOME and the service-account paths out of reach). */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "kube/config.h"
#include "kube/yamljson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char eb[256];
    cJSON_Delete(kube_yamljson_parse((const char *)data, size, eb, sizeof(eb)));
    int fd = memfd_create("kubeconfig", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        struct kube_config *cfg = NULL;
        struct kube_err err;
        if (kube_config_load_file(path, NULL, &cfg, &err) == 0)
            kube_config_free(cfg);
    }
    close(fd);
    return 0;
}
