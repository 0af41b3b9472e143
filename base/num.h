/* kube_num: checked conversion of JSON numbers a server sent into integers. A number from
 * a reply may be anything JSON allows (1e300, -5, 2.5); casting such a double to an integer
 * type is undefined behaviour in C when it does not fit, so every integer read from a reply
 * goes through here. Pure. */
#ifndef PSI_KUBE_NUM_H
#define PSI_KUBE_NUM_H

#include <stdint.h>

#include <cjson/cJSON.h>

/* Store v's value in *out and return 0 when v is a JSON number that is finite, whole and
 * within [min, max]; otherwise return -1 with *out untouched (v may be NULL or any type). */
int kube_num_int(const cJSON *v, int64_t min, int64_t max, int64_t *out);

/* v's value as for kube_num_int, or fallback when it is not such a number. */
int64_t kube_num_int_or(const cJSON *v, int64_t min, int64_t max, int64_t fallback);

#endif
