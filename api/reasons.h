/* reasons: every reason this operator writes, in one list: the reasons of the PsiRebalance's
 * conditions (CamelCase, as the CRD requires) and of the Events it records. The modules that
 * decide a reason name it from here (conditions.h, machineconfig.h, move/plan.h, cycle.h,
 * psi/source.h keep their own names as aliases of these). docs/architecture.md says which
 * module decides which. */
#ifndef PSI_API_REASONS_H
#define PSI_API_REASONS_H

/* ---- Ready and Degraded (conditions.h) ---- */
#define API_REASON_AS_EXPECTED "AsExpected"         /* Degraded False */
#define API_REASON_CYCLE_SUCCEEDED "CycleSucceeded" /* Ready True */
#define API_REASON_CYCLE_FAILED "CycleFailed"       /* a failed cycle that named no reason */
#define API_REASON_PENDING "Pending"                /* not decided yet (also Rebalancing) */
#define API_REASON_INVALID_SPEC "InvalidSpec"       /* the spec does not validate */
#define API_REASON_INVALID_REASON "InvalidReason"   /* stands in for a reason the CRD would refuse */
/* why a cycle failed (Ready False, Degraded True) */
#define API_REASON_OUT_OF_MEMORY "OutOfMemory"
#define API_REASON_MACHINE_CONFIG_WRITE_FAILED "MachineConfigWriteFailed"
#define API_REASON_TAINT_WRITE_FAILED "TaintWriteFailed"
#define API_REASON_REBALANCE_FAILED "RebalanceFailed"
#define API_REASON_EVICTION_FAILED "EvictionFailed" /* also an Event */

/* ---- MetricsAvailable (psi/source.h: why a sample failed) ---- */
#define API_REASON_SAMPLE_SUCCEEDED "SampleSucceeded"
#define API_REASON_SOURCE_UNREACHABLE "SourceUnreachable"  /* connect/DNS failure, timeout, 503 of a proxy */
#define API_REASON_TLS_ERROR "TLSError"                    /* handshake or certificate verification failed */
#define API_REASON_UNAUTHORIZED "Unauthorized"             /* HTTP 401 */
#define API_REASON_FORBIDDEN "Forbidden"                   /* HTTP 403 */
#define API_REASON_NOT_FOUND "NotFound"                    /* HTTP 404: wrong URL or path */
#define API_REASON_UNEXPECTED_STATUS "UnexpectedStatus"    /* another non-2xx reply that is no API error */
#define API_REASON_MALFORMED_REPLY "MalformedReply"        /* not JSON, or JSON of the wrong shape */
#define API_REASON_INVALID_VALUE "InvalidValue"            /* NaN, +/-Inf or a negative pressure */
#define API_REASON_QUERY_ERROR "QueryError"                /* the server refused or failed the query */
#define API_REASON_SOURCE_CONFIG_ERROR "SourceConfigError" /* bad URL, unreadable token or CA file */
#define API_REASON_TIMEOUT "Timeout"                       /* no reply within the time allowed */
#define API_REASON_PSI_UNAVAILABLE "PSIUnavailable"        /* the node reports no PSI (KubeletPSI off, no psi=1) */
#define API_REASON_CREDENTIAL_UNAVAILABLE "CredentialUnavailable" /* no token for the metrics-reading identity */

/* ---- PSIEnabled (machineconfig.h) ---- */
#define API_REASON_ENABLED "Enabled"
#define API_REASON_PROGRESSING "Progressing"
#define API_REASON_POOL_DEGRADED "PoolDegraded" /* also Degraded True */
#define API_REASON_POOL_NOT_FOUND "PoolNotFound"
#define API_REASON_POOL_NOT_COVERED "PoolNotCovered" /* no MachineConfig may reach the pool alone */
#define API_REASON_POOL_PAUSED "PoolPaused"          /* the pool's rollout is paused */
#define API_REASON_MACHINE_CONFIG_API_UNAVAILABLE "MachineConfigAPIUnavailable"
#define API_REASON_MACHINE_CONFIG_DISABLED "MachineConfigDisabled"
#define API_REASON_NO_SELECTED_NODES "NoSelectedNodes"
#define API_REASON_MACHINE_CONFIG_NOT_OWNED "MachineConfigNotOwned" /* our name, someone else's object */
#define API_REASON_PRESSURE_REPORTED "PressureReported"             /* machineConfig off, and every node reports PSI */
/* (policyguard.h) MachineConfig mode refused: an admission policy of config/admission */
#define API_REASON_ADMISSION_POLICY_MISSING "AdmissionPolicyMissing"       /* is absent or not in force */
#define API_REASON_ADMISSION_POLICY_UNVERIFIED "AdmissionPolicyUnverified" /* could not be read */

