/* Helpers shared by the psi unit tests: read a file of tests/testdata/psi. */
#ifndef PSI_TEST_PSI_UTIL_H
#define PSI_TEST_PSI_UTIL_H

#include <stdio.h>
#include <stdlib.h>

/* Read $PSI_TESTDATA/psi/<name> into a NUL-terminated buffer (caller frees); NULL if absent. */
static inline char *read_testdata(const char *name, size_t *len)
{
    const char *dir = getenv("PSI_TESTDATA");
    char path[4096];
    snprintf(path, sizeof(path), "%s/psi/%s", dir ? dir : "tests/testdata", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

/* The path of $PSI_TESTDATA/psi/<name> in a static buffer. */
static inline const char *testdata_path(const char *name)
{
    static char path[4096];
    const char *dir = getenv("PSI_TESTDATA");
    snprintf(path, sizeof(path), "%s/psi/%s", dir ? dir : "tests/testdata", name);
    return path;
}

#endif
