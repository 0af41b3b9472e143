/* objects: the API objects the simulator creates, shaped as KubeVirt creates them. Pure:
 * plain values in, a new cJSON tree out (the caller frees it with cJSON_Delete; NULL when
 * out of memory).
 *
 * VirtualMachine   runStrategy Always; a template with the VM's CPUs (cores), guest memory,
 *                  eviction strategy and labels; the CPU demand as an annotation.
 * VMI              named as its VM, owned by it (controller reference), labels of the
 *                  template plus kubevirt.io/domain; spec.evictionStrategy fixed at creation
 *                  (the VM's, else the cluster's), as KubeVirt records it.
 * launcher pod     virt-launcher-<vmi>-<suffix>, owned by the VMI, labels kubevirt.io=
 *                  virt-launcher, kubevirt.io/created-by=<VMI UID>, vm.kubevirt.io/name,
 *                  kubevirt.io/domain and the VM's labels; annotations kubevirt.io/domain and
 *                  descheduler.alpha.kubernetes.io/request-evict-only; one container
 *                  "compute" requesting the VM's CPU request, guest memory plus overhead and
 *                  one devices.kubevirt.io/kvm; nodeSelector kubevirt.io/schedulable=true.
 *                  A migration target also carries kubevirt.io/migrationJobUID, the
 *                  annotation kubevirt.io/migrationJobName, a required anti-affinity to the
 *                  VMI's other pods by hostname (so never the source node) and the
 *                  migration's addedNodeSelector merged into its nodeSelector.
 * migration        kubevirt-evacuation-<suffix> (generateName), annotation
 *                  kubevirt.io/evacuationMigration: <source node>, spec.vmiName. */
#ifndef PSI_SIM_OBJECTS_H
#define PSI_SIM_OBJECTS_H

#include <cjson/cJSON.h>

#include "hack/sim/scenario.h"

/* The image the launcher pods name (kwok runs nothing). */
#define OBJECTS_LAUNCHER_IMAGE "quay.io/kubevirt/virt-launcher:v1.5.0"

/* The memory a launcher pod requests for a guest: guest memory plus KubeVirt's overhead,
 * approximated as 200 MiB + 8 MiB per vCPU + 0.5 % of the guest memory (bytes). */
double objects_launcher_memory(const struct scenario_vm *vm);

/* The VirtualMachine of vm in namespace ns; scenario names the simulator's label value. */
cJSON *objects_vm(const char *ns, const char *scenario, const struct scenario_vm *vm, double cpu_demand);

/* The VMI of vm, owned by the VM with UID vm_uid; strategy is the effective one. */
cJSON *objects_vmi(const char *ns, const char *scenario, const struct scenario_vm *vm, const char *vm_uid,
                   enum scenario_strategy strategy);

/* A migration target's details for objects_launcher_pod (all borrowed). */
struct objects_target {
    const char *migration_uid;
    const char *migration_name;
    const cJSON *added_node_selector; /* the migration's spec.addedNodeSelector, or NULL */
};

/* A launcher pod named pod_name for the VMI vmi_name / vmi_uid of vm; target is NULL for
 * the VMI's first pod. */
cJSON *objects_launcher_pod(const char *ns, const char *scenario, const struct scenario_vm *vm, const char *vmi_name,
                            const char *vmi_uid, const char *pod_name, const struct objects_target *target);

/* An evacuation migration of vmi_name from source_node, as GenerateNewMigration makes it
 * (pkg/virt-controller/watch/drain/evacuation/evacuation.go): spec.priority system-critical,
 * or system-maintenance when the VMI's kubevirt.io/eviction-source annotation
 * (eviction_source, NULL: none) is "descheduler". */
cJSON *objects_evacuation(const char *ns, const char *vmi_name, const char *source_node, const char *eviction_source);

#endif
