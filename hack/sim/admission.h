/* admission: KubeVirt's virt-launcher-eviction-interceptor, as decisions over plain
 * objects (pure), plus the AdmissionReview request and response it speaks.
 *
 * For an eviction of a pod (the rules of KubeVirt's pod eviction admitter):
 *   - the pod cannot be read, is no virt-launcher (label kubevirt.io=virt-launcher), has
 *     completed, or names no VMI (annotation kubevirt.io/domain): allowed;
 *   - the VMI cannot be read: denied, "kubevirt failed getting the vmi: ...";
 *   - the effective eviction strategy (the VMI's spec.evictionStrategy, else the
 *     cluster's) is unset or None, or LiveMigrateIfPossible on a VMI that cannot migrate
 *     (its LiveMigratable condition is not True): allowed (the VM restarts elsewhere);
 *   - LiveMigrate on a VMI that cannot migrate: denied, "VMI <name> is configured with an
 *     eviction strategy but is not live-migratable";
 *   - the VMI is already marked (status.evacuationNodeName set): denied,
 *     "Evacuation in progress: Eviction triggered evacuation of VMI \"<ns>/<name>\"";
 *   - the pod is not the one on the VMI's node (a migration target): denied,
 *     "Eviction request for target Pod";
 *   - else: mark the VMI (status.evacuationNodeName = the pod's node) and deny with
 *     "Eviction triggered evacuation of VMI \"<ns>/<name>\"".
 * Every denial carries HTTP code 429, which the API server passes to the client as
 * "admission webhook \"<webhook>\" denied the request: <message>".
 *
 * For the creation of a VirtualMachineInstanceMigration (the rules of KubeVirt's migration
 * create admitter, webhook migration-create-validator.kubevirt.io):
 *   - no spec.vmiName: denied with 422, "vmiName is missing";
 *   - the VMI does not exist: 400, "the VMI \"<ns>/<name>\" does not exist" (another error
 *     reading it: 400 with that error);
 *   - the VMI is final (phase Succeeded or Failed): 400, "Cannot migrate VMI in finalized
 *     state.";
 *   - its LiveMigratable condition is False: 400, "Cannot migrate VMI, Reason: <reason>,
 *     Message: <message>";
 *   - another migration of the VMI is neither Succeeded nor Failed: 400, "in-flight
 *     migration detected. Active migration job (<uid>) is currently already in progress
 *     for VMI <name>.";
 *   - else allowed. */
#ifndef PSI_SIM_ADMISSION_H
#define PSI_SIM_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "hack/sim/scenario.h"

/* The webhook's name, as KubeVirt registers it. */
#define ADMISSION_WEBHOOK_NAME "virt-launcher-eviction-interceptor.kubevirt.io"
/* The migration create admitter's name, as KubeVirt registers it. */
#define ADMISSION_MIGRATION_WEBHOOK_NAME "migration-create-validator.kubevirt.io"
/* The messages. */
#define ADMISSION_EVICTION_FMT "Eviction triggered evacuation of VMI \"%s/%s\""
#define ADMISSION_IN_PROGRESS_PREFIX "Evacuation in progress: "

enum admission_verdict {
    ADMISSION_ALLOW,
    ADMISSION_DENY, /* deny with message, change nothing */
    ADMISSION_MARK, /* set the VMI's status.evacuationNodeName to node, then deny with message */
};

struct admission_decision {
    enum admission_verdict verdict;
    const char *vmi;   /* the VMI name (points into the pod), NULL when none */
    const char *node;  /* MARK: the node to evacuate (points into the pod) */
    char message[512]; /* DENY and MARK */
};

/* What an AdmissionReview for pods/eviction (or a migration's creation) asks. Strings
 * point into the request. */
struct admission_request {
    const char *uid;
    const char *ns;
    const char *pod;          /* the request's name: the pod; NULL for a migration (generateName) */
    const char *resource;     /* request.resource.resource: "pods" or "virtualmachineinstancemigrations" */
    const char *vmi_name;     /* a migration's spec.vmiName, or NULL */
    bool dry_run;             /* request.dryRun, or the Eviction's deleteOptions.dryRun [All] */
    const char *requested_by; /* the Eviction's annotation requested-by, or NULL */
};

/* Whether req is an eviction the descheduler asks for: the Eviction's annotation requested-by
 * is "sigs.k8s.io/descheduler" (isDeschedulerEviction, KubeVirt >= 1.7,
 * pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go). Such an
 * eviction's migration is queued at system-maintenance priority, not system-critical. */
bool admission_descheduler_eviction(const struct admission_request *req);

/* A verdict on the creation of a migration. */
struct admission_migration_decision {
    bool allowed;
    int code;          /* when denied: 400, or 422 for a spec without vmiName */
    char message[512]; /* when denied */
};

/* Decide for the creation of a migration of vmi_name (NULL or "": none given) in ns. vmi
 * is that VMI (NULL when it could not be read: vmi_error says why, NULL meaning not
 * found); migrations is the array of the namespace's migrations (NULL: none). */
void admission_decide_migration(const char *ns, const char *vmi_name, const cJSON *vmi, const char *vmi_error,
                                const cJSON *migrations, struct admission_migration_decision *out);

/* Decide for the eviction of pod (NULL: could not be read). vmi is the pod's VMI (NULL
 * when it could not be read: vmi_error says why). cluster is the cluster-wide strategy. */
void admission_decide(const cJSON *pod, const cJSON *vmi, const char *vmi_error, enum scenario_strategy cluster,
                      struct admission_decision *out);

/* The effective strategy of a VMI: spec.evictionStrategy, else cluster. */
enum scenario_strategy admission_strategy(const cJSON *vmi, enum scenario_strategy cluster);

/* Whether the VMI's LiveMigratable condition is True. */
bool admission_migratable(const cJSON *vmi);

/* Parse an AdmissionReview (admission.k8s.io/v1) into req; the review stays owned by the
 * caller and must outlive req. Returns 0, or -1 with why in err. */
int admission_parse_request(const cJSON *review, struct admission_request *req, char *err, size_t errlen);

/* Build the AdmissionReview response for uid: allowed, or denied with code and message.
 * Returns the JSON text (caller frees), NULL when out of memory. */
char *admission_response(const char *uid, bool allowed, int code, const char *message);

#endif
