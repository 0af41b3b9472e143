/* scenario_deployments: the `deployments` section of a scenario file, workloads that are not
 * VMs. Each entry is a Deployment the simulator creates in the scenario's namespace; the real
 * kube-controller-manager makes its ReplicaSet and pods (and replaces an evicted pod), the real
 * kube-scheduler places them, kwok runs them. Every running pod has the entry's demand, which
 * the PSI model counts on its node as it counts a VM's. Pure: YAML (as cJSON) in, structs out.
 *
 *   deployments:
 *   - name: web                       # required: a DNS label of at most 40 characters (the
 *                                     # pods are named <name>-<hash>-<suffix>)
 *     replicas: 2                     # default 1
 *     cpu: 2                          # CPU demand per pod, cores (default 0.1)
 *     memoryDemand: 512Mi             # working set per pod (default 256Mi)
 *     io: 1                           # io demand per pod (default 1)
 *     cpuRequest: 100m                # the container's requests (default 100m, 128Mi)
 *     memoryRequest: 128Mi
 *     labels: {app: web}              # on the pods (the template), besides the simulator's
 *
 * A scenario needs at least one VM or one Deployment. With start.node, the Deployments' pods
 * start there too: the other nodes stay cordoned until they run as well. */
#ifndef PSI_SIM_SCENARIO_DEPLOYMENTS_H
#define PSI_SIM_SCENARIO_DEPLOYMENTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct scenario;
struct scenario_label;

/* One Deployment of the scenario. */
struct scenario_deployment {
    char *name;
    int replicas;
    double cpu_demand;     /* cores, per pod */
    double memory_demand;  /* bytes, per pod (its working set) */
    double io_demand;      /* per pod */
    double cpu_request;    /* cores */
    double memory_request; /* bytes */
    struct scenario_label *labels;
    size_t n_labels;
};

/* Parse list (the `deployments` value; NULL or null: none) into s->deployments. Returns 0, or
 * -1 with why in err naming the field (e.g. "deployments[0].cpu: invalid quantity ..."). */
int scenario_deployments_parse(struct scenario *s, const cJSON *list, char *err, size_t errlen);

/* Free s->deployments (and reset the count). */
void scenario_deployments_free(struct scenario *s);

/* The Deployment named name, or NULL. */
const struct scenario_deployment *scenario_deployment_find(const struct scenario *s, const char *name);

#endif
