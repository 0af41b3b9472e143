/* sim: what the simulator's controllers share: the scenario, the API client and loop, the
 * informer caches of the objects they act on, the record, a seeded random source, and
 * small helpers for the API calls they all make. Single-threaded: everything here is used
 * from the loop's thread (the webhook has its own client).
 *
 * The controllers are level-triggered, as Kubernetes controllers are: every pass reads
 * the caches and moves each object one step towards where it should be; a write that
 * fails is retried by a later pass. Objects the simulator creates get names derived from
 * their owner's UID where KubeVirt would use a random suffix, so a create repeated before
 * the cache shows the first one is a harmless 409. */
#ifndef PSI_SIM_SIM_H
#define PSI_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "hack/sim/record.h"
#include "hack/sim/scenario.h"
#include "kube/informer.h"
#include "kube/loop.h"
#include "kube/rest.h"

/* Names KubeVirt and the MachineConfig operator use. */
#define SIM_KUBEVIRT_GV "kubevirt.io/v1"
#define SIM_MC_GV "machineconfiguration.openshift.io/v1"
#define SIM_LAUNCHER_LABEL "kubevirt.io"              /* = virt-launcher */
#define SIM_CREATED_BY_LABEL "kubevirt.io/created-by" /* the VMI's UID */
#define SIM_MIGRATION_JOB_LABEL "kubevirt.io/migrationJobUID"
#define SIM_DOMAIN_ANNOTATION "kubevirt.io/domain"
#define SIM_EVACUATION_ANNOTATION "kubevirt.io/evacuationMigration"
#define SIM_EVICTION_IN_PROGRESS "descheduler.alpha.kubernetes.io/eviction-in-progress"
#define SIM_REQUEST_EVICT_ONLY "descheduler.alpha.kubernetes.io/request-evict-only"
#define SIM_EVICTION_SOURCE "kubevirt.io/eviction-source"
#define SIM_SCHEDULABLE_LABEL "kubevirt.io/schedulable"
/* The simulator's own marks. */
#define SIM_DEMAND_ANNOTATION "sim.psi.dev/cpu-demand"
#define SIM_MANAGED_LABEL "sim.psi.dev/scenario"

struct sim {
    const struct scenario *sc;
    struct kube_client *client;
    struct kube_loop *loop;
    struct kube_informer *nodes; /* the simulated nodes (scenario selector) */
    struct kube_informer *pods;  /* virt-launcher pods of the namespace */
    struct kube_informer *vms, *vmis, *vmims;
    struct kube_informer *kubevirts;  /* the namespace's KubeVirt CRs (sim_publish_kubevirt) */
    struct kube_informer *mcs, *mcps; /* MachineConfigs and pools; NULL without the MCO */
    struct record *rec;
    uint64_t rng;        /* xorshift64* state, from the scenario's seed */
    uint64_t started_ms; /* kube_loop_now_ms() at start */
    /* the launcher pods by their VMI's UID (sim_index_pods), valid for one pass */
    struct sim_pod_ref *pod_index;
    size_t n_pod_index;
};

/* One entry of the pod index. */
struct sim_pod_ref {
    const char *vmi_uid; /* points into the pod */
    const cJSON *pod;
};

/* The KubeVirt CR the simulator publishes in its namespace, named as HyperConverged names it. */
#define SIM_KUBEVIRT_NAME "kubevirt-kubevirt-hyperconverged"

/* Create the namespace's KubeVirt CR when absent, with the scenario's eviction strategy and
 * migration limits in spec.configuration (as HyperConverged writes them); one already
 * there is left as it is. Returns 0, or -1 with why in err. */
int sim_publish_kubevirt(struct sim *s, char *err, size_t errlen);

/* The migration limits in force: the cached KubeVirt CR's (miglimits.h), or the
 * scenario's when there is none. */
void sim_migration_limits(const struct sim *s, int *per_cluster, int *per_node);

/* Index the cached launcher pods by VMI UID. Call at the start of a pass: the index holds
 * cache pointers, which the informer may replace when the loop runs again. */
void sim_index_pods(struct sim *s);

/* A uniform random number in [0, 1) from the scenario-seeded generator. */
double sim_random(struct sim *s);

/* Milliseconds since the simulator started. */
uint64_t sim_elapsed_ms(const struct sim *s);

/* The wall clock as RFC 3339 with seconds ("2024-01-02T03:04:05Z") into buf. */
char *sim_timestamp(char *buf, size_t len);

/* A copy of the phase history old (a status.phaseTransitionTimestamps array, or NULL) with
 * phase appended (stamped now) unless it is already the last entry, as KubeVirt keeps it for
 * VMIs and migrations; caller owns it. */
cJSON *sim_phase_history(const cJSON *old, const char *phase);

/* A five-character suffix in the alphabet Kubernetes uses for generated names
 * ("bcdfghjklmnpqrstvwxz2456789"), derived from seed: the same seed gives the same one. */
void sim_suffix(const char *seed, char out[6]);

/* Whether every informer has completed its first list. */
bool sim_synced(const struct sim *s);

/* Iterate the launcher pods whose created-by label is vmi_uid (from the index of this
 * pass); fn returns non-zero to stop (that value is returned). */
int sim_foreach_pod_of(const struct sim *s, const char *vmi_uid, int (*fn)(const cJSON *pod, void *ud), void *ud);

/* Whether a pod is live: not being deleted, not Succeeded or Failed. */
bool sim_pod_live(const cJSON *pod);

/* Whether a pod runs: bound to a node, phase Running and Ready. */
bool sim_pod_ready(const cJSON *pod);

/* The node object (cached) of that name, or NULL when it is not a simulated node. */
const cJSON *sim_node(const struct sim *s, const char *name);

/* REST helpers against the loop's client. They log a failure (naming what) and return
 * -1, except where noted; 0 on success. path is an API path (see kube_path). */

/* POST body; *created (may be NULL) gets the stored object (caller frees). */
int sim_create(struct sim *s, const char *path, const cJSON *body, cJSON **created, const char *what);

/* As sim_create, but a 409 AlreadyExists counts as success (created stays NULL). */
int sim_create_once(struct sim *s, const char *path, const cJSON *body, cJSON **created, const char *what);

/* A JSON merge patch (RFC 7386). */
int sim_merge_patch(struct sim *s, const char *path, const cJSON *patch, const char *what);

/* A JSON patch (RFC 6902) given as text. */
int sim_json_patch(struct sim *s, const char *path, const char *ops, const char *what);

/* DELETE with background propagation; a 404 counts as success. */
int sim_delete(struct sim *s, const char *path, const char *what);

/* Path helpers (caller frees): a namespaced object of the scenario's namespace, and its
 * status subresource (status != 0). */
char *sim_path(const struct sim *s, const char *gv, const char *resource, const char *name, int status);

#endif
