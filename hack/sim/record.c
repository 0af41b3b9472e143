/* record: JSON-lines record of the simulation (see record.h). */
#include "hack/sim/record.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

struct record {
    FILE *f;
    pthread_mutex_t mu;
    struct timespec t0;
};

struct record *record_open(const char *path, char *err, size_t errlen)
{
    struct record *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (path) {
        r->f = fopen(path, "w");
        if (!r->f) {
            snprintf(err, errlen, "opening the record %s failed: %s", path, strerror(errno));
            free(r);
            return NULL;
        }
    }
    pthread_mutex_init(&r->mu, NULL);
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    return r;
}

void record_close(struct record *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

void record_add(struct record *r, const char *type, ...)
{
    if (!r || !r->f)
        return;
    struct timespec now, wall;
    clock_gettime(CLOCK_MONOTONIC, &now);
    clock_gettime(CLOCK_REALTIME, &wall);
    double t = (double)(now.tv_sec - r->t0.tv_sec) + (double)(now.tv_nsec - r->t0.tv_nsec) / 1e9;
    struct tm tm;
    gmtime_r(&wall.tv_sec, &tm);
    char ts[40];
    size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", wall.tv_nsec / 1000000);

    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "t", (double)(long long)(t * 1000) / 1000.0);
    cJSON_AddStringToObject(o, "time", ts);
    cJSON_AddStringToObject(o, "type", type);
    va_list ap;
    va_start(ap, type);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL) {
        const char *v = va_arg(ap, const char *);
        cJSON_AddStringToObject(o, k, v ? v : "");
    }
    va_end(ap);
    char *line = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!line)
        return;
    pthread_mutex_lock(&r->mu);
    fprintf(r->f, "%s\n", line);
    fflush(r->f);
    pthread_mutex_unlock(&r->mu);
    free(line);
}
