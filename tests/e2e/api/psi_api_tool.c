/* psi_api_tool: the C side of the api e2e test (tests/e2e/api/api.sh), so that what the API
 * server stores and returns can be compared with what api/ decodes and encodes.
 *
 *   psi_api_tool spec FILE          print api_spec_encode(api_spec_decode(.spec of FILE)): the
 *                                   spec with the C defaults filled in (FILE: an object's JSON)
 *   psi_api_tool check FILE         decode and validate a PsiRebalance (JSON); print every
 *                                   error and warning; exit 1 when there is an error
 *   psi_api_tool status-sample      print the status of a cycle (3 nodes, one tainted, ...)
 *                                   as api_status_encode writes it
 *   psi_api_tool status-same A B    exit 0 when api_status_changed says writing B over A
 *                                   would tell nothing new (A, B: status JSON files)
 *
 * Exit status 2 on usage or I/O errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/psirebalance.h"
#include "api/status.h"

static cJSON *load(const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "psi_api_tool: cannot open %s\n", path);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, r;
    char *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    if (f != stdin)
        fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    if (!j)
        fprintf(stderr, "psi_api_tool: %s is not JSON\n", path);
    return j;
}

static int print(cJSON *j)
{
    char *s = j ? cJSON_Print(j) : NULL;
    if (!s)
        return 2;
    puts(s);
    free(s);
    cJSON_Delete(j);
    return 0;
}

static int cmd_spec(const char *path)
{
    cJSON *obj = load(path);
    if (!obj)
        return 2;
    struct api_spec s = {0};
    struct api_errors errs = {0};
    api_spec_decode(cJSON_GetObjectItem(obj, "spec"), &s, &errs, NULL);
    int rc = errs.n ? 1 : print(api_spec_encode(&s));
    for (size_t i = 0; i < errs.n; i++)
        fprintf(stderr, "error: %s: %s\n", errs.v[i].field, errs.v[i].msg);
    api_spec_free(&s);
    api_errors_free(&errs);
    cJSON_Delete(obj);
    return rc;
}

static int cmd_check(const char *path)
{
    cJSON *obj = load(path);
    if (!obj)
        return 2;
    struct api_psirebalance p = {0};
    struct api_errors errs = {0}, warns = {0};
    int rc = api_psirebalance_decode(obj, &p, &errs, &warns) == 0 ? 0 : 1;
    for (size_t i = 0; i < errs.n; i++)
        printf("error: %s: %s\n", errs.v[i].field, errs.v[i].msg);
    for (size_t i = 0; i < warns.n; i++)
        printf("warning: %s: %s\n", warns.v[i].field, warns.v[i].msg);
    api_psirebalance_free(&p);
    api_errors_free(&errs);
    api_errors_free(&warns);
    cJSON_Delete(obj);
    return rc;
}

static int cmd_status_sample(void)
{
    const int64_t now = 1714557600; /* 2024-05-01T10:00:00Z */
    struct api_status st = {0};
    st.observed_generation = 1;
    st.last_successful_cycle_time = now;
    api_status_set_condition(&st, API_CONDITION_READY, API_CONDITION_TRUE, "CycleSucceeded",
                             "3 nodes measured, 1 tainted", 1, now);
    api_status_set_condition(&st, API_CONDITION_DEGRADED, API_CONDITION_FALSE, "AsExpected", "", 1, now);
    api_status_set_condition(&st, API_CONDITION_PSI_ENABLED, API_CONDITION_TRUE, "MachineConfigUpdated",
                             "PSI is on for role worker (3/3 machines)", 1, now - 3600);
    api_status_set_condition(&st, API_CONDITION_METRICS_AVAILABLE, API_CONDITION_TRUE, "Prometheus",
                             "pressure for 3 of 3 nodes", 1, now);
    api_status_set_condition(&st, API_CONDITION_REBALANCING, API_CONDITION_FALSE, "Idle", "no move in flight", 1, now);
    st.summary = (struct api_summary){.nodes = 3,
                                      .pressured = 1,
                                      .tainted = 1,
                                      .evictions = 2,
                                      .migrations_succeeded = 2,
                                      .migrations_failed = 0,
                                      .migrations_in_flight = 0};
    struct api_machine_config_status *mc = api_status_add_machine_config(&st, "worker");
    if (!mc)
        return 2;
    mc->name = strdup("99-worker-psi-rebalancer");
    mc->role = strdup("worker");
    mc->updated = true;
    mc->updated_machines = mc->machines = 3;
    static const char *const names[] = {"worker-0", "worker-1", "worker-2"};
    static const double cpu[] = {31.2, 8.44, 0.0};
    for (int i = 0; i < 3; i++) {
        struct api_node_status *n = api_status_add_node(&st, names[i]);
        if (!n)
            return 2;
        n->pressure[API_RESOURCE_CPU] = cpu[i];
        n->pressure[API_RESOURCE_MEMORY] = 0.0;
        n->pressure[API_RESOURCE_IO] = 1.1;
        n->utilization = 40.0 + 10 * i;
        n->state = i == 0 ? API_NODE_TAINTED : API_NODE_NORMAL;
        n->since = now - 300;
    }
    st.nodes[0].evictions = 2;
    st.nodes[0].migrations.succeeded = 2;
    int rc = print(api_status_encode(&st));
    api_status_free(&st);
    return rc;
}

static int cmd_status_same(const char *a, const char *b)
{
    cJSON *ja = load(a), *jb = load(b);
    if (!ja || !jb)
        return 2;
    struct api_status sa = {0}, sb = {0};
    struct api_errors errs = {0};
    api_status_decode(ja, &sa, &errs, NULL);
    api_status_decode(jb, &sb, &errs, NULL);
    int rc = errs.n ? 2 : api_status_changed(&sa, &sb, NULL) ? 1 : 0;
    for (size_t i = 0; i < errs.n; i++)
        fprintf(stderr, "error: %s: %s\n", errs.v[i].field, errs.v[i].msg);
    api_status_free(&sa);
    api_status_free(&sb);
    api_errors_free(&errs);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "spec") == 0)
        return cmd_spec(argv[2]);
    if (argc == 3 && strcmp(argv[1], "check") == 0)
        return cmd_check(argv[2]);
    if (argc == 2 && strcmp(argv[1], "status-sample") == 0)
        return cmd_status_sample();
    if (argc == 4 && strcmp(argv[1], "status-same") == 0)
        return cmd_status_same(argv[2], argv[3]);
    fprintf(stderr, "usage: psi_api_tool spec FILE | check FILE | status-sample | status-same A B\n");
    return 2;
}
