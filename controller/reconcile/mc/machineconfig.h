/* machineconfig: the MachineConfig that turns PSI on for one role, whether an existing one
 * needs an update, and what a MachineConfigPool says about its rollout (the
 * PSIEnabled condition and the status.machineConfigs entry). Pure: objects in, objects and
 * decisions out; the caller does the API calls.
 *
 * The object (machineconfiguration.openshift.io/v1, cluster-scoped):
 *   metadata.name   99-<role>-psi-rebalancer  ("99-" so it sorts after the MCO's own
 *                   configs; one per role, whichever PsiRebalance asks for it)
 *   metadata.labels machineconfiguration.openshift.io/role: <role>  (the pool selects by it)
 *                   app.kubernetes.io/managed-by: psi-rebalancer
 *                   rebalance.psi.dev/owner: <PsiRebalance name>
 *   spec.config     {"ignition": {"version": "3.2.0"}}: the MCO needs a valid Ignition config
 *                   even when the config only sets kernel arguments; 3.2.0 is the spec
 *                   version OpenShift 4.x documents for new MachineConfigs.
 *   spec.kernelArguments ["psi=1"] plus "schedstats=enable" when asked.
 * There is no ownerReference on purpose: the garbage collector would delete the
 * MachineConfig with the PsiRebalance, and deleting it reboots every machine of the pool.
 * The operator never deletes one, and never takes a kernel argument away
 * (machineconfig_keep): so each pool's MachineConfig changes at most twice by its hand (made,
 * and schedstats=enable added), which the admission policy psi-rebalancer-machineconfigs
 * enforces on its token. Taking PSI or schedstats off again is an admin's `oc delete
 * machineconfig` (spec.machineConfig.deletionPolicy is deprecated and ignored).
 *
 * Fields we own (compared by machineconfig_diff, rewritten by machineconfig_apply): the three
 * labels, spec.kernelArguments (exact list, in order) and the presence of
 * spec.config.ignition.version. Everything else in the object is left as found.
 *
 * Which roles get a MachineConfig and which pool picks up which one is mcplan.h's decision.
 *
 * PSIEnabled from one pool of the selected nodes (machineconfig_pool_eval), for the name of
 * our MachineConfig it picks up:
 *   pool Degraded condition True   False  PoolDegraded  (its message, degraded machine count)
 *   our name in status.configuration.source[], the Updated condition True, machineCount > 0,
 *   updatedMachineCount == machineCount, and spec.configuration (the rendered config the
 *   pool targets) not ahead of status.configuration            True   Enabled
 *   otherwise, the pool paused     False  PoolPaused: it will not update until unpaused
 *   otherwise                      False  Progressing: "k of n machines updated" once our
 *                                  MachineConfig is in the target's (spec.configuration) or
 *                                  current source, else "not rendered yet" (or "counts no
 *                                  machine yet" while machineCount is 0).
 *   (The MCO moves status.configuration to the new rendered config only when every machine
 *   runs it; during a rollout only spec.configuration names it.)
 * A MachineConfig of our name that is not ours (machineconfig_diff: MACHINECONFIG_FOREIGN) is
 * left alone and says nothing about PSI: the pools picking it up are False,
 * MachineConfigNotOwned, however they look (machineconfig_not_owned). A pool no MachineConfig
 * may reach alone is False, PoolNotCovered (machineconfig_not_covered); selected nodes in no
 * pool are False, PoolNotFound, named (machineconfig_orphans).
 * Over several pools (machineconfig_psi_enabled): MachineConfigNotOwned if any pool has it,
 * else PoolDegraded, else PoolNotFound, else PoolNotCovered, else PoolPaused, else Progressing
 * if any is, else True; the message says every pool's state, those in the reported one
 * first. Where the MachineConfig API does not exist: Unknown, MachineConfigAPIUnavailable;
 * with spec.machineConfig.enabled false: Unknown, MachineConfigDisabled (PSI is the admin's
 * job); no selected node at all: Unknown, NoSelectedNodes.
 */
#ifndef PSI_RECONCILE_MACHINECONFIG_H
#define PSI_RECONCILE_MACHINECONFIG_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/reasons.h"
#include "api/status.h"

#define MACHINECONFIG_GROUP "machineconfiguration.openshift.io"
#define MACHINECONFIG_API_VERSION MACHINECONFIG_GROUP "/v1"
#define MACHINECONFIG_KIND "MachineConfig"
#define MACHINECONFIG_ROLE_LABEL MACHINECONFIG_GROUP "/role"
#define MACHINECONFIG_MANAGED_BY_LABEL "app.kubernetes.io/managed-by"
#define MACHINECONFIG_MANAGED_BY "psi-rebalancer"
#define MACHINECONFIG_OWNER_LABEL "rebalance.psi.dev/owner"
#define MACHINECONFIG_IGNITION_VERSION "3.2.0"
#define MACHINECONFIG_KARG_PSI "psi=1"
#define MACHINECONFIG_KARG_SCHEDSTATS "schedstats=enable"

