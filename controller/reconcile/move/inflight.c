/* inflight: the VMs that count against maxInFlightMigrations (see inflight.h). */
#include "reconcile/move/inflight.h"

#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "base/util.h"
#include "reconcile/move/evictor.h"

bool inflight_vmi_waiting(const cJSON *vmi, const cJSON *kubevirt)
{
    const char *mark = jx_str(vmi, "status.evacuationNodeName");
    if (!mark || !mark[0] || !base_same(mark, jx_str(vmi, "status.nodeName")))
        return false;
    const char *phase = jx_str(vmi, "status.phase");
    if (base_same(phase, "Succeeded") || base_same(phase, "Failed"))
        return false;
    return !base_same(evictor_vm_strategy(vmi, kubevirt), "External");
}

bool inflight_pod_vm(const cJSON *pod, struct inflight_vm *vm)
{
    const char *phase = jx_str(pod, "status.phase");
    if (!evictor_eviction_in_progress(pod) || base_same(phase, "Succeeded") || base_same(phase, "Failed"))
        return false;
    const char *kind, *name;
    evictor_pod_workload(pod, &kind, &name);
    if (!base_same(kind, "VirtualMachineInstance"))
        return false;
    *vm = (struct inflight_vm){jx_str(pod, "metadata.namespace"), name};
    return true;
}

static int vm_cmp(const void *a, const void *b)
{
    const struct inflight_vm *x = a, *y = b;
    int c = strcmp(x->ns ? x->ns : "", y->ns ? y->ns : "");
    return c ? c : strcmp(x->name, y->name);
}

int inflight_count(const struct moves_migration *migs, size_t nmigs, const struct inflight_vm *more, size_t nmore)
{
    struct inflight_vm *all = calloc(nmigs + nmore ? nmigs + nmore : 1, sizeof(*all));
    if (!all)
        return -1;
    size_t n = 0;
    for (size_t k = 0; k < nmigs; k++)
        if (migs[k].vmi && !moves_phase_final(migs[k].phase))
            all[n++] = (struct inflight_vm){migs[k].ns, migs[k].vmi};
    for (size_t k = 0; k < nmore; k++)
        if (more[k].name)
            all[n++] = more[k];
    qsort(all, n, sizeof(*all), vm_cmp);
    int count = 0;
    for (size_t k = 0; k < n; k++)
        count += k == 0 || vm_cmp(&all[k - 1], &all[k]) != 0;
    free(all);
    return count;
}
