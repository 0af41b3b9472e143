/* api_spec / api_psirebalance: the PsiRebalance custom resource (rebalance.psi.dev/v1alpha1)
 * as C types. api_spec_decode applies the very defaults the CRD declares
 * (crds/rebalance.psi.dev_psirebalances.yaml; tests/unit/api proves they agree), and
 * api_spec_validate checks every rule of the CRD's schema and CEL again, so that an object
 * stored before the CRD was updated, or built in code, is held to the same rules. Status
 * types live in status.h. */
#ifndef PSI_API_PSIREBALANCE_H
#define PSI_API_PSIREBALANCE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/errors.h"
#include "api/selector.h"
#include "api/status.h"

#define API_GROUP "rebalance.psi.dev"
#define API_VERSION "v1alpha1"
#define API_API_VERSION API_GROUP "/" API_VERSION
#define API_KIND "PsiRebalance"
#define API_PLURAL "psirebalances"

/* bearerTokenFile's default before the pressure-reading ServiceAccount: the operator's own
 * token. Decoded as unset (with a warning): that token is never sent to Prometheus. */
#define API_LEGACY_TOKEN_FILE "/var/run/secrets/kubernetes.io/serviceaccount/token"

enum api_source { API_SOURCE_PROMETHEUS, API_SOURCE_KUBELET };
enum api_taint_effect { API_EFFECT_PREFER_NO_SCHEDULE, API_EFFECT_NO_SCHEDULE };
enum api_eviction_mode { API_MODE_DISABLED, API_MODE_DRY_RUN, API_MODE_AUTOMATIC };
enum api_eviction_method { API_METHOD_EVICT, API_METHOD_MIGRATE, API_METHOD_AUTO };
enum api_stall { API_STALL_SOME, API_STALL_FULL };
enum api_deletion_policy { API_DELETION_RETAIN, API_DELETION_DELETE };

/* The spec, every field filled (defaults where the object says nothing). Strings and vectors
 * are owned; release with api_spec_free. Durations are in milliseconds. */
struct api_spec {
    struct api_selector node_selector;
    struct {
        bool enabled;
        char **roles; /* deprecated and ignored: the MachineConfigs follow the selected nodes' pools */
        size_t nroles;
        bool schedstats;
        enum api_deletion_policy deletion_policy;
    } machine_config;
    struct {
        enum api_source source;
        struct {
            char *url;                       /* NULL only in a spec built without api_spec_defaults */
            char *bearer_token_file;         /* NULL: the pressure-reading ServiceAccount's token; "": none */
            char *ca_file;                   /* NULL when unset */
            bool send_token_over_plain_http; /* a token may go to an http:// URL */
        } prometheus;
        int64_t interval_ms, window_ms;
    } metrics;
    struct {
        enum api_resource resource;
        enum api_stall stall;
        int64_t taint_above_percent, untaint_below_percent;
        int64_t sustain_ms;
        int64_t max_tainted_percent;
        bool has_utilization_floor;
        int64_t utilization_floor_percent;
    } pressure;
    struct {
        char *key;
        enum api_taint_effect effect;
    } taint;
    struct {
        enum api_eviction_mode mode;
        enum api_eviction_method method;
        int64_t evict_above_percent;
        bool has_relief_target; /* reliefTargetPercent given (else untaintBelowPercent) */
        int64_t relief_target_percent;
        char **resources; /* "cpu", "memory": what moves balance; none given: pressure.resource */
        size_t nresources;
        struct api_selector pod_selector;
        char **excluded_namespaces;
        size_t nexcluded_namespaces;
        int64_t max_per_node, max_total, max_in_flight_migrations;
        bool has_max_per_namespace; /* maxPerNamespace given (else maxTotal bounds a namespace too) */
        int64_t max_per_namespace;
        int64_t max_moves_per_workload; /* moves of one workload per cooldown.history */
        int64_t max_moves_per_hour;     /* moves per hour, all workloads */
        bool allow_vm_restart;          /* a VM KubeVirt would restart may be moved by eviction */
        struct {
            int64_t initial_ms, max_ms, history_ms;
        } cooldown;
    } eviction;
};

/* A whole PsiRebalance: the metadata the operator needs, the spec and the status. */
struct api_psirebalance {
    char *name;
    char *uid;
    char *resource_version;
    int64_t generation;
    struct api_spec spec;
    bool has_status;
    struct api_status status;
};

/* Names of the enum values as the API spells them. */
const char *api_source_name(enum api_source v);
const char *api_resource_name(enum api_resource v);
const char *api_taint_effect_name(enum api_taint_effect v);
const char *api_eviction_mode_name(enum api_eviction_mode v);
const char *api_eviction_method_name(enum api_eviction_method v);
const char *api_stall_name(enum api_stall v);
const char *api_deletion_policy_name(enum api_deletion_policy v);

/* Fill *spec with the CRD's defaults (the spec of an object that says nothing), replacing
 * what it held; returns 0, or -1 on no memory. */
int api_spec_defaults(struct api_spec *spec);

/* Decode json (the value of .spec; NULL when absent) into *spec with defaults for what it
 * leaves out. Wrong types, unknown enum values and unparsable durations go to errs (the
 * default is kept for such a field), unknown fields to warns (may be NULL): they are ignored,
 * so that an operator older than its CRD keeps working. Returns 0, or -1 when errs grew.
 * *spec must be zeroed or hold a spec; free it with api_spec_free in any case. */
int api_spec_decode(const cJSON *json, struct api_spec *spec, struct api_errors *errs, struct api_errors *warns);

/* Check spec against every rule of the CRD (bounds, syntax of keys, values, names and
 * patterns, and the CEL invariants across fields), adding one error per problem, each naming
 * its field as the API server would ("spec.pressure.untaintBelowPercent"). A cross-field rule
 * is skipped when errs already holds an error for one of its fields. Returns 0 or -1. */
int api_spec_validate(const struct api_spec *spec, struct api_errors *errs);

/* spec as JSON with every field (as the API server returns a defaulted object); caller owns
 * the result; NULL on no memory. */
cJSON *api_spec_encode(const struct api_spec *spec);

/* True when a and b say the same thing. */
bool api_spec_equal(const struct api_spec *a, const struct api_spec *b);

/* Release what spec owns and zero it. */
void api_spec_free(struct api_spec *spec);

/* Decode a whole PsiRebalance object (apiVersion, kind, metadata, spec, status), then
 * validate its spec: errs gets every problem of the object and its spec. Problems of the
 * status (the operator's own, rewritten on the next update) and unknown fields go to warns
 * (may be NULL). Returns 0, or -1 when errs grew. *out must be zeroed or hold an object;
 * free it with api_psirebalance_free in any case. */
int api_psirebalance_decode(const cJSON *json, struct api_psirebalance *out, struct api_errors *errs,
                            struct api_errors *warns);

/* Release what p owns and zero it. */
void api_psirebalance_free(struct api_psirebalance *p);

#endif