/* PSIEnabled reasons. */
#define MACHINECONFIG_REASON_ENABLED API_REASON_ENABLED
#define MACHINECONFIG_REASON_PROGRESSING API_REASON_PROGRESSING
#define MACHINECONFIG_REASON_POOL_DEGRADED API_REASON_POOL_DEGRADED
#define MACHINECONFIG_REASON_POOL_NOT_FOUND API_REASON_POOL_NOT_FOUND
#define MACHINECONFIG_REASON_POOL_NOT_COVERED API_REASON_POOL_NOT_COVERED
#define MACHINECONFIG_REASON_POOL_PAUSED API_REASON_POOL_PAUSED
#define MACHINECONFIG_REASON_API_UNAVAILABLE API_REASON_MACHINE_CONFIG_API_UNAVAILABLE
#define MACHINECONFIG_REASON_DISABLED API_REASON_MACHINE_CONFIG_DISABLED
#define MACHINECONFIG_REASON_NO_SELECTED_NODES API_REASON_NO_SELECTED_NODES
#define MACHINECONFIG_REASON_NOT_OWNED API_REASON_MACHINE_CONFIG_NOT_OWNED /* our name, someone else's object */

/* What we want for one role. Strings are borrowed. */
struct machineconfig_want {
    const char *role;
    const char *owner; /* the PsiRebalance's name (a label value) */
    bool schedstats;
};

/* What machineconfig_diff found. */
enum machineconfig_diff {
    MACHINECONFIG_UP_TO_DATE,
    MACHINECONFIG_NEEDS_UPDATE,
    MACHINECONFIG_FOREIGN, /* same name, but not managed by psi-rebalancer or owned by another PsiRebalance */
};

/* The rollout of our MachineConfig in one pool. */
struct machineconfig_pool_eval {
    enum api_condition_status status; /* PSIEnabled for this pool */
    const char *reason;               /* one of the MACHINECONFIG_REASON_* (static) */
    char message[512];
    char pool[254]; /* the pool's name; "" when none */
    bool rendered;  /* our MachineConfig is in status.configuration.source */
    bool updated;   /* status True: every machine runs a configuration with it */
    int64_t updated_machines, machines, degraded_machines;
};

/* The MachineConfig name for role ("99-<role>-psi-rebalancer"); caller frees; NULL on no memory. */
char *machineconfig_name(const char *role);

/* The whole MachineConfig to create for w (caller frees with cJSON_Delete); NULL on no memory. */
cJSON *machineconfig_build(const struct machineconfig_want *w);

/* Compare the fields we own in existing (a MachineConfig as served) with w. */
enum machineconfig_diff machineconfig_diff(const cJSON *existing, const struct machineconfig_want *w);

/* A copy of existing with the fields we own set as w wants, everything else (resourceVersion
 * included, so a PUT of it fails with 409 if the object changed) kept. Caller frees; NULL on
 * no memory or when existing is not an object. */
cJSON *machineconfig_apply(const cJSON *existing, const struct machineconfig_want *w);

/* w, with schedstats kept on where existing (our MachineConfig as served, or NULL) already
 * has schedstats=enable: the operator only ever adds kernel arguments. */
struct machineconfig_want machineconfig_keep(const cJSON *existing, const struct machineconfig_want *w);

/* Evaluate pool for our MachineConfig mc_name (rule above) into *out. */
void machineconfig_pool_eval(const cJSON *pool, const char *mc_name, struct machineconfig_pool_eval *out);

/* Make *out (evaluated for its pool) say that MachineConfig mc_name of role exists but is not
 * ours (rule above). */
void machineconfig_not_owned(const char *role, const char *mc_name, struct machineconfig_pool_eval *out);

/* *out for a pool no MachineConfig may reach alone (rule above). */
void machineconfig_not_covered(const char *pool, struct machineconfig_pool_eval *out);

/* *out for total selected nodes in no pool, names[0..shown) of them named (rule above). */
void machineconfig_orphans(const char *const *names, size_t shown, size_t total, struct machineconfig_pool_eval *out);

/* Append the status.machineConfigs entry of *ev's pool to st: the role and name of our
 * MachineConfig it picks up (both NULL: none). Returns 0, -1 on no memory. */
int machineconfig_status_entry(struct api_status *st, const char *role, const char *mc_name,
                               const struct machineconfig_pool_eval *ev);

/* The PSIEnabled condition: status, reason (static) and the message, written into the
 * caller's buffer msg of msglen bytes. */
struct machineconfig_psi {
    enum api_condition_status status;
    const char *reason;
    char *msg;
    size_t msglen;
};

/* PSIEnabled over the pools' evaluations ev[0..n) (rule above) into *out (its msg and msglen
 * set by the caller). api_available false: the MachineConfig API does not exist; enabled
 * false: spec.machineConfig.enabled is off. */
void machineconfig_psi_enabled(const struct machineconfig_pool_eval *ev, size_t n, bool api_available, bool enabled,
                               struct machineconfig_psi *out);

#endif