/* ---- NodeConflict ---- */
#define API_REASON_NODE_CONFLICT "NodeConflict" /* also Degraded True */

/* ---- Rebalancing (cycle.h decides; the plan's own from plan.h) ---- */
#define API_REASON_DISABLED "Disabled"                           /* eviction.mode Disabled */
#define API_REASON_RESOURCE_NOT_SUPPORTED "ResourceNotSupported" /* io pressure, no eviction.resources */
#define API_REASON_METRICS_UNAVAILABLE "MetricsUnavailable"      /* also Degraded True and an Event */
#define API_REASON_PODS_UNAVAILABLE "PodsUnavailable"            /* the podSelector's pods cannot be watched */
#define API_REASON_WAITING_FOR_PODS "WaitingForPods"             /* ... are being listed */
#define API_REASON_USAGE_UNAVAILABLE "UsageUnavailable"          /* no CPU usage to predict a move with */
#define API_REASON_DRY_RUN "DryRun"                              /* DryRun would move */
#define API_REASON_MOVING "Moving"                               /* moves made (or planned) */
#define API_REASON_EVICTION_REFUSED "EvictionRefused"            /* also an Event */
#define API_REASON_MIGRATIONS_IN_FLIGHT "MigrationsInFlight"     /* our moves under way */
#define API_REASON_NO_PRESSURED_NODE "NoPressuredNode"
#define API_REASON_SETTLING "Settling"
#define API_REASON_NO_CANDIDATE "NoCandidate"
#define API_REASON_NO_DESTINATION "NoDestination"
#define API_REASON_NO_IMPROVING_MOVE "NoImprovingMove"
#define API_REASON_LIMIT_REACHED "LimitReached"
#define API_REASON_OSCILLATION_HELD "OscillationHeld" /* the only moves left would undo recent ones */
/* no set of moves can bring any source below taintAbovePercent (placement.h); also an Event */
#define API_REASON_NO_PLACEMENT "NoPlacement"
/* maxMovesPerHour used, or the workloads that could go used maxMovesPerWorkload; also an Event */
#define API_REASON_MOVE_BUDGET_REACHED "MoveBudgetReached"
/* a rollout, an update or a drain's waiting migration holds the nodes that would move (rollout.h) */
#define API_REASON_MAINTENANCE_IN_PROGRESS "MaintenanceInProgress"
/* the workloads that could go moved without the relief predicted; also an Event */
#define API_REASON_INEFFECTIVE_MOVE_HELD "IneffectiveMoveHeld"

/* ---- Events ---- */
#define API_EVENT_TAINTED "Tainted"     /* on the Node */
#define API_EVENT_UNTAINTED "Untainted" /* on the Node */
#define API_EVENT_METRICS_UNAVAILABLE API_REASON_METRICS_UNAVAILABLE
#define API_EVENT_METRICS_AVAILABLE "MetricsAvailable"
#define API_EVENT_MACHINE_CONFIG_CREATED "MachineConfigCreated"
#define API_EVENT_MACHINE_CONFIG_UPDATED "MachineConfigUpdated"
#define API_EVENT_EVICTED "Evicted"
#define API_EVENT_WOULD_MOVE "WouldMove"
#define API_EVENT_MIGRATION_REQUESTED "MigrationRequested"
#define API_EVENT_MIGRATION_SUCCEEDED "MigrationSucceeded"
#define API_EVENT_MIGRATION_FAILED "MigrationFailed"
#define API_EVENT_EVICTION_REFUSED API_REASON_EVICTION_REFUSED
#define API_EVENT_EVICTION_FAILED API_REASON_EVICTION_FAILED
#define API_EVENT_MIGRATE_UNSUPPORTED "MigrateUnsupported"
#define API_EVENT_REBALANCE_BLOCKED "RebalanceBlocked"

#endif
