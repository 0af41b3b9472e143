/* objects: the API objects the simulator creates (see objects.h). */
#include "hack/sim/objects.h"

#include <stdio.h>
#include <string.h>

#include "hack/sim/miglimits.h"
#include "hack/sim/quantity_format.h"
#include "hack/sim/sim.h"

double objects_launcher_memory(const struct scenario_vm *vm)
{
    const double mib = 1024.0 * 1024;
    double overhead = 200 * mib + 8 * mib * vm->vcpus + vm->memory * 0.005;
    /* whole MiB, as the overhead KubeVirt computes is */
    double total = vm->memory + overhead;
    return (double)((long long)((total + mib - 1) / mib)) * mib;
}

static cJSON *metadata(cJSON *obj, const char *name, const char *ns)
{
    cJSON *md = cJSON_AddObjectToObject(obj, "metadata");
    if (name)
        cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", ns);
    return md;
}

static void add_vm_labels(cJSON *labels, const struct scenario_vm *vm)
{
    for (size_t i = 0; i < vm->n_labels; i++)
        if (!cJSON_GetObjectItemCaseSensitive(labels, vm->labels[i].key))
            cJSON_AddStringToObject(labels, vm->labels[i].key, vm->labels[i].value);
}

static void owner(cJSON *md, const char *kind, const char *name, const char *uid)
{
    cJSON *refs = cJSON_AddArrayToObject(md, "ownerReferences");
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "apiVersion", SIM_KUBEVIRT_GV);
    cJSON_AddStringToObject(r, "kind", kind);
    cJSON_AddStringToObject(r, "name", name);
    cJSON_AddStringToObject(r, "uid", uid);
    cJSON_AddTrueToObject(r, "controller");
    cJSON_AddTrueToObject(r, "blockOwnerDeletion");
    cJSON_AddItemToArray(refs, r);
}

/* The VMI spec (also the VM template's spec). */
static cJSON *vmi_spec(const struct scenario_vm *vm, enum scenario_strategy strategy)
{
    char mem[32];
    quantity_format_bytes(vm->memory, mem, sizeof(mem));
    cJSON *spec = cJSON_CreateObject();
    cJSON *domain = cJSON_AddObjectToObject(spec, "domain");
    cJSON *cpu = cJSON_AddObjectToObject(domain, "cpu");
    cJSON_AddNumberToObject(cpu, "cores", vm->vcpus);
    cJSON_AddNumberToObject(cpu, "sockets", 1);
    cJSON_AddNumberToObject(cpu, "threads", 1);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(domain, "memory"), "guest", mem);
    cJSON *devices = cJSON_AddObjectToObject(domain, "devices");
    cJSON *disks = cJSON_AddArrayToObject(devices, "disks");
    cJSON *disk = cJSON_CreateObject();
    cJSON_AddStringToObject(disk, "name", "rootdisk");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(disk, "disk"), "bus", "virtio");
    cJSON_AddItemToArray(disks, disk);
    if (strategy != SCENARIO_STRATEGY_UNSET)
        cJSON_AddStringToObject(spec, "evictionStrategy", scenario_strategy_name(strategy));
    cJSON_AddNumberToObject(spec, "terminationGracePeriodSeconds", 180);
    cJSON *volumes = cJSON_AddArrayToObject(spec, "volumes");
    cJSON *vol = cJSON_CreateObject();
    cJSON_AddStringToObject(vol, "name", "rootdisk");
    /* a shared (RWX) disk is what makes a VM live-migratable */
    cJSON_AddStringToObject(cJSON_AddObjectToObject(vol, "persistentVolumeClaim"), "claimName",
                            vm->migratable ? "rootdisk-rwx" : "rootdisk-rwo");
    cJSON_AddItemToArray(volumes, vol);
    return spec;
}

cJSON *objects_vm(const char *ns, const char *scenario, const struct scenario_vm *vm, double cpu_demand)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", SIM_KUBEVIRT_GV);
    cJSON_AddStringToObject(o, "kind", "VirtualMachine");
    cJSON *md = metadata(o, vm->name, ns);
    cJSON *labels = cJSON_AddObjectToObject(md, "labels");
    cJSON_AddStringToObject(labels, SIM_MANAGED_LABEL, scenario);
    add_vm_labels(labels, vm);
    char demand[32];
    snprintf(demand, sizeof(demand), "%g", cpu_demand);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), SIM_DEMAND_ANNOTATION, demand);
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    cJSON_AddStringToObject(spec, "runStrategy", "Always");
    cJSON *tmpl = cJSON_AddObjectToObject(spec, "template");
    cJSON *tlabels = cJSON_AddObjectToObject(cJSON_AddObjectToObject(tmpl, "metadata"), "labels");
    cJSON_AddStringToObject(tlabels, "kubevirt.io/domain", vm->name);
    add_vm_labels(tlabels, vm);
    cJSON_AddItemToObject(tmpl, "spec", vmi_spec(vm, vm->strategy));
    return o;
}

cJSON *objects_vmi(const char *ns, const char *scenario, const struct scenario_vm *vm, const char *vm_uid,
                   enum scenario_strategy strategy)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", SIM_KUBEVIRT_GV);
    cJSON_AddStringToObject(o, "kind", "VirtualMachineInstance");
    cJSON *md = metadata(o, vm->name, ns);
    cJSON *labels = cJSON_AddObjectToObject(md, "labels");
    cJSON_AddStringToObject(labels, "kubevirt.io/domain", vm->name);
    cJSON_AddStringToObject(labels, SIM_MANAGED_LABEL, scenario);
    add_vm_labels(labels, vm);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), "kubevirt.io/vm-generation", "1");
    owner(md, "VirtualMachine", vm->name, vm_uid);
    cJSON_AddItemToObject(o, "spec", vmi_spec(vm, strategy));
    return o;
}

