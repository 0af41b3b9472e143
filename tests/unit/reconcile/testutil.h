/* Helpers shared by the reconcile unit tests: JSON from a literal or from a file of
 * tests/testdata/reconcile, the planner's parameters at the CRD's defaults, CFS's fair share,
 * a xorshift generator. Include after
 * <cmocka.h> (failures go through fail_msg). */
#ifndef PSI_TEST_RECONCILE_UTIL_H
#define PSI_TEST_RECONCILE_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "api/psirebalance.h"
#include "reconcile/move/cycle.h"

/* A uniform number in [0, 1) from the xorshift64 state *s (advanced). */
static inline double xorshift_uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / (double)(1ull << 53);
}

/* CFS's fair share over n VMs of vcpus[j] threads, each busy busy[j] of the time, serving
 * `served` cores: the water level s with sum vcpus[j] * min(busy[j], s) = served (a thread
 * gets what it wants up to s). */
static inline double cfs_water_level(const double *busy, const double *vcpus, size_t n, double served)
{
    double lo = 0, hi = 1;
    for (int it = 0; it < 60; it++) {
        double mid = (lo + hi) / 2, got = 0;
        for (size_t j = 0; j < n; j++)
            got += vcpus[j] * (busy[j] < mid ? busy[j] : mid);
        if (got < served)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* text parsed; the test fails when it is no JSON. */
static inline cJSON *parse(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("test JSON does not parse: %s", text);
    return j;
}

/* $PSI_TESTDATA/reconcile/<name> parsed; the test fails when it is unreadable or no JSON. */
static inline cJSON *fixture(const char *name)
{
    const char *dir = getenv("PSI_TESTDATA");
    assert_non_null(dir);
    char path[1024];
    snprintf(path, sizeof(path), "%s/reconcile/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 + 1 > cap) {
            cap = (len + 4096 + 1) * 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        got = fread(buf + len, 1, 4096, f);
        len += got;
    } while (got > 0);
    fclose(f);
    buf[len] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    if (!j)
        fail_msg("%s is not JSON", path);
    return j;
}

/* The planner's parameters for a PsiRebalance that sets nothing (spec: {}). */
static inline struct rebalance_params default_params(void)
{
    struct api_spec spec = {0};
    if (api_spec_defaults(&spec) < 0)
        fail_msg("api_spec_defaults failed");
    struct rebalance_params p = cycle_params(&spec);
    api_spec_free(&spec);
    return p;
}

#endif