cJSON *objects_launcher_pod(const char *ns, const char *scenario, const struct scenario_vm *vm, const char *vmi_name,
                            const char *vmi_uid, const char *pod_name, const struct objects_target *target)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", "v1");
    cJSON_AddStringToObject(o, "kind", "Pod");
    cJSON *md = metadata(o, pod_name, ns);
    cJSON *labels = cJSON_AddObjectToObject(md, "labels");
    cJSON_AddStringToObject(labels, SIM_LAUNCHER_LABEL, "virt-launcher");
    cJSON_AddStringToObject(labels, SIM_CREATED_BY_LABEL, vmi_uid);
    cJSON_AddStringToObject(labels, "vm.kubevirt.io/name", vm->name);
    cJSON_AddStringToObject(labels, "kubevirt.io/domain", vmi_name);
    cJSON_AddStringToObject(labels, SIM_MANAGED_LABEL, scenario);
    if (target)
        cJSON_AddStringToObject(labels, SIM_MIGRATION_JOB_LABEL, target->migration_uid);
    add_vm_labels(labels, vm);
    cJSON *ann = cJSON_AddObjectToObject(md, "annotations");
    cJSON_AddStringToObject(ann, SIM_DOMAIN_ANNOTATION, vmi_name);
    cJSON_AddStringToObject(ann, SIM_REQUEST_EVICT_ONLY, "");
    cJSON_AddStringToObject(ann, "kubectl.kubernetes.io/default-container", "compute");
    cJSON_AddStringToObject(ann, "kubevirt.io/migrationTransportUnix", "true");
    if (target)
        cJSON_AddStringToObject(ann, "kubevirt.io/migrationJobName", target->migration_name);
    owner(md, "VirtualMachineInstance", vmi_name, vmi_uid);

    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    cJSON *containers = cJSON_AddArrayToObject(spec, "containers");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", "compute");
    cJSON_AddStringToObject(c, "image", OBJECTS_LAUNCHER_IMAGE);
    cJSON *res = cJSON_AddObjectToObject(c, "resources");
    cJSON *req = cJSON_AddObjectToObject(res, "requests");
    char cpu[32], mem[32];
    quantity_format_cpu(vm->cpu_request, cpu, sizeof(cpu));
    quantity_format_bytes(objects_launcher_memory(vm), mem, sizeof(mem));
    cJSON_AddStringToObject(req, "cpu", cpu);
    cJSON_AddStringToObject(req, "memory", mem);
    cJSON_AddStringToObject(req, "devices.kubevirt.io/kvm", "1");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(res, "limits"), "devices.kubevirt.io/kvm", "1");
    cJSON_AddItemToArray(containers, c);
    cJSON_AddStringToObject(spec, "restartPolicy", "Never");
    cJSON_AddNumberToObject(spec, "terminationGracePeriodSeconds", 210);
    cJSON_AddBoolToObject(spec, "automountServiceAccountToken", 0);
    cJSON *sel = cJSON_AddObjectToObject(spec, "nodeSelector");
    cJSON_AddStringToObject(sel, SIM_SCHEDULABLE_LABEL, "true");
    /* the scenario places the VM's launcher pods (not migration targets) itself, as a bound
     * pod: no constraint a move would have to honour */
    if (!target && vm->node)
        cJSON_AddStringToObject(spec, "nodeName", vm->node);
    if (target) {
        const cJSON *it;
        cJSON_ArrayForEach (it, (cJSON_IsObject(target->added_node_selector) ? target->added_node_selector : NULL)) {
            if (cJSON_IsString(it) && !cJSON_GetObjectItemCaseSensitive(sel, it->string))
                cJSON_AddStringToObject(sel, it->string, it->valuestring);
        }
        /* never next to the VMI's other pod: KubeVirt's required anti-affinity by hostname */
        cJSON *term = cJSON_CreateObject();
        cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(term, "labelSelector"), "matchLabels"),
                                SIM_CREATED_BY_LABEL, vmi_uid);
        cJSON_AddStringToObject(term, "topologyKey", "kubernetes.io/hostname");
        cJSON *terms = cJSON_AddArrayToObject(
            cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "affinity"), "podAntiAffinity"),
            "requiredDuringSchedulingIgnoredDuringExecution");
        cJSON_AddItemToArray(terms, term);
    }
    /* kwok marks the pod Running; tolerate kwok's fake-node taint should a bed set one */
    cJSON *tols = cJSON_AddArrayToObject(spec, "tolerations");
    cJSON *tol = cJSON_CreateObject();
    cJSON_AddStringToObject(tol, "key", "kwok.x-k8s.io/node");
    cJSON_AddStringToObject(tol, "operator", "Exists");
    cJSON_AddStringToObject(tol, "effect", "NoSchedule");
    cJSON_AddItemToArray(tols, tol);
    return o;
}

cJSON *objects_evacuation(const char *ns, const char *vmi_name, const char *source_node, const char *eviction_source)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", SIM_KUBEVIRT_GV);
    cJSON_AddStringToObject(o, "kind", "VirtualMachineInstanceMigration");
    cJSON *md = metadata(o, NULL, ns);
    cJSON_AddStringToObject(md, "generateName", "kubevirt-evacuation-");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), SIM_EVACUATION_ANNOTATION, source_node);
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    cJSON_AddStringToObject(spec, "vmiName", vmi_name);
    bool descheduler = eviction_source && strcmp(eviction_source, "descheduler") == 0;
    cJSON_AddStringToObject(spec, "priority", descheduler ? MIGLIMITS_SYSTEM_MAINTENANCE : MIGLIMITS_SYSTEM_CRITICAL);
    return o;
}
